#!/usr/bin/env python3
"""What the v8 reader must make of a .cpuprofile, computed here from the JSON alone, and
tach-decode's samples text turned into the same lines, for diff:

    @start_time_us N
    @interval_us N
    TIMESTAMP STATUS<TAB>FRAME;FRAME;...      (innermost first, one line per sample)

where FRAME is "FUNC|FILE|LINE|COL" (-1: none).

  v8_expect.py expect FILE.cpuprofile   the reader's rules, as tachfmt(5) states them:
      parents from "children" and "parent"; one sample per entry of "samples" at startTime
      plus the deltas so far, stably sorted by time; no frame for the parentless "(root)";
      empty name "(anonymous)", empty url "~", 0-based line and column + 1 (-1: none);
      status 0 for "(idle)" samples, 2 (on CPU) for the rest; interval the median gap
      (the upper one of an even count) rounded to µs, 1000 below two samples.
  v8_expect.py decode < SAMPLES_TEXT    tach-decode --format samples of the same file.
"""
import json
import re
import sys

PCT = re.compile(r"%([0-9A-Fa-f]{2})")


def expect(path):
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8-sig"))
    nodes = {n["id"]: n for n in doc["nodes"]}
    parent = {}
    for n in doc["nodes"]:
        for c in n.get("children", []):
            parent[c] = n["id"]
        if n.get("parent") is not None:
            parent[n["id"]] = n["parent"]

    def frame(n):
        cf = n["callFrame"]
        line, col = cf.get("lineNumber", -1), cf.get("columnNumber", -1)
        return "%s|%s|%d|%d" % (cf["functionName"] or "(anonymous)", cf.get("url") or "~",
                                line + 1 if line >= 0 else -1, col + 1 if col >= 0 else -1)

    start = doc["startTime"]
    t = start
    samples = []
    for i, (nid, delta) in enumerate(zip(doc["samples"], doc["timeDeltas"])):
        t += delta
        samples.append((t, i, nid))
    samples.sort()  # by time, then by position: a stable sort
    print("@start_time_us %d" % start)
    gaps = sorted(b[0] - a[0] for a, b in zip(samples, samples[1:]))
    print("@interval_us %d" % (max(1, int(gaps[len(gaps) // 2] + 0.5)) if gaps else 1000))
    for t, _, nid in samples:
        stack, k = [], nid
        while k is not None:
            n = nodes[k]
            if not (k not in parent and n["callFrame"]["functionName"] == "(root)"):
                stack.append(frame(n))
            k = parent.get(k)
        status = 0 if nodes[nid]["callFrame"]["functionName"] == "(idle)" else 2
        print("%d %d\t%s" % (t, status, ";".join(stack)))


def unescape(s):
    return PCT.sub(lambda m: chr(int(m.group(1), 16)), s)


def decode():
    for line in sys.stdin.read().splitlines():
        if line.startswith("@start_time_us") or line.startswith("@interval_us"):
            print(line)
            continue
        if not line or line.startswith("@") or line.startswith("#"):
            continue
        head, _, frames = line.partition("\t")
        tid, iid, ts, status = head.split(" ")
        out = []
        for fr in frames.split(";") if frames else []:
            file, func, ln, _end, col, _ecol, _op = fr.split(":")
            out.append("%s|%s|%s|%s" % (unescape(func), unescape(file),
                                        "-1" if ln == "-" else ln, "-1" if col == "-" else col))
        print("%s %s\t%s" % (ts, status, ";".join(out)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["expect"] and len(sys.argv) == 3:
        expect(sys.argv[2])
    elif sys.argv[1:] == ["decode"]:
        decode()
    else:
        sys.exit(__doc__)

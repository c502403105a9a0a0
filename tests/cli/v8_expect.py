#!/usr/bin/env python3
"""What the v8 reader must make of a .cpuprofile, computed here from the JSON alone, and
tach-decode's samples text turned into the same lines, for diff:

    @start_time_us N
    @interval_us N
    TIMESTAMP STATUS TIME_NS<TAB>FRAME;FRAME;...   (innermost first, one line per sample)

where FRAME is "FUNC|FILE|LINE|COL" (-1: none).

  v8_expect.py expect FILE.cpuprofile   the reader's rules, as tachfmt(5) states them:
      parents from "children" and "parent"; one sample per entry of "samples" at startTime
      plus the deltas so far, stably sorted by time; no frame for the parentless "(root)";
      empty name "(anonymous)", empty url "~", 0-based line and column + 1 (-1: none);
      status 0 for "(idle)" samples, 2 (on CPU) for the rest. Each sample stands for the
      time up to the next one (in the sorted order), the last up to endTime (0 without
      one, or when it is before the last sample), as DevTools and speedscope weigh them;
      the interval is the median gap (the upper one of an even count, rounded to us, at
      least 1; 1000 below two samples) and weighs nothing. Times are from startTime (the
      start is 0: V8's clock is no wall clock), rounded down to the us.
  v8_expect.py decode < SAMPLES_TEXT    tach-decode --format samples of the same file,
      each line's time its TIME_NS field or one interval, a weight-N line N lines.
  v8_expect.py self FILE.cpuprofile     per function (FUNC|FILE), its self time in us by
      the time-to-next rule, from the nodes' own names (no stacks, no
      frames): "FUNC|FILE<TAB>US", sorted.
  v8_expect.py self-decode < SAMPLES_TEXT   the same from tach-decode's samples text.
"""
import json
from decimal import Decimal
import re
import sys

PCT = re.compile(r"%([0-9A-Fa-f]{2})")


def expect(path):
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8-sig"), parse_float=Decimal)
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

    start = ns(doc["startTime"])
    end = ns(doc["endTime"]) if "endTime" in doc else -1
    end = end if end >= start else -1
    samples = timed(doc, start, end)
    gaps = sorted(b[0] - a[0] for a, b in zip(samples, samples[1:]))
    us = max(1, (gaps[len(gaps) // 2] + 500) // 1000) if gaps else 1000
    print("@start_time_us 0")
    print("@interval_us %d" % us)
    for t, _, nid, d in samples:
        stack, k = [], nid
        while k is not None:
            n = nodes[k]
            if not (k not in parent and n["callFrame"]["functionName"] == "(root)"):
                stack.append(frame(n))
            k = parent.get(k)
        status = 0 if nodes[nid]["callFrame"]["functionName"] == "(idle)" else 2
        print("%d %d %d\t%s" % (max(0, t - start) // 1000, status, d, ";".join(stack)))


def timed(doc, start, end):
    """[t, position, node, ns to the next sample] in time order (a stable sort)."""
    t, samples = start, []
    for i, (nid, delta) in enumerate(zip(doc["samples"], doc["timeDeltas"])):
        t += ns(delta)
        samples.append([t, i, nid, 0])
    samples.sort()  # by time, then by position: a stable sort
    for a, b in zip(samples, samples[1:]):
        a[3] = b[0] - a[0]
    if samples:
        samples[-1][3] = end - samples[-1][0] if end >= samples[-1][0] else 0
    return samples


def self_times(path):
    """FUNC|FILE -> self ns, straight from the JSON."""
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8-sig"), parse_float=Decimal)
    names = {n["id"]: "%s|%s" % (n["callFrame"]["functionName"] or "(anonymous)",
                                 n["callFrame"].get("url") or "~") for n in doc["nodes"]}
    start = ns(doc["startTime"])
    end = ns(doc["endTime"]) if "endTime" in doc else -1
    out = {}
    for _, _, nid, d in timed(doc, start, end if end >= start else -1):
        if names[nid] == "(root)|~":
            continue  # no frame: an empty stack
        out[names[nid]] = out.get(names[nid], 0) + d
    return out


def self_decode():
    out = {}
    for ts, status, d, stack in lines(sys.stdin.read()):
        top = stack.split(";")[0] if stack else ""
        if top:
            f = top.split("|")
            key = "%s|%s" % (f[0], f[1])
            out[key] = out.get(key, 0) + d
    return out


def print_self(times):
    for k in sorted(times):
        print("%s\t%d" % (k, times[k] // 1000))


def ns(x):
    """A JSON number of us, to ns exactly (decimal, no floating point)."""
    return int(Decimal(str(x)) * 1000) if not isinstance(x, Decimal) else int(x * 1000)


def unescape(s):
    return PCT.sub(lambda m: chr(int(m.group(1), 16)), s)


def lines(text, threads=False):
    """The samples text's samples: (ids, ts, status, time ns, stack), one per sample."""
    interval = 0
    for line in text.splitlines():
        if line.startswith("@interval_us"):
            interval = int(line.split()[1])
        if not line or line.startswith("@") or line.startswith("#"):
            continue
        head, _, frames = line.partition("\t")
        f = head.split(" ")
        tid, iid, ts, status = f[:4]
        time = int(f[4]) if len(f) > 4 else interval * 1000
        weight = int(f[5]) if len(f) > 5 else 1
        out = []
        for fr in frames.split(";") if frames else []:
            file, func, ln, _end, col, _ecol, _op = fr.split(":")
            out.append("%s|%s|%s|%s" % (unescape(func), unescape(file),
                                        "-1" if ln == "-" else ln, "-1" if col == "-" else col))
        ids = "%s %s " % (tid, iid) if threads else ""
        for _ in range(weight):
            yield ids + ts, status, time // weight, ";".join(out)


def decode(threads=False):
    """The samples text as expect prints it; threads keeps each line's thread and
    interpreter ids in front (chrome_expect.py)."""
    text = sys.stdin.read()
    for line in text.splitlines():
        if line.startswith("@start_time_us") or line.startswith("@interval_us"):
            print(line)
    for ts, status, d, stack in lines(text, threads):
        print("%s %s %d\t%s" % (ts, status, d, stack))


if __name__ == "__main__":
    if sys.argv[1:2] == ["expect"] and len(sys.argv) == 3:
        expect(sys.argv[2])
    elif sys.argv[1:] == ["decode"]:
        decode()
    elif sys.argv[1:2] == ["self"] and len(sys.argv) == 3:
        print_self(self_times(sys.argv[2]))
    elif sys.argv[1:] == ["self-decode"]:
        print_self(self_decode())
    else:
        sys.exit(__doc__)

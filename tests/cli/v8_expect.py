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
      status 0 for "(idle)" samples, 2 (on CPU) for the rest. Weights are time: a sample
      stands for the time up to the next one, the first also from startTime (and is put
      there), the last up to endTime (the median gap without one, or when it is before
      the last sample); the interval is the median gap (the upper one of an even count,
      rounded to us, 1000 below two samples), halved while the weights miss the total
      time by more than 1%; a weight is the running total rounded to intervals, at least
      1. Times are from startTime (the start is 0: V8's clock is no wall clock); a
      weight-N sample is N lines one interval apart, as the samples text writes it.
  v8_expect.py decode < SAMPLES_TEXT    tach-decode --format samples of the same file.
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
    t = start
    samples = []
    for i, (nid, delta) in enumerate(zip(doc["samples"], doc["timeDeltas"])):
        t += ns(delta)
        samples.append([t, i, nid, 0])
    samples.sort()  # by time, then by position: a stable sort
    gaps = sorted(b[0] - a[0] for a, b in zip(samples, samples[1:]))
    median = gaps[len(gaps) // 2] if gaps else 1000000
    us = 1000
    if samples:
        for a, b in zip(samples, samples[1:]):
            a[3] = b[0] - a[0]
        last = samples[-1]
        last[3] = end - last[0] if end >= last[0] else (median or 1000)
        if samples[0][0] > start:
            samples[0][3] += samples[0][0] - start
            samples[0][0] = start
        total = sum(s[3] for s in samples)
        us = max(1, (median + 500) // 1000)
        while us > 1:
            n = sum(weights(samples, us * 1000))
            if abs(n * us * 1000 - total) * 100 <= total:
                break
            us //= 2
        for s, w in zip(samples, weights(samples, us * 1000)):
            s[3] = w
    print("@start_time_us 0")
    print("@interval_us %d" % us)
    for t, _, nid, w in samples:
        stack, k = [], nid
        while k is not None:
            n = nodes[k]
            if not (k not in parent and n["callFrame"]["functionName"] == "(root)"):
                stack.append(frame(n))
            k = parent.get(k)
        status = 0 if nodes[nid]["callFrame"]["functionName"] == "(idle)" else 2
        ts = max(0, t - start) // 1000
        for k in range(w):
            print("%d %d\t%s" % (ts + k * us, status, ";".join(stack)))


def ns(x):
    """A JSON number of us, to ns exactly (decimal, no floating point)."""
    return int(Decimal(str(x)) * 1000) if not isinstance(x, Decimal) else int(x * 1000)


def weights(samples, q):
    """The running total of the times rounded to q, each at least 1."""
    out, run, emitted = [], 0, 0
    for s in samples:
        run += s[3]
        upto = (run + q // 2) // q
        w = upto - emitted if upto > emitted else 1
        emitted += w
        out.append(w)
    return out


def unescape(s):
    return PCT.sub(lambda m: chr(int(m.group(1), 16)), s)


def decode(threads=False):
    """The samples text as expect prints it; threads keeps each line's thread and
    interpreter ids in front (chrome_expect.py)."""
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
        ids = "%s %s " % (tid, iid) if threads else ""
        print("%s%s %s\t%s" % (ids, ts, status, ";".join(out)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["expect"] and len(sys.argv) == 3:
        expect(sys.argv[2])
    elif sys.argv[1:] == ["decode"]:
        decode()
    else:
        sys.exit(__doc__)

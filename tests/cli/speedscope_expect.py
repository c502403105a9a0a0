#!/usr/bin/env python3
"""What a speedscope file should become, computed from the JSON on its own (Python's json
module, exact decimals), for speedscope2tach's tests:

  speedscope_expect.py collapsed FILE [INTERVAL [PROFILE]]
      the collapsed stacks `tach-decode` should print: "tid:T;file:func:line;... N",
      root first, basename(file), line 0 when absent, a "~" file with line 0 as the bare
      name, ';' as ':', empty stacks left out, sorted by count (descending), then bytes
  speedscope_expect.py timeline FILE [INTERVAL [PROFILE]]
      every sample after TACH's expansion of weights: "tid iid ts func;func..." (innermost
      first, names %-escaped as the samples text escapes them)
  speedscope_expect.py from-samples < `tach-decode --format samples` output
      the same timeline from what the programs wrote

INTERVAL is speedscope2tach's --interval (0: not given), PROFILE its --profile.
The rules are tachfmt(5)'s SPEEDSCOPE section, written again here from its text.
"""
import json
import math
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

SCALE = {"none": 3, "bytes": 3, "nanoseconds": 0, "microseconds": 3, "milliseconds": 6,
         "seconds": 9}
TIME = {"nanoseconds", "microseconds", "milliseconds", "seconds"}


def sub_units(x, unit):
    """A JSON number in 10^-scale units, halves away from zero."""
    return int((Decimal(x) * (Decimal(10) ** SCALE[unit])).quantize(Decimal(1), ROUND_HALF_UP))


def parse_id(s, bare_hex):
    if re.fullmatch(r"0[xX][0-9a-fA-F]{1,16}", s):
        return int(s, 16)
    if re.fullmatch(r"[0-9]+", s) and int(s) < 2**64:
        return int(s)
    if bare_hex and re.fullmatch(r"[0-9a-fA-F]{1,16}", s):
        return int(s, 16)
    return None


def thread_of(name, index):
    """(tid, iid) from py-spy's or austin2speedscope's profile name, else (index, 0)."""
    if isinstance(name, str):
        m = re.match(r"(?:Process ([0-9]+) )?Thread ([^ ]+)(?: |$)", name)
        if m and parse_id(m.group(2), False) is not None:
            pid = int(m.group(1)) if m.group(1) else None
            return parse_id(m.group(2), False), pid if pid is not None and pid < 2**32 else 0
        m = re.search(r" profile for ([0-9]+):(?:([0-9]+):)?([^:]*)$", name)
        if m and parse_id(m.group(3), True) is not None:
            if m.group(2) is not None:
                iid = int(m.group(2))
            else:
                iid = int(m.group(1)) if int(m.group(1)) < 2**32 else 0
            return parse_id(m.group(3), True), iid
    return index, 0


def stretches(p):
    """(stack root first, value, weight) per sample, in the profile's sub-units."""
    unit = p["unit"]
    if p["type"] == "sampled":
        v = sub_units(p.get("startValue", 0), unit)
        for stack, w in zip(p["samples"], p["weights"]):
            w = sub_units(w, unit)
            yield [int(i) for i in stack], v, w
            v += w
        return
    stack, last = [], None
    for e in p["events"]:
        at = sub_units(e["at"], unit)
        if stack and at > last:
            yield list(stack), last, at - last
        last = at
        if e["type"] == "O":
            stack.append(int(e["frame"]))
        else:
            assert stack.pop() == int(e["frame"])


def samples(path, interval, only):
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"), parse_float=Decimal, parse_int=Decimal)
    frames = doc["shared"]["frames"]
    profs = [(k, p) for k, p in enumerate(doc["profiles"]) if only is None or k == only]
    raw = [(k, p, s) for k, p in profs for s in stretches(p) if s[2] != 0]
    if not interval:
        g = 0
        for k, p, (st, v, w) in raw:
            if p["unit"] in TIME:
                g = math.gcd(g, max(1, (w + 500) // 1000))
        interval = g or 1000
    out = []
    for k, p, (stack, v, w) in raw:
        tid, iid = thread_of(p.get("name"), k)
        if p["unit"] in TIME:
            ts = v // 1000
            n = 1  # a time is the sample's own, never samples of an interval
        else:
            ts = v * interval // 1000
            n = max(1, (w + 500) // 1000)
        out.append((tid, iid, ts, n, [frames[i] for i in stack]))
    return out, interval


def label(f):
    name = f["name"]
    file = f.get("file")
    line = f.get("line")
    line = 0 if line is None else int(line)
    if file is None:
        file = "~"
    if file == "~" and line == 0:
        text = name
    else:
        text = "%s:%s:%d" % (file.rsplit("/", 1)[-1], name, line)
    return re.sub(r"[\x00-\x1f\x7f]", "?", text.replace(";", ":"))


def collapsed(out):
    counts = {}
    for tid, iid, ts, n, stack in out:
        if not stack:
            continue
        key = "tid:%d;%s" % (tid, ";".join(label(f) for f in stack))
        counts[key] = counts.get(key, 0) + n
    for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8"))):
        print("%s %d" % (key, n))


def esc(s):
    return re.sub(r"[%:;\x00-\x1f\x7f]", lambda m: "%%%02X" % ord(m.group(0)), s)


def timeline(out, interval):
    for tid, iid, ts, n, stack in out:
        funcs = ";".join(esc(f["name"]) for f in reversed(stack))
        for k in range(n):
            print("%d %d %d %s" % (tid, iid, ts + k * interval, funcs))


def from_samples():
    interval = 0
    for line in sys.stdin.buffer.read().decode("utf-8").split("\n"):
        if not line or line.startswith("@"):
            continue
        head, _, frames = line.partition("\t")
        tid, iid, ts = head.split(" ")[:3]
        funcs = ";".join(fr.split(":")[1] for fr in frames.split(";")) if frames else ""
        print("%s %s %s %s" % (tid, iid, ts, funcs))


def main():
    if sys.argv[1] == "from-samples":
        return from_samples()
    interval = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    only = int(sys.argv[4]) if len(sys.argv) > 4 else None
    out, interval = samples(sys.argv[2], interval, only)
    if sys.argv[1] == "collapsed":
        collapsed(out)
    else:
        timeline(out, interval)


if __name__ == "__main__":
    main()

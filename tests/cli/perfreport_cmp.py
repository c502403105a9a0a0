"""Stacks of two samples texts (tach-decode -F samples) by their function names.

Usage: perfreport_cmp.py count|period WANT GOT

Each side's records summed by stack (innermost first, every frame named by its function,
the [comm] root by the comm): count adds the records' weights, period their time_ns.
Prints the difference and exits 1 when the multisets differ; else prints the total."""
import re
import sys
from collections import Counter

LONG = re.compile(r"^(.*):(.*?):(-|-?\d+):(-|-?\d+):(-|-?\d+):(-|-?\d+):(-|\d+)(@\d+)?$")
SHORT = re.compile(r"^(.*):(.*?):(-|-?\d+)$")


def func(frame):
    m = LONG.match(frame) or SHORT.match(frame)
    if not m:
        sys.exit(f"not a frame: {frame!r}")
    return m.group(2)


def stacks(path, what):
    got = Counter()
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        line = line.rstrip("\n")
        if not line or line[0] in "#@":
            continue
        head, _, frames = line.partition("\t")
        f = head.split(" ")
        time_ns = int(f[4]) if len(f) > 4 else 0
        weight = int(f[5]) if len(f) > 5 else 1
        key = tuple(func(x) for x in frames.split(";")) if frames else ()
        got[key] += weight if what == "count" else time_ns
    return got


def main():
    what, want_path, got_path = sys.argv[1:4]
    want, got = stacks(want_path, what), stacks(got_path, what)
    if want != got:
        for k in sorted(set(want) | set(got)):
            if want[k] != got[k]:
                print(f"{';'.join(reversed(k))}: want {want[k]}, got {got[k]}")
        sys.exit(1)
    print(sum(want.values()))


main()

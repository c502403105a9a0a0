"""Stacks of two samples texts (tach-decode -F samples) by their function names.

Usage: perfreport_cmp.py count|period WANT GOT

Each side's records summed by stack (innermost first, every frame named by its function,
the [comm] root by the comm): count adds the records' weights, period their time_ns.
Prints the difference and exits 1 when the multisets differ; else prints the total.

A broken chain (a frame-pointer walk through code built without them, such as libc:
frames of address 0, or as many frames as the kernel's perf_event_max_stack, 127, lets it
read) is one that perf report and tachfmt's perf.data reader resolve differently (perf report
cuts it). Such WANT stacks are set aside: GOT may hold that much (samples or period) that
WANT lacks, on stacks WANT has not otherwise, and nothing else may differ.
"""
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


MAX_STACK = 127


def main():
    what, want_path, got_path = sys.argv[1:4]
    want, got = stacks(want_path, what), stacks(got_path, what)
    # the [comm] root is no frame of the chain
    cut = Counter({k: n for k, n in want.items()
                   if len(k) - 1 >= MAX_STACK or "0x0" in k})
    if cut:
        rest = want - cut
        extra = Counter({k: n for k, n in got.items() if k not in rest})
        if all(got[k] == n for k, n in rest.items()) and \
                sum(extra.values()) <= sum(cut.values()):
            print(sum(want.values()))
            return
    if want != got:
        for k in sorted(set(want) | set(got)):
            if want[k] != got[k]:
                print(f"{';'.join(reversed(k))}: want {want[k]}, got {got[k]}")
        sys.exit(1)
    print(sum(want.values()))


main()

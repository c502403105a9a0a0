#!/usr/bin/env python3
"""async-profiler's OTLP output read by tachfmt against async-profiler's own folded stacks
of the same recording (jfrconv -o collapsed; --threads: a root frame per thread):

  otlp_ap_check.py [--threads] JFRCONV.collapsed TACH_DECODE.collapsed

jfrconv marks each frame with its type (_[j] JIT, _[i] inlined, _[0] interpreted, _[k]
kernel), which OTLP has no field for: the marks are dropped. tach-decode's frames are
FILE:FUNCTION:LINE (the file empty here): the function is compared. With --threads the
thread frames compare as jfrconv's "[NAME tid=N]" against tach-decode's "tid:N". Exits 1
with the first stacks that differ; prints the total and the distinct stacks when equal.
"""
import collections
import re
import sys


def agg(path, conv):
    c = collections.Counter()
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        c[";".join(conv(i, f) for i, f in enumerate(frames))] += int(n)
    return c


def theirs(threads):
    def conv(i, f):
        if threads and i == 0:
            m = re.fullmatch(r"\[(?:.* )?tid=(\d+)\]", f)
            return "tid:" + m.group(1) if m else f
        return re.sub(r"_\[[a-z0-9]\]$", "", f)
    return conv


def ours(threads):
    def conv(i, f):
        if threads and i == 0:
            return f
        return f.split(":", 1)[1].rsplit(":", 1)[0]
    return conv


def main():
    args = sys.argv[1:]
    threads = args[0] == "--threads"
    if threads:
        args = args[1:]
    want = agg(args[0], theirs(threads))
    got = agg(args[1], ours(threads))
    if not want:
        sys.exit("no stacks in " + args[0])
    if want != got:
        print("only jfrconv's:", list((want - got).items())[:2])
        print("only ours:", list((got - want).items())[:2])
        sys.exit(1)
    print(sum(want.values()), len(want))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks a merge against its inputs, all as `tach-decode --format samples` text:

    merge_check.py [--concat] MERGED INPUT...

Expected: the inputs' samples merged by timestamp, always the earliest pending sample and
ties to the input named first (Python's heapq.merge does exactly that), or with --concat
one input after another. A TACH writer may hold a thread's run of repeated stacks back
and write it later, so the order is compared per thread (thread id and interpreter): each
thread's samples must come in the expected order, and nothing may be missing or extra.
"""
import heapq
import sys
from collections import defaultdict


def samples(path):
    out = []
    with open(path, "rb") as f:
        for line in f.read().split(b"\n"):
            if not line or line.startswith(b"@") or line.startswith(b"#"):
                continue
            head, _, frames = line.partition(b"\t")
            tid, interp, ts, status = head.split(b" ")[:4]
            out.append((int(ts), (tid, interp), status, frames))
    return out


def per_thread(seq):
    threads = defaultdict(list)
    for ts, key, status, frames in seq:
        threads[key].append((ts, status, frames))
    return threads


def main(argv):
    concat = argv[:1] == ["--concat"]
    if concat:
        argv = argv[1:]
    merged, inputs = samples(argv[0]), [samples(p) for p in argv[1:]]
    if concat:
        want = [s for inp in inputs for s in inp]
    else:
        want = list(heapq.merge(*inputs, key=lambda s: s[0]))
    got_t, want_t = per_thread(merged), per_thread(want)
    bad = 0
    if len(merged) != len(want):
        print("%d samples, want %d" % (len(merged), len(want)))
        bad = 1
    for key in sorted(set(got_t) | set(want_t)):
        if got_t.get(key) != want_t.get(key):
            g, w = got_t.get(key, []), want_t.get(key, [])
            i = next((i for i, (a, b) in enumerate(zip(g, w)) if a != b), min(len(g), len(w)))
            print("thread %s: sample %d differs: got %r, want %r"
                  % (key, i, g[i] if i < len(g) else None, w[i] if i < len(w) else None))
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

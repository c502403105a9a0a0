#!/usr/bin/env python3
"""Writes a large folded-stack file for the collapsed2tach benchmark.

usage: gen_folded.py LINES DISTINCT SEED > out.folded

Stacks grow as a tree (each new stack keeps a random-length prefix of an earlier one, so
prefixes are shared as in real profiles), depth 10-60, frames in py-spy's
"func (path:line)" style drawn from 6000 functions of which 300 are hot. Lines pick stacks
with a skewed (Zipf-like) distribution, so a stack appears on many lines, and counts come
from {1, 2, 3, 5, 8, 13, 40, 120}. Deterministic for a given SEED.
"""
import random
import sys


def main():
    lines, distinct, seed = (int(a) for a in sys.argv[1:4])
    rng = random.Random(seed)
    funcs = []
    for i in range(6000):
        pkg = "pkg%d" % (i % 97)
        funcs.append("func_%d (/usr/lib/python3.12/%s/mod%d.py:%d)" % (i, pkg, i % 13, 1 + (i * 37) % 900))
    hot = funcs[:300]
    stacks = []
    for i in range(distinct):
        depth = rng.randint(10, 60)
        if stacks and rng.random() < 0.9:
            parent = stacks[rng.randrange(len(stacks))]
            keep = rng.randint(0, min(depth, len(parent)))
            frames = parent[:keep]
        else:
            frames = []
        while len(frames) < depth:
            frames.append(rng.choice(hot) if rng.random() < 0.5 else rng.choice(funcs))
        stacks.append(frames)
    text = [";".join(f) for f in stacks]
    del stacks
    counts = (1, 2, 3, 5, 8, 13, 40, 120)
    out = sys.stdout
    buf = []
    n = len(text)
    for i in range(lines):
        # every stack at least once, then a skewed pick
        k = i if i < n else min(n - 1, int(n * rng.random() ** 3))
        buf.append("%s %d\n" % (text[k], counts[rng.randrange(8)]))
        if len(buf) >= 4096:
            out.write("".join(buf))
            buf = []
    out.write("".join(buf))


if __name__ == "__main__":
    main()

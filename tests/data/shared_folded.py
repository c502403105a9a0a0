#!/usr/bin/env python3
"""Folded stacks that many threads share, and what aggregating them must give.

usage: shared_folded.py INPUT EXPECTED [THREADS]

INPUT gets 30,000 lines: THREADS (default 12) threads take turns at random over the same
400 stacks of 8 to 40 frames, which differ from one another in most of their frames, so
that each is looked up whole. A stack's entry keeps the (thread, stack) pair of the first
thread to meet it; every other thread's pair of it must come from that thread's own memo.
EXPECTED gets the collapsed text those lines add up to: one line per (thread, stack), by
descending count, then by text. Fixed seed: the same files always.
"""
import random
import sys

import folded_sums

out, exp = sys.argv[1], sys.argv[2]
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 12
rng = random.Random(13)
frames = [f"h{k % 30}.py:handler_{k}:{5 + k % 89}" for k in range(900)]
stacks = [";".join(rng.choice(frames) for _ in range(rng.randint(8, 40))) for _ in range(400)]
rows = []
for _ in range(30000):
    key = f"tid:{2000 + rng.randrange(threads)};{rng.choice(stacks)}"
    n = rng.randint(1, 3)
    rows.append((key, n))
folded_sums.write(out, exp, rows)

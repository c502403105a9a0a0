#!/usr/bin/env python3
"""Folded stacks of high cardinality, and what aggregating them must give.

usage: wide_folded.py INPUT EXPECTED [DISTINCT]

INPUT gets DISTINCT (default 220000) distinct (thread, stack) lines over 8 threads and 600
frames, 3 to 12 frames deep, and among them two thirds as many again that repeat earlier
ones at random, every line with a count of 1 to 5. EXPECTED gets the collapsed text those lines
add up to, computed here: one line per (thread, stack), by descending count, then by text.
That many distinct lines, coming again, take every aggregating writer past its lookahead
threshold (65,536 whole stacks kept for lookup), so the queued path is what gets checked. Fixed seed: the same files always.
"""
import random
import sys

import folded_sums

out, exp = sys.argv[1], sys.argv[2]
distinct = int(sys.argv[3]) if len(sys.argv) > 3 else 220000
rng = random.Random(18)
frames = [f"m{k % 40}.py:f{k}:{10 + k % 97}" for k in range(600)]
seen, lines, rows = set(), [], []
while len(lines) < distinct:
    if lines and rng.random() < 0.4:
        key = rng.choice(lines)
    else:
        tid = 1000 + rng.randrange(8)
        key = f"tid:{tid};" + ";".join(rng.choice(frames) for _ in range(rng.randint(3, 12)))
        if key in seen:
            continue
        seen.add(key)
        lines.append(key)
    n = rng.randint(1, 5)
    rows.append((key, n))
folded_sums.write(out, exp, rows)

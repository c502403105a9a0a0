#!/usr/bin/env python3
"""Writes a large synthetic profile in the samples text form (tach-encode's input), the same
for the same arguments: THREADS threads sampled in turn every INTERVAL µs, each doing a
random walk over call stacks (a frame pushed or popped, or the leaf line moving, between
samples, as a real program's stacks change), over FUNCS functions in FUNCS/10 files, with
the thread states of a GIL-bound program (GIL held, waiting, native on CPU, idle).

usage: gen_samples.py SAMPLES [THREADS] [FUNCS] > big.samples
"""
import random
import sys

n = int(sys.argv[1])
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 8
nfuncs = int(sys.argv[3]) if len(sys.argv) > 3 else 4000
rnd = random.Random(42)
interval = 100
funcs = ["/app/p%02d/m%d.py:f%d" % (i % 37, i // 10, i) for i in range(nfuncs)]
base_line = [rnd.randrange(1, 2000) for _ in range(nfuncs)]
fs = [f + ":" for f in funcs]
out = sys.stdout
out.write("@start_time_us 1000000000\n@interval_us %d\n" % interval)
stacks = [[(rnd.randrange(nfuncs), 0)] for _ in range(threads)]
states = [1 | 2, 1 | 2, 1 | 2, 1, 2, 8, 8 | 2, 0, 0, 16 | 1 | 2]
state = [3] * threads
t = 1000000000
lines = []
for i in range(n):
    k = i % threads
    if k == 0:
        t += interval
    st = stacks[k]
    r = rnd.random()
    if r < (0.3 if len(st) < 25 else 0.15) and len(st) < 120:
        st.append((rnd.randrange(nfuncs) if rnd.random() < 0.3 else (st[-1][0] * 7 + 1) % nfuncs, 0))
    elif r < 0.45 and len(st) > 1:
        st.pop()
    elif r < 0.75:
        f, d = st[-1]
        st[-1] = (f, (d + rnd.randrange(1, 4)) % 40)
    if rnd.random() < 0.05:
        state[k] = rnd.randrange(len(states))
    status = states[state[k]] | (32 if k == 0 else 0)
    frames = ";".join([fs[f] + str(base_line[f] + d) for f, d in reversed(st)])
    lines.append("%d 0 %d %d\t%s\n" % (1000 + k, t, status, frames))
    if len(lines) >= 10000:
        out.write("".join(lines))
        lines = []
out.write("".join(lines))

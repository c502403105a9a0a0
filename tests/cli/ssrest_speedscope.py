#!/usr/bin/env python3
"""Puts speedscope's reading of a file (speedscope_import.mjs --any) in the labels of our
collapsed output (tach-decode -q --no-thread-frames), summed per stack, sorted; with
--total, prints the profile's total weight instead; with --scale N, each weight (and the
total) times N (speedscope's ms as our µs: 1000).

A frame speedscope's importer gives no file is ":NAME:LINE" in speedscope_import's labels;
we read it as file "~", which our collapsed output prints as NAME at line 0, else as
"~:NAME:LINE". speedscope's weights may be seconds (Safari's): each is rounded to an
integer after the scaling, as our collapsed output rounds its µs.
usage: ssrest_speedscope.py [--total] [--scale N] IMPORTED"""
import collections
import sys


def label(f):
    if not f.startswith(':'):
        return f
    name, line = f[1:].rsplit(':', 1)
    return name if line == '0' else '~:%s:%s' % (name, line)


args = sys.argv[1:]
total = '--total' in args
scale = int(args[args.index('--scale') + 1]) if '--scale' in args else 1
sums = collections.Counter()
weights = 0
for row in open(args[-1], encoding='utf-8'):
    row = row.rstrip('\n')
    if row.startswith('#'):
        weights += float(row.split('\t')[3]) * scale
        continue
    stack, _, w = row.partition('\t')[2].rpartition(' ')
    sums[';'.join(label(f) for f in stack.split(';'))] += round(float(w) * scale)
if total:
    print(round(weights))
else:
    for k in sorted(sums):
        print(k, sums[k])

#!/usr/bin/env python3
"""Puts speedscope's reading of a preprocessed V8 tick log (speedscope_import.mjs --any) in
the labels of our collapsed output (tach-decode -q --no-thread-frames --value time), summed
per stack, sorted, stacks of no time left out (speedscope drops weightless samples).

speedscope_import labels a frame without a file ":NAME:0", where our collapsed output
shows the name alone; a frame with a file is "BASE:NAME:LINE" in both.
usage: v8log_speedscope.py IMPORTED"""
import collections
import sys


def label(f):
    if f.startswith(':') and f.endswith(':0'):
        return f[1:-2]
    return f


sums = collections.Counter()
for row in open(sys.argv[1], encoding='utf-8'):
    if row.startswith('#'):
        continue
    stack, _, w = row.rstrip('\n').partition('\t')[2].rpartition(' ')
    sums[';'.join(label(f) for f in stack.split(';'))] += int(w)
for k in sorted(sums):
    if sums[k]:
        print(k, sums[k])

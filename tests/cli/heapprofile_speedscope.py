#!/usr/bin/env python3
"""Puts speedscope's reading of a .heapprofile (speedscope_import.mjs --any) in the labels of
our collapsed output (tach-decode -q --no-thread-frames), summed per stack, sorted.

speedscope's heap importer keeps the "(root)" node as every stack's first frame (DevTools
shows none, nor do we), shows V8's 0-based line as it is (we and DevTools add 1) and names
an anonymous function "(anonymous FILE:LINE)" (we: "(anonymous)"): those are undone here.
usage: heapprofile_speedscope.py IMPORTED"""
import collections
import re
import sys


def label(f):
    f = re.sub(r':\(anonymous [^)]*\):', ':(anonymous):', f)
    base, name, line = f.rsplit(':', 2)
    line = int(line)
    if base == '' and line < 0:
        return name
    return '%s:%s:%d' % (base or '~', name, line + 1 if line >= 0 else 0)


sums = collections.Counter()
for row in open(sys.argv[1], encoding='utf-8'):
    if row.startswith('#'):
        continue
    stack, _, w = row.rstrip('\n').partition('\t')[2].rpartition(' ')
    frames = stack.split(';')
    if frames and frames[0] == ':(root):-1':
        frames = frames[1:]
    sums[';'.join(label(f) for f in frames)] += int(w)
for k in sorted(sums):
    print(k, sums[k])

#!/usr/bin/env python3
"""Compares tach-decode's reading of a V8 profile or Chrome trace with speedscope's.

usage: chrome_speedscope.py FILE OURS SPEEDSCOPE
OURS: `tach-decode -q -F samples FILE`; SPEEDSCOPE: `speedscope_import.mjs --any BUNDLE
FILE`. Both become weights (µs) summed per stack, compared per stack and in total to the
µs, except where FILE has time deltas that go back: DevTools (and we) put such samples in
time order, speedscope gives them the latest time before, which moves at most the time
they go back from stack to stack. The differences that are speedscope's own choices are
undone first:
- speedscope stops a stack at an "(idle)" frame or one of "native dummy.js" (Chrome's
  stand-in script: what is under it is left out), and names an anonymous function
  "(anonymous FILE:LINE)": the stacks are cut there, the names made "(anonymous)";
- it puts a "(program)" or "(garbage collector)" sample on top of the stack before it:
  such a stack is the frame alone in both;
- its last sample of a profile stands for no time (ours: up to endTime), and the thread's
  name frame ([comm]) is ours: our last sample of each thread weighs 0, names go.
Prints the two sides where they differ and exits 1; else prints the stacks and total.
"""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v8_expect import lines  # noqa: E402  (the samples text, read as the V8 tests read it)

SPECIAL = ('(program)', '(garbage collector)')


def norm(stack):
    """A root-first stack as both readings are compared: below the innermost frame that
    speedscope stops at ("(idle)", "native dummy.js"), from the innermost of "(program)"
    and "(garbage collector)" on."""
    cut = 0
    for i, f in enumerate(stack):
        base, func, _ = f.rsplit(':', 2)
        if func == '(idle)' or base == 'native dummy.js':
            cut = i + 1
        elif func in SPECIAL:
            cut = i
    return stack[cut:]


def ours(path):
    rows = []
    for ids_ts, _status, time_ns, stack in lines(open(path, encoding='utf-8').read(), True):
        tid, _iid, _ts = ids_ts.split(' ')
        frames = []
        for fr in reversed(stack.split(';')) if stack else []:
            func, file, ln, _col = fr.split('|')
            if file == '[comm]':
                continue
            base = '' if file == '~' else file.split('/')[-1]
            frames.append('%s:%s:%d' % (base, func.replace(';', ':'), max(int(ln), 0)))
        rows.append((tid, time_ns, frames))
    last = {tid: i for i, (tid, _, _) in enumerate(rows)}
    sums = collections.Counter()
    for i, (tid, time_ns, frames) in enumerate(rows):
        s = norm(frames)
        if s:
            sums[';'.join(s)] += 0 if last[tid] == i else time_ns
    return sums


def speedscope(path):
    sums = collections.Counter()
    for line in open(path, encoding='utf-8'):
        if line.startswith('#'):
            continue
        _name, _, rest = line.rstrip('\n').partition('\t')
        stack, _, w = rest.rpartition(' ')
        frames = [re.sub(r':\(anonymous [^)]*\):', ':(anonymous):', f) for f in stack.split(';')]
        s = norm(frames)
        if s:
            sums[';'.join(s)] += round(float(w) * 1000)
    return sums


def back_us(node):
    """The time (µs) that FILE's samples go back, which speedscope and DevTools place
    differently: negative time deltas, timestamps before the one before."""
    total, todo = 0, [node]
    while todo:
        n = todo.pop()
        if isinstance(n, dict):
            for k, v in n.items():
                if k == 'timeDeltas' and isinstance(v, list):
                    total += sum(-x for x in v if isinstance(x, (int, float)) and x < 0)
                elif k == 'timestamps' and isinstance(v, list):
                    total += sum(max(0, v[i - 1] - v[i]) for i in range(1, len(v)))
                else:
                    todo.append(v)
        elif isinstance(n, list):
            todo.extend(n)
    return total


def main():
    text = open(sys.argv[1], encoding='utf-8').read()
    try:
        doc = json.loads(text)
    except ValueError:  # a trace's event array left open, as the format allows
        doc = json.loads(text.rstrip().rstrip(',') + ']')
    slack = 1000 + 1000 * back_us(doc)
    a, b = ours(sys.argv[2]), speedscope(sys.argv[3])
    bad = [k for k in sorted(set(a) | set(b)) if abs(a[k] - b[k]) > slack]
    for k in bad:
        print('ours %d us, speedscope %d us: %s' % (a[k] // 1000, b[k] // 1000, k))
    ta, tb = sum(a.values()), sum(b.values())
    print('stacks %d %d total_us %d %d' % (len(+a), len(+b), ta // 1000, tb // 1000))
    sys.exit(1 if bad or abs(ta - tb) > slack else 0)


if __name__ == '__main__':
    main()

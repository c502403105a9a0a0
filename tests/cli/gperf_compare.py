#!/usr/bin/env python3
"""Compare gperf2tach's stacks with google/pprof's for the frames of a fixture's own binaries.

usage: gperf_compare.py [--drop-second K] [--pprof-empty N] [--from-raw] PPROF_TRACES PPROF_RAW PERIOD_US OUR_SAMPLES

PPROF_TRACES is `pprof -traces` output, PPROF_RAW `pprof -raw` of the same profile (used only
to learn which function names pprof found in the fixture's own mappings: every mapping not
under /usr/ or /lib). OUR_SAMPLES is `tach-decode --format samples` output.

Frames of other objects (libc, libm: their names depend on the machine's libc build and its
debug info) are not compared by name: each run of them becomes one "[lib]" marker on both
sides. Stacks are reduced that way, their weights summed, and the two tables must be equal.
Prints the differences and exits 1 when they differ.

--from-raw reads the stacks from PPROF_RAW given in place of PPROF_TRACES (-traces rounds
values of a second or more). Two pprof behaviours we do not copy can be replayed for a comparison: --drop-second K removes
the frame at index 1 of each of our stacks K times (pprof's heuristic for frames that nearly
all samples share, which on tiny profiles removes real frames), and --pprof-empty N counts N
samples of empty stacks that pprof keeps in its total but does not print in -traces.
"""
import re
import sys
from collections import Counter


def unescape(s):
    return re.sub(r'%([0-9A-Fa-f]{2})', lambda m: chr(int(m.group(1), 16)), s)


def fixture_names(raw_path):
    text = open(raw_path).read()
    maps = {}
    for m in re.finditer(r'^(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)', text, re.M):
        path = m.group(2)
        maps[m.group(1)] = not (path.startswith('/usr/') or path.startswith('/lib'))
    names = set()
    loc = text.split('\nLocations\n', 1)[1].split('\nMappings\n', 1)[0]
    own = False
    for line in loc.split('\n'):
        m = re.match(r'\s*\d+: 0x[0-9a-f]+ (?:M=(\d+) )?(.*)$', line)
        if m:
            own = bool(m.group(1)) and maps.get(m.group(1), False)
            rest = m.group(2)
        else:
            rest = line.strip()
        if own and rest:
            names.add(rest.split(' ')[0])
    return names


def reduce(stack, names):
    out = []
    for f in stack:
        tok = f if f in names else '[lib]'
        if tok == '[lib]' and out and out[-1] == '[lib]':
            continue
        out.append(tok)
    return tuple(out)


UNITS = {'ns': 1e-3, 'us': 1.0, 'ms': 1e3, 's': 1e6}


def pprof_stacks(path, period_us, names):
    total = Counter()
    block = []
    def flush():
        if not block:
            return
        m = re.match(r'\s*([0-9.]+)(ns|us|ms|s)\s+(.*)$', block[0])
        value = float(m.group(1)) * UNITS[m.group(2)] / period_us
        frames = [m.group(3)] + [b.strip() for b in block[1:]]
        frames = [re.sub(r' \(inline\)$', '', f).strip() for f in frames]
        total[reduce(frames, names)] += int(round(value))
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('-----------+'):
            flush()
            block = []
        elif block or re.match(r'\s*[0-9.]+(ns|us|ms|s)\s', line):
            if line.strip():
                block.append(line)
    flush()
    return total


def raw_stacks(path, names):
    """Stacks from `pprof -raw`: exact counts, where -traces rounds large values."""
    text = open(path).read()
    samples = text.split('Samples:\n', 1)[1].split('\nLocations\n', 1)[0]
    loc = text.split('\nLocations\n', 1)[1].split('\nMappings\n', 1)[0]
    funcs = {}
    cur = None
    for line in loc.split('\n'):
        m = re.match(r'\s*(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.*)$', line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            rest = m.group(2)
        else:
            rest = line.strip()
        if rest:
            funcs[cur].append(rest.split(' ')[0])
    total = Counter()
    for line in samples.split('\n')[1:]:
        m = re.match(r'\s*(\d+)\s+\d+:((?: \d+)*)\s*$', line)
        if not m:
            continue
        frames = [f for i in m.group(2).split() for f in funcs[i]]
        total[reduce(frames, names)] += int(m.group(1))
    return total


def our_stacks(path, names, drop_second):
    total = Counter()
    for line in open(path):
        if not line.strip() or line[0] in '@#':
            continue
        frames = line.rstrip('\n').split('\t', 1)[1]
        funcs = [unescape(f.split(':')[1]) for f in frames.split(';')] if frames else []
        for _ in range(drop_second):
            del funcs[1:2]
        total[reduce(funcs, names)] += 1
    return total


def main():
    args = sys.argv[1:]
    drop_second = empty = 0
    from_raw = False
    while args and args[0].startswith('--'):
        if args[0] == '--drop-second':
            drop_second = int(args[1])
        elif args[0] == '--pprof-empty':
            empty = int(args[1])
        elif args[0] == '--from-raw':
            from_raw = True
            args = args[1:]
            continue
        else:
            print('unknown option', args[0])
            return 2
        args = args[2:]
    traces, raw, period, ours = args[0], args[1], float(args[2]), args[3]
    names = fixture_names(raw)
    if not names:
        print('no fixture frames found in', raw)
        return 1
    a = raw_stacks(traces, names) if from_raw else pprof_stacks(traces, period, names)
    if empty:
        a[()] += empty
    b = our_stacks(ours, names, drop_second)
    if a == b:
        print('%d stacks, %d samples match' % (len(a), sum(a.values())))
        return 0
    for k in sorted(set(a) | set(b)):
        if a[k] != b[k]:
            print('pprof %d ours %d: %s' % (a[k], b[k], ' <- '.join(k)))
    return 1


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Turns two views of one profile into the same comparable lines, one per distinct stack:

    FRAME;FRAME;...<TAB>COUNT<TAB>NANOSECONDS      (root first, sorted)

where FRAME is "FUNC FILE:LINE", the way `pprof -raw` prints a Location.

  pprof_stacks.py raw      < output of `go tool pprof -raw`
  pprof_stacks.py samples  < output of `tach-decode --format samples`
  pprof_stacks.py files NAME...   NAME.raw -> NAME.got, NAME.samples -> NAME.want, for
                                  many profiles in one interpreter

Both views are summed per stack (threads and labels merged); samples with an empty stack are
left out (pprof -raw does not print a Sample without locations; its total counts them). Lines without a location, or below 1, are 0 in pprof.
Bytes are kept as they are (surrogateescape), so odd names compare exactly.
"""
import re
import sys
from collections import OrderedDict


def out(stacks):
    for stack in sorted(stacks):
        count, ns = stacks[stack]
        OUT.write("%s\t%d\t%d\n" % (stack, count, ns))


def from_raw(text):
    locs = {}
    stacks = OrderedDict()
    section = None
    # samples and their time; samples alone where the profile has no time (0 ns)
    sample_re = re.compile(r"^\s*(\d+)(?:\s+(\d+))?: ((?:\d+ )*)$")
    # (a frame without native data, perf's [comm] root, has no mapping)
    loc_re = re.compile(r"^\s*(\d+): 0x[0-9a-f]+(?: M=\d+)? (.*) s=0(?:\(\))?$")
    # an address with no symbol (perf's [unknown]): named by its mapping's file, as the
    # samples text names it
    bare_re = re.compile(r"^\s*(\d+): (0x[0-9a-f]+)(?: M=(\d+))?\s*$")
    # a Location's further Lines (frames inlined into the next, a JFR "Inlined" frame's
    # caller), each the next one out
    inline_re = re.compile(r"^\s+(\S.*) s=0(?:\(\))?$")
    last = None
    map_re = re.compile(r"^(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)")
    bare, maps = {}, {}
    samples = []
    for line in text.split("\n"):
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Mappings":
            m = map_re.match(line)
            if m:
                maps[m.group(1)] = m.group(2)
            continue
        if section == "Locations" and bare_re.match(line):
            m = bare_re.match(line)
            bare[int(m.group(1))] = (m.group(2), m.group(3))
            continue
        if section == "Samples:":
            m = sample_re.match(line)
            if m:
                ids = [int(x) for x in m.group(3).split()]
                samples.append((ids, int(m.group(1)), int(m.group(2) or 0)))
        elif section == "Locations":
            m = loc_re.match(line)
            if m:
                last = int(m.group(1))
                locs[last] = [m.group(2)]
            elif last is not None and inline_re.match(line):
                locs[last].append(inline_re.match(line).group(1))
            elif line.strip():
                sys.exit("pprof_stacks: unexpected location line: %r" % line)
    for i, (addr, mid) in bare.items():
        locs[i] = ["%s %s:0" % (addr, maps.get(mid, "[unknown]"))]
    for ids, count, ns in samples:
        key = ";".join(f for i in reversed(ids) for f in reversed(locs[i]))
        c, n = stacks.get(key, (0, 0))
        stacks[key] = (c + count, n + ns)
    out(stacks)


def unescape(s):
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), s)


def from_samples(text):
    stacks = OrderedDict()
    interval = 0
    for line in text.split("\n"):
        if line.startswith("@interval_us "):
            interval = int(line.split()[1])
            continue
        if not line or line.startswith("#") or line.startswith("@"):
            continue
        head, _, frames = line.partition("\t")
        if not frames:
            continue
        # TIME_NS and WEIGHT after the status where the line is not one interval
        f = head.split(" ")
        ns = int(f[4]) if len(f) > 4 else interval * 1000
        weight = int(f[5]) if len(f) > 5 else 1
        labels = []
        for fr in frames.split(";"):
            parts = fr.split(":")
            line_no = 0 if parts[2] == "-" else max(int(parts[2]), 0)
            labels.append("%s %s:%d" % (unescape(parts[1]), unescape(parts[0]), line_no))
        key = ";".join(reversed(labels))
        c, n = stacks.get(key, (0, 0))
        stacks[key] = (c + weight, n + ns)
    out(stacks)


def convert(src, dst, how):
    global OUT
    with open(src, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    with open(dst, "w", encoding="utf-8", errors="surrogateescape") as OUT:
        how(text)


def main():
    global OUT
    if len(sys.argv) > 2 and sys.argv[1] == "files":
        for name in sys.argv[2:]:
            convert(name + ".raw", name + ".got", from_raw)
            convert(name + ".samples", name + ".want", from_samples)
        return
    if len(sys.argv) != 2 or sys.argv[1] not in ("raw", "samples"):
        sys.exit("usage: pprof_stacks.py raw|samples < input | files NAME...")
    sys.stdin.reconfigure(errors="surrogateescape")
    sys.stdout.reconfigure(errors="surrogateescape")
    OUT = sys.stdout
    text = sys.stdin.read()
    (from_raw if sys.argv[1] == "raw" else from_samples)(text)


main()

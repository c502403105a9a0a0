#!/usr/bin/env python3
"""Turns `go tool pprof -traces` and our collapsed output into the same comparable lines,
one per distinct stack of function names (root first, sorted):

    NAME;NAME;...<TAB>TOTAL

  pprof_traces.py traces UNIT < output of `go tool pprof -traces [-sample_index=...]`
  pprof_traces.py collapsed   < output of `tach-decode --no-thread-frames` (cpython labels)
  pprof_traces.py files UNIT NAME...   NAME.traces -> NAME.want, NAME.collapsed -> NAME.got,
                                       for many profiles in one interpreter

traces: " (inline)" after a name is dropped; each trace's value ("3ms", "1.50s", "7") is read in nanoseconds when it has a time
unit, and divided by UNIT (the period in nanoseconds for a time type, 1 for counts): the
number of samples. Label lines are skipped; traces of one stack are summed.

collapsed: a label FILE:FUNC:LINE gives FUNC (split at the first single colon after the
file, so C++'s "::" stays in the name), a bare label is its own name; an unsymbolized
frame, FILE:0xADDR, is "[FILE]" as pprof prints a location without a function.
"""
import re
import sys
from collections import OrderedDict

UNITS = {"ns": 1, "us": 1000, "µs": 1000, "ms": 1000000, "s": 1000000000,
         "min": 60000000000, "hrs": 3600000000000}


def out(stacks):
    for stack in sorted(stacks):
        OUT.write("%s\t%d\n" % (stack, stacks[stack]))


def add(stacks, key, v):
    stacks[key] = stacks.get(key, 0) + v


def value(tok, unit):
    m = re.match(r"^([0-9.]+)([a-zµ]*)$", tok)
    if not m:
        sys.exit("pprof_traces: not a value: %r" % tok)
    v = float(m.group(1)) * UNITS.get(m.group(2), 1) if m.group(2) else float(m.group(1))
    if m.group(2) and m.group(2) not in UNITS:
        sys.exit("pprof_traces: unknown unit in %r" % tok)
    return int(round(v / unit))


def inline(name):
    """pprof marks a function inlined into its caller; the name is the same."""
    return name[:-9] if name.endswith(" (inline)") else name


def from_traces(text, unit):
    stacks = OrderedDict()
    names, total = [], None
    for line in text.split("\n") + ["-----------+"]:
        if line.startswith("-----------+"):
            if total is not None:
                add(stacks, ";".join(reversed(names)), total)
            names, total = [], None
            continue
        if total is None:
            m = re.match(r"^\s*([0-9.]+[a-zµ]*)   (.*)$", line)
            if m and not line.startswith(" " * 12):
                total = value(m.group(1), unit)
                names.append(inline(m.group(2)))
            continue
        if line.startswith(" " * 13):
            names.append(inline(line[13:]))
    out(stacks)


def name_of(label):
    label = re.sub(r":-?\d+$", "", label)
    m = re.match(r"^((?:[^:]|::)*?):(?!:)(.*)$", label)
    if not m:
        return label
    f, fn = m.group(1), m.group(2)
    if re.match(r"^0x[0-9a-f]+$", fn):
        return "[%s]" % f
    return fn


def from_collapsed(text):
    stacks = OrderedDict()
    for line in text.split("\n"):
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        add(stacks, ";".join(name_of(x) for x in stack.split(";")), int(count))
    out(stacks)


def convert(src, dst, how, *args):
    global OUT
    with open(src, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    with open(dst, "w", encoding="utf-8", errors="surrogateescape") as OUT:
        how(text, *args)


def main():
    global OUT
    sys.stdin.reconfigure(errors="surrogateescape")
    sys.stdout.reconfigure(errors="surrogateescape")
    OUT = sys.stdout
    if len(sys.argv) > 3 and sys.argv[1] == "files":
        for name in sys.argv[3:]:
            convert(name + ".traces", name + ".want", from_traces, float(sys.argv[2]))
            convert(name + ".collapsed", name + ".got", from_collapsed)
    elif len(sys.argv) == 3 and sys.argv[1] == "traces":
        from_traces(sys.stdin.read(), float(sys.argv[2]))
    elif len(sys.argv) == 2 and sys.argv[1] == "collapsed":
        from_collapsed(sys.stdin.read())
    else:
        sys.exit("usage: pprof_traces.py traces UNIT | collapsed < input")


main()

#!/usr/bin/env python3
"""Compare a profile's samples with what the Gecko reader gives back of tach2gecko's output.

usage: gecko_roundtrip.py [--timed] ORIGINAL.txt READ_BACK.txt

Both are `tach-decode -F samples` texts. Each sample must come back: its thread, its time
(us), its status, and its stack, frame by frame, by function name and line (the Gecko
location keeps a frame's file only in the forms the importer reads: a script's URL, a
library's name); with --timed (the processed format) also the time it stands for, to the
us. The text
of each function name is compared as the writer keeps it (control characters as '?').
Exit 0 when every sample comes back, 1 with the first differences.
"""
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from samples_text import unescape as unescape_bytes  # noqa: E402


def unescape(s):
    return "".join("?" if ord(c) < 0x20 or c == "\x7f" else c
                   for c in unescape_bytes(s).decode("utf-8", "replace"))


def samples(path, timed):
    out = Counter()
    interval = 0
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
            if line.startswith("@interval_us "):
                interval = int(line.split()[1])
            if not line or line[0] in "#@":
                continue
            head, _, frames = line.partition("\t")
            fields = [int(x) for x in head.split(" ")]
            if len(fields) > 5 and fields[5] != 1:
                sys.exit("%s: a sample of weight %d: not a case for this check" %
                         (path, fields[5]))
            stack = []
            for fr in frames.split(";") if frames else []:
                parts = fr.split(":")
                ln = parts[2] if parts[2] not in ("-", "-1") else "-"
                stack.append((unescape(parts[1]), ln))
            # to the us: the processed format's weights are ms with three decimals
            t = ((fields[4] + 500) // 1000 if len(fields) > 4 else interval) if timed else None
            out[(fields[0], fields[2], fields[3], t, tuple(stack))] += 1
    return out


def main():
    args = sys.argv[1:]
    timed = args[0] == "--timed"
    if timed:
        args = args[1:]
    a, b = samples(args[0], timed), samples(args[1], timed)
    if a == b:
        return 0
    for k in list((a - b).keys())[:5]:
        print("lost: %s" % (k,))
    for k in list((b - a).keys())[:5]:
        print("read: %s" % (k,))
    sys.stdout.flush()
    return 1


if __name__ == "__main__":
    sys.exit(main())

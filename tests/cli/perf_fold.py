#!/usr/bin/env python3
"""An independent reading of `perf script` text, for the tests: each sample of the first
event as one folded line "comm;outer;...;inner", counted in samples. Frames are perf's
symbol without its +0x offset, "[dso]" (the dso's base name) for an unknown symbol; no other
tidying, so it fits captures of plain C and Python programs.

usage: perf_fold.py FILE [--event NAME] [--tid]  (--tid: the root is comm-pid/tid)
"""
import collections
import re
import sys

EVENT = re.compile(r"^(\S.+?)\s+(\d+)(?:/(\d+))?(?:\s.*?)?(?::\s*(\d+))?\s+(\S+):\s*$")
FRAME = re.compile(r"^\s+(\w+)\s+(.+) \((\S*)\)\s*$")


def main():
    path = sys.argv[1]
    args = sys.argv[2:]
    want_event = args[args.index("--event") + 1] if "--event" in args else None
    tid_root = "--tid" in args
    counts = collections.Counter()
    root, frames, keep = None, [], False
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if keep and root is not None:
                    counts[";".join([root] + frames[::-1])] += 1
                root, frames, keep = None, [], False
                continue
            m = EVENT.match(line)
            if m and not line[0].isspace():
                comm, a, b, _, event = m.groups()
                if want_event is None:
                    want_event = event
                keep = event == want_event
                pid, tid = (a, b) if b and b != "0" else ("?", a)
                root = comm.replace(" ", "_")
                if tid_root:
                    root += "-%s/%s" % (pid, tid)
                continue
            m = FRAME.match(line)
            if not m:
                sys.exit("perf_fold.py: %s: not understood: %r" % (path, line))
            sym, dso = re.sub(r"\+0x[0-9a-f]+$", "", m.group(2)), m.group(3)
            if sym == "[unknown]" and dso != "[unknown]":
                sym = "[%s]" % dso.rsplit("/", 1)[-1]
            frames.append(sym)
    for stack, n in sorted(counts.items()):
        print(stack, n)


main()

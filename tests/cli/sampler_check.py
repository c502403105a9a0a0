#!/usr/bin/env python3
"""Checks for tests/cli/tach2sampler.bats.

sampler_check.py layout FILE...
    Parses each FILE strictly as the layout tach2sampler promises (big-endian 4-byte ids from
    0x2122 upward without TAB, LF or CR bytes, a Thread_XXXX symbol per thread block, @end
    after the symbol table and at the end, LF line ends, records 1 0 1 n) and prints a
    summary: symbols, thread blocks, records, the last id.

sampler_check.py samples [--sampler]
    Reads tach-decode's samples text on stdin and prints each distinct (thread, interpreter,
    stack) with its count, sorted.

sampler_check.py pairs WANT GOT...
    For each pair of samples text files, checks that "samples --sampler" of WANT equals
    "samples" of GOT (one process for every fixture: starting python is the slow part). Stacks keep file, function and line only. --sampler
    applies what a Sampler trace cannot hold, as tach2sampler(1) documents: lines <= 0
    become "no line", TAB/LF/CR in names become '?', empty stacks are dropped.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from samples_text import unescape  # noqa: E402


def fail(msg):
    sys.exit("sampler_check: %s: %s" % (CURRENT, msg))


CURRENT = ""


def layout(path):
    global CURRENT
    CURRENT = path
    d = open(path, "rb").read()
    p = 0

    def line():
        nonlocal p
        e = d.index(b"\n", p)
        s = d[p:e]
        p = e + 1
        return s

    if line() != b"@supersamplerV1.0" or line() != b"@symboltableV1.1":
        fail("bad magic lines")
    ids = []
    names = {}
    while d[p:p + 1] == b"\t":
        sid = int.from_bytes(d[p + 1:p + 5], "big")
        if d[p + 5:p + 6] != b"\t" or d[p + 10:p + 11] != b"\t":
            fail("symbol line layout at %d" % p)
        p += 11
        text = line()
        if b"\r" in text:
            fail("CR in a symbol line")
        f = text.split(b"\t")
        if len(f) != 3:
            fail("symbol text must have 3 fields: %r" % text)
        ids.append(sid)
        names[sid] = f
    if line() != b"@end":
        fail("no @end after the symbol table")
    if ids and ids[0] != 0x2122:
        fail("first id 0x%x" % ids[0])
    for a, b in zip(ids, ids[1:]):
        if b <= a:
            fail("ids not increasing")
        for x in range(a + 1, b):
            if not any(c in (9, 10, 13) for c in x.to_bytes(4, "big")):
                fail("id 0x%x skipped for no reason" % x)
    for i in ids:
        if any(c in (9, 10, 13) for c in i.to_bytes(4, "big")):
            fail("id 0x%x has a TAB, LF or CR byte" % i)
    blocks = records = 0
    seen = set()
    while True:
        if d[p:p + 1] == b"\t":
            a, b, c, n = (int.from_bytes(d[p + 1 + 4 * k:p + 5 + 4 * k], "big") for k in range(4))
            if (a, b, c) != (1, 0, 1) or n == 0:
                fail("record header at %d" % p)
            for k in range(n):
                fid = int.from_bytes(d[p + 17 + 4 * k:p + 21 + 4 * k], "big")
                if fid not in names:
                    fail("undefined id in record at %d" % p)
            p += 17 + 4 * n
            if d[p:p + 1] != b"\n":
                fail("record not ended by LF at %d" % p)
            p += 1
            records += 1
            continue
        t = line()
        if t == b"@end":
            break
        if not t.startswith(b"@threadV1.0\t") or len(t) != 16:
            fail("bad thread header %r" % t)
        tid = int(t[12:], 16)
        if tid in seen:
            fail("two blocks for thread %04X" % tid)
        seen.add(tid)
        want = b"Thread_%04X" % tid
        if tid not in names or names[tid][0] != want or names[tid][1] != want:
            fail("thread %04X has no Thread_%04X symbol" % (tid, tid))
        if not names[tid][2].startswith(b"tachfmt:tid="):
            fail("thread symbol without its tid")
        blocks += 1
    if p != len(d):
        fail("bytes after the final @end")
    print("symbols %d blocks %d records %d last_id 0x%x" % (len(ids), blocks, records,
                                                             ids[-1] if ids else 0))


def escape(b):
    return "".join(chr(c) if 0x20 <= c < 0x7f and c not in b"%:;" else "%%%02X" % c
                   for c in b)


def samples(sampler, stream=None):
    counts = collections.Counter()
    for raw in stream or sys.stdin.buffer:
        ln = raw.decode("utf-8", "surrogateescape").rstrip("\n")
        if not ln or ln[0] in "#@":
            continue
        head, _, stack = ln.partition("\t")
        tid, iid, _ts, _status = head.split(" ")[:4]  # then TIME_NS, WEIGHT
        frames = []
        for fr in stack.split(";") if stack else []:
            f = fr.split(":")
            file, func, line = unescape(f[0]), unescape(f[1]), f[2]
            if sampler:
                file = bytes(b"?"[0] if c in (9, 10, 13) else c for c in file)
                func = bytes(b"?"[0] if c in (9, 10, 13) else c for c in func)
                if line == "-" or int(line) <= 0:
                    line = "-"
            frames.append("%s:%s:%s" % (escape(file), escape(func), line))
        if sampler and not frames:
            continue
        counts["%s %s\t%s" % (tid, iid, ";".join(frames))] += 1
    return ["%d %s" % (counts[k], k) for k in sorted(counts)]


def pairs(files):
    bad = 0
    for want, got in zip(files[::2], files[1::2]):
        a = samples(True, open(want, "rb"))
        b = samples(False, open(got, "rb"))
        if a != b:
            print("differs: %s %s" % (want, got))
            for x in sorted(set(a) ^ set(b))[:10]:
                print(("- " if x in a else "+ ") + x)
            bad += 1
    if bad or len(files) % 2:
        sys.exit(1)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "layout":
        for f in sys.argv[2:]:
            layout(f)
    elif len(sys.argv) >= 2 and sys.argv[1] == "samples":
        print("\n".join(samples("--sampler" in sys.argv[2:])))
    elif len(sys.argv) >= 4 and sys.argv[1] == "pairs":
        pairs(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

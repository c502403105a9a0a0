#!/usr/bin/env python3
"""Checks gperf2tach's module+offset frames against binutils.

usage: gperf_native_check.py BINARY SYMBOLIZED.txt UNSYMBOLIZED.txt

Both files are `tach-decode --format samples` of one gperftools profile, symbolized by
gperf2tach and not. Each sample's frames of BINARY are compared: in the unsymbolized text
they must be named BASENAME+0xOFFSET (file: BINARY's path) and addr2line -f -i at that file
offset (translated through the executable segment) must give, innermost first, the function
names gperf2tach gave the same sample. Prints what differs; exits 1 then, or when nothing
was compared.
"""
import os
import re
import subprocess
import sys


def frames(line):
    _, _, stack = line.partition("\t")
    out = []
    for f in stack.split(";") if stack else []:
        # file:func:line:end_line:col:end_col:opcode; file and func may hold ':'
        parts = f.rsplit(":", 5)
        head = parts[0]
        # func is the last ':'-separated part of head that is not in file
        file, _, func = head.rpartition(":")
        out.append((file, func))
    return out


def exec_segments(binary):
    text = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                          check=True).stdout
    segs = []
    for m in re.finditer(r"^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+\S+\s+(0x[0-9a-f]+)"
                         r"\s+\S+\s+(.*?)\s+0x", text, re.M):
        if "E" in m.group(4):
            segs.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
    return segs


def addr2line(binary, vaddrs):
    args = ["addr2line", "-a", "-f", "-i", "-e", binary] + ["0x%x" % a for a in vaddrs]
    lines = subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines()
    res, cur = {}, None
    i = 0
    while i < len(lines):
        if re.fullmatch(r"0x[0-9a-f]+", lines[i]):
            cur = int(lines[i], 16)
            res[cur] = []
            i += 1
            continue
        res[cur].append(lines[i])
        i += 2  # function, then file:line
    return res


def main():
    binary, sym_path, nosym_path = sys.argv[1:4]
    base = os.path.basename(binary)
    sym = [l for l in open(sym_path).read().splitlines() if not l.startswith("@")]
    nosym = [l for l in open(nosym_path).read().splitlines() if not l.startswith("@")]
    if len(sym) != len(nosym) or not sym:
        print("sample counts differ or are 0: %d %d" % (len(sym), len(nosym)))
        return 1
    segs = exec_segments(binary)
    name_re = re.compile(re.escape(base) + r"\+0x([0-9a-f]+)")

    def vaddr(off):
        for o, v, sz in segs:
            if o <= off < o + sz:
                return off - o + v
        raise SystemExit("file offset 0x%x is in no executable segment of %s" % (off, binary))

    offs = set()
    for line in nosym:
        for file, func in frames(line):
            if file == binary:
                m = name_re.fullmatch(func)
                if not m:
                    print("not a module+offset name: %s:%s" % (file, func))
                    return 1
                offs.add(int(m.group(1), 16))
    names = addr2line(binary, sorted(vaddr(o) for o in offs))
    bad = compared = 0
    for a, b in zip(sym, nosym):
        want = []
        for file, func in frames(b):
            if file == binary:
                want += names[vaddr(int(name_re.fullmatch(func).group(1), 16))]
        src = os.path.dirname(binary)
        got = [func for file, func in frames(a)
               if file == binary or os.path.dirname(file) == src]
        compared += len(want)
        if got != want:
            bad += 1
            if bad <= 5:
                print("gperf2tach: %s\naddr2line:  %s" % (got, want))
    print("%d frames of %s compared, %d samples differ" % (compared, base, bad))
    return 1 if bad or not compared else 0


sys.exit(main())

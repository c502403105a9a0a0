#!/usr/bin/env python3
"""Writes a large synthetic gperftools CPU profile (64-bit little-endian) whose PCs fall in
the executable segments of this machine's libc and libm, so that symbolization has real
work: gperf_gen.py OUT [RECORDS] [UNIQUE_PCS] [DISTINCT_STACKS]. Deterministic (fixed seed).
Defaults: 200000 records, 5100 unique PCs, 40000 distinct stacks, depth 20-52 (about 61 MB,
like the 200k-record file the google/pprof timings were taken on)."""
import random
import struct
import sys
from array import array


def exec_segment(path):
    with open(path, 'rb') as f:
        data = f.read(1 << 16)
    assert data[:4] == b'\x7fELF' and data[4] == 2 and data[5] == 1, 'ELF64 LE expected'
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz, p_memsz, _ = \
            struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize)
        if p_type == 1 and p_flags & 1:
            return p_offset, p_vaddr, p_filesz
    raise SystemExit('no executable segment in ' + path)


def main():
    out = sys.argv[1]
    records = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    npcs = int(sys.argv[3]) if len(sys.argv) > 3 else 5100
    nstacks = int(sys.argv[4]) if len(sys.argv) > 4 else 40000
    rnd = random.Random(42)
    libs = ['/usr/lib/x86_64-linux-gnu/libc.so.6', '/usr/lib/x86_64-linux-gnu/libm.so.6']
    maps, ranges = [], []
    base = 0x7f0000000000
    for lib in libs:
        off, vaddr, size = exec_segment(lib)
        start = base + (vaddr & ~0xfff)
        end = (base + vaddr + size + 0xfff) & ~0xfff
        maps.append('%x-%x r-xp %08x 08:01 1234 %s\n' % (start, end, off & ~0xfff, lib))
        ranges.append((base + vaddr, base + vaddr + size))
        base += 0x10000000
    pcs = []
    for i in range(npcs):
        lo, hi = ranges[i % len(ranges)]
        pcs.append(rnd.randrange(lo, hi))
    stacks = []
    for _ in range(nstacks):
        d = rnd.randint(20, 52)
        stacks.append([pcs[rnd.randrange(npcs)] for _ in range(d)])
    slots = array('Q', [0, 3, 0, 10000, 0])
    for _ in range(records):
        st = stacks[rnd.randrange(nstacks)]
        slots.append(rnd.randint(1, 3))
        slots.append(len(st))
        slots.extend(st)
    slots.extend([0, 1, 0])
    if sys.byteorder != 'little':
        slots.byteswap()
    with open(out, 'wb') as f:
        slots.tofile(f)
        f.write(''.join(maps).encode())


main()

#!/usr/bin/env python3
"""Writes lto.prof: a gperftools CPU profile of the lto binary as if it had run as a PIE at
0x555555554000 from /srv/build/lto/lto. Two stacks: a leaf in tri() inlined into helper()
inlined into main() with main's call of printf as caller, and a leaf in tri() inlined through
twice() and work() into main(). With gcc -flto the abstract origins of those inlined
instances live in other compile units than main's concrete code."""
import struct
import sys

BASE = 0x555555554000
slots = [0, 3, 0, 10000, 0]
slots += [5, 2, BASE + 0x106a, BASE + 0x10ef]  # leaf, return address after call printf
slots += [3, 1, BASE + 0x10c0]
slots += [0, 1, 0]
maps = '%x-%x r-xp 00001000 08:01 42 /srv/build/lto/lto\n' % (BASE + 0x1000, BASE + 0x2000)
with open(sys.argv[1] if len(sys.argv) > 1 else 'lto.prof', 'wb') as f:
    f.write(struct.pack('<%dQ' % len(slots), *slots) + maps.encode())

# Writes a TACH file (layout B, little-endian) whose string table holds "a.py" and "f" twice,
# and two frames that differ only in which copy they name. CPython's writer never makes such a
# table, but its reader reads it, and compares the strings by value.
import struct
import sys


def record(tid, enc, body):
    return struct.pack('<QI', tid, 0) + bytes([enc]) + body


# two FULL samples of depth 1: frame 0, then frame 1 (deltas 10, status 1)
region = record(1, 1, bytes([10, 1, 1, 0])) + record(1, 1, bytes([10, 1, 1, 1]))
strings = b''.join(bytes([len(s)]) + s for s in [b'a.py', b'f', b'a.py', b'f'])
# file, func, line 1 (zigzag 2), end delta 0, column -1 (1), end column delta 0, no opcode
frames = bytes([0, 1, 2, 0, 1, 0, 255, 2, 3, 2, 0, 1, 0, 255])
so = 64 + len(region)
fo = so + len(strings)
size = fo + len(frames) + 32
hdr = bytearray(64)
hdr[0:4] = b'HCAT'
struct.pack_into('<I', hdr, 4, 1)
hdr[8:11] = bytes([3, 15, 0])
struct.pack_into('<QQQIQQII', hdr, 12, 0, 1000, 2, 1, so, fo, 0, 0)
footer = struct.pack('<IIQ', 4, 2, size) + bytes(16)
sys.stdout.buffer.write(bytes(hdr) + region + strings + frames + footer)

"""Writes small TACH files in the variants CPython 3.15's writer makes, built here field by
field (no binary blobs): the TACHSTAT block in both forms (56 bytes with present flags, the
original 32 with duration and rate only), the profiling_config word at offset 60, either
byte order, and a format version other than 1.

Every file holds the same four samples, in the records CPython's writer makes for them:
thread 7 samples one stack three times (a FULL record, then its held run of two repeats,
written at the end), thread 9 once in between.

usage: tach_variants.py DIR
"""
import os
import struct
import sys


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return uvarint(((v << 1) ^ (v >> 31)) & 0xFFFFFFFF)


START, INTERVAL = 1_000_000, 1000
STRINGS = [b"a.py", b"inner", b"main", b"b.py", b"work"]
# (file, func, line, end_line, col, end_col, opcode), in CPython's interning order
FRAMES = [(0, 1, 10, 10, 4, 9, 255), (0, 2, 20, 21, 0, 12, 83), (3, 4, 5, 5, -1, -1, 255)]


def records(e):
    def head(tid, enc):
        return struct.pack(e + "QIB", tid, 0, enc)

    full_a = head(7, 1) + uvarint(1000) + bytes([1]) + uvarint(2) + bytes([0, 1])
    full_b = head(9, 1) + uvarint(1500) + bytes([2]) + uvarint(2) + bytes([2, 1])
    run_a = head(7, 0) + uvarint(2) + (uvarint(1000) + bytes([1])) * 2
    return full_a + full_b + run_a


def tables():
    out = b"".join(uvarint(len(s)) + s for s in STRINGS)
    frames = b""
    for f, fn, line, end, col, ecol, op in FRAMES:
        dl = 0 if line == -1 or end == -1 else end - line
        dc = 0 if col == -1 or ecol == -1 else ecol - col
        frames += uvarint(f) + uvarint(fn) + zigzag(line) + zigzag(dl) + zigzag(col)
        frames += zigzag(dc) + bytes([op])
    return out, frames


def stats_block(e, form, flags=0, values=(1.25, 4.0, 2.5, 1.5), version=1, size=None):
    """form 56: duration, rate, error %, missed %, flags, reserved, trailer; form 32:
    duration, rate, trailer. The trailer is "TACHSTAT", version, size."""
    if form == 32:
        body = struct.pack(e + "dd", *values[:2])
    else:
        body = struct.pack(e + "ddddII", *values, flags, 0)
    return body + b"TACHSTAT" + struct.pack(e + "II", version, size or form)


def tach(e="<", config=0, stats=b"", version=1):
    samples = records(e)
    strings, frames = tables()
    str_off = 64 + len(samples)
    frame_off = str_off + len(strings)
    size = frame_off + len(frames) + len(stats) + 32
    hdr = struct.pack(e + "II4BQQQIQQII", 0x54414348, version, 3, 15, 0, 0, START,
                      INTERVAL, 4, 2, str_off, frame_off, 0, config)
    foot = struct.pack(e + "IIQ", len(STRINGS), len(FRAMES), size) + bytes(16)
    assert len(hdr) == 64
    return hdr + samples + strings + frames + stats + foot


def main():
    d = sys.argv[1]
    files = {
        "plain": tach(),
        "stats56": tach(stats=stats_block("<", 56, flags=3)),
        # flags clear: the error and missed slots hold 100 and 100, which are not values
        "stats56-unknown": tach(stats=stats_block("<", 56, 0, (1.25, 4.0, 100.0, 100.0))),
        "stats56-error": tach(stats=stats_block("<", 56, 1, (1.25, 4.0, 2.5, 7.0))),
        "stats32": tach(stats=stats_block("<", 32)),
        "stats56-be": tach(">", stats=stats_block(">", 56, flags=3)),
        "stats32-be": tach(">", stats=stats_block(">", 32)),
        "stats-size40": tach(stats=bytes(8) + stats_block("<", 32, size=40)),
        "stats-second": tach(stats=stats_block("<", 56, 2, (3.0, 2.0, 0.0, 4.5))),
        "mode-wall": tach(config=1),
        "mode-cpu": tach(config=2),
        "mode-gil": tach(config=3),
        "mode-all": tach(config=4),
        "mode-exception": tach(config=5),
        "mode-cpu-bits": tach(config=0x1B02),
        "mode-unknown": tach(config=9),
        "mode-cpu-stats-be": tach(">", config=2, stats=stats_block(">", 56, flags=3)),
        "version2": tach(version=2),
        "version0": tach(version=0),
    }
    for name, data in files.items():
        with open(os.path.join(d, name + ".tach"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Unsymbolizes a pprof profile, as a profiler without symbols writes one:

  pprof_strip.py IN.pb.gz > OUT.pb

Locations keep their address and mapping and lose their lines; functions go; mappings
lose their has_* flags. Everything else is copied field by field (protobuf wire format,
field numbers of google/pprof's profile.proto)."""
import gzip
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def put_varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def fields(b):
    """(number, wire type, raw bytes of the whole field, payload) for each field."""
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        wt = key & 7
        if wt == 0:
            _, i = varint(b, i)
            payload = None
        elif wt == 2:
            n, i = varint(b, i)
            payload = b[i:i + n]
            i += n
        elif wt == 1:
            i += 8
            payload = None
        elif wt == 5:
            i += 4
            payload = None
        else:
            raise SystemExit("unexpected wire type %d" % wt)
        yield key >> 3, wt, b[start:i], payload


def sub(num, body):
    return put_varint(num << 3 | 2) + put_varint(len(body)) + body


def keep(body, drop):
    return b"".join(raw for n, _, raw, _ in fields(body) if n not in drop)


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out = bytearray()
    for n, wt, raw, payload in fields(data):
        if n == 3 and wt == 2:
            out += sub(3, keep(payload, {7, 8, 9, 10}))
        elif n == 4 and wt == 2:
            out += sub(4, keep(payload, {4}))
        elif n == 5:
            continue
        else:
            out += raw
    sys.stdout.buffer.write(bytes(out))


main()

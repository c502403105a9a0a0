#!/usr/bin/env python3
"""Unsymbolizes a pprof profile, as a profiler without symbols writes one:

  pprof_strip.py IN.pb.gz > OUT.pb

Locations keep their address and mapping and lose their lines; functions go; mappings
lose their has_* flags. Everything else is copied field by field (protobuf wire format,
field numbers of google/pprof's profile.proto)."""
import gzip
import sys

from pbwire import put_varint, spans


def fields(b):
    """(number, wire type, raw bytes of the whole field, payload of a length-delimited one)."""
    for num, wt, start, end, v in spans(b):
        yield num, wt, b[start:end], v if wt == 2 else None


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

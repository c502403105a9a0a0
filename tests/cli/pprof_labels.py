#!/usr/bin/env python3
"""What a pprof profile tells a reader at a glance, read on its own (protobuf wire format,
field numbers of google/pprof's profile.proto), for tests that run without Go:

  pprof_labels.py FILE.pb[.gz]

prints "label KEY" once per label key any Sample carries, sorted, then "file NAME": the
first mapping's file, the one `go tool pprof` shows as "File:"."""
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


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            sys.exit("wire type %d" % wt)
        yield num, wt, v


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, keys, files = [], set(), []
    for num, wt, v in fields(data):
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 2:
            for n2, _, lb in fields(v):
                if n2 == 3:
                    keys.update(k for n3, _, k in fields(lb) if n3 == 1)
        elif num == 3:
            files.extend(f for n2, _, f in fields(v) if n2 == 5)
    for k in sorted(strings[k] for k in keys):
        print("label", k)
    if files:
        print("file", strings[files[0]])


if __name__ == "__main__":
    main()

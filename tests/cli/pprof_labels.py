#!/usr/bin/env python3
"""What a pprof profile tells a reader at a glance, read on its own (protobuf wire format,
field numbers of google/pprof's profile.proto), for tests that run without Go:

  pprof_labels.py FILE.pb[.gz]

prints "label KEY" once per label key any Sample carries, sorted, then "file NAME": the
first mapping's file, the one `go tool pprof` shows as "File:"."""
import gzip
import sys

from pbwire import fields


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

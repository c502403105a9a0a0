#!/usr/bin/env python3
"""Prints a pprof profile's total per sample type, one line each, as `go tool pprof -top`
totals it (every Sample's values summed), without go:

  pprof_totals.py PROFILE[.pb.gz]   ->   TYPE/UNIT<TAB>TOTAL

The protobuf wire format is read by hand (google/pprof's profile.proto field numbers:
Profile.sample_type 1, sample 2, string_table 6; ValueType.type 1, unit 2; Sample.value 2,
packed or not)."""
import gzip
import sys

from pbwire import fields, varint


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    types, strings, totals = [], [], []
    for num, wt, v in fields(data):
        if num == 1:
            t = dict((n, x) for n, _, x in fields(v))
            types.append((t.get(1, 0), t.get(2, 0)))
        elif num == 6:
            strings.append(v.decode("utf-8", "surrogateescape"))
        elif num == 2:
            vals = []
            for n, w, x in fields(v):
                if n != 2:
                    continue
                if w == 0:
                    vals.append(signed(x))
                else:
                    k = 0
                    while k < len(x):
                        y, k = varint(x, k)
                        vals.append(signed(y))
            totals += [0] * (len(vals) - len(totals))
            for k, y in enumerate(vals):
                totals[k] += y
    for k, (t, u) in enumerate(types):
        print("%s/%s\t%d" % (strings[t], strings[u], totals[k] if k < len(totals) else 0))


if __name__ == "__main__":
    main()

"""The protobuf wire format, read and written by hand for the test scripts that look into
pprof and OTLP files without protoc or Go (pprof_labels.py, pprof_totals.py,
pprof_strip.py)."""


def varint(b, i):
    """The varint at b[i]: (value, index after it)."""
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


def spans(b):
    """(number, wire type, start, end, value) for each field of message b: value is the
    integer of a varint, the payload bytes of the other wire types."""
    i = 0
    while i < len(b):
        start = i
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
            raise ValueError("wire type %d" % wt)
        yield num, wt, start, i, v


def fields(b):
    """(number, wire type, value) for each field of message b."""
    for num, wt, _, _, v in spans(b):
        yield num, wt, v

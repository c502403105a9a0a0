#!/usr/bin/env python3
"""Writes a small JFR chunk that no recorder writes so: for tests/cli/jfr.bats.

usage: jfr_gen.py OUT [plain|cputime|nothread]

Fields in an order of its own (Thread's javaName before its osThreadId and osName, a
"virtual" field first, an "extra" field before StackFrame's method), every string
encoding (UTF-16 with a surrogate pair, Latin-1, UTF-8, a reference to the String pool,
empty, null), an event type the reader does not know between the samples; "plain": the
integers uncompressed (big-endian of their width), else compressed (LEB128). "cputime":
two jdk.CPUTimeSample events too, laid out as JDK 25's metadata declares the event
(startTime, stackTrace, eventThread, failed, samplingPeriod: a timespan in ticks, biased),
for JDKs that cannot record it. "nothread": a third execution sample of a thread the pool
does not hold (as the JDK writes a thread started while the JVM shuts down). `jfr print`
reads it as the JDK reads any recording.
"""
import struct
import sys

PLAIN = len(sys.argv) > 2 and sys.argv[2] == "plain"
CPUTIME = len(sys.argv) > 2 and sys.argv[2] == "cputime"
NOTHREAD = len(sys.argv) > 2 and sys.argv[2] == "nothread"
WIDTH = {"short": 2, "char": 2, "int": 4, "long": 8}


def num(v, kind="long"):
    if PLAIN:
        return (v & (1 << 8 * WIDTH[kind]) - 1).to_bytes(WIDTH[kind], "big")
    v &= (1 << 8 * WIDTH[kind]) - 1  # Java's integers as their bits (an int -1: 2^32 - 1)
    out = bytearray()
    for i in range(9):
        if i == 8:
            out.append(v & 0xff)
            break
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            break
    return bytes(out)


def utf8(s):
    b = s.encode()
    return b"\x03" + num(len(b), "int") + b


def latin1(s):
    b = s.encode("latin-1")
    return b"\x05" + num(len(b), "int") + b


def utf16(s):
    units = s.encode("utf-16-be")
    chars = [int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)]
    return b"\x04" + num(len(chars), "int") + b"".join(num(c, "char") for c in chars)


def pool_ref(key):
    return b"\x02" + num(key)


def event(type_id, body):
    # the size counts itself: written in a fixed width (4 bytes, or a padded LEB128)
    def size_field(n):
        if PLAIN:
            return n.to_bytes(4, "big")
        return bytes([n & 0x7f | 0x80, n >> 7 & 0x7f | 0x80, n >> 14 & 0x7f | 0x80, n >> 21 & 0x7f])
    rest = num(type_id) + body
    return size_field(4 + len(rest)) + rest


# ---- metadata ----
CLASSES = [
    # (id, name, superType, simpleType, [(field, class id, constantPool, dimension)])
    (1, "long", None, []), (2, "int", None, []), (3, "boolean", None, []),
    (4, "java.lang.String", None, []), (5, "char", None, []),
    (10, "java.lang.Thread", None, [("virtual", 3, 0, 0), ("javaName", 4, 0, 0),
                                    ("osThreadId", 1, 0, 0), ("osName", 4, 0, 0),
                                    ("javaThreadId", 1, 0, 0)]),
    (11, "jdk.types.Symbol", None, [("string", 4, 0, 0)]),
    (12, "java.lang.Class", None, [("name", 11, 1, 0), ("hidden", 3, 0, 0)]),
    (13, "jdk.types.Method", None, [("type", 12, 1, 0), ("name", 11, 1, 0)]),
    (14, "jdk.types.FrameType", None, [("description", 4, 0, 0)]),
    (15, "jdk.types.StackFrame", None, [("extra", 2, 0, 0), ("method", 13, 1, 0),
                                        ("lineNumber", 2, 0, 0), ("bytecodeIndex", 2, 0, 0),
                                        ("type", 14, 1, 0)]),
    (16, "jdk.types.StackTrace", None, [("truncated", 3, 0, 0), ("frames", 15, 0, 1)]),
    (17, "jdk.types.ThreadState", None, [("name", 4, 0, 0)]),
    (30, "jdk.jfr.Timestamp", "java.lang.annotation.Annotation", [("value", 4, 0, 0)]),
    (20, "jdk.ExecutionSample", "jdk.jfr.Event", [("startTime", 1, 0, 0),
                                                   ("sampledThread", 10, 1, 0),
                                                   ("stackTrace", 16, 1, 0),
                                                   ("state", 17, 1, 0)]),
    (21, "test.Unknown", "jdk.jfr.Event", [("startTime", 1, 0, 0), ("blob", 4, 0, 0),
                                            ("n", 2, 0, 0)]),
    (31, "jdk.jfr.Timespan", "java.lang.annotation.Annotation", [("value", 4, 0, 0)]),
    (22, "jdk.CPUTimeSample", "jdk.jfr.Event", [("startTime", 1, 0, 0), ("stackTrace", 16, 1, 0),
                                                 ("eventThread", 10, 1, 0), ("failed", 3, 0, 0),
                                                 ("samplingPeriod", 1, 0, 0),
                                                 ("biased", 3, 0, 0)]),
]


def metadata():
    strings = []

    def sid(s):
        if s not in strings:
            strings.append(s)
        return strings.index(s)

    def element(name, attrs, children):
        out = num(sid(name), "int") + num(len(attrs), "int")
        for k, v in attrs:
            out += num(sid(k), "int") + num(sid(v), "int")
        return out + num(len(children), "int") + b"".join(children)

    classes = []
    for cid, name, sup, fields in CLASSES:
        attrs = [("name", name), ("id", str(cid))]
        if sup:
            attrs.append(("superType", sup))
        if len(fields) == 1 and fields[0][1] == 4 and not sup:
            attrs.append(("simpleType", "true"))  # the JDK shows it as its string
        fs = []
        for fname, fcls, cp, dim in fields:
            fa = [("name", fname), ("class", str(fcls))]
            if cp:
                fa.append(("constantPool", "true"))
            if dim:
                fa.append(("dimension", "1"))
            # a start time in ticks, as the JDK annotates it
            ann = [element("annotation", [("class", "30"), ("value", "TICKS")], [])] \
                if fname == "startTime" else []
            if fname == "samplingPeriod":  # a span of ticks, as the JDK annotates it
                ann = [element("annotation", [("class", "31"), ("value", "TICKS")], [])]
            fs.append(element("field", fa, ann))
        classes.append(element("class", attrs, fs))
    root = element("root", [], [element("metadata", [], classes),
                                element("region", [("gmtOffset", "0"), ("locale", "en_US")], [])])
    body = num(0) + num(0) + num(1) + num(len(strings), "int")
    body += b"".join(utf8(s) for s in strings) + root
    return event(0, body)


def pools():
    def pool(cid, entries):
        return num(cid) + num(len(entries), "int") + b"".join(num(k) + v for k, v in entries)
    ps = [
        pool(4, [(7, latin1("run"))]),
        pool(10, [(5, b"\x00" + utf16("w\u00f6rker-\u00fc\U0001F600") + num(4242) +
                   latin1("L\u00e4tin") + num(15)),
                  (6, b"\x00" + b"\x00" + num(4343) + b"\x01" + num(16))]),
        pool(11, [(1, utf8("pkg/Cls")), (2, pool_ref(7)), (3, utf8("main")), (4, b"\x01")]),
        pool(12, [(1, num(1) + b"\x00")]),
        pool(13, [(1, num(1) + num(2)), (2, num(1) + num(3)), (3, num(1) + num(4))]),
        pool(14, [(0, utf8("Interpreted")), (1, latin1("JIT compiled"))]),
        pool(17, [(1, utf8("STATE_RUNNABLE")), (2, utf8("STATE_SLEEPING"))]),
        pool(16, [(1, b"\x00" + num(3, "int") +
                   num(7, "int") + num(1) + num(42, "int") + num(3, "int") + num(1) +
                   num(0, "int") + num(2) + num(7, "int") + num(0, "int") + num(0) +
                   num(0, "int") + num(3) + num(-1, "int") + num(0, "int") + num(0))]),
    ]
    body = num(0) + num(0) + num(0) + b"\x00" + num(len(ps), "int") + b"".join(ps)
    return event(1, body)


def main():
    start_ns, start_ticks, tps = 1700000000123456789, 1000, 1000000000
    events = [
        event(20, num(start_ticks + 1500) + num(5) + num(1) + num(1)),
        event(21, num(start_ticks + 1600) + utf8("skipped by size") + num(9, "int")),
        event(20, num(start_ticks + 2999) + num(6) + num(1) + num(2)),
    ]
    if NOTHREAD:
        events.append(event(20, num(start_ticks + 3999) + num(99) + num(1) + num(1)))
    if CPUTIME:
        # 10 ms and 20 ms of CPU time (ticks are ns here); the second's stack failed
        events += [
            event(22, num(start_ticks + 3500) + num(1) + num(5) + b"\x00" + num(10000000) + b"\x00"),
            event(22, num(start_ticks + 4500) + num(0) + num(6) + b"\x01" + num(20000000) + b"\x01"),
        ]
    body = b"".join(events)
    meta = metadata()
    cp = pools()
    meta_at = 68 + len(body)
    cp_at = meta_at + len(meta)
    size = cp_at + len(cp)
    flags = 2 | (0 if PLAIN else 1)
    head = b"FLR\0" + struct.pack(">HHqqqqqqqI", 2, 1, size, cp_at, meta_at, start_ns,
                                  5000, start_ticks, tps, flags)
    with open(sys.argv[1], "wb") as f:
        f.write(head + body + meta + cp)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes small profile.proto files by hand, from the field numbers of google/pprof's
profile.proto and the protobuf wire format, for the pprof reader's tests:

  pprof_gen.py CASE > file.pb

Cases: inline (a location with two lines, an unsymbolized location, labels of another
tool), drop (drop_frames/keep_frames), rx, rxkeep, rxinject, rxctl, rxunicode,
droproot (drop_frames in RE2 syntax), worstrx, backref, nested, slowmatch (drop_frames hostile to
backtracking matchers), inexact (time values that are not multiples of the period),
noperiod (a time type and no period), types (three sample types and default_sample_type),
labels (one stack under two string labels, with a numeric label and its unit),
bigsample (a Sample larger than the writer's buffer, values of many bytes),
and hostile ones that pprof refuses: badvarint, badlen, dupid, noloc, noid, strindex,
firststring, values, wiretype, concat.
"""
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def num(field, v):
    return varint(field << 3) + varint(v)


def msg(field, body):
    return varint(field << 3 | 2) + varint(len(body)) + body


def packed(field, vals):
    return msg(field, b"".join(varint(v) for v in vals))


class Strings:
    def __init__(self):
        self.table = [""]

    def __call__(self, s):
        if s not in self.table:
            self.table.append(s)
        return self.table.index(s)

    def encode(self):
        return b"".join(msg(6, s.encode()) for s in self.table)


def vt(s, field, t, u):
    return msg(field, num(1, s(t)) + num(2, s(u)))


def fn(s, fid, name, file):
    return msg(5, num(1, fid) + num(2, s(name)) + num(4, s(file)))


def loc(lid, lines, addr=0, mapping=0):
    body = num(1, lid) + (num(2, mapping) if mapping else b"") + (num(3, addr) if addr else b"")
    for f, line in lines:
        body += msg(4, num(1, f) + num(2, line))
    return msg(4, body)


def sample(locs, vals, labels=b""):
    return msg(2, packed(1, locs) + packed(2, vals) + labels)


def label(s, key, string=None, number=None):
    body = num(1, s(key))
    body += num(2, s(string)) if string is not None else num(3, number)
    return msg(3, body)


def base(s, period_ns=1000000):
    return (vt(s, 1, "samples", "count") + vt(s, 1, "cpu", "nanoseconds") +
            vt(s, 11, "cpu", "nanoseconds") + num(12, period_ns) + num(9, 5000000000))


def funcs(s):
    return (fn(s, 1, "main", "/src/app.c") + fn(s, 2, "work", "/src/app.c") +
            fn(s, 3, "inlined_step", "/src/step.h") + fn(s, 4, "malloc", "/lib/alloc.c") +
            fn(s, 5, "malloc_impl", "/lib/alloc.c") + fn(s, 6, "keep_me", "/lib/alloc.c"))


def case_inline():
    s = Strings()
    body = base(s) + funcs(s)
    body += msg(3, num(1, 7) + num(5, s("/usr/bin/app")))
    body += loc(10, [(1, 3)]) + loc(11, [(3, 40), (2, 12)]) + loc(12, [], addr=0x4011D6, mapping=7)
    body += sample([11, 10], [3, 3000000], label(s, "thread id", number=42) +
                   label(s, "thread state", string="gil+cpu") + label(s, "span", string="x"))
    body += sample([12, 11, 10], [2, 2000000], label(s, "thread id", number=43))
    body += sample([10], [0, 0])
    return body + s.encode()


def case_drop():
    s = Strings()
    body = base(s) + funcs(s)
    body += loc(10, [(1, 3)]) + loc(11, [(2, 12)]) + loc(12, [(4, 7)]) + loc(13, [(5, 9)])
    body += loc(14, [(6, 2)]) + loc(15, [(5, 1), (2, 13)])
    body += sample([13, 12, 11, 10], [5, 5000000])
    body += sample([14, 12, 11, 10], [2, 2000000])
    body += sample([15, 10], [1, 1000000])
    body += sample([12, 11], [4, 4000000])
    body += num(7, s("malloc.*")) + num(8, s("keep_me"))
    return body + s.encode()


def hostile_rx(pattern):
    """A 3,000-character name and a pattern that backtracking engines take minutes or
    gigabytes over; RE2 refuses both of these."""
    s = Strings()
    body = base(s) + fn(s, 1, "main", "m.c") + fn(s, 2, "a" * 3000, "m.c")
    body += loc(1, [(1, 1)]) + loc(2, [(2, 2)]) + sample([2, 1], [1, 1000000])
    return body + num(7, s(pattern)) + s.encode()


def case_backref():
    return hostile_rx(r"(a|aa)*\2\2\2\2b")


def case_nested():
    return hostile_rx("((a{1,255}){1,255}){1,255}")


def case_rxctl():
    # a refused pattern (no closing ]) with a newline and a terminal escape in it
    return hostile_rx("x\n\x1b[31m(?=")


def case_rxunicode():
    # a Unicode class: Go takes it, we do not (lib/base/regex.h); nothing is dropped, with a word
    s = Strings()
    body = base(s) + fn(s, 1, "main", "m.c") + fn(s, 2, "\u03a9mega", "m.c")
    body += loc(1, [(1, 1)]) + loc(2, [(2, 2)]) + sample([2, 1], [1, 1000000])
    return body + num(7, s(r"\p{Greek}.*")) + s.encode()


def case_slowmatch():
    # valid RE2, and exponential for a backtracking matcher: nothing matches, so nothing
    # is dropped
    return hostile_rx("((a|aa)*)*b")


def case_rx():
    """drop_frames in RE2 syntax against C++ and PPC names, each stack a root, a frame
    that may match and a leaf: what pprof drops, we drop."""
    s = Strings()
    names = ["std::vector<int>::push_back(int const&)", ".ppc_helper", "ns::(anonymous namespace)::f",
             "Foo::operator()(int)", "Alloc9", "alloc", "ALLOC_x", "keep9", "x(y", "(weird)",
             "caf\u00e9", "tab\tname", "z.y"]
    body = base(s) + fn(s, 1, "main", "m.c") + fn(s, 2, "leaf", "m.c") + loc(1, [(1, 1)])
    body += loc(2, [(2, 2)])
    for i, name in enumerate(names):
        body += fn(s, 10 + i, name, "n.cc") + loc(10 + i, [(10 + i, i + 1)])
        body += sample([2, 10 + i, 1], [1, 1000000])
    pattern = (r"std::vector<\w+>::push_back|ppc_\w+|ns::\(anonymous namespace\)::[[:lower:]]"
               r"|Foo::operator\(\)|(?i)alloc\d?|keep\d|x|caf.|tab\sname|z\.y|\Q\E")
    return body + num(7, s(pattern)) + num(8, s(r"keep[0-9]")) + s.encode()


def case_rxkeep():
    # the same with a keep_frames Go refuses: pprof then prunes nothing at all
    s = Strings()
    body = base(s) + fn(s, 1, "main", "m.c") + fn(s, 2, "alloc", "m.c") + fn(s, 3, "leaf", "m.c")
    body += loc(1, [(1, 1)]) + loc(2, [(2, 2)]) + loc(3, [(3, 3)])
    body += sample([3, 2, 1], [1, 1000000])
    return body + num(7, s("alloc")) + num(8, s("(?=x)")) + s.encode()


def case_rxinject():
    # pprof compiles "^(" + pattern + ")$" as one string: a pattern may close the group
    s = Strings()
    body = base(s) + fn(s, 1, "main", "m.c") + fn(s, 2, "wrapper_x", "m.c")
    body += fn(s, 3, "leaf", "m.c") + loc(1, [(1, 1)]) + loc(2, [(2, 2)]) + loc(3, [(3, 3)])
    body += sample([3, 2, 1], [1, 1000000])
    return body + num(7, s("wrapper)|(nothing")) + s.encode()


def case_droproot():
    # drop_frames "main|ab" matching root frames: pprof prunes nothing above the first
    # frame that does not match (profile/prune.go, "to avoid pruning everything"); a
    # root location whose inner line matches has that line cut all the same
    s = Strings()
    body = base(s) + fn(s, 1, "main", "m.c") + fn(s, 2, "ab", "m.c") + fn(s, 3, "cd", "m.c")
    body += fn(s, 4, "root2", "m.c") + fn(s, 5, "leaf", "m.c")
    body += loc(1, [(1, 1)]) + loc(2, [(2, 2)]) + loc(3, [(3, 3)]) + loc(4, [(2, 4), (4, 5)])
    body += loc(5, [(5, 6)])
    body += sample([2, 1], [1, 1000000]) + sample([3, 1], [2, 2000000])
    body += sample([3, 4], [3, 3000000]) + sample([5, 2, 3, 1], [4, 4000000])
    body += sample([2, 2, 1], [5, 5000000])
    return body + num(7, s("main|ab")) + s.encode()


def case_worstrx(names=100, length=9000, shape="states"):
    """drop_frames and keep_frames as costly as this reader's matcher allows: programs
    near the instruction cap, over 100 distinct 9,000-character names of 'a' and 'b' in a
    fixed pseudo-random order. ".*a.{8990}" (written as .{1000} repeats) has a live thread for each 'a' in the last
    8,990 characters and a new set of them at each character: every lazy-DFA state is
    new. The drop matches (the tenth character is 'a'), so the keep is matched too.
    shape "live": ".*.{8990}" and ".*.{8990}x", every thread live at each character (an
    NFA's worst case; a DFA's states repeat, but are too large to keep)."""
    s = Strings()
    body = base(s) + fn(s, 1, "main", "m.c") + loc(1, [(1, 1)])
    x = 12345
    for i in range(names):
        name = bytearray()
        for _ in range(length):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            name.append(ord("a") + (x >> 16 & 1))
        name[9] = ord("a")
        body += fn(s, 10 + i, name.decode(), "m.c") + loc(10 + i, [(10 + i, 2)])
        body += sample([10 + i, 1], [1, 1000000])
    gap = length - 10  # as .{1000} repeats: RE2 allows no count over 1000
    dots = ".{1000}" * (gap // 1000) + ".{%d}" % (gap % 1000)
    if shape == "live":
        return body + num(7, s(".*" + dots)) + num(8, s(".*" + dots + "x")) + s.encode()
    return body + num(7, s(".*a" + dots)) + num(8, s(".*b" + dots)) + s.encode()


def case_inexact():
    s = Strings()
    body = (vt(s, 1, "wall", "nanoseconds") + vt(s, 11, "wall", "nanoseconds") + num(12, 3) +
            fn(s, 1, "main", "m.c") + loc(1, [(1, 1)]) + sample([1], [10]) + sample([1], [1]))
    return body + s.encode()


def case_noperiod():
    s = Strings()
    body = (vt(s, 1, "samples", "count") + vt(s, 1, "wall", "nanoseconds") +
            fn(s, 1, "main", "m.c") + loc(1, [(1, 1)]) + sample([1], [2, 20]))
    return body + s.encode()


def case_labels():
    s = Strings()
    size = num(1, s("size")) + num(3, 7168) + num(4, s("bytes"))
    body = (base(s) + num(10, 3000000000) + fn(s, 1, "main", "m.c") + loc(1, [(1, 1)]) +
            sample([1], [2, 2000000], label(s, "worker", "w1") + msg(3, size)) +
            sample([1], [3, 3000000], label(s, "worker", "w3") + msg(3, size)))
    return body + s.encode()


def case_timed():
    """A CPU profile whose time values are not its counts times the period: a sample of 2
    with 3.5 ms, one of 1 with 0.25 ms (period 1 ms)."""
    s = Strings()
    body = (base(s) + fn(s, 1, "main", "m.c") + fn(s, 2, "work", "m.c") + loc(1, [(1, 1)]) +
            loc(2, [(2, 4)]) + sample([2, 1], [2, 3500000]) + sample([1], [1, 250000]))
    return body + s.encode()


def case_cpubytes():
    """A CPU profile that also carries bytes: samples, cpu and mem in bytes, cpu the
    default (so weights count samples)."""
    s = Strings()
    body = (vt(s, 1, "samples", "count") + vt(s, 1, "cpu", "nanoseconds") +
            vt(s, 1, "mem", "bytes") + vt(s, 11, "cpu", "nanoseconds") + num(12, 1000000) +
            num(14, s("cpu")) + fn(s, 1, "main", "m.c") + loc(1, [(1, 1)]) +
            sample([1], [2, 2000000, 4096]))
    return body + s.encode()


def case_types():
    s = Strings()
    body = (vt(s, 1, "alloc_objects", "count") + vt(s, 1, "alloc_space", "bytes") +
            vt(s, 1, "inuse_space", "bytes") + num(14, s("alloc_space")) +
            fn(s, 1, "main", "m.go") + fn(s, 2, "grow", "m.go") + loc(1, [(1, 1)]) +
            loc(2, [(2, 5)]) + sample([2, 1], [3, 4096, 1024]) + sample([1], [1, 512, 0]))
    return body + s.encode()


def case_bigsample():
    """One Sample larger than the pprof writer's 64 KiB buffer (7,000 labels), with four
    sample types whose values take 28 bytes: the writer sends it piece by piece."""
    s = Strings()
    big = [1 << 62, (1 << 62) + 1, (1 << 62) + 2]
    labels = b"".join(label(s, "k", number=(1 << 40) + i) for i in range(7000))
    body = (b"".join(vt(s, 1, t, "count") for t in ("a", "b", "c", "d")) + num(14, s("a")) +
            fn(s, 1, "main", "m.go") + loc(1, [(1, 1)]) + sample([1], [1] + big, labels))
    return body + s.encode()


def good():
    s = Strings()
    return s, base(s) + fn(s, 1, "main", "m.c") + loc(1, [(1, 1)])


def hostile(case):
    s, body = good()
    if case == "badvarint":
        return body + sample([1], [1, 1]) + s.encode() + b"\x10" + b"\xff" * 11
    if case == "badlen":
        return body + s.encode() + b"\x12\xff\xff\x03"
    if case == "dupid":
        return body + loc(1, [(1, 2)]) + sample([1], [1, 1]) + s.encode()
    if case == "noloc":
        return body + sample([9], [1, 1]) + s.encode()
    if case == "noid":
        return body + loc(0, [(1, 2)]) + s.encode()
    if case == "strindex":
        return body + fn(s, 2, "x", "y") + num(7, 999) + s.encode()
    if case == "firststring":
        return msg(6, b"oops") + body + s.encode()
    if case == "values":
        return body + sample([1], [1]) + s.encode()
    if case == "wiretype":
        return body + varint(2 << 3 | 0) + varint(5) + s.encode()
    if case == "concat":
        return body + s.encode() + num(9, 7)
    sys.exit("unknown case " + case)


def main():
    case = sys.argv[1]
    data = globals().get("case_" + case)
    sys.stdout.buffer.write(data() if data else hostile(case))


if __name__ == "__main__":
    main()

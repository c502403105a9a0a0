#!/usr/bin/env python3
"""Hand-made Apple Sampler traces for tests/cli/sampler2tach.bats and the fuzz seeds.

Usage: sampler_gen.py CASE > FILE     (sampler_gen.py --list prints the cases)

The files are binary (raw 4- or 8-byte ids), so they are made here rather than committed.
Each case says which tolerance of the reader it exercises; the expected results are in the
bats file next to this script.
"""
import struct
import sys

MAGIC = b"@supersamplerV1.0\n"
SYMTAB = b"@symboltableV1.1\n"
END = b"@end\n"


def be(v, w=4):
    return v.to_bytes(w, "big")


def le(v, w=4):
    return v.to_bytes(w, "little")


def sym(sid, name, lib=b"NIL", src=b"NIL", unknown=0, w=4, enc=be, eol=b"\n"):
    return b"\t" + enc(sid, w) + b"\t" + enc(unknown, w) + b"\t" + name + b"\t" + lib + b"\t" + src + eol


def rec(frames, w=4, hw=4, enc=be, abc=(1, 0, 1)):
    out = b"\t" + b"".join(enc(x, hw) for x in abc) + enc(len(frames), hw)
    return out + b"".join(enc(f, w) for f in frames) + b"\n"


def thread(tid):
    return b"@threadV1.0\t%04X\n" % tid


# Three functions and a thread, the kpreid grammar exactly.
def basic():
    return (MAGIC + SYMTAB
            + sym(0x2122, b"Thread_2122", b"Thread_2122", b"Thread_2122")
            + sym(0x2123, b"main", b"/src/app.lisp", b"/src/app.lisp", unknown=10)
            + sym(0x2124, b"work", b"/src/app.lisp", b"/src/app.lisp", unknown=20)
            + sym(0x2125, b"leaf", b"/usr/lib/libc.dylib", b"NIL")
            + END + thread(0x2122)
            + rec([0x2125, 0x2124, 0x2123]) + rec([0x2124, 0x2123]) + rec([0x2125, 0x2124, 0x2123])
            + END)


def sbcl(with_nil=True):
    """What sb-sprof's write-sampler-data (kpreid 2008) writes for this samples vector.

    The vector holds pairs (debug-info, pc); each trace is trace-start then frames leaf
    first. None stands for sb-sprof's nil debug-info (foreign code), named "Thread"."""
    traces = [["leaf", "work", "main"], [None if with_nil else "leaf", "work", "main"],
              ["work", "main"], ["leaf", "other", "top"]]
    vec = []
    for t in traces:
        vec += ["trace-start", 0]
        for f in t:
            vec += [f, 0]
    index = len(vec)
    files = {"main": b"/home/u/app.lisp", "work": b"/home/u/app.lisp", "other": b"/home/u/b.lisp"}
    out = MAGIC + SYMTAB
    syms = {}
    gen = 0x2121
    # for i below (- index 2) by 2: the last entry never gets a symbol line.
    for i in range(0, index - 2, 2):
        di = vec[i]
        if di == "trace-start" or di in syms:
            continue
        gen += 1
        syms[di] = gen
        name = b"Thread" if di is None else di.encode()
        path = files.get(di, b"NIL")
        out += b"\t" + be(gen) + b"\t" + be(0) + b"\t" + name + b"\t" + path + b"\t" + path + b"\n"
    # The last entry, had the writer not stopped with "No symbol assigned": an id that the
    # table never defines.
    if vec[index - 2] not in syms:
        gen += 1
        syms[vec[index - 2]] = gen
    tid = syms.get(None)
    out += b"@threadV1.0\t" + (b"%04X" % tid if tid is not None else b"NIL") + b"\n"
    buf = []
    for i in range(index - 2, -1, -2):
        di = vec[i]
        if di == "trace-start":
            if buf:
                out += rec(buf)
            buf = []
        else:
            buf.insert(0, syms[di])
    if buf:
        out += rec(buf)
    return out + END


def sbcl_nil():
    return sbcl(with_nil=False)


def no_final_end():
    return basic()[:-len(END)]


def truncated():
    # Cut in the middle of the last record's frames.
    return basic()[:-len(END) - 6]


def nil_thread():
    return (MAGIC + SYMTAB + sym(0x2122, b"f") + END + b"@threadV1.0\tNIL\n"
            + rec([0x2122]) + END)


def thread_is_frame():
    # sb-sprof names the thread after its nil entry, which is also a frame.
    return (MAGIC + SYMTAB + sym(0x2122, b"Thread") + sym(0x2123, b"f", b"/a.lisp", b"/a.lisp")
            + thread(0x2122) + rec([0x2122, 0x2123]) + rec([0x2123]) + END)


def undefined():
    return (MAGIC + SYMTAB + sym(0x2122, b"f") + END + thread(0x2122)
            + rec([0xCAFE, 0x2122]) + rec([0xBEEF]) + END)


def crlf_text():
    # CR LF on every text line; the binary records keep bare LF, and one id's last byte is
    # 0x0D right before a record's LF: that CR is data, not a line end.
    return (b"@supersamplerV1.0\r\n@symboltableV1.1\r\n"
            + sym(0x2122, b"Thread_2122", b"Thread_2122", b"Thread_2122", eol=b"\r\n")
            + sym(0x220D, b"f", b"/a.c", b"/a.c", unknown=3, eol=b"\r\n")
            + sym(0x2123, b"g", b"/a.c", b"/a.c", unknown=4, eol=b"\r\n")
            + b"@end\r\n" + b"@threadV1.0\t2122\r\n"
            + rec([0x2123, 0x220D]) + rec([0x220D]) + b"@end\r\n")


def crlf_converted():
    return basic().replace(b"\n", b"\r\n")


def multi_block():
    return (MAGIC + SYMTAB + sym(0x2122, b"T1") + sym(0x2123, b"T2") + sym(0x2124, b"f")
            + sym(0x2125, b"g") + END
            + thread(0x2122) + rec([0x2124]) + thread(0x2123) + rec([0x2125])
            + thread(0x2122) + rec([0x2124]) + rec([0x2125, 0x2124]) + END)


def tab_ids():
    # Ids whose bytes are TAB and LF, in the table and in records.
    ids = [0x0909, 0x0A0A, 0x2209, 0x220A, 0x0A09090A]
    out = MAGIC + SYMTAB
    for k, i in enumerate(ids):
        out += sym(i, b"f%d" % k, b"/x.c", b"/x.c", unknown=0x0A09 + k)
    out += END + thread(0x2209)
    out += rec(ids) + rec([0x0A0A, 0x0909]) + rec([0x0A09090A])
    return out + END


def little_endian():
    return (MAGIC + SYMTAB + sym(0x2122, b"Thread_2122", enc=le)
            + sym(0x2123, b"main", b"/a.c", b"/a.c", unknown=7, enc=le)
            + sym(0x2124, b"leaf", b"/a.c", b"/a.c", unknown=9, enc=le)
            + END + thread(0x2122)
            + rec([0x2124, 0x2123], enc=le) + rec([0x2123], enc=le) + END)


def ids64(hw=4):
    return (MAGIC + SYMTAB + sym(0x2122, b"Thread_2122", w=8)
            + sym(0x7FFF00002123, b"main", b"/a.c", b"/a.c", unknown=7, w=8)
            + sym(0x7FFF0000210A, b"leaf", b"/a.c", b"/a.c", unknown=9, w=8)
            + END + thread(0x2122)
            + rec([0x7FFF0000210A, 0x7FFF00002123], w=8, hw=hw)
            + rec([0x7FFF00002123], w=8, hw=hw) + END)


def ids64_hdr64():
    return ids64(hw=8)


def versions():
    return (b"@supersamplerV1.1\n@symboltableV1.0\n" + sym(0x2122, b"f") + END + thread(0x2122)
            + rec([0x2122]) + END)


def unknown_section():
    return (MAGIC + SYMTAB + sym(0x2122, b"f") + b"@notesV2.0\nsome text\n\x00\x01binary\n"
            + END + thread(0x2122) + rec([0x2122]) + b"@fooV1.0\n\tjunk\n" + thread(0x2122)
            + rec([0x2122]) + END)


def duplicate():
    return (MAGIC + SYMTAB + sym(0x2122, b"first") + sym(0x2122, b"second") + sym(0x2123, b"x")
            + sym(0x2123, b"y") + END + thread(0x2122) + rec([0x2123, 0x2122]) + END)


def header_words():
    return (MAGIC + SYMTAB + sym(0x2122, b"f") + END + thread(0x2122)
            + rec([0x2122], abc=(2, 0, 1)) + rec([0x2122], abc=(1, 5, 1)) + END)


def fields():
    # Names are not escaped: a TAB in a name makes more fields, and the last two are paths.
    # Also a name only, a name and one path, "(null)" and empty source paths, line words.
    return (MAGIC + SYMTAB
            + sym(0x2122, b"a\tb", b"/lib/l.so", b"/src/s.c", unknown=12)
            + b"\t" + be(0x2123) + b"\t" + be(0) + b"\tnameonly\n"
            + b"\t" + be(0x2124) + b"\t" + be(5) + b"\tonepath\t/lib/one.so\n"
            + sym(0x2125, b"nullsrc", b"/lib/l.so", b"(null)", unknown=0xFFFFFFFF)
            + sym(0x2126, b"emptysrc", b"/lib/e.so", b"", unknown=0x80000000)
            + sym(0x2127, b"", b"", b"", unknown=1)
            + END + thread(0x2122)
            + rec([0x2122, 0x2123, 0x2124, 0x2125, 0x2126, 0x2127]) + END)


def after_end():
    return basic() + b"trailing bytes \x00\xff that are not part of the trace\n"


def end_between():
    return (MAGIC + SYMTAB + sym(0x2122, b"f") + sym(0x2123, b"g") + END
            + thread(0x2122) + rec([0x2122]) + END + thread(0x2123) + rec([0x2123]) + END)


def blank_lines():
    return (MAGIC + SYMTAB + b"\n" + sym(0x2122, b"f") + b"\r\n" + END + b"\n" + thread(0x2122)
            + rec([0x2122]) + b"\n" + rec([0x2122]) + END)


def empty_record():
    return MAGIC + SYMTAB + sym(0x2122, b"f") + END + thread(0x2122) + rec([]) + rec([0x2122]) + END


def no_threads():
    return MAGIC + SYMTAB + sym(0x2122, b"f") + END + END


def only_magic():
    return MAGIC + SYMTAB


# ---- errors ----

def bad_magic():
    return b"@supersamplerV2.0\n" + SYMTAB + END


def no_symtab():
    return MAGIC + thread(0x2122) + END


def bad_thread_id():
    return MAGIC + SYMTAB + sym(0x2122, b"f") + END + b"@threadV1.0\tzz12\n" + rec([0x2122]) + END


def record_outside():
    return MAGIC + SYMTAB + sym(0x2122, b"f") + END + rec([0x2122]) + END


def deep():
    return MAGIC + SYMTAB + sym(0x2122, b"f") + END + thread(0x2122) + rec([0x2122] * 5) + END


def bad_record():
    # The second record claims 3 frames but has 2 before its LF.
    good = rec([0x2122])
    bad = b"\t" + be(1) + be(0) + be(1) + be(3) + be(0x2122) * 2 + b"\n"
    return MAGIC + SYMTAB + sym(0x2122, b"f") + END + thread(0x2122) + good + bad + good + END


def garbage_line():
    return MAGIC + SYMTAB + sym(0x2122, b"f") + END + thread(0x2122) + b"xyz\n" + END


def bad_symbol_line():
    return MAGIC + SYMTAB + b"\t\x00\x00\x21\x22 no tabs here\n" + END


def huge_count():
    return (MAGIC + SYMTAB + sym(0x2122, b"f") + END + thread(0x2122) + rec([0x2122])
            + b"\t" + be(1) + be(0) + be(1) + be(0xFFFFFFF0) + be(0x2122) + b"\n" + END)


CASES = {name: fn for name, fn in list(globals().items())
         if callable(fn) and not name.startswith("_") and fn.__module__ == __name__
         and name not in ("be", "le", "sym", "rec", "thread", "main")}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: sampler_gen.py CASE|--list")
    if sys.argv[1] == "--list":
        print("\n".join(sorted(CASES)))
        return
    sys.stdout.buffer.write(CASES[sys.argv[1]]())


if __name__ == "__main__":
    main()

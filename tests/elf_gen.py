"""Small hostile ELF binaries for the symbolizer's tests, assembled here with cc from
generated assembly (no libc): their DWARF or symbol tables are written by hand.

    elf_gen.py OUT imports N      DWARF whose compile unit imports partial unit 1, each
                                  partial unit importing the next twice, N deep: a walk
                                  that revisits imports costs 2^N
    elf_gen.py OUT long-names L   two functions whose names of L bytes differ at the end

Both have one function "work" at the start of .text (the first has DWARF for it) and print
nothing; the address of "work" is what `nm` says.
"""
import os
import subprocess
import sys
import tempfile

HEAD = """
	.text
	.globl _start
	.type _start, @function
_start:
	call work
	jmp _start
	.size _start, .-_start
	.globl work
	.type work, @function
work:
	nop
	nop
	nop
	ret
.Lwork_end:
	.size work, .-work
"""


def imports(n):
    # abbrevs: 1 compile_unit, 2 imported_unit, 3 subprogram with pc, 4 partial_unit,
    # 5 subprogram without pc
    s = [HEAD, '\t.section .debug_abbrev,"",@progbits', ".Labbrev:"]
    for code, tag, kids, attrs in [(1, 0x11, 1, [(0x03, 0x08), (0x11, 0x01), (0x12, 0x07)]),
                                   (2, 0x3d, 0, [(0x18, 0x10)]),
                                   (3, 0x2e, 0, [(0x03, 0x08), (0x11, 0x01), (0x12, 0x07)]),
                                   (4, 0x3c, 1, [(0x03, 0x08)]),
                                   (5, 0x2e, 0, [(0x03, 0x08)])]:
        s.append("\t.uleb128 %d\n\t.uleb128 %d\n\t.byte %d" % (code, tag, kids))
        for a, f in attrs:
            s.append("\t.uleb128 %d\n\t.uleb128 %d" % (a, f))
        s.append("\t.byte 0\n\t.byte 0")
    s.append("\t.byte 0")
    s += ['\t.section .debug_info,"",@progbits', ".Linfo:"]

    def unit(label, body):
        s.extend(["\t.long .L%s_end - .L%s_start" % (label, label), ".L%s_start:" % label,
                  "\t.value 4", "\t.long .Labbrev", "\t.byte 8"] + body +
                 ["\t.byte 0", ".L%s_end:" % label])

    unit("cu", ["\t.uleb128 1", '\t.string "hang.c"', "\t.quad work",
                "\t.quad .Lwork_end - work",
                "\t.uleb128 2", "\t.long .Lpu1 - .Linfo",
                "\t.uleb128 3", '\t.string "work"', "\t.quad work",
                "\t.quad .Lwork_end - work"])
    for i in range(1, n + 1):
        body = [".Lpu%d:" % i, "\t.uleb128 4", '\t.string "pu%d"' % i]
        if i < n:
            body += ["\t.uleb128 2", "\t.long .Lpu%d - .Linfo" % (i + 1)] * 2
        body += ["\t.uleb128 5", '\t.string "f%d"' % i]
        unit("u%d" % i, body)
    s += ['\t.section .debug_aranges,"",@progbits', "\t.long .Lar_end - .Lar_start",
          ".Lar_start:", "\t.value 2", "\t.long .Linfo", "\t.byte 8", "\t.byte 0",
          "\t.long 0", "\t.quad work", "\t.quad .Lwork_end - work", "\t.quad 0", "\t.quad 0",
          ".Lar_end:"]
    return "\n".join(s) + "\n"


def long_names(length):
    a = "n" + "x" * (length - 2) + "a"
    b = a[:-1] + "b"
    s = [HEAD]
    for name in (a, b):
        s += ["\t.globl %s" % name, "\t.type %s, @function" % name, "%s:" % name,
              "\tnop", "\tret", "\t.size %s, .-%s" % (name, name)]
    return "\n".join(s) + "\n"


def main():
    out, what, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    src = imports(n) if what == "imports" else long_names(n)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gen.s")
        open(path, "w").write(src)
        subprocess.run(["cc", "-nostdlib", "-static", "-Wl,--build-id", "-o", out, path],
                       check=True)


if __name__ == "__main__":
    main()

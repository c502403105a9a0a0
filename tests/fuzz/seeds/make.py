"""Seeds of the perfdata_sym fuzz target (fuzz_symbolize.c): tiny binaries compiled here,
each with a capture built by tests/perfdata_gen.py whose mappings name ".../prog" at the
binary's addresses: frame-pointer chains, a --call-graph dwarf sample, JIT memory, a fork.

    python3 tests/fuzz/seeds/make.py OUTDIR    (needs cc and c++)
"""
import hashlib
import os
import struct
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
import perfdata_gen as g  # noqa: E402

SMALL = ["-nostdlib", "-static", "-Wl,--build-id", "-Wl,-z,noseparate-code",
         "-Wl,-z,max-page-size=64", "-fno-exceptions", "-fno-asynchronous-unwind-tables"]


def build(src, flags, tmp):
    out = os.path.join(tmp, "prog")
    cc = "c++" if src.endswith(".cc") else "cc"
    subprocess.run([cc] + flags + SMALL + ["-o", out, os.path.join(here, src)], check=True)
    subprocess.run(["objcopy", "--remove-section", ".comment", out], check=True)
    syms = {}
    for line in subprocess.run(["nm", out], capture_output=True, text=True).stdout.split("\n"):
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    return open(out, "rb").read(), syms


def captures(syms):
    funcs = sorted(a for n, a in syms.items() if n in ("mid", "top", "_start") or "work" in n)
    lo = min(funcs) & ~0xfff
    chain = [g.CTX_USER] + [a + 5 for a in funcs]
    p = g.PerfData()
    p.comm(7, 7, "prog")
    p.mmap2(7, lo, 0x1000, 0, "/fuzz/prog")
    p.mmap2(7, 0x7f0000000000, 0x1000, 0, "//anon")
    for a in funcs:
        p.sample(7, 7, a + 3, chain=[g.CTX_USER, a + 3] + chain[1:])
    p.fork(8, 7, 8, 7)
    p.sample(8, 8, funcs[0] + 1)
    p.sample(7, 7, 0x7f0000000010)
    yield p
    # --call-graph dwarf: BP, SP, IP of x86-64 and a stack copy with return addresses
    d = g.PerfData(sample_type=g.IP | g.TID | g.TIME | g.PERIOD | g.CALLCHAIN | g.REGS_USER |
                   g.STACK_USER, regs_user=(1 << 6) | (1 << 7) | (1 << 8), stack_user=64)
    d.comm(7, 7, "prog")
    d.mmap2(7, lo, 0x1000, 0, "/fuzz/prog")
    sp = 0x7ffc0000
    stack = b"".join(struct.pack("<Q", v) for v in [sp + 32, funcs[-1] + 5, sp + 48, funcs[0] + 7,
                                                     0, 0, 0, 0])
    d.sample(7, 7, funcs[0] + 2, chain=[g.CTX_USER, funcs[0] + 2], regs=[sp, sp, funcs[0] + 2],
             stack=stack)
    yield d


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for src, flags in [("tiny.c", ["-g", "-O2"]), ("tiny.c", ["-O0"]),
                           ("tiny.cc", ["-g", "-O2"]), ("tiny.c", ["-g", "-O1", "-gdwarf-4"])]:
            elf, syms = build(src, flags, tmp)
            for cap in captures(syms):
                blob = struct.pack("<H", len(elf)) + elf + cap.bytes()
                name = hashlib.sha1(blob).hexdigest()
                open(os.path.join(out, name), "wb").write(blob)


if __name__ == "__main__":
    main()

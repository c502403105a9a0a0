"""perf.data files built record by record, for tests and fuzz seeds: one cpu-clock event
(sample_id_all, so every record carries its pid/tid and time), in file mode with no
feature sections. The layouts are the kernel's (uapi/linux/perf_event.h) and perf's file
header (tools/perf/util/header.h).

    import perfdata_gen as g
    p = g.PerfData()
    p.comm(7, 7, "prog")
    p.mmap2(7, 0x400000, 0x1000, 0x1000, "/opt/prog")
    p.sample(7, 7, 0x400100, chain=[0x400100, 0x400200])
    open("x.data", "wb").write(p.bytes())

As a program: perfdata_gen.py OUT fork-storm N | many-maps N | ... (see main).
"""
import struct
import sys

IP, TID, TIME, CALLCHAIN, PERIOD = 1, 2, 4, 32, 256
REGS_USER, STACK_USER = 1 << 12, 1 << 13
CTX_USER = (1 << 64) - 512
PROT_READ, PROT_EXEC = 1, 4
MISC_USER, MISC_MMAP_DATA = 2, 1 << 13


def _str(s, align=8):
    b = s.encode() if isinstance(s, str) else s
    b += b"\0"
    return b + b"\0" * (-len(b) % align)


class PerfData:
    def __init__(self, sample_type=IP | TID | TIME | PERIOD | CALLCHAIN, regs_user=0,
                 stack_user=0, period=1000000):
        self.sample_type = sample_type
        self.regs_user = regs_user
        self.stack_user = stack_user
        self.period = period
        self.recs = []
        self.time = 1000

    def _tick(self):
        self.time += 1000
        return self.time

    def _rec(self, rtype, misc, body, pid=0, tid=0):
        body += struct.pack("<IIQ", pid, tid, self._tick())  # sample_id: TID, TIME
        self.recs.append(struct.pack("<IHH", rtype, misc, 8 + len(body)) + body)

    def raw(self, rec):
        """A record as given, header and all."""
        self.recs.append(rec)

    def comm(self, pid, tid, name):
        self._rec(3, 0, struct.pack("<II", pid, tid) + _str(name), pid, tid)

    def fork(self, pid, ppid, tid, ptid):
        self._rec(7, 0, struct.pack("<IIIIQ", pid, ppid, tid, ptid, self.time), pid, tid)

    def mmap2(self, pid, start, length, pgoff, path, prot=PROT_READ | PROT_EXEC, tid=None):
        tid = pid if tid is None else tid
        body = struct.pack("<IIQQQIIQQII", pid, tid, start, length, pgoff, 8, 1, 1234, 0,
                           prot, 2) + _str(path)
        self._rec(10, MISC_USER, body, pid, tid)

    def mmap(self, pid, start, length, pgoff, path, data=False, tid=None):
        tid = pid if tid is None else tid
        body = struct.pack("<IIQQQ", pid, tid, start, length, pgoff) + _str(path)
        self._rec(1, MISC_USER | (MISC_MMAP_DATA if data else 0), body, pid, tid)

    def sample(self, pid, tid, ip, chain=None, regs=None, stack=b"", misc=MISC_USER):
        st = self.sample_type
        b = b""
        if st & IP:
            b += struct.pack("<Q", ip)
        if st & TID:
            b += struct.pack("<II", pid, tid)
        if st & TIME:
            b += struct.pack("<Q", self._tick())
        if st & PERIOD:
            b += struct.pack("<Q", self.period)
        if st & CALLCHAIN:
            chain = [CTX_USER, ip] if chain is None else chain
            b += struct.pack("<Q", len(chain)) + b"".join(struct.pack("<Q", a) for a in chain)
        if st & REGS_USER:
            if regs is None:
                b += struct.pack("<Q", 0)
            else:
                b += struct.pack("<Q", 2) + b"".join(struct.pack("<Q", v) for v in regs)
        if st & STACK_USER:
            size = self.stack_user
            data = stack[:size] + b"\0" * (size - len(stack[:size]))
            b += struct.pack("<Q", size) + data + (struct.pack("<Q", len(stack[:size])) if size else b"")
        self.recs.append(struct.pack("<IHH", 9, misc, 8 + len(b)) + b)

    def finished_round(self):
        self.recs.append(struct.pack("<IHH", 68, 0, 8))

    def bytes(self):
        attr = struct.pack("<IIQQQQQ", 1, 128, 0, self.period, self.sample_type, 0, 1 << 18)
        attr += b"\0" * (80 - len(attr))
        attr += struct.pack("<QI", self.regs_user, self.stack_user)
        attr += b"\0" * (128 - len(attr))
        ids_off = 104
        attrs_off = ids_off + 8
        data_off = attrs_off + len(attr) + 16
        data = b"".join(self.recs)
        head = b"PERFILE2" + struct.pack("<QQ", 104, len(attr) + 16)
        head += struct.pack("<QQQQQQ", attrs_off, len(attr) + 16, data_off, len(data), 0, 0)
        head += b"\0" * 32  # no features
        out = head + struct.pack("<Q", 1) + attr + struct.pack("<QQ", ids_off, 8) + data
        assert len(out) == data_off + len(data)
        return out


def fork_storm(n):
    """A chain of n processes, each forked from the one before and mapping one more
    file: copied mappings would cost n^2/2, memory must follow the n mappings."""
    p = PerfData()
    p.comm(1, 1, "init")
    for k in range(8):
        p.mmap2(1, 0x400000 + k * 0x100000, 0x1000, 0, "/opt/lib%d.so" % k)
    for i in range(n):
        pid = 2 + i
        p.fork(pid, pid - 1, pid, pid - 1)
        p.mmap2(pid, 0x10000000 + i * 0x1000, 0x1000, 0, "/opt/child%d" % (i % 64))
    last = 1 + n
    p.sample(last, last, 0x400010)
    p.sample(last, last, 0x10000010)
    p.sample(last, last, 0x10000000 + (n - 1) * 0x1000 + 0x10)
    return p


def main():
    out, what = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    if what == "fork-storm":
        p = fork_storm(n)
    else:
        sys.exit("perfdata_gen.py: unknown kind " + what)
    open(out, "wb").write(p.bytes())


if __name__ == "__main__":
    main()

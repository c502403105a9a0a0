/* The user-space unwinder behind `perf record --call-graph dwarf` (unwind.c): a sample
 * carries the user registers and a copy of the top of the user stack instead of a call
 * chain, and the chain is rebuilt here from each binary's CFI (.eh_frame, .debug_frame)
 * with elfutils' libdwfl, as perf's own unwind-libdw.c and hotspot's perfparser do.
 * Where a binary has no CFI for a PC, libdwfl follows the frame pointer; where libdwfl
 * cannot start at all, our own walk of the frame-pointer chain inside the stack copy
 * does. x86_64 and i386 register sets only. Internal; used by the perf.data reader.
 *
 * The unwinder keeps the mappings of every process (from MMAP/MMAP2 records, per pid) and
 * opens a binary only when an unwind reaches an address inside it. Nothing is read from
 * the running machine's processes: memory is the stack copy, or the mapped file's
 * read-only segments. */
#ifndef TACHFMT_FMT_PERFDATA_UNWIND_H
#define TACHFMT_FMT_PERFDATA_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct tachi_unwind;

/* perf_event_attr's sample_regs_user ABI word (PERF_SAMPLE_REGS_ABI_*, linux/perf_event.h):
 * NONE for a sample taken in a kernel thread, which has no user registers. */
enum {
	TACHI_UNWIND_ABI_NONE = 0,
	TACHI_UNWIND_ABI_32 = 1,
	TACHI_UNWIND_ABI_64 = 2,
};

/* Frames an unwind returns at most, whatever max_ips is: deeper user stacks are cut (the
 * innermost kept), and a stack copy is at most 64 KiB in perf (u16 size), which holds
 * fewer frames than this unless they are nearly empty. */
#define TACHI_UNWIND_MAX_DEPTH 1024

/* Mappings one process keeps at most; add_map beyond that gives TACH_E_LIMIT. perf
 * records executable mappings only (data ones too with -d), of which a large real process
 * (a browser, a JVM) has a few thousand; each add costs up to a move of the others. */
#define TACHI_UNWIND_MAX_MAPS (1u << 14)

/* warn: where "binary not found" and "build ID differs" are said, once per path; it must
 * outlive the handle. search_path: colon-separated directories where binaries are looked
 * for when they are not at their recorded path (DIR/basename, DIR/recorded-path, and by
 * build ID DIR/.build-id/xx/rest/elf, or .../vdso for the [vdso] mapping, as perf's
 * build-id cache ~/.debug lays them out); NULL or "" for none. Returns NULL on allocation
 * failure. */
struct tachi_unwind *tachi_unwind_new(const struct tachi_warner *warn, const char *search_path);
/* Accepts NULL. */
void tachi_unwind_free(struct tachi_unwind *u);

/* With on false, samples are unwound by the frame-pointer chain alone, as if libdwfl
 * had nothing (it is on by default): to compare the two unwinders on one capture. */
void tachi_unwind_set_dwarf(struct tachi_unwind *u, bool on);

/* The reason of the last call that failed, for the caller's message (it knows the record
 * and offset; this module does not). Empty before any failure. */
const char *tachi_unwind_message(const struct tachi_unwind *u);

/* Records that process pid maps [start, start + len) of the file path (path_len bytes, or
 * up to a NUL before them; empty or "[...]" or "//anon" for memory no file backs) from
 * file offset pgoff, as an MMAP or MMAP2 record says. build_id (build_id_len bytes, NULL/0 when the
 * record or the BUILD_ID feature has none) is checked against the file found: a file with
 * another build ID is not used, since its CFI would describe other code. A later mapping
 * over an earlier one's range takes its place there, as mmap does. Any map may be added,
 * executable or not; only those that an unwind reaches are opened.
 * Returns TACH_OK, TACH_E_NOMEM, TACH_E_LIMIT (too many maps for one pid) or
 * TACH_E_FORMAT (len 0, the range wraps, path or build ID too long). */
int tachi_unwind_add_map(struct tachi_unwind *u, uint32_t pid, uint64_t start, uint64_t len,
			 uint64_t pgoff, const char *path, size_t path_len,
			 const uint8_t *build_id, size_t build_id_len);

/* Process pid was forked from ppid (a FORK record whose pid differs from its ppid; a new
 * thread, pid == ppid, changes nothing): it starts with a copy of the parent's mappings,
 * for which perf records no MMAP of its own, in place of any it had. So records must come
 * in time order, as perf script sorts them: in file order a child's exec and first MMAPs
 * are often written before its parent's FORK record, which would then undo them.
 * Returns TACH_OK or TACH_E_NOMEM. */
int tachi_unwind_fork(struct tachi_unwind *u, uint32_t ppid, uint32_t pid);

/* Forgets pid's mappings and its opened binaries: call on exec (COMM with the exec bit) and
 * on EXIT of the process (pid == tid), so that a recycled pid starts empty and memory
 * follows live processes. Returns TACH_OK (also for a pid never seen). */
int tachi_unwind_forget_pid(struct tachi_unwind *u, uint32_t pid);

/* Unwinds one sample of thread tid of process pid.
 *
 * regs_mask is the event's sample_regs_user; regs holds nregs values, one per bit set in
 * regs_mask in increasing bit order (PERF_REG_X86_*: AX 0, BX 1, CX 2, DX 3, SI 4, DI 5,
 * BP 6, SP 7, IP 8, ..., R8-R15 16-23), as PERF_SAMPLE_REGS_USER lays them out; abi is that
 * record's ABI word. The mask must hold IP and SP; BP is used when present, and the other
 * callee-saved registers make DWARF unwinding of code without frame pointers work.
 * stack is the PERF_SAMPLE_STACK_USER copy: stack_size valid bytes (the record's dyn_size
 * when it is smaller than its size), starting at the sampled SP. Byte order: the
 * recording machine's, which for x86 is little-endian.
 *
 * On TACH_OK, ips_out[0 .. *n_out) holds the user call chain, innermost first: ips_out[0]
 * is the sampled IP itself (exact), every later entry a return address (the symbolizer
 * looks up pc - 1), except where exact_out says otherwise: exact_out (NULL if not wanted)
 * gets libdwfl's "activation" answer, true for the IP, for a PC interrupted by a signal
 * (the frame a signal trampoline returns to) and for the trampoline's own PC (where a
 * handler returns to: pc - 1 would be outside it), false for return addresses. *n_out is
 * at most min(max_ips, TACHI_UNWIND_MAX_DEPTH); a stack that cannot be unwound at all
 * gives just the IP; abi NONE gives 0 entries. Hostile input (registers or stack bytes) gives a short or wrong
 * chain, never a read outside stack[0, stack_size) or a loop.
 *
 * Returns TACH_OK, TACH_E_NOMEM, or TACH_E_FORMAT when the registers do not fit their
 * description (nregs differs from the bits in regs_mask, IP or SP missing, an unknown
 * abi); the reason is in tachi_unwind_message. */
int tachi_unwind_stack(struct tachi_unwind *u, uint32_t pid, uint32_t tid, uint64_t regs_mask,
		       uint32_t abi, const uint64_t *regs, size_t nregs, const uint8_t *stack,
		       size_t stack_size, uint64_t *ips_out, bool *exact_out, size_t max_ips,
		       size_t *n_out);

#endif

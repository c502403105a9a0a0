/* The --call-graph dwarf unwinder (lib/formats/perfdata/unwind.c) on this very program:
 * nested functions capture their registers and a copy of their stack as perf does for a
 * sample, with this process's mappings from /proc/self/maps, and the unwound chain must
 * be exactly the return addresses the functions saw (__builtin_return_address). Built
 * twice (tests/meson.build): with frame pointers, and without them (UNWIND_FP=0), where
 * only DWARF CFI can unwind, which a register set without BP proves. Then hostile
 * registers, stacks and mappings: errors or short chains, never a crash or a loop. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>

#include "check.h"
#include "base/base.h"
#include "formats/perfdata/unwind.h"

#ifndef UNWIND_FP
#define UNWIND_FP 1
#endif
/* scrambled samples in garbage(); more for a longer run by hand */
#ifndef GARBAGE_ROUNDS
#define GARBAGE_ROUNDS 200
#endif

/* PERF_REG_X86_* */
enum { P_AX, P_BX, P_CX, P_DX, P_SI, P_DI, P_BP, P_SP, P_IP, P_R8 = 16, P_R15 = 23 };
/* perf's own x86_64 sample_regs_user: every register but DS, ES, FS, GS. */
#define MASK_ALL UINT64_C(0xff0fff)
#define MASK_NO_BP (MASK_ALL & ~(UINT64_C(1) << P_BP))
#define DEPTH 5   /* capture, f4, f3, f2, f1 */

/* What a sample holds. */
static uint64_t cap_regs[24];
static uint8_t cap_stack[65536];
static size_t cap_size;
static uint64_t stack_end;
/* expect[0]: the captured IP; expect[k]: the return address of the k-th innermost
 * function, as it saw it. */
static uint64_t expect[DEPTH + 1];
static volatile int sink;

__attribute__((no_sanitize_address)) __attribute__((noinline))
static void copy_stack(uint64_t sp)
{
	size_t n = stack_end > sp ? (size_t)(stack_end - sp) : 0;
	if (n > sizeof(cap_stack))
		n = sizeof(cap_stack);
	/* Byte by byte: the stack holds redzones ASan would object to in memcpy. */
	const volatile uint8_t *s = (const volatile uint8_t *)(uintptr_t)sp;
	for (size_t i = 0; i < n; i++)
		cap_stack[i] = s[i];
	cap_size = n;
}

__attribute__((noinline)) static void capture(void)
{
	__asm__ volatile("movq %%rax, 0(%0)\n\t"
			 "movq %%rbx, 8(%0)\n\t"
			 "movq %%rcx, 16(%0)\n\t"
			 "movq %%rdx, 24(%0)\n\t"
			 "movq %%rsi, 32(%0)\n\t"
			 "movq %%rdi, 40(%0)\n\t"
			 "movq %%rbp, 48(%0)\n\t"
			 "movq %%rsp, 56(%0)\n\t"
			 "movq %%r8, 128(%0)\n\t"
			 "movq %%r9, 136(%0)\n\t"
			 "movq %%r10, 144(%0)\n\t"
			 "movq %%r11, 152(%0)\n\t"
			 "movq %%r12, 160(%0)\n\t"
			 "movq %%r13, 168(%0)\n\t"
			 "movq %%r14, 176(%0)\n\t"
			 "movq %%r15, 184(%0)\n\t"
			 "leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, 64(%0)\n\t"
			 :
			 : "r"(cap_regs)
			 : "rax", "memory");
	copy_stack(cap_regs[P_SP]);
	expect[0] = cap_regs[P_IP];
	expect[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
}

/* Not tail calls (the sum after each call) and not inlined: one frame each. */
__attribute__((noinline)) static int f4(int x)
{
	expect[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	capture();
	sink += x;
	return sink + 1;
}
__attribute__((noinline)) static int f3(int x)
{
	expect[3] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	return f4(x + 1) + 1;
}
__attribute__((noinline)) static int f2(int x)
{
	expect[4] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	return f3(x + 1) + 1;
}
__attribute__((noinline)) static int f1(int x)
{
	expect[5] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	return f2(x + 1) + 1;
}

/* ---- the process's mappings ---- */

static char self_path[4096];
static uint64_t self_base;   /* where this program's ELF header is mapped */

static void add_maps(struct tachi_unwind *u, uint32_t pid, const char *only_self_as)
{
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f != NULL);
	if (!f)
		return;
	char line[8192];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		int n = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &n) < 3)
			continue;
		char *path = line + n;
		path[strcspn(path, "\n")] = 0;
		if (!strcmp(path, "[stack]"))
			stack_end = hi;
		if (!strcmp(path, self_path) && off == 0 && (!self_base || lo < self_base))
			self_base = lo;
		/* only_self_as: this program's mappings only, recorded under another path */
		if (only_self_as && strcmp(path, self_path))
			continue;
		const char *p = only_self_as ? only_self_as : path;
		CHECK_EQ_U64(tachi_unwind_add_map(u, pid, lo, hi - lo, off, p, strlen(p), NULL, 0),
			     TACH_OK);
	}
	fclose(f);
}

/* perf's layout: one value per mask bit, in bit order. */
static size_t regs_for(uint64_t mask, uint64_t *out)
{
	size_t n = 0;
	for (int b = 0; b < 64; b++)
		if (mask >> b & 1)
			out[n++] = b < 24 ? cap_regs[b] : 0;
	return n;
}

static int nwarn;
static char last_warn[512];
static void on_warn(void *ctx, const char *msg, int pos_kind, uint64_t pos)
{
	(void)ctx, (void)pos_kind, (void)pos;
	nwarn++;
	snprintf(last_warn, sizeof(last_warn), "%s", msg);
}
static const struct tachi_warner warner = { on_warn, NULL };

/* Unwinds the captured sample; returns the frame count. */
static size_t unwind(struct tachi_unwind *u, uint32_t pid, uint64_t mask, size_t stack_size,
		     uint64_t *ips, bool *exact, size_t max)
{
	uint64_t regs[64];
	size_t nregs = regs_for(mask, regs), n = 99;
	CHECK_EQ_U64(tachi_unwind_stack(u, pid, pid, mask, TACHI_UNWIND_ABI_64, regs, nregs,
					cap_stack, stack_size, ips, exact, max, &n), TACH_OK);
	CHECK(n <= max);
	return n;
}

/* The chain starts with exactly the expected frames (more follow: main, libc). */
static void check_chain(const uint64_t *ips, const bool *exact, size_t n, const char *what)
{
	if (n <= DEPTH) {
		fprintf(stderr, "%s: %zu frames, want more than %d\n", what, n, DEPTH);
		check_failures++;
	}
	for (size_t i = 0; i <= DEPTH && i < n; i++) {
		if (ips[i] != expect[i]) {
			fprintf(stderr, "%s: frame %zu is 0x%llx, want 0x%llx\n", what, i,
				(unsigned long long)ips[i], (unsigned long long)expect[i]);
			check_failures++;
		}
		if (exact)
			CHECK_EQ_U64(exact[i], i == 0);
	}
}

static void sample_from_self(void)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	CHECK(u != NULL);
	add_maps(u, 1, NULL);
	CHECK(f1(1) > 0);
	CHECK(cap_size > 256);
	uint64_t ips[TACHI_UNWIND_MAX_DEPTH];
	bool exact[TACHI_UNWIND_MAX_DEPTH];
	size_t n = unwind(u, 1, MASK_ALL, cap_size, ips, exact, TACHI_UNWIND_MAX_DEPTH);
	check_chain(ips, exact, n, "all registers");
	/* Without BP neither frame pointers nor CFI that uses them work: with -fomit-frame-
	 * pointer only DWARF CFI gives the chain. */
	if (!UNWIND_FP) {
		n = unwind(u, 1, MASK_NO_BP, cap_size, ips, NULL, TACHI_UNWIND_MAX_DEPTH);
		check_chain(ips, NULL, n, "no BP, CFI only");
	}
	/* Twice with the modules already reported: the same. */
	n = unwind(u, 1, MASK_ALL, cap_size, ips, NULL, TACHI_UNWIND_MAX_DEPTH);
	check_chain(ips, NULL, n, "again");
	/* The cap: exactly max frames, the innermost. */
	n = unwind(u, 1, MASK_ALL, cap_size, ips, NULL, 3);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(ips[2], expect[2]);
	CHECK_EQ_U64(unwind(u, 1, MASK_ALL, cap_size, ips, NULL, 0), 0);
	/* A loop through CFI (frame pointers: CFA = BP + 16): f4's saved BP made to point at
	 * itself and its return address into f4 again. The stack pointer stops growing at the
	 * third frame, which ends the chain. */
	if (UNWIND_FP) {
		uint64_t bp_c = cap_regs[P_BP], sp = cap_regs[P_SP], r4;
		CHECK(bp_c >= sp && bp_c + 16 <= sp + cap_size);
		memcpy(&r4, cap_stack + (bp_c - sp), 8);
		CHECK(r4 >= sp && r4 + 16 <= sp + cap_size);
		if (r4 >= sp && r4 + 16 <= sp + cap_size) {
			uint8_t keep[16];
			memcpy(keep, cap_stack + (r4 - sp), 16);
			memcpy(cap_stack + (r4 - sp), &r4, 8);
			memcpy(cap_stack + (r4 - sp) + 8, &expect[1], 8);
			n = unwind(u, 1, MASK_ALL, cap_size, ips, NULL, TACHI_UNWIND_MAX_DEPTH);
			CHECK_EQ_U64(n, 3);
			memcpy(cap_stack + (r4 - sp), keep, 16);
		}
	}
	/* A copy cut short: the IP at least, nothing read past it (ASan would say). */
	uint8_t *small = malloc(64);
	memcpy(small, cap_stack, 64);
	uint64_t regs[64];
	size_t nregs = regs_for(MASK_ALL, regs);
	CHECK_EQ_U64(tachi_unwind_stack(u, 1, 1, MASK_ALL, TACHI_UNWIND_ABI_64, regs, nregs, small,
					64, ips, NULL, 64, &n), TACH_OK);
	CHECK(n >= 1);
	CHECK_EQ_U64(ips[0], expect[0]);
	free(small);
	CHECK_EQ_U64(nwarn, 0);
	tachi_unwind_free(u);
}

/* With frame pointers, no mapping at all still unwinds (the frame-pointer chain); without
 * them, it must not crash. A forgotten pid is such a pid. */
static void no_mappings(void)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	add_maps(u, 7, NULL);
	CHECK_EQ_U64(tachi_unwind_forget_pid(u, 7), TACH_OK);
	CHECK_EQ_U64(tachi_unwind_forget_pid(u, 8), TACH_OK);
	CHECK(f1(2) > 0);
	uint64_t ips[64];
	size_t n = unwind(u, 7, MASK_ALL, cap_size, ips, NULL, 64);
	CHECK(n >= 1);
	if (UNWIND_FP)
		check_chain(ips, NULL, n, "no mappings");
	/* and our own walk, with the mappings there but DWARF off */
	add_maps(u, 7, NULL);
	tachi_unwind_set_dwarf(u, false);
	n = unwind(u, 7, MASK_ALL, cap_size, ips, NULL, 64);
	CHECK(n >= 1);
	if (UNWIND_FP)
		check_chain(ips, NULL, n, "frame pointers only");
	tachi_unwind_free(u);
}

/* A forked process starts with its parent's mappings (perf records none for it), a copy
 * that changes apart from the parent's. */
static void forked(void)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	add_maps(u, 40, NULL);
	CHECK(f1(5) > 0);
	CHECK_EQ_U64(tachi_unwind_fork(u, 40, 41), TACH_OK);
	CHECK_EQ_U64(tachi_unwind_fork(u, 41, 41), TACH_OK);
	uint64_t ips[64];
	uint64_t mask = UNWIND_FP ? MASK_ALL : MASK_NO_BP;
	size_t n = unwind(u, 41, mask, cap_size, ips, NULL, 64);
	check_chain(ips, NULL, n, "forked");
	/* the child maps something else over the code: the parent does not see it */
	CHECK_EQ_U64(tachi_unwind_add_map(u, 41, cap_regs[P_IP] & ~0xfffull, 0x1000, 0, "/nx/child",
					  9, NULL, 0), TACH_OK);
	n = unwind(u, 40, mask, cap_size, ips, NULL, 64);
	check_chain(ips, NULL, n, "parent");
	CHECK_EQ_U64(nwarn, 0);
	n = unwind(u, 41, mask, cap_size, ips, NULL, 64);
	CHECK_EQ_U64(nwarn, 1);
	/* forked again, from a process never seen: it has no mappings */
	CHECK_EQ_U64(tachi_unwind_fork(u, 99, 41), TACH_OK);
	n = unwind(u, 41, MASK_NO_BP, cap_size, ips, NULL, 64);
	CHECK(n >= 1);
	if (!UNWIND_FP)
		CHECK(n < DEPTH);
	CHECK_EQ_U64(nwarn, 1);
	nwarn = 0;
	tachi_unwind_free(u);
}

/* Through a signal frame: the handler's caller is the kernel's return trampoline
 * (__restore_rt, whose CFI says it is a signal frame), and the frame it returns to was
 * interrupted, not called: its PC is exact. With frame pointers this also needs the
 * module under each frame reported before libdwfl unwinds it (the trampoline has none). */
static uint64_t ra_g1;
static void on_signal(int sig)
{
	(void)sig;
	capture();
}
__attribute__((noinline)) static int g1(void)
{
	ra_g1 = (uint64_t)(uintptr_t)__builtin_return_address(0);
	raise(SIGUSR1);
	return sink + 1;
}

static void signal_frame(void)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	add_maps(u, 50, NULL);
	signal(SIGUSR1, on_signal);
	CHECK(g1() > 0);
	signal(SIGUSR1, SIG_DFL);
	uint64_t ips[64];
	bool exact[64];
	size_t n = unwind(u, 50, UNWIND_FP ? MASK_ALL : MASK_NO_BP, cap_size, ips, exact, 64);
	size_t interrupted = 0, caller = 0;
	/* from 2: the trampoline's own PC, where the handler returns to, is exact too (where
	 * the handler tail-calls capture, that is frame 1) */
	for (size_t i = 2; i < n; i++) {
		if (exact[i] && !interrupted)
			interrupted = i;
		if (ips[i] == ra_g1 && !caller)
			caller = i;
	}
	CHECK_EQ_U64(ips[1], expect[1]);
	CHECK(interrupted >= 2);
	CHECK(caller > interrupted);
	tachi_unwind_free(u);
}

/* A recorded path that is gone: the binary is found through the search path, by base name
 * and by build ID in perf's cache layout; one with another build ID is refused, once. */
static void search_path(void)
{
	char dir[] = "/tmp/tach-unwind-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char link[8192];
	snprintf(link, sizeof(link), "%s/renamed-prog", dir);
	CHECK_EQ_U64(symlink(self_path, link), 0);

	struct tachi_unwind *u = tachi_unwind_new(&warner, dir);
	add_maps(u, 3, "/gone/renamed-prog");
	CHECK(f1(3) > 0);
	uint64_t ips[64];
	size_t n = unwind(u, 3, UNWIND_FP ? MASK_ALL : MASK_NO_BP, cap_size, ips, NULL, 64);
	check_chain(ips, NULL, n, "found by base name");
	tachi_unwind_free(u);

	/* this program's build ID */
	int fd = open(self_path, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	const void *id = NULL;
	ssize_t idn = e ? dwelf_elf_gnu_build_id(e, &id) : -1;
	CHECK(idn >= 8 && idn <= 64);
	uint8_t bid[64];
	char hex[129], sub[8192];
	for (ssize_t i = 0; i < idn && idn <= 64; i++) {
		bid[i] = ((const uint8_t *)id)[i];
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	}
	if (e)
		elf_end(e);
	close(fd);
	if (idn < 8 || idn > 64)
		return;
	snprintf(sub, sizeof(sub), "%s/.build-id", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, hex);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s/%s/elf", dir, hex, hex + 2);
	CHECK_EQ_U64(symlink(self_path, sub), 0);

	u = tachi_unwind_new(&warner, dir);
	FILE *f = fopen("/proc/self/maps", "r");
	char line[8192];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		int k = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &k) < 3)
			continue;
		char *path = line + k;
		path[strcspn(path, "\n")] = 0;
		if (strcmp(path, self_path))
			continue;
		const char *p = "/gone/by-id";
		tachi_unwind_add_map(u, 4, lo, hi - lo, off, p, strlen(p), bid, (size_t)idn);
		/* pid 6: perf's copy of the vDSO, from its build-id cache */
		tachi_unwind_add_map(u, 6, lo, hi - lo, off, "[vdso]", 6, bid, (size_t)idn);
		/* pid 7: the right build ID, zero-padded as older perf records it */
		uint8_t padded[68] = { 0 };
		memcpy(padded, bid, (size_t)idn);
		tachi_unwind_add_map(u, 7, lo, hi - lo, off, path, strlen(path), padded,
				     (size_t)idn + 4 > 64 ? 64 : (size_t)idn + 4);
		/* pid 5: the right file, the wrong build ID */
		bid[0] ^= 0xff;
		tachi_unwind_add_map(u, 5, lo, hi - lo, off, path, strlen(path), bid, (size_t)idn);
		bid[0] ^= 0xff;
	}
	if (f)
		fclose(f);
	n = unwind(u, 4, UNWIND_FP ? MASK_ALL : MASK_NO_BP, cap_size, ips, NULL, 64);
	check_chain(ips, NULL, n, "found by build ID");
	CHECK_EQ_U64(nwarn, 0);
	n = unwind(u, 7, UNWIND_FP ? MASK_ALL : MASK_NO_BP, cap_size, ips, NULL, 64);
	check_chain(ips, NULL, n, "a zero-padded build ID");
	CHECK_EQ_U64(nwarn, 0);
	char vdso[8192];
	snprintf(vdso, sizeof(vdso), "%s/.build-id/%.2s/%s/vdso", dir, hex, hex + 2);
	CHECK_EQ_U64(symlink(self_path, vdso), 0);
	n = unwind(u, 6, UNWIND_FP ? MASK_ALL : MASK_NO_BP, cap_size, ips, NULL, 64);
	check_chain(ips, NULL, n, "the vDSO by build ID");
	unlink(vdso);
	n = unwind(u, 5, MASK_NO_BP, cap_size, ips, NULL, 64);
	n = unwind(u, 5, MASK_NO_BP, cap_size, ips, NULL, 64);
	CHECK(n >= 1);
	CHECK_EQ_U64(nwarn, 1);
	CHECK(strstr(last_warn, "another build ID") != NULL);
	tachi_unwind_free(u);
	nwarn = 0;
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, hex);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/.build-id", dir);
	rmdir(sub);
	unlink(link);
	rmdir(dir);
}

/* ---- hostile input ---- */

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void bad_registers(void)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	uint64_t regs[24] = { 0 }, ips[8];
	size_t n = 99;
	/* nregs must match the mask */
	CHECK_EQ_U64(tachi_unwind_stack(u, 1, 1, MASK_ALL, TACHI_UNWIND_ABI_64, regs, 3, NULL, 0,
					ips, NULL, 8, &n), TACH_E_FORMAT);
	CHECK_EQ_U64(n, 0);
	CHECK(strstr(tachi_unwind_message(u), "mask") != NULL);
	/* no IP */
	uint64_t m = MASK_ALL & ~(UINT64_C(1) << P_IP);
	CHECK_EQ_U64(tachi_unwind_stack(u, 1, 1, m, TACHI_UNWIND_ABI_64, regs, 19, NULL, 0, ips,
					NULL, 8, &n), TACH_E_FORMAT);
	CHECK(strstr(tachi_unwind_message(u), "IP") != NULL);
	/* unknown ABI; NONE (a kernel thread): no frames */
	CHECK_EQ_U64(tachi_unwind_stack(u, 1, 1, MASK_ALL, 7, regs, 20, NULL, 0, ips, NULL, 8, &n),
		     TACH_E_FORMAT);
	CHECK_EQ_U64(tachi_unwind_stack(u, 1, 1, 0, TACHI_UNWIND_ABI_NONE, NULL, 0, NULL, 0, ips,
					NULL, 8, &n), TACH_OK);
	CHECK_EQ_U64(n, 0);
	CHECK_EQ_U64(tachi_unwind_message(u)[0], 0);
	/* mappings: empty, wrapping */
	CHECK_EQ_U64(tachi_unwind_add_map(u, 1, 0x1000, 0, 0, "x", 1, NULL, 0), TACH_E_FORMAT);
	CHECK_EQ_U64(tachi_unwind_add_map(u, 1, UINT64_MAX - 10, 100, 0, "x", 1, NULL, 0),
		     TACH_E_FORMAT);
	CHECK_EQ_U64(tachi_unwind_add_map(u, 1, 0x1000, 0x1000, 0, "x", 1, NULL, 65),
		     TACH_E_FORMAT);
	tachi_unwind_free(u);
}

/* Which binary an address is in: the latest map over it, a map inside another splitting
 * it, maps over its ends cutting them (the warning names the binary looked for). */
static const char *binary_at(struct tachi_unwind *u, uint32_t pid, uint64_t ip)
{
	uint64_t r[24] = { 0 }, ips[4];
	r[P_IP] = ip;
	r[P_SP] = 0x7fff0000;
	size_t n;
	last_warn[0] = 0;
	CHECK_EQ_U64(tachi_unwind_stack(u, pid, pid, 0x1ff, TACHI_UNWIND_ABI_64, r, 9, NULL, 0,
					ips, NULL, 4, &n), TACH_OK);
	CHECK_EQ_U64(n, 1);
	return last_warn;
}

static void overlapping_maps(void)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	static const struct { uint64_t lo, hi; const char *path; } maps[] = {
		{ 0x10000, 0x20000, "/nx/a" }, { 0x14000, 0x15000, "/nx/b" },
		{ 0x1f000, 0x30000, "/nx/c" }, { 0x0, 0x11000, "/nx/d" },
		{ 0x40000, 0x50000, "/nx/e" }, { 0x40000, 0x50000, "/nx/f" },
	};
	for (size_t i = 0; i < sizeof(maps) / sizeof(*maps); i++)
		CHECK_EQ_U64(tachi_unwind_add_map(u, 20, maps[i].lo, maps[i].hi - maps[i].lo, 0,
						  maps[i].path, 5, NULL, 0), TACH_OK);
	static const struct { uint64_t ip; const char *path; } want[] = {
		{ 0x14800, "/nx/b" }, { 0x12000, "/nx/a" }, { 0x1f800, "/nx/c" },
		{ 0x10800, "/nx/d" }, { 0x15000, "" /* a again: said once */ },
		{ 0x2ffff, "" /* c again */ }, { 0x30000, "" /* in none */ },
		{ 0x40000, "/nx/f" },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		const char *w = binary_at(u, 20, want[i].ip);
		if (want[i].path[0] ? strncmp(w, want[i].path, 5) != 0 : w[0] != 0) {
			fprintf(stderr, "at 0x%llx: warned \"%s\", want %s\n",
				(unsigned long long)want[i].ip, w, want[i].path);
			check_failures++;
		}
	}
	nwarn = 0;
	/* the limit on one process's maps */
	int rc = TACH_OK;
	for (uint64_t i = 0; i < TACHI_UNWIND_MAX_MAPS && rc == TACH_OK; i++)
		rc = tachi_unwind_add_map(u, 21, 0x100000 + i * 0x1000, 0x1000, 0, "m", 1, NULL, 0);
	CHECK_EQ_U64(rc, TACH_OK);
	CHECK_EQ_U64(tachi_unwind_add_map(u, 21, 0x10000, 0x1000, 0, "m", 1, NULL, 0), TACH_E_LIMIT);
	CHECK_EQ_U64(tachi_unwind_forget_pid(u, 21), TACH_OK);
	CHECK_EQ_U64(tachi_unwind_add_map(u, 21, 0x10000, 0x1000, 0, "m", 1, NULL, 0), TACH_OK);
	tachi_unwind_free(u);
}

/* Memory outside the stack copy is read from the binaries' read-only segments, as they
 * are in the file: libdwfl's frame-pointer fallback (no CFI covers the ELF header the IP
 * is in here) reads a frame record the BP puts in .rodata; one in writable data is not
 * read (its bytes at run time are not the file's). */
static const uint64_t ro_frame[2] = { 0, 0x123456 };
static uint64_t rw_frame[2] = { 0, 0x654321 };

static void reads_files(void)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	add_maps(u, 30, NULL);
	CHECK(self_base != 0);
	uint64_t r[24] = { 0 }, ips[8] = { 0 };
	r[P_IP] = self_base + 0x10;
	r[P_SP] = 0x7fff0000;
	r[P_BP] = (uint64_t)(uintptr_t)ro_frame;
	size_t n;
	CHECK_EQ_U64(tachi_unwind_stack(u, 30, 30, 0x1ff, TACHI_UNWIND_ABI_64, r, 9, NULL, 0, ips,
					NULL, 8, &n), TACH_OK);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_U64(ips[1], ro_frame[1]);
	r[P_BP] = (uint64_t)(uintptr_t)rw_frame;
	CHECK_EQ_U64(tachi_unwind_stack(u, 30, 30, 0x1ff, TACHI_UNWIND_ABI_64, r, 9, NULL, 0, ips,
					NULL, 8, &n), TACH_OK);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(rw_frame[1], 0x654321);
	tachi_unwind_free(u);
}

/* A synthetic stack whose frame-pointer chain loops: [bp] points back down. With DWARF on,
 * libdwfl's own frame-pointer fallback walks it (no binary has CFI for these addresses);
 * off, ours. */
static void fp_cycle(bool dwarf)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	tachi_unwind_set_dwarf(u, dwarf);
	uint8_t st[256] = { 0 };
	const uint64_t sp = 0x7fff0000;
	/* frame at sp+64 -> sp+128 -> sp+64 again */
	put64(st + 64, sp + 128);
	put64(st + 72, 0x401111);
	put64(st + 128, sp + 64);
	put64(st + 136, 0x402222);
	uint64_t regs[24] = { 0 };
	regs[P_SP] = sp;
	regs[P_BP] = sp + 64;
	regs[P_IP] = 0x400000;
	uint64_t r[24], ips[64];
	size_t nr = 0;
	for (int b = 0; b < 24; b++)
		if (MASK_ALL >> b & 1)
			r[nr++] = regs[b];
	size_t n = 99;
	CHECK_EQ_U64(tachi_unwind_stack(u, 9, 9, MASK_ALL, TACHI_UNWIND_ABI_64, r, nr, st,
					sizeof(st), ips, NULL, 64, &n), TACH_OK);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(ips[0], 0x400000);
	CHECK_EQ_U64(ips[1], 0x401111);
	CHECK_EQ_U64(ips[2], 0x402222);
	/* a frame pointing at itself */
	put64(st + 64, sp + 64);
	CHECK_EQ_U64(tachi_unwind_stack(u, 9, 9, MASK_ALL, TACHI_UNWIND_ABI_64, r, nr, st,
					sizeof(st), ips, NULL, 64, &n), TACH_OK);
	CHECK_EQ_U64(n, 2);
	/* BP and SP outside the copy, an empty copy, no copy */
	regs[P_BP] = 0x10;
	r[6] = 0x10;
	CHECK_EQ_U64(tachi_unwind_stack(u, 9, 9, MASK_ALL, TACHI_UNWIND_ABI_64, r, nr, st,
					sizeof(st), ips, NULL, 64, &n), TACH_OK);
	CHECK_EQ_U64(n, 1);
	r[6] = sp + 64;
	CHECK_EQ_U64(tachi_unwind_stack(u, 9, 9, MASK_ALL, TACHI_UNWIND_ABI_64, r, nr, st, 0, ips,
					NULL, 64, &n), TACH_OK);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(tachi_unwind_stack(u, 9, 9, MASK_ALL, TACHI_UNWIND_ABI_64, r, nr, NULL, 100,
					ips, NULL, 64, &n), TACH_OK);
	CHECK_EQ_U64(n, 1);
	/* the last word only partly inside the copy */
	put64(st + 64, sp + 128);
	CHECK_EQ_U64(tachi_unwind_stack(u, 9, 9, MASK_ALL, TACHI_UNWIND_ABI_64, r, nr, st, 140,
					ips, NULL, 64, &n), TACH_OK);
	CHECK_EQ_U64(n, 2);
	tachi_unwind_free(u);
}

/* i386: 4-byte words, the ABI's own register numbering. */
static void fp_32(bool dwarf)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	tachi_unwind_set_dwarf(u, dwarf);
	uint8_t st[64] = { 0 };
	const uint32_t sp = 0xbfff0000;
	uint32_t w[] = { sp + 16, 0x8048111, 0, 0, sp + 32, 0x8048222, 0, 0, 0, 0 };
	memcpy(st, w, sizeof(w));
	/* perf's 32-bit mask: AX..GS */
	uint64_t mask = 0xffff, r[16] = { 0 }, ips[16];
	r[P_SP] = sp;
	r[P_BP] = sp;
	r[P_IP] = 0x8048000;
	size_t n = 99;
	CHECK_EQ_U64(tachi_unwind_stack(u, 2, 2, mask, TACHI_UNWIND_ABI_32, r, 16, st, sizeof(st),
					ips, NULL, 16, &n), TACH_OK);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(ips[1], 0x8048111);
	CHECK_EQ_U64(ips[2], 0x8048222);
	tachi_unwind_free(u);
}

/* Real registers over scrambled stack bytes, and scrambled registers over the real stack:
 * whatever comes out, within bounds. */
static void garbage(void)
{
	struct tachi_unwind *u = tachi_unwind_new(&warner, NULL);
	add_maps(u, 1, NULL);
	CHECK(f1(4) > 0);
	uint64_t saved[24], ips[TACHI_UNWIND_MAX_DEPTH];
	memcpy(saved, cap_regs, sizeof(saved));
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int round = 0; round < GARBAGE_ROUNDS; round++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (round % 2) {
			for (size_t i = 0; i + 8 <= cap_size; i += 8)
				if ((x >> (i / 8 % 64)) & 1)
					put64(cap_stack + i, x * (i + 1));
		} else {
			int b = (int)(x % 24);
			cap_regs[b] ^= x >> 3;
			if (round % 4 == 0)
				cap_regs[P_SP] = saved[P_SP] - 8 * (x % 64);
		}
		size_t n = unwind(u, 1, MASK_ALL, cap_size, ips, NULL, TACHI_UNWIND_MAX_DEPTH);
		CHECK(n >= 1);
		memcpy(cap_regs, saved, sizeof(saved));
	}
	/* this program mapped where its segments would wrap past the address space, or at a
	 * file offset it does not have */
	CHECK_EQ_U64(tachi_unwind_add_map(u, 60, UINT64_MAX - 0x1fff, 0x1000, 0, self_path,
					  strlen(self_path), NULL, 0), TACH_OK);
	CHECK_EQ_U64(tachi_unwind_add_map(u, 60, 0x10000, 0x1000, UINT64_MAX & ~0xfffull, self_path,
					  strlen(self_path), NULL, 0), TACH_OK);
	uint64_t r[24] = { 0 };
	r[P_SP] = saved[P_SP];
	size_t n = 0;
	const uint64_t at[] = { UINT64_MAX - 0x1800, 0x10800 };
	for (size_t i = 0; i < 2; i++) {
		r[P_IP] = at[i];
		CHECK_EQ_U64(tachi_unwind_stack(u, 60, 60, 0x1ff, TACHI_UNWIND_ABI_64, r, 9, cap_stack,
						cap_size, ips, NULL, 64, &n), TACH_OK);
		CHECK(n >= 1);
	}
	/* a mapping over the reported program: its Dwfl starts over */
	CHECK_EQ_U64(tachi_unwind_add_map(u, 1, cap_regs[P_IP] & ~0xfffull, 0x1000, 0,
					  "/nonexistent/jit", 16, NULL, 0), TACH_OK);
	n = unwind(u, 1, MASK_ALL, 0, ips, NULL, 8);
	CHECK_EQ_U64(n >= 1, 1);
	CHECK_EQ_U64(nwarn, 1);
	CHECK(strstr(last_warn, "/nonexistent/jit: binary not found") != NULL);
	n = unwind(u, 1, MASK_ALL, 0, ips, NULL, 8);
	CHECK_EQ_U64(nwarn, 1);
	nwarn = 0;
	tachi_unwind_free(u);
	tachi_unwind_free(NULL);
}

int main(void)
{
	ssize_t k = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	CHECK(k > 0);
	self_path[k > 0 ? k : 0] = 0;
	sample_from_self();
	no_mappings();
	forked();
	signal_frame();
	search_path();
	bad_registers();
	overlapping_maps();
	reads_files();
	/* libdwfl walks frame pointers where there is no CFI, and so does our own walk */
	fp_cycle(true);
	fp_cycle(false);
	fp_32(true);
	fp_32(false);
	garbage();
	return CHECK_DONE();
}

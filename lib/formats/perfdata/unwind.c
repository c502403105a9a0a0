/* perf's --call-graph dwarf samples unwound with libdwfl (see unwind.h for the contract).
 *
 * As in perf's unwind-libdw.c and hotspot's perfparser: each process gets a Dwfl of its
 * own into which the binaries it maps are reported at their load bias, and the Dwfl is
 * attached once to thread callbacks whose memory is the sample at hand: its stack copy
 * (addresses in [SP, SP + size)) and, outside it, the read-only segments of the mapped
 * files. Unlike perf, which starts a fresh Dwfl for each sample, a process's Dwfl and the
 * CFI libdwfl parsed stay until the process execs or exits, and a binary is reported
 * only when an unwind first reaches it (the frame callback reports the module of each
 * PC before libdwfl unwinds from it, see frame_cb). A few Dwfls stay open at once
 * (MAX_LIVE, least recently used out): each holds its binaries open.
 *
 * The machine (x86_64 or i386) does not come from the binaries: the Dwfl is attached with
 * a bare in-memory ELF header of the sample's ABI, so that an IP outside any known binary
 * (JIT code) still unwinds through libdwfl's frame-pointer fallback.
 *
 * A process's mappings are its MMAP records' (a forked one starts with a copy of its
 * parent's), as sorted segments where the latest map over an address wins.
 *
 * Bounds: at most TACHI_UNWIND_MAX_DEPTH frames; the stack pointer must grow from frame to
 * frame (a cycle ends the chain); every memory read is checked against the stack copy or
 * the file's bytes; where libdwfl gets nothing past the IP, our own frame-pointer walk
 * only moves up the stack copy.
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/perfdata/unwind.h"
#include "base/hash.h"
#include "base/io.h"

/* Dwfls kept open at once; each holds its reported binaries' files open (a file
 * descriptor each), beside what the rest of the reader opens. */
#define MAX_LIVE 16
/* Paths warned about (binary not found, build ID differs); past this, silence. */
#define MAX_WARNED 256
#define MAX_BUILD_ID 64
#define PAGE_MASK_4K 0xfffu

/* PERF_REG_X86_* (arch/x86/include/uapi/asm/perf_regs.h) */
enum { P_AX, P_BX, P_CX, P_DX, P_SI, P_DI, P_BP, P_SP, P_IP, P_FLAGS, P_CS, P_SS, P_DS,
       P_ES, P_FS, P_GS, P_R8, P_R9, P_R10, P_R11, P_R12, P_R13, P_R14, P_R15 };

/* DWARF register n of each ABI is perf register dwarf_*[n] (the x86-64 and i386 psABIs'
 * numbering, as perf's arch/x86/util/unwind-libdw.c maps them). */
static const uint8_t dwarf_64[17] = { P_AX, P_DX, P_CX, P_BX, P_SI, P_DI, P_BP, P_SP, P_R8,
				      P_R9, P_R10, P_R11, P_R12, P_R13, P_R14, P_R15, P_IP };
static const uint8_t dwarf_32[9] = { P_AX, P_CX, P_DX, P_BX, P_SP, P_BP, P_SI, P_DI, P_IP };

struct map {
	uint64_t start, limit, pgoff;
	const char *path;          /* interned in the handle: copied maps share them */
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t tried_gen;  /* the proc's Dwfl generation it was last reported into, 0 never */
	bool nofile;         /* no usable binary: never looked for again */
};

struct unwind_range {
	uint64_t lo, hi;
};

/* A path or build ID, once per handle however many processes map it. */
struct blob {
	char *p;   /* NUL-terminated */
	size_t n;
};

/* A piece of the address space and the map it shows: a process's segments are sorted and
 * never overlap, a new map cutting away what it covers, so an address is found by binary
 * search. */
struct seg {
	uint64_t lo, hi;
	uint32_t map;
};

struct unwind_proc {
	uint32_t pid;
	struct map *maps;    /* in the order added */
	size_t nmaps, cap;
	struct seg *segs;
	size_t nsegs, segs_cap;
	Dwfl *dwfl;          /* NULL until an unwind needs it */
	uint32_t abi;        /* the ABI it was attached for */
	uint64_t gen;        /* counts Dwfls made for it */
	uint64_t used;       /* LRU clock */
	struct unwind_range *mods;  /* what its modules cover: a new map there makes a new Dwfl */
	size_t nmods, mods_cap;
};

/* The sample being unwound: what the thread callbacks read. */
struct sample {
	struct unwind_proc *p;
	uint32_t tid;
	Dwarf_Word dregs[17];
	uint32_t dset;       /* bit n: dregs[n] known */
	unsigned ndregs, sp_reg;
	uint64_t sp, bp, ip;
	const uint8_t *stack;
	size_t size;
	unsigned word;       /* 8 or 4 bytes */
	uint64_t *out;
	bool *exact;
	size_t n, max;
	uint64_t last_sp;
};

struct tachi_unwind {
	const struct tachi_warner *warn;
	char **dirs;
	size_t ndirs;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	struct unwind_proc **procs;   /* each its own allocation: live[] and cur.p point at them */
	size_t nprocs, procs_cap;
	struct tachi_idset by_pid;
	struct blob *blobs;
	size_t nblobs, blobs_cap;
	struct tachi_idset blob_set;
	struct unwind_proc *live[MAX_LIVE]; /* procs whose Dwfl is open */
	size_t nlive;
	uint64_t clock;
	uint8_t ehdr64[sizeof(Elf64_Ehdr)], ehdr32[sizeof(Elf32_Ehdr)];
	Elf *elf64, *elf32;          /* bare headers naming the machine for dwfl_attach_state */
	struct sample cur;
	bool no_dwarf;
	uint64_t warned[MAX_WARNED]; /* path hashes */
	size_t nwarned;
	char msg[256];
};

static int fail(struct tachi_unwind *u, int code, const char *what)
{
	snprintf(u->msg, sizeof(u->msg), "%s", what);
	return code;
}

/* ---- setup ---- */

static Elf *bare_header(uint8_t *buf, bool is64)
{
	memset(buf, 0, is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr));
	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	buf[EI_DATA] = ELFDATA2LSB;
	buf[EI_VERSION] = EV_CURRENT;
	if (is64) {
		Elf64_Ehdr h;
		memcpy(&h, buf, sizeof(h));
		h.e_type = ET_CORE;
		h.e_machine = EM_X86_64;
		h.e_version = EV_CURRENT;
		h.e_ehsize = sizeof(h);
		memcpy(buf, &h, sizeof(h));
		return elf_memory((char *)buf, sizeof(h));
	}
	Elf32_Ehdr h;
	memcpy(&h, buf, sizeof(h));
	h.e_type = ET_CORE;
	h.e_machine = EM_386;
	h.e_version = EV_CURRENT;
	h.e_ehsize = sizeof(h);
	memcpy(buf, &h, sizeof(h));
	return elf_memory((char *)buf, sizeof(h));
}

static bool add_dir(struct tachi_unwind *u, const char *p, size_t n)
{
	char **nd = realloc(u->dirs, (u->ndirs + 1) * sizeof(*nd));
	if (!nd)
		return false;
	u->dirs = nd;
	if (!(u->dirs[u->ndirs] = strndup(p, n)))
		return false;
	/* Relative entries would mean "beside the binary" to libdwfl. */
	if (p[0] == '/') {
		strcat(u->debuginfo_path, ":");
		strcat(u->debuginfo_path, u->dirs[u->ndirs]);
	}
	u->ndirs++;
	return true;
}

struct tachi_unwind *tachi_unwind_new(const struct tachi_warner *warn, const char *search_path)
{
	struct tachi_unwind *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->warn = warn;
	elf_version(EV_CURRENT);
	size_t plen = search_path ? strlen(search_path) : 0;
	/* libdwfl's default, then ours: .debug_frame of stripped binaries is found there. */
	static const char dflt[] = ":.debug:/usr/lib/debug";
	u->debuginfo_path = malloc(sizeof(dflt) + plen + 1);
	u->elf64 = bare_header(u->ehdr64, true);
	u->elf32 = bare_header(u->ehdr32, false);
	if (!u->debuginfo_path || !u->elf64 || !u->elf32) {
		tachi_unwind_free(u);
		return NULL;
	}
	strcpy(u->debuginfo_path, dflt);
	for (const char *p = search_path; p && *p;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n && !add_dir(u, p, n)) {
			tachi_unwind_free(u);
			return NULL;
		}
		p = c ? c + 1 : p + n;
	}
	u->cb.find_elf = dwfl_build_id_find_elf;
	u->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	u->cb.section_address = dwfl_offline_section_address;
	u->cb.debuginfo_path = &u->debuginfo_path;
	return u;
}

static void drop_dwfl(struct tachi_unwind *u, struct unwind_proc *p)
{
	if (!p->dwfl)
		return;
	dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->nmods = 0;
	for (size_t i = 0; i < u->nlive; i++)
		if (u->live[i] == p) {
			u->live[i] = u->live[--u->nlive];
			break;
		}
}

static void proc_clear(struct tachi_unwind *u, struct unwind_proc *p)
{
	drop_dwfl(u, p);
	free(p->maps);
	free(p->mods);
	free(p->segs);
	p->maps = NULL;
	p->mods = NULL;
	p->segs = NULL;
	p->nmaps = p->cap = p->nmods = p->mods_cap = p->nsegs = p->segs_cap = 0;
}

void tachi_unwind_free(struct tachi_unwind *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nprocs; i++) {
		proc_clear(u, u->procs[i]);
		free(u->procs[i]);
	}
	free(u->procs);
	tachi_idset_free(&u->by_pid);
	for (size_t i = 0; i < u->nblobs; i++)
		free(u->blobs[i].p);
	free(u->blobs);
	tachi_idset_free(&u->blob_set);
	for (size_t i = 0; i < u->ndirs; i++)
		free(u->dirs[i]);
	free(u->dirs);
	free(u->debuginfo_path);
	if (u->elf64)
		elf_end(u->elf64);
	if (u->elf32)
		elf_end(u->elf32);
	free(u);
}

void tachi_unwind_set_dwarf(struct tachi_unwind *u, bool on)
{
	u->no_dwarf = !on;
}

const char *tachi_unwind_message(const struct tachi_unwind *u)
{
	return u->msg;
}

/* ---- processes and their mappings ---- */

static bool pid_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tachi_unwind *u = ctx;
	return u->procs[id]->pid == *(const uint32_t *)key;
}

static struct unwind_proc *find_proc(struct tachi_unwind *u, uint32_t pid)
{
	uint32_t id;
	if (tachi_idset_find(&u->by_pid, tachi_mix64(pid), &pid, pid_eq, u, &id))
		return u->procs[id];
	return NULL;
}

static struct unwind_proc *new_proc(struct tachi_unwind *u, uint32_t pid)
{
	if (u->nprocs >= UINT32_MAX || !TACHI_RESERVE(u->procs, u->procs_cap, u->nprocs + 1))
		return NULL;
	struct unwind_proc *p = calloc(1, sizeof(*p));
	if (!p || !tachi_idset_insert(&u->by_pid, tachi_mix64(pid), (uint32_t)u->nprocs)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	u->procs[u->nprocs++] = p;
	return p;
}

static bool overlaps_module(const struct unwind_proc *p, uint64_t start, uint64_t limit)
{
	for (size_t i = 0; i < p->nmods; i++)
		if (start < p->mods[i].hi && p->mods[i].lo < limit)
			return true;
	return false;
}

struct blob_key {
	const void *p;
	size_t n;
};

static bool blob_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tachi_unwind *u = ctx;
	const struct blob_key *k = key;
	return u->blobs[id].n == k->n && !memcmp(u->blobs[id].p, k->p, k->n);
}

static const char *intern(struct tachi_unwind *u, const void *p, size_t n)
{
	struct blob_key k = { p ? p : "", n };
	uint64_t h = tachi_hash(k.p, n);
	uint32_t id;
	if (tachi_idset_find(&u->blob_set, h, &k, blob_eq, u, &id))
		return u->blobs[id].p;
	if (u->nblobs >= UINT32_MAX || !TACHI_RESERVE(u->blobs, u->blobs_cap, u->nblobs + 1))
		return NULL;
	char *c = malloc(n + 1);
	if (!c || !tachi_idset_insert(&u->blob_set, h, (uint32_t)u->nblobs)) {
		free(c);
		return NULL;
	}
	memcpy(c, k.p, n);
	c[n] = 0;
	u->blobs[u->nblobs++] = (struct blob){ c, n };
	return c;
}

/* The first segment ending above addr (segments are sorted by both ends). */
static size_t seg_after(const struct unwind_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->segs[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tachi_unwind_fork(struct tachi_unwind *u, uint32_t ppid, uint32_t pid)
{
	if (ppid == pid)
		return TACH_OK;
	struct unwind_proc *c = find_proc(u, pid), *par = find_proc(u, ppid);
	if (!c && !(c = new_proc(u, pid)))
		return fail(u, TACH_E_NOMEM, "out of memory");
	proc_clear(u, c);
	if (!par || !par->nmaps)
		return TACH_OK;
	c->maps = malloc(par->nmaps * sizeof(*c->maps));
	c->segs = malloc(par->nsegs * sizeof(*c->segs));
	if (!c->maps || !c->segs) {
		proc_clear(u, c);
		return fail(u, TACH_E_NOMEM, "out of memory");
	}
	memcpy(c->maps, par->maps, par->nmaps * sizeof(*c->maps));
	memcpy(c->segs, par->segs, par->nsegs * sizeof(*c->segs));
	c->nmaps = c->cap = par->nmaps;
	c->nsegs = c->segs_cap = par->nsegs;
	/* reported into the parent's Dwfl, not into the child's yet */
	for (size_t i = 0; i < c->nmaps; i++)
		c->maps[i].tried_gen = 0;
	return TACH_OK;
}

static struct map *find_map(struct unwind_proc *p, uint64_t addr)
{
	size_t i = seg_after(p, addr);
	if (i == p->nsegs || p->segs[i].lo > addr)
		return NULL;
	return &p->maps[p->segs[i].map];
}

/* [lo, hi) shows map idx from now on: the segments it covers go, those it overlaps are
 * cut, one it falls inside is split. Room for two more is reserved by the caller. */
static void insert_seg(struct unwind_proc *p, uint64_t lo, uint64_t hi, uint32_t idx)
{
	size_t i = seg_after(p, lo), j = i;
	struct seg put[3];
	size_t k = 0;
	if (i < p->nsegs && p->segs[i].lo < lo)
		put[k++] = (struct seg){ p->segs[i].lo, lo, p->segs[i].map };
	put[k++] = (struct seg){ lo, hi, idx };
	while (j < p->nsegs && p->segs[j].lo < hi)
		j++;
	if (j > i && p->segs[j - 1].hi > hi)
		put[k++] = (struct seg){ hi, p->segs[j - 1].hi, p->segs[j - 1].map };
	memmove(p->segs + i + k, p->segs + j, (p->nsegs - j) * sizeof(*p->segs));
	memcpy(p->segs + i, put, k * sizeof(*put));
	p->nsegs = p->nsegs - (j - i) + k;
}

int tachi_unwind_add_map(struct tachi_unwind *u, uint32_t pid, uint64_t start, uint64_t len,
			 uint64_t pgoff, const char *path, size_t path_len,
			 const uint8_t *build_id, size_t build_id_len)
{
	if (!len || start + len < start)
		return fail(u, TACH_E_FORMAT, "a mapping of length 0 or past the address space");
	/* up to a NUL, as the record's path field is padded */
	path_len = path ? strnlen(path, path_len) : 0;
	if (path_len > 4095 || build_id_len > MAX_BUILD_ID)
		return fail(u, TACH_E_FORMAT, "a mapping's path or build ID is too long");
	struct unwind_proc *p = find_proc(u, pid);
	if (!p && !(p = new_proc(u, pid)))
		return fail(u, TACH_E_NOMEM, "out of memory");
	if (p->nmaps >= TACHI_UNWIND_MAX_MAPS)
		return fail(u, TACH_E_LIMIT, "more mappings in one process than the unwinder keeps");
	/* a map in the middle of one splits it: two more segments at most */
	if (!TACHI_RESERVE(p->maps, p->cap, p->nmaps + 1) ||
	    !TACHI_RESERVE(p->segs, p->segs_cap, p->nsegs + 2))
		return fail(u, TACH_E_NOMEM, "out of memory");
	struct map *m = &p->maps[p->nmaps];
	memset(m, 0, sizeof(*m));
	m->path = intern(u, path, path_len);
	m->build_id = build_id_len ? (const uint8_t *)intern(u, build_id, build_id_len) : NULL;
	if (!m->path || (build_id_len && !m->build_id))
		return fail(u, TACH_E_NOMEM, "out of memory");
	m->start = start;
	m->limit = start + len;
	m->pgoff = pgoff;
	m->build_id_len = build_id_len;
	insert_seg(p, m->start, m->limit, (uint32_t)p->nmaps);
	p->nmaps++;
	/* libdwfl refuses a module over another: what was reported there is stale now. */
	if (p->dwfl && overlaps_module(p, m->start, m->limit))
		drop_dwfl(u, p);
	return TACH_OK;
}

int tachi_unwind_forget_pid(struct tachi_unwind *u, uint32_t pid)
{
	struct unwind_proc *p = find_proc(u, pid);
	if (p)
		proc_clear(u, p);
	return TACH_OK;
}

/* ---- binaries ---- */

/* Memory no file backs, or a file that is not one (perf's own names for them). */
static bool unbacked(const char *p)
{
	return !p[0] || p[0] == '[' || !strncmp(p, "//anon", 6) || !strncmp(p, "/dev/", 5) ||
	       !strncmp(p, "/memfd:", 7) || !strncmp(p, "linux-vdso", 10) ||
	       !strncmp(p, "/SYSV", 5);
}

static void warn_once(struct tachi_unwind *u, const char *path, const char *what)
{
	uint64_t h = tachi_hash(path, strlen(path));
	for (size_t i = 0; i < u->nwarned; i++)
		if (u->warned[i] == h)
			return;
	if (u->nwarned == MAX_WARNED)
		return;
	u->warned[u->nwarned++] = h;
	tachi_warn(u->warn, TACH_POS_NONE, 0, "%s: %s; its samples' user stacks are unwound only "
		   "as far as frame pointers go", path, what);
}

/* The load bias of m's file e: where the segment holding file offset pgoff lands. An
 * executable (ET_EXEC) is where it says; libdwfl ignores a bias for it anyway. */
static bool load_bias(Elf *e, const struct map *m, uint64_t *bias)
{
	GElf_Ehdr eh;
	size_t n;
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &n))
		return false;
	if (eh.e_type == ET_EXEC) {
		*bias = 0;
		return true;
	}
	if (eh.e_type != ET_DYN)
		return false;
	bool have = false;
	GElf_Phdr seg = { 0 };
	for (size_t i = 0; i < n && i < 65536; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t lo = ph.p_offset & ~(uint64_t)PAGE_MASK_4K;
		bool holds = lo <= m->pgoff && m->pgoff - lo < ph.p_offset - lo + ph.p_filesz;
		if (!have || holds) {
			seg = ph;
			have = true;
		}
		if (holds)
			break;
	}
	if (!have)
		return false;
	*bias = m->start - m->pgoff + seg.p_offset - seg.p_vaddr;
	return true;
}

/* Opens path when it is a regular ELF file with the build ID wanted (any, when m records
 * none); *bias is its load bias for m. Returns the fd or -1; *mismatch: it was an ELF
 * file, of another build. */
static int try_file(const char *path, const struct map *m, uint64_t *bias, bool *mismatch)
{
	/* a FIFO or a device named by a mapping is never opened for reading */
	int fd = tachi_open_regular(path, NULL);
	if (fd < 0)
		return -1;
	Elf *e = NULL;
	bool ok = (e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) && elf_kind(e) == ELF_K_ELF;
	if (ok && m->build_id_len) {
		const void *id;
		ssize_t n = dwelf_elf_gnu_build_id(e, &id);
		/* a BUILD_ID record without its size (older perf) holds 20 bytes whatever
		 * the ID's size: a shorter one comes zero-padded */
		ok = n > 0 && (size_t)n <= m->build_id_len && !memcmp(id, m->build_id, (size_t)n);
		for (size_t i = ok ? (size_t)n : m->build_id_len; i < m->build_id_len; i++)
			ok = ok && !m->build_id[i];
		*mismatch |= !ok;
	}
	ok = ok && load_bias(e, m, bias);
	if (e)
		elf_end(e);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The recorded path, then in each search directory DIR/basename, DIR/recorded-path and,
 * with a build ID, DIR/.build-id/xx/rest/elf (perf's build-id cache, where the vDSO is
 * .../vdso). */
static int locate(struct tachi_unwind *u, const struct map *m, char *found, size_t cap,
		  uint64_t *bias, bool *mismatch)
{
	snprintf(found, cap, "%s", m->path);
	int fd = try_file(found, m, bias, mismatch);
	const char *base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	char hex[2 * MAX_BUILD_ID + 1];
	for (size_t i = 0; i < m->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
	for (size_t i = 0; fd < 0 && i < u->ndirs; i++) {
		for (int k = 0; fd < 0 && k < 3; k++) {
			int n;
			if (k < 2) {
				const char *tail = k ? m->path : base;
				n = snprintf(found, cap, "%s%s%s", u->dirs[i],
					     tail[0] == '/' ? "" : "/", tail);
			} else if (m->build_id_len > 1) {
				n = snprintf(found, cap, "%s/.build-id/%.2s/%s/%s", u->dirs[i], hex,
					     hex + 2, strcmp(m->path, "[vdso]") ? "elf" : "vdso");
			} else {
				continue;
			}
			if (n > 0 && (size_t)n < cap)
				fd = try_file(found, m, bias, mismatch);
		}
	}
	return fd;
}

static bool note_module(struct unwind_proc *p, Dwfl_Module *mod)
{
	Dwarf_Addr lo, hi;
	if (!dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL))
		return true;
	if (!TACHI_RESERVE(p->mods, p->mods_cap, p->nmods + 1))
		return false;
	p->mods[p->nmods++] = (struct unwind_range){ lo, hi };
	return true;
}

/* Reports m's binary into p's Dwfl; NULL when there is none to use (said once a path). */
static Dwfl_Module *report(struct tachi_unwind *u, struct unwind_proc *p, struct map *m)
{
	m->tried_gen = p->gen;
	/* perf keeps a copy of the vDSO in its build-id cache */
	bool vdso = m->build_id_len && !strcmp(m->path, "[vdso]");
	if (unbacked(m->path) && !vdso) {
		m->nofile = true;
		return NULL;
	}
	char found[4096];
	uint64_t bias = 0;
	bool mismatch = false;
	int fd = locate(u, m, found, sizeof(found), &bias, &mismatch);
	if (fd < 0) {
		m->nofile = true;
		warn_once(u, m->path, mismatch ? "the binary found has another build ID"
						: "binary not found");
		return NULL;
	}
	dwfl_report_begin_add(p->dwfl);
	Dwfl_Module *mod = dwfl_report_elf(p->dwfl, found, found, fd, bias, true);
	if (!mod)
		close(fd);
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (mod && !note_module(p, mod))
		return NULL;
	return mod;
}

/* The module holding addr in the sample's process, reported on first need. */
static Dwfl_Module *module_at(struct tachi_unwind *u, struct unwind_proc *p, uint64_t addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, addr);
	if (mod)
		return mod;
	struct map *m = find_map(p, addr);
	if (!m || m->nofile || m->tried_gen == p->gen)
		return NULL;
	return report(u, p, m);
}

/* ---- memory and registers, as libdwfl asks for them ---- */

static uint64_t rd_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* A word of the stack copy at addr, if all of it is inside. */
static bool stack_word(const struct sample *c, uint64_t addr, uint64_t *val)
{
	if (addr < c->sp || addr - c->sp > c->size || c->size - (addr - c->sp) < c->word)
		return false;
	*val = rd_le(c->stack + (addr - c->sp), c->word);
	return true;
}

/* A word of a reported binary's read-only segments (writable ones hold other bytes at run
 * time than in the file). */
static bool file_word(Dwfl *dwfl, uint64_t addr, unsigned word, uint64_t *val)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	Dwarf_Addr bias;
	Elf *e = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	size_t n, size;
	const char *raw = e ? elf_rawfile(e, &size) : NULL;
	if (!raw || elf_getphdrnum(e, &n))
		return false;
	uint64_t a = addr - bias;
	for (size_t i = 0; i < n && i < 65536; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || (ph.p_flags & PF_W))
			continue;
		if (a < ph.p_vaddr || a - ph.p_vaddr >= ph.p_filesz || ph.p_filesz - (a - ph.p_vaddr) < word)
			continue;
		uint64_t off = ph.p_offset + (a - ph.p_vaddr);
		if (off < ph.p_offset || off > size || size - off < word)
			return false;
		*val = rd_le((const uint8_t *)raw + off, word);
		return true;
	}
	return false;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct tachi_unwind *u = arg;
	uint64_t v;
	if (!stack_word(&u->cur, addr, &v) && !file_word(dwfl, addr, u->cur.word, &v))
		return false;
	*result = v;
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct tachi_unwind *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return (pid_t)u->cur.tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct tachi_unwind *u = arg;
	*thread_argp = arg;
	return tid == (pid_t)u->cur.tid;
}

/* Known registers only, in runs: one left out stays unknown to libdwfl rather than 0. */
static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct sample *c = &((struct tachi_unwind *)arg)->cur;
	for (unsigned r = 0; r < c->ndregs;) {
		if (!(c->dset >> r & 1)) {
			r++;
			continue;
		}
		unsigned e = r;
		while (e < c->ndregs && c->dset >> e & 1)
			e++;
		if (!dwfl_thread_state_registers(thread, (int)r, e - r, &c->dregs[r]))
			return false;
		r = e;
	}
	dwfl_thread_state_register_pc(thread, c->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* p's Dwfl, attached for abi: made on first need, the least recently used one closed to
 * make room. */
static bool proc_dwfl(struct tachi_unwind *u, struct unwind_proc *p, uint32_t abi)
{
	if (p->dwfl && p->abi != abi)
		drop_dwfl(u, p);
	p->used = ++u->clock;
	if (p->dwfl)
		return true;
	if (u->nlive == MAX_LIVE) {
		size_t old = 0;
		for (size_t i = 1; i < u->nlive; i++)
			if (u->live[i]->used < u->live[old]->used)
				old = i;
		drop_dwfl(u, u->live[old]);
	}
	if (!(p->dwfl = dwfl_begin(&u->cb)))
		return false;
	Elf *machine = abi == TACHI_UNWIND_ABI_64 ? u->elf64 : u->elf32;
	if (!dwfl_attach_state(p->dwfl, machine, (pid_t)p->pid, &thread_callbacks, u)) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return false;
	}
	p->abi = abi;
	p->gen++;
	u->live[u->nlive++] = p;
	return true;
}

/* ---- unwinding ---- */

static void put(struct sample *c, uint64_t pc, bool exact)
{
	c->out[c->n] = pc;
	if (c->exact)
		c->exact[c->n] = exact;
	c->n++;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct tachi_unwind *u = arg;
	struct sample *c = &u->cur;
	Dwarf_Addr pc;
	bool activation;
	/* Asked whether the frame is an activation, libdwfl unwinds it there and then (to
	 * see if its caller is a signal frame), and keeps what it got: the module holding
	 * its call site must be reported first, or the unwind is the frame-pointer guess. A
	 * return address's call site is at pc - 1, an exact PC's at pc: both. */
	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	module_at(u, c->p, pc);
	if (c->n && pc)
		module_at(u, c->p, pc - 1);
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* A caller's frame is above its callee's: a stack pointer that does not grow is a
	 * loop, or garbage. */
	Dwarf_Word sp;
	if (c->n && dwfl_frame_reg(state, c->sp_reg, &sp) == 0) {
		if (sp <= c->last_sp)
			return DWARF_CB_ABORT;
		c->last_sp = sp;
	}
	if (c->n && pc == 0)
		return DWARF_CB_ABORT;
	put(c, pc, activation || !c->n);
	if (c->n >= c->max)
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* The frame-pointer chain: [BP] the caller's BP, [BP + word] the return address. Only
 * upward through the stack copy, so it ends. */
static void fp_walk(struct sample *c)
{
	uint64_t bp = c->bp, lo = c->sp;
	while (c->n < c->max && bp >= lo && bp % c->word == 0) {
		uint64_t next, ret;
		if (!stack_word(c, bp, &next) || !stack_word(c, bp + c->word, &ret) || !ret)
			break;
		put(c, ret, false);
		if (next <= bp)
			break;
		lo = bp + 2 * c->word;
		bp = next;
	}
}

/* perf's register list (one value per bit of mask, in bit order) into DWARF numbering. */
static int take_regs(struct tachi_unwind *u, uint64_t mask, uint32_t abi, const uint64_t *regs,
		     size_t nregs)
{
	struct sample *c = &u->cur;
	if ((size_t)__builtin_popcountll(mask) != nregs)
		return fail(u, TACH_E_FORMAT, "the user registers do not match their mask");
	if (!(mask >> P_IP & 1) || !(mask >> P_SP & 1))
		return fail(u, TACH_E_FORMAT, "the user registers lack the IP or the stack pointer");
	const uint8_t *map = abi == TACHI_UNWIND_ABI_64 ? dwarf_64 : dwarf_32;
	c->ndregs = abi == TACHI_UNWIND_ABI_64 ? 17 : 9;
	c->sp_reg = abi == TACHI_UNWIND_ABI_64 ? 7 : 4;
	c->word = abi == TACHI_UNWIND_ABI_64 ? 8 : 4;
	uint64_t wmask = c->word == 8 ? UINT64_MAX : UINT32_MAX;
	c->dset = 0;
	for (unsigned d = 0; d < c->ndregs; d++) {
		unsigned b = map[d];
		if (!(mask >> b & 1))
			continue;
		uint64_t below = mask & ((UINT64_C(1) << b) - 1);
		c->dregs[d] = regs[__builtin_popcountll(below)] & wmask;
		c->dset |= 1u << d;
	}
	c->ip = c->dregs[c->ndregs - 1];
	c->sp = c->dregs[c->sp_reg];
	c->bp = mask >> P_BP & 1 ? c->dregs[abi == TACHI_UNWIND_ABI_64 ? 6 : 5] : 0;
	return TACH_OK;
}

int tachi_unwind_stack(struct tachi_unwind *u, uint32_t pid, uint32_t tid, uint64_t regs_mask,
		       uint32_t abi, const uint64_t *regs, size_t nregs, const uint8_t *stack,
		       size_t stack_size, uint64_t *ips_out, bool *exact_out, size_t max_ips,
		       size_t *n_out)
{
	*n_out = 0;
	u->msg[0] = 0;
	if (abi == TACHI_UNWIND_ABI_NONE)
		return TACH_OK;
	if (abi != TACHI_UNWIND_ABI_32 && abi != TACHI_UNWIND_ABI_64)
		return fail(u, TACH_E_FORMAT, "unknown user register ABI");
	struct sample *c = &u->cur;
	int rc = take_regs(u, regs_mask, abi, regs, nregs);
	if (rc)
		return rc;
	c->tid = tid;
	c->stack = stack;
	c->size = stack ? stack_size : 0;
	c->out = ips_out;
	c->exact = exact_out;
	c->n = 0;
	c->max = max_ips < TACHI_UNWIND_MAX_DEPTH ? max_ips : TACHI_UNWIND_MAX_DEPTH;
	c->last_sp = c->sp;
	if (!c->max)
		return TACH_OK;
	struct unwind_proc *p = find_proc(u, pid);
	if (!p && !(p = new_proc(u, pid)))
		return fail(u, TACH_E_NOMEM, "out of memory");
	c->p = p;
	/* libdwfl itself walks frame pointers where a binary has no CFI (its x86_64 and
	 * i386 backends); ours is for when it cannot start at all (out of memory, no
	 * backend for the machine, DWARF turned off). */
	if (!u->no_dwarf && proc_dwfl(u, p, abi)) {
		module_at(u, p, c->ip);
		dwfl_getthread_frames(p->dwfl, (pid_t)tid, frame_cb, u);
	}
	/* Nothing past the IP: the frame-pointer chain, from the IP again. */
	if (c->n <= 1) {
		c->n = 0;
		put(c, c->ip, true);
		fp_walk(c);
	}
	*n_out = c->n;
	c->p = NULL;
	return TACH_OK;
}

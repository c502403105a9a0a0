/* Processes, threads and their mappings, and how a sample's addresses become frames, as
 * `perf script` names them (tools/perf/util/machine.c, map.c, symbol.c):
 *
 *   - COMM names a thread (an exec renames it); a thread never named is ":TID". FORK of a
 *     new process gives it its parent's mappings (shared, spaces.c) and its thread's name;
 *     EXIT is kept as no state (perf keeps an exited thread's maps for late samples too).
 *   - MMAP/MMAP2 add a mapping to the process (pid -1: the kernel's). A newer mapping
 *     hides what it overlaps, however many. Executable anonymous memory ("//anon",
 *     "[heap]", ...) is JIT code named by /tmp/perf-PID.map, as perf renames it; a perf
 *     map is read only when it is a regular file.
 *   - A user address is named by the ELF symbol perf chooses (the library's symbolizer
 *     under perf's rules, symbolize/symbolize.h), the binary found through the build-id
 *     cache (~/.debug/.build-id/xx/yyyy/elf), its recorded path or --binary-path; a JIT
 *     address by the perf map's entry; a kernel address by the build-id cache's copy of
 *     the recorded kernel's kallsyms, else /proc/kallsyms when the running kernel's build
 *     ID is the capture's, or the capture names none (relocated by the capture's _text),
 *     else left unknown in "[kernel.kallsyms]". An address with no symbol is "0xADDR" in its
 *     dso (perf's "[unknown]"), as the perf script reader names it.
 *   - Frames keep their addresses and a mapping with its range, file offset and build ID.
 *
 * One symbolizer serves every process: each distinct binary segment (path, file offset,
 * size) gets a range of its own in one made-up address space, so that a binary mapped by
 * a thousand processes at a thousand addresses is opened once; a symbol is looked up once
 * per address in it, a frame made once per (mapping, address). Memory follows mappings,
 * processes and distinct addresses. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/io.h"
#include "core/handles.h"
#include "formats/perfdata/perfdata.h"
#include "formats/perfdata/unwind.h"
#include "symbolize/symbolize.h"

#define NONE UINT32_MAX
#define PROT_EXEC_BIT 4   /* PROT_EXEC of mmap(2), as MMAP2 records it */
#define SYN_BASE (1ull << 40)
#define MAX_SEGMENT (1ull << 40)
#define MAX_PERF_MAP (256u << 20)
#define MAX_KALLSYMS (64u << 20)

/* context markers of a callchain (uapi perf_event.h) */
#define CTX_HV ((uint64_t)-32)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define CTX_GUEST ((uint64_t)-2048)
#define CTX_GUEST_KERNEL ((uint64_t)-2176)
#define CTX_GUEST_USER ((uint64_t)-2560)
#define CTX_MAX ((uint64_t)-4095)

/* A table of two-u64 keys to a u32, open addressing; no iteration (output never depends
 * on its order). */
struct kv {
	uint64_t a, b;
	uint32_t v;
	bool used;
};
struct table {
	struct kv *s;
	size_t mask, n;
};

static uint64_t kv_hash(uint64_t a, uint64_t b)
{
	return tachi_mix64(a * 0x9e3779b97f4a7c15ull ^ tachi_mix64(b + 0x632be59bd9b4e019ull));
}

static bool kv_get(const struct table *t, uint64_t a, uint64_t b, uint32_t *v)
{
	if (!t->s)
		return false;
	for (size_t i = kv_hash(a, b) & t->mask;; i = (i + 1) & t->mask) {
		if (!t->s[i].used)
			return false;
		if (t->s[i].a == a && t->s[i].b == b) {
			*v = t->s[i].v;
			return true;
		}
	}
}

static bool kv_put(struct table *t, uint64_t a, uint64_t b, uint32_t v)
{
	if ((t->n + 1) * 4 > (t->mask + 1) * 3 || !t->s) {
		size_t cap = t->s ? (t->mask + 1) * 2 : 64;
		struct kv *ns = calloc(cap, sizeof(*ns));
		if (!ns)
			return false;
		for (size_t i = 0; t->s && i <= t->mask; i++) {
			if (!t->s[i].used)
				continue;
			size_t k = kv_hash(t->s[i].a, t->s[i].b) & (cap - 1);
			while (ns[k].used)
				k = (k + 1) & (cap - 1);
			ns[k] = t->s[i];
		}
		free(t->s);
		t->s = ns;
		t->mask = cap - 1;
	}
	size_t i = kv_hash(a, b) & t->mask;
	while (t->s[i].used && !(t->s[i].a == a && t->s[i].b == b))
		i = (i + 1) & t->mask;
	if (!t->s[i].used)
		t->n++;
	t->s[i] = (struct kv){ a, b, v, true };
	return true;
}

/* The frames table: (map, address) to frame, in 16 bytes a slot (four to a cache line:
 * its look-ups are most of a sample's cost, and nearly all miss the cache), the map
 * FREE in an empty slot. */
#define FREE UINT32_MAX
struct fslot {
	uint64_t ip;
	uint32_t map, v;
};
struct ftable {
	struct fslot *s;
	size_t mask, n;
};

/* By the address alone, so that a sample's slots can be asked for before its addresses'
 * mappings are known (pd_prefetch_chain); one address in several maps is rare. */
/* Slots for cap entries. A table of megabytes is looked up at random addresses, a TLB
 * miss each with small pages: it asks for huge ones where the system gives them on
 * request (transparent huge pages in madvise mode), which also makes its first touch one
 * fault per 2 MiB, not per 4 KiB. */
static struct fslot *ft_alloc(size_t cap)
{
	size_t bytes = cap * sizeof(struct fslot);
	void *p = NULL;
#ifdef MADV_HUGEPAGE
	if (bytes >= (2u << 20) && !posix_memalign(&p, 2u << 20, bytes)) {
		madvise(p, bytes, MADV_HUGEPAGE);
		return p;
	}
#endif
	return malloc(bytes);
}

static size_t ft_home(const struct ftable *t, uint64_t ip)
{
	return tachi_mix64(ip + 0x632be59bd9b4e019ull) & t->mask;
}

static void ft_prefetch(const struct ftable *t, uint64_t ip)
{
	if (t->s)
		__builtin_prefetch(&t->s[ft_home(t, ip)]);
}

static bool ft_get(const struct ftable *t, uint32_t map, uint64_t ip, uint32_t *v)
{
	if (!t->s)
		return false;
	for (size_t i = ft_home(t, ip);; i = (i + 1) & t->mask) {
		if (t->s[i].map == FREE)
			return false;
		if (t->s[i].map == map && t->s[i].ip == ip) {
			*v = t->s[i].v;
			return true;
		}
	}
}

/* map: never FREE (a map index, or NONE - 1 for the kernel's addresses outside any). */
static bool ft_put(struct ftable *t, uint32_t map, uint64_t ip, uint32_t v)
{
	if ((t->n + 1) * 4 > (t->mask + 1) * 3 || !t->s) {
		size_t cap = t->s ? (t->mask + 1) * 2 : 64;
		struct fslot *ns = ft_alloc(cap);
		if (!ns)
			return false;
		for (size_t i = 0; i < cap; i++)
			ns[i].map = FREE;
		struct ftable nt = { ns, cap - 1, 0 };
		for (size_t i = 0; t->s && i <= t->mask; i++) {
			if (t->s[i].map == FREE)
				continue;
			size_t k = ft_home(&nt, t->s[i].ip);
			while (ns[k].map != FREE)
				k = (k + 1) & nt.mask;
			ns[k] = t->s[i];
		}
		free(t->s);
		t->s = ns;
		t->mask = nt.mask;
	}
	size_t i = ft_home(t, ip);
	while (t->s[i].map != FREE && !(t->s[i].map == map && t->s[i].ip == ip))
		i = (i + 1) & t->mask;
	if (t->s[i].map == FREE)
		t->n++;
	t->s[i] = (struct fslot){ ip, map, v };
	return true;
}

/* A mapping as recorded (one per distinct start, size, offset, file). */
struct perfdata_pmap {
	uint64_t start, len, pgoff;
	char *path;               /* as perf names the dso */
	char build_id[41];        /* lowercase hex, "" when unknown */
	uint64_t syn;             /* its start in the symbolizer's space; 0: not symbolized */
	uint32_t mapping;         /* the dict's id, 0 before the first frame */
	uint32_t pid;             /* a JIT map's process (its perf map) */
	bool jit, kernel;
};

/* A JIT symbol from a perf map. */
struct jsym {
	uint64_t start, end;
	char *name;
};

struct perfdata_proc {
	uint32_t space;           /* its mappings (spaces.c), shared with its forks */
	uint32_t epoch;           /* its nodes' epoch there, 0 before its first mapping */
	struct jsym *jit;         /* its perf map, loaded at its first JIT frame */
	size_t njit;
	bool jit_tried;
};

struct thread {
	uint32_t pid;
	char *comm;
	uint32_t root;            /* its root frame, NONE until made */
};

struct ksym {
	uint64_t addr;
	const char *name;
	uint32_t seq;
	uint8_t rank;
};

/* /proc/kallsyms's text symbols, sorted, one per address: read once for every reader that
 * shares a symbol cache (the kernel runs on), else the reader's own. */
struct ktab {
	char bid[41];             /* the build ID of the copy read, "" for /proc/kallsyms */
	char *buf;                /* the names, one after the other */
	struct ksym *ks;
	size_t nks;
	uint64_t text;            /* _text, 0 when addresses are hidden */
};

struct pd_syms {
	struct tachi_sym *sym;
	struct perfdata_pmap *maps;
	size_t nmaps, maps_cap;
	struct table map_index;   /* (hash of start, size, offset, path) -> pmap */
	struct table segs;        /* (hash of path, offset, size) -> symbolizer segment */
	uint64_t *seg_syn;
	size_t nsegs, segs_cap;
	uint64_t syn_next;
	struct pd_spaces spaces;
	struct perfdata_proc *procs;
	size_t nprocs, procs_cap;
	struct table proc_index;  /* pid -> proc */
	struct thread *threads;
	size_t nthreads, threads_cap;
	struct table thread_index;/* tid -> thread */
	struct ftable frames;     /* (map or NONE - 1, address) -> frame */
	struct table names;       /* symbolizer address -> string id (NONE: no symbol) */
	struct table symframes;   /* (map, symbol's raw name) -> frame, where frames have no
				   * address nor source line: every address of a symbol is one
				   * frame, named once */
	uint64_t seq;
	bool warned_perf_map;     /* JIT code without its perf map was said */
	/* the kernel */
	uint32_t kmap;            /* its pmap, NONE when none was recorded */
	uint64_t ktext;           /* _text when recorded */
	bool ktext_known;
	struct ktab *kt;          /* NULL until read, or when it cannot be */
	bool kt_own;              /* not the cache's */
	int64_t kdelta;           /* add to a recorded address for kallsyms' */
	bool ks_tried;
	/* --call-graph dwarf: the unwinder, told of every mapping, fork, exec and exit once
	 * an attribute asks for user stacks (decided at the first such record) */
	struct tachi_unwind *uw;
	bool uw_decided;
	/* a lookup's result */
	const char *found;
	struct tach_reader *r;
};

static void ktab_free(void *p);

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

/* A binary that could not be opened for want of file descriptors: at the sample that
 * needed it. */
static int io_failed(struct tach_reader *r)
{
	struct pd *st = r->state;
	return RFAIL(r, TACH_E_IO, TACH_POS_OFFSET, st->sample_off, "%s",
		     tachi_sym_io_error(st->syms->sym));
}

int pd_syms_new(struct tach_reader *r)
{
	struct pd *st = r->state;
	struct pd_syms *y = calloc(1, sizeof(*y));
	if (!y)
		return nomem(r);
	st->syms = y;
	y->kmap = NONE;
	y->syn_next = SYN_BASE;
	if (!(y->sym = tachi_sym_new(&r->warn, st->binary_path, !st->no_symbolize)))
		return nomem(r);
	tachi_sym_set_perf_rules(y->sym);
	tachi_sym_set_cache(y->sym, r->symcache);
	return TACH_OK;
}

void pd_syms_free(struct pd_syms *y)
{
	if (!y)
		return;
	tachi_unwind_free(y->uw);
	tachi_sym_free(y->sym);
	for (size_t i = 0; i < y->nmaps; i++)
		free(y->maps[i].path);
	free(y->maps);
	free(y->map_index.s);
	free(y->segs.s);
	free(y->seg_syn);
	for (size_t i = 0; i < y->nprocs; i++) {
		for (size_t k = 0; k < y->procs[i].njit; k++)
			free(y->procs[i].jit[k].name);
		free(y->procs[i].jit);
	}
	free(y->procs);
	pd_spaces_free(&y->spaces);
	free(y->proc_index.s);
	for (size_t i = 0; i < y->nthreads; i++)
		free(y->threads[i].comm);
	free(y->threads);
	free(y->thread_index.s);
	free(y->frames.s);
	free(y->names.s);
	if (y->kt_own)
		ktab_free(y->kt);
	free(y->symframes.s);
	free(y);
}

/* ---- processes and threads ---- */

static struct perfdata_proc *proc_get(struct tach_reader *r, uint32_t pid, bool make)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	uint32_t i;
	if (kv_get(&y->proc_index, pid, 0, &i))
		return &y->procs[i];
	if (!make || !TACHI_RESERVE(y->procs, y->procs_cap, y->nprocs + 1))
		return NULL;
	memset(&y->procs[y->nprocs], 0, sizeof(*y->procs));
	if (!kv_put(&y->proc_index, pid, 0, (uint32_t)y->nprocs))
		return NULL;
	return &y->procs[y->nprocs++];
}

static struct thread *thread_get(struct tach_reader *r, uint32_t tid, uint32_t pid, bool make)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	uint32_t i;
	if (kv_get(&y->thread_index, tid, 0, &i))
		return &y->threads[i];
	if (!make || !TACHI_RESERVE(y->threads, y->threads_cap, y->nthreads + 1))
		return NULL;
	y->threads[y->nthreads] = (struct thread){ pid, NULL, NONE };
	if (!kv_put(&y->thread_index, tid, 0, (uint32_t)y->nthreads))
		return NULL;
	return &y->threads[y->nthreads++];
}

static int set_comm(struct tach_reader *r, struct thread *t, const char *s, size_t n)
{
	char *c = strndup(s, n);
	if (!c)
		return nomem(r);
	free(t->comm);
	t->comm = c;
	t->root = NONE;
	return TACH_OK;
}

/* The unwinder, when some attribute records user stacks (NULL otherwise, or on failure:
 * then samples keep the user IP alone). */
static struct tachi_unwind *unwinder(struct tach_reader *r)
{
	struct pd *st = r->state;
	struct pd_syms *y = st->syms;
	if (y->uw_decided)
		return y->uw;
	y->uw_decided = true;
	/* unwinding reads the binaries' CFI, which symbolize=no forbids */
	for (size_t i = 0; i < st->nattrs && !st->no_symbolize; i++)
		if (st->attrs[i].sample_type & PD_S_STACK_USER &&
		    st->attrs[i].sample_type & PD_S_REGS_USER)
			return y->uw = tachi_unwind_new(&r->warn, st->binary_path);
	return NULL;
}

int pd_on_comm(struct tach_reader *r, const uint8_t *p, uint32_t size, uint64_t off)
{
	struct pd *st = r->state;
	(void)off;
	if (size < 17)
		return TACH_OK;
	uint32_t pid = tachi_rd32(p + 8, st->swap), tid = tachi_rd32(p + 12, st->swap);
	struct thread *t = thread_get(r, tid, pid, true);
	if (!t)
		return nomem(r);
	t->pid = pid;
	/* an exec: the unwinder's mappings of the old program go */
	struct tachi_unwind *uw = unwinder(r);
	if (uw && (pd_rd16(st, p + 4) & PD_MISC_COMM_EXEC))
		tachi_unwind_forget_pid(uw, pid);
	return set_comm(r, t, (const char *)p + 16, strnlen((const char *)p + 16, size - 16u));
}

/* A new process's mappings are its parent's: the same space, which neither changes. */
static int copy_maps(struct tach_reader *r, uint32_t from, uint32_t to)
{
	struct perfdata_proc *f = proc_get(r, from, false);
	if (!f || !f->space)
		return TACH_OK;
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	uint32_t space = f->space;
	/* the nodes both now reach are the parent's no more */
	f->epoch = pd_space_epoch(&y->spaces);
	struct perfdata_proc *t = proc_get(r, to, true); /* may move f */
	if (!t)
		return nomem(r);
	t->space = space;
	t->epoch = pd_space_epoch(&y->spaces);
	return TACH_OK;
}

int pd_on_fork(struct tach_reader *r, const uint8_t *p, uint32_t size, uint64_t off)
{
	struct pd *st = r->state;
	(void)off;
	if (size < 24)
		return TACH_OK;
	uint32_t pid = tachi_rd32(p + 8, st->swap), ppid = tachi_rd32(p + 12, st->swap);
	uint32_t tid = tachi_rd32(p + 16, st->swap), ptid = tachi_rd32(p + 20, st->swap);
	struct thread *parent = thread_get(r, ptid, ppid, false);
	const char *pc = parent && parent->comm ? parent->comm : NULL;
	char *comm = pc ? strdup(pc) : NULL;
	if (pc && !comm)
		return nomem(r);
	struct thread *t = thread_get(r, tid, pid, true);
	if (!t) {
		free(comm);
		return nomem(r);
	}
	t->pid = pid;
	if (comm) {
		free(t->comm);
		t->comm = comm;
		t->root = NONE;
	}
	struct tachi_unwind *uw = pid != ppid ? unwinder(r) : NULL;
	if (uw && tachi_unwind_fork(uw, ppid, pid))
		return nomem(r);
	return pid != ppid ? copy_maps(r, ppid, pid) : TACH_OK;
}

int pd_on_exit(struct tach_reader *r, const uint8_t *p, uint32_t size, uint64_t off)
{
	struct pd *st = r->state;
	(void)off;
	/* a process's end (its main thread's): the unwinder's memory follows live processes */
	struct tachi_unwind *uw = size >= 24 ? unwinder(r) : NULL;
	uint32_t pid = size >= 24 ? tachi_rd32(p + 8, st->swap) : 0;
	if (uw && pid == tachi_rd32(p + 16, st->swap))
		tachi_unwind_forget_pid(uw, pid);
	return TACH_OK;
}

/* ---- mappings ---- */

/* perf's anonymous and dso-less memory, named by the process's perf map (map.c). */
static bool jit_memory(const char *f)
{
	return !strcmp(f, "//anon") || !strncmp(f, "/dev/zero", 9) ||
	       !strncmp(f, "/anon_hugepage", 14) || !strncmp(f, "[stack", 6) ||
	       !strncmp(f, "/SYSV", 5) || !strcmp(f, "[heap]");
}

/* The binary to read for path: the build-id cache's copy, else the recorded path (the
 * symbolizer then tries --binary-path). */
static int binary_for(const char *path, const char *bid, char *out, size_t cap)
{
	const char *home = getenv("HOME");
	struct stat sb;
	/* perf keeps a binary as "elf" there, the vdso as "vdso" */
	for (int k = 0; k < 2 && bid && strlen(bid) > 2 && home && *home; k++)
		if (snprintf(out, cap, "%s/.debug/.build-id/%.2s/%s/%s", home, bid, bid + 2,
			     k ? "vdso" : "elf") < (int)cap &&
		    !stat(out, &sb) && S_ISREG(sb.st_mode))
			return TACH_OK;
	return snprintf(out, cap, "%s", path) < (int)cap ? TACH_OK : TACH_E_LIMIT;
}

/* The symbolizer's range for the segment (path, offset, size), added once. */
static int segment(struct tach_reader *r, struct perfdata_pmap *m)
{
	struct pd *st = r->state;
	struct pd_syms *y = st->syms;
	uint64_t h = tachi_hash(m->path, strlen(m->path)) ^ tachi_mix64(m->pgoff);
	uint32_t id;
	/* the vdso is read from the copy perf record keeps in the build-id cache */
	bool vdso = !strcmp(m->path, "[vdso]") && m->build_id[0];
	if ((m->path[0] != '/' && !vdso) || m->jit || !m->len || m->len > MAX_SEGMENT ||
	    st->no_symbolize)
		return TACH_OK;
	if (kv_get(&y->segs, h, m->len, &id)) {
		m->syn = y->seg_syn[id];
		return TACH_OK;
	}
	char path[4200];
	if (binary_for(m->path, m->build_id[0] ? m->build_id : NULL, path, sizeof(path)) ||
	    path[0] != '/')
		return TACH_OK;
	uint64_t syn = y->syn_next;
	if (syn > UINT64_MAX / 4 - m->len - 8192)
		return TACH_OK;
	y->syn_next = (syn + m->len + 8191) & ~4095ull;
	if (!TACHI_RESERVE(y->seg_syn, y->segs_cap, y->nsegs + 1) ||
	    !kv_put(&y->segs, h, m->len, (uint32_t)y->nsegs) ||
	    tachi_sym_add_map(y->sym, syn, syn + m->len, m->pgoff, path, strlen(path)))
		return nomem(r);
	y->seg_syn[y->nsegs++] = syn;
	m->syn = syn;
	return TACH_OK;
}

static int pmap_of(struct tach_reader *r, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *path, const char *bid, uint32_t pid, bool jit, uint32_t *out)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	uint64_t h = tachi_hash(path, strlen(path)) ^ tachi_mix64(start) ^ tachi_mix64(pgoff + 1);
	uint32_t id;
	if (kv_get(&y->map_index, h, len, &id) && y->maps[id].start == start &&
	    y->maps[id].pgoff == pgoff && !strcmp(y->maps[id].path, path)) {
		*out = id;
		return TACH_OK;
	}
	if (!TACHI_RESERVE(y->maps, y->maps_cap, y->nmaps + 1))
		return nomem(r);
	struct perfdata_pmap *m = &y->maps[y->nmaps];
	*m = (struct perfdata_pmap){ start, len, pgoff, strdup(path), "", 0, 0, pid, jit, false };
	snprintf(m->build_id, sizeof(m->build_id), "%s", bid ? bid : "");
	if (!m->path || !kv_put(&y->map_index, h, len, (uint32_t)y->nmaps))
		return nomem(r);
	*out = (uint32_t)y->nmaps++;
	return segment(r, m);
}

static int add_range(struct tach_reader *r, uint32_t pid, uint32_t map)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	struct perfdata_proc *p = proc_get(r, pid, true);
	if (!p)
		return nomem(r);
	const struct perfdata_pmap *m = &y->maps[map];
	uint64_t end = m->start + m->len < m->start ? UINT64_MAX : m->start + m->len;
	if (!p->epoch)
		p->epoch = pd_space_epoch(&y->spaces);
	return pd_space_insert(&y->spaces, &p->space, p->epoch, m->start, end, map, y->seq++)
		       ? nomem(r) : TACH_OK;
}

static void kernel_map(struct pd_syms *y, const char *name, uint64_t pgoff, uint32_t map)
{
	/* "[kernel.kallsyms]_text": pgoff is where _text was when recorded (KASLR) */
	if (!strncmp(name, "[kernel.kallsyms]", 17)) {
		y->kmap = map;
		y->maps[map].kernel = true;
		if (!strcmp(name + 17, "_text")) {
			y->ktext = pgoff;
			y->ktext_known = true;
		}
	}
}

int pd_on_mmap(struct tach_reader *r, const uint8_t *p, uint32_t size, uint64_t off, bool two)
{
	struct pd *st = r->state;
	(void)off;
	uint32_t fo = two ? 72 : 40;
	if (size <= fo)
		return TACH_OK;
	uint16_t misc = pd_rd16(st, p + 4);
	uint32_t pid = tachi_rd32(p + 8, st->swap);
	uint64_t start = tachi_rd64(p + 16, st->swap), len = tachi_rd64(p + 24, st->swap);
	uint64_t pgoff = tachi_rd64(p + 32, st->swap);
	const char *f = (const char *)p + fo;
	size_t fl = strnlen(f, size - fo);
	if (!fl || fl >= PD_MAX_NAME)
		return TACH_OK;
	char name[PD_MAX_NAME + 32];
	memcpy(name, f, fl);
	name[fl] = 0;
	/* MMAP2 with a build ID in place of the device and inode, else the BUILD_ID feature's */
	bool kernel = (misc & PD_MISC_CPUMODE) == PD_MISC_KERNEL;
	const char *dso = kernel && name[0] == '[' ? "[kernel.kallsyms]" : name;
	const char *known = pd_build_id_of(st, dso, kernel);
	uint8_t bid[20];
	size_t nb = 0;
	if (two && (misc & PD_MISC_MMAP_BUILD_ID) && p[40] <= 20) {
		nb = p[40];
		memcpy(bid, p + 44, nb);
	} else {
		for (; known && nb < 20 && tachi_hexval(known[2 * nb]) >= 0 &&
		       tachi_hexval(known[2 * nb + 1]) >= 0; nb++)
			bid[nb] = (uint8_t)(tachi_hexval(known[2 * nb]) << 4 | tachi_hexval(known[2 * nb + 1]));
	}
	char hex[41] = "";
	for (size_t i = 0; i < nb; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	struct tachi_unwind *uw = kernel ? NULL : unwinder(r);
	/* the unwinder reads the binary as recorded (anonymous memory it leaves alone) */
	int rc = uw ? tachi_unwind_add_map(uw, pid, start, len, pgoff, name, fl, nb ? bid : NULL, nb)
		    : TACH_OK;
	if (rc == TACH_E_NOMEM)
		return nomem(r);
	/* perf names anonymous memory by the perf map only when it is executable (map.c):
	 * MMAP2's prot, MMAP's want of the data flag */
	bool exec = two ? (tachi_rd32(p + 64, st->swap) & PROT_EXEC_BIT) != 0
			: !(misc & PD_MISC_MMAP_DATA);
	bool jit = exec && jit_memory(name);
	if (jit)
		snprintf(name, sizeof(name), "/tmp/perf-%u.map", pid);
	uint32_t map = NONE;
	if ((rc = pmap_of(r, start, len, pgoff, jit ? name : dso, hex[0] ? hex : NULL, pid, jit, &map)))
		return rc;
	if (kernel) {
		kernel_map(st->syms, name, pgoff, map);
		return TACH_OK;
	}
	return add_range(r, pid, map);
}

/* The newest mapping of p holding addr, NONE when none. */
static uint32_t find_range(const struct pd_syms *y, const struct perfdata_proc *p, uint64_t addr)
{
	return p ? pd_space_find(&y->spaces, p->space, addr) : NONE;
}

/* ---- the kernel: /proc/kallsyms when the running kernel is the capture's ---- */

/* The running kernel's build ID (an ELF note in /sys/kernel/notes), as lowercase hex. */
static bool running_build_id(char *hex, size_t cap)
{
	uint8_t buf[4096];
	FILE *f = fopen("/sys/kernel/notes", "rb");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	for (size_t k = 0; k + 12 <= n;) {
		uint32_t nsz = tachi_rd32(buf + k, false), dsz = tachi_rd32(buf + k + 4, false);
		uint32_t type = tachi_rd32(buf + k + 8, false);
		size_t na = (nsz + 3u) & ~3u, da = (dsz + 3u) & ~3u;
		if (nsz > 64 || dsz > 64 || k + 12 + na + da > n)
			return false;
		if (type == 3 && nsz == 4 && !memcmp(buf + k + 12, "GNU", 4) && 2 * dsz < cap) {
			for (uint32_t i = 0; i < dsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", buf[k + 12 + na + i]);
			hex[2 * dsz] = 0;
			return true;
		}
		k += 12 + na + da;
	}
	return false;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* perf's choice among aliases, as for ELF symbols: a symbol with a size (of aliases
	 * only the last in the file gets one), non-weak, global, fewer leading underscores,
	 * the longer name, the first */
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	size_t ux = strspn(x->name, "_"), uy = strspn(y->name, "_");
	if (ux != uy)
		return ux < uy ? -1 : 1;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ksym_order(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One "ADDR TYPE NAME[\t[module]]" line (its end made a NUL); text symbols (and those
 * perf keeps) only. The name stays in the line. */
static bool kallsyms_line(char *line, struct ksym *k)
{
	char *sp = strchr(line, ' ');
	if (!sp || !sp[1] || sp[2] != ' ')
		return false;
	char t = sp[1];
	if (!strchr("TtWwDdBbuN", t))
		return false;
	char *name = sp + 3;
	name[strcspn(name, "\t")] = 0;
	k->addr = strtoull(line, NULL, 16);
	k->rank = (uint8_t)((t != 'W' && t != 'w') * 2 + (isupper((unsigned char)t) != 0));
	k->name = name;
	return *name != 0;
}

/* A kallsyms file whole: the build-id cache's copy, a plain file, into a buffer of its
 * size; a proc file, which has no size, until its end. */
static char *read_kallsyms(const char *path, size_t *n)
{
	uint64_t size = 0;
	int fd = tachi_open_regular(path, &size);
	char *buf = NULL;
	size_t cap = 0;
	*n = 0;
	if (fd < 0)
		return NULL;
	if (size >= MAX_KALLSYMS)
		size = 0;
	if (size && (buf = malloc((size_t)size + 1)))
		cap = (size_t)size + 1;
	for (;;) {
		if (*n + 1 >= cap &&
		    (size || *n >= MAX_KALLSYMS || !TACHI_RESERVE(buf, cap, *n + 65537)))
			break;
		ssize_t got = read(fd, buf + *n, cap - 1 - *n);
		if (got <= 0)
			break;
		*n += (size_t)got;
	}
	close(fd);
	if (buf)
		buf[*n] = 0;
	return buf;
}

/* The copy of the recorded kernel's kallsyms that perf record keeps in the build-id cache
 * (~/.debug/[kernel.kallsyms]/BUILDID/kallsyms), false when there is none. It is what
 * perf report reads for a capture of another kernel; for this kernel's it holds what
 * /proc/kallsyms says, read as a plain file instead of the kernel formatting each of its
 * lines again (most of the CPU a capture with kernel frames costs beyond its records). */
static bool cached_kallsyms(const char *bid, char *out, size_t cap)
{
	const char *home = getenv("HOME");
	struct stat sb;
	return bid && strlen(bid) > 2 && strspn(bid, "0123456789abcdef") == strlen(bid) &&
	       home && *home &&
	       snprintf(out, cap, "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, bid) <
		       (int)cap &&
	       !stat(out, &sb) && S_ISREG(sb.st_mode);
}

static void ktab_free(void *p)
{
	struct ktab *t = p;
	if (!t)
		return;
	free(t->ks);
	free(t->buf);
	free(t);
}

/* Sorted by address, perf's choice among the symbols of one address kept. */
static void ktab_sort(struct ktab *t)
{
	size_t k = 1;
	/* the kernel lists them in address order: sorted only when not */
	while (k < t->nks && ksym_order(&t->ks[k - 1], &t->ks[k]) < 0)
		k++;
	if (k < t->nks)
		qsort(t->ks, t->nks, sizeof(*t->ks), ksym_order);
	for (size_t i = 0; i + 1 < t->nks; i++)
		if (t->ks[i + 1].addr != t->ks[i].addr)
			t->ks[i].rank |= 4;
	if (t->nks)
		t->ks[t->nks - 1].rank |= 4;
	size_t w = 0;
	for (size_t i = 0; i < t->nks; i++)
		if (!w || t->ks[w - 1].addr != t->ks[i].addr)
			t->ks[w++] = t->ks[i];
		else if (ksym_cmp(&t->ks[i], &t->ks[w - 1]) < 0)
			t->ks[w - 1] = t->ks[i];
	t->nks = w;
}

/* The names kept copied out of the file's text, which goes, and the table cut to them: most
 * of a kallsyms file is addresses, types and module names, and one of a kernel with its
 * modules has some 5 MB of them, held to the end of a run otherwise. */
static void ktab_compact(struct ktab *t)
{
	size_t len = 1, at = 0;
	for (size_t i = 0; i < t->nks; i++)
		len += strlen(t->ks[i].name) + 1;
	char *names = malloc(len);
	if (!names)
		return;
	for (size_t i = 0; i < t->nks; i++) {
		size_t n = strlen(t->ks[i].name) + 1;
		memcpy(names + at, t->ks[i].name, n);
		t->ks[i].name = names + at;
		at += n;
	}
	free(t->buf);
	t->buf = names;
	struct ksym *ks = t->nks ? realloc(t->ks, t->nks * sizeof(*ks)) : NULL;
	if (ks)
		t->ks = ks;
}

/* bid: the build-id cache's copy for it, NULL: /proc/kallsyms. */
static struct ktab *ktab_read(const char *path, const char *bid)
{
	size_t n, cap = 0;
	struct ktab *t = calloc(1, sizeof(*t));
	if (!t || !(t->buf = read_kallsyms(path, &n))) {
		free(t);
		return NULL;
	}
	snprintf(t->bid, sizeof(t->bid), "%s", bid ? bid : "");
	/* a symbol a line: room for them all at once */
	size_t lines = 1;
	for (const char *p = t->buf; (p = memchr(p, '\n', (size_t)(t->buf + n - p))); p++)
		lines++;
	(void)TACHI_RESERVE(t->ks, cap, lines); /* failing, so does the loop's */
	for (char *line = t->buf, *nl; line < t->buf + n; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = t->buf + n;
		*nl = 0;
		struct ksym k;
		if (!kallsyms_line(line, &k))
			continue;
		if (!TACHI_RESERVE(t->ks, cap, t->nks + 1))
			break;
		if (!strcmp(k.name, "_text"))
			t->text = k.addr;
		k.seq = (uint32_t)t->nks;
		t->ks[t->nks++] = k;
	}
	/* addresses hidden (kptr_restrict) read as 0: nothing can be named */
	if (!t->text)
		t->nks = 0;
	ktab_sort(t);
	ktab_compact(t);
	return t;
}

/* The kernel's symbols from path (bid: the build-id cache's copy of that kernel's, NULL:
 * /proc/kallsyms). Readers sharing a symbol cache share one table, the first read; a
 * reader wanting another kernel's reads its own. */
static void load_kallsyms(struct pd_syms *y, struct tachi_symcache *cache, const char *path,
			  const char *bid)
{
	struct ktab *shared = tachi_symcache_extra(cache);
	y->kt = shared && !strcmp(shared->bid, bid ? bid : "") ? shared : NULL;
	y->kt_own = false;
	if (!y->kt && (y->kt = ktab_read(path, bid))) {
		if (cache && !shared)
			tachi_symcache_set_extra(cache, y->kt, ktab_free);
		else
			y->kt_own = true;
	}
	y->kdelta = y->kt && y->ktext_known ? (int64_t)(y->kt->text - y->ktext) : 0;
}

static const char *kernel_symbol(struct tach_reader *r, uint64_t ip)
{
	struct pd *st = r->state;
	struct pd_syms *y = st->syms;
	if (!y->ks_tried) {
		y->ks_tried = true;
		char run[160], path[4200];
		/* as perf: a capture that names no kernel build ID (perf record -z, pipe mode,
		 * where it comes last) is taken to be of this kernel */
		const char *rec = pd_build_id_of(st, "[kernel.kallsyms]", true);
		if (st->no_symbolize)
			;
		else if (cached_kallsyms(rec, path, sizeof(path)))
			load_kallsyms(y, r->symcache, path, rec);
		else if (!rec || (running_build_id(run, sizeof(run)) && !strcmp(run, rec)))
			load_kallsyms(y, r->symcache, "/proc/kallsyms", NULL);
		else
			tachi_warn(&r->warn, TACH_POS_NONE, 0,
				   "the running kernel is not the one recorded (their build IDs "
				   "differ) and the build-id cache has no copy of its kallsyms: "
				   "kernel frames are left unnamed, as [kernel.kallsyms]");
	}
	uint64_t a = ip + (uint64_t)y->kdelta;
	size_t lo = 0, hi = y->kt ? y->kt->nks : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (y->kt->ks[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? y->kt->ks[lo - 1].name : NULL;
}

/* ---- JIT code: /tmp/perf-PID.map ---- */

static int jsym_cmp(const void *a, const void *b)
{
	const struct jsym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* of two at one start perf keeps the longer name */
	size_t lx = strlen(x->name), ly = strlen(y->name);
	return lx > ly ? -1 : lx < ly;
}

/* One "START SIZE NAME" line (its newline gone; a NUL inside ends it, as perf's parsing
 * reads it too); false when it is not one. */
static bool perf_map_line(struct perfdata_proc *p, size_t *cap, const char *line)
{
	char *e1, *e2;
	uint64_t start = strtoull(line, &e1, 16), size = strtoull(e1, &e2, 16);
	if (e1 == line || e2 == e1 || *e2 != ' ' || !e2[1] ||
	    !TACHI_RESERVE(p->jit, *cap, p->njit + 1))
		return false;
	char *name = strdup(e2 + 1);
	if (!name)
		return false;
	p->jit[p->njit++] = (struct jsym){ start, start + size < start ? UINT64_MAX : start + size,
					   name };
	return true;
}

/* The perf map at path, when it is a regular file of at most MAX_PERF_MAP bytes (a FIFO
 * or a device there is never read): its lines whole, whatever their length, each entry
 * once per start (of several at one start perf keeps the one with the longest name). */
static void load_perf_map(struct perfdata_proc *p, const char *path)
{
	uint64_t size;
	int fd = tachi_open_regular(path, &size);
	FILE *f = fd >= 0 && size <= MAX_PERF_MAP ? fdopen(fd, "r") : NULL;
	if (!f && fd >= 0)
		close(fd);
	char *line = NULL;
	size_t lcap = 0, cap = 0, bytes = 0;
	ssize_t n;
	/* the file may grow as it is read: the bytes read are bounded too */
	while (f && (n = getline(&line, &lcap, f)) > 0 && (bytes += (size_t)n) <= MAX_PERF_MAP) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		perf_map_line(p, &cap, line);
	}
	free(line);
	if (f)
		fclose(f);
	if (!p->njit)
		return;
	qsort(p->jit, p->njit, sizeof(*p->jit), jsym_cmp);
	/* the first of equal starts is the one kept: lookups then need no walk over them */
	size_t w = 0;
	for (size_t i = 0; i < p->njit; i++) {
		if (w && p->jit[w - 1].start == p->jit[i].start) {
			free(p->jit[i].name);
			continue;
		}
		p->jit[w++] = p->jit[i];
	}
	p->njit = w;
}

/* JIT code without its perf map is one frame per mapping, whatever ran there (most of a
 * Java capture): say once how a runtime writes the map perf and this reader name it by. */
static void no_perf_map(struct tach_reader *r, const struct perfdata_pmap *m)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	if (y->warned_perf_map)
		return;
	y->warned_perf_map = true;
	tachi_warn(&r->warn, TACH_POS_NONE, 0, "JIT code of process %u is not named: %.200s is "
		   "missing or empty (read where the capture was made; a JVM writes it with "
		   "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, node with "
		   "--perf-basic-prof, Python 3.12+ with -X perf)", m->pid, m->path);
}

static const char *jit_symbol(struct tach_reader *r, const struct perfdata_pmap *m, uint64_t ip)
{
	struct perfdata_proc *p = proc_get(r, m->pid, false);
	if (!p)
		return NULL;
	if (!p->jit_tried) {
		p->jit_tried = true;
		load_perf_map(p, m->path);
		if (!p->njit)
			no_perf_map(r, m);
	}
	size_t lo = 0, hi = p->njit;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->jit[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip < p->jit[lo - 1].end ? p->jit[lo - 1].name : NULL;
}

/* ---- frames ---- */

static int on_symbol(void *ctx, const struct tachi_sym_frame *f)
{
	struct pd_syms *y = ctx;
	y->found = f->func;
	return TACH_OK;
}

/* The ELF symbol of a binary's address (looked up once per address of the segment);
 * *sid is its string id, NONE for none. */
static int elf_symbol(struct tach_reader *r, const struct perfdata_pmap *m, uint64_t ip,
		      uint32_t *sid)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	uint64_t a = m->syn + (ip - m->start);
	if (kv_get(&y->names, a, 1, sid))
		return TACH_OK;
	y->found = NULL;
	int rc = tachi_sym_lookup(y->sym, a, true, on_symbol, y);
	if (rc == TACH_E_IO)
		return io_failed(r);
	if (rc)
		return nomem(r);
	*sid = NONE;
	if (y->found && tach_dict_intern_string(&r->dict, y->found, strlen(y->found), sid))
		return nomem(r);
	if (!kv_put(&y->names, a, 1, *sid))
		return nomem(r);
	return TACH_OK;
}

static int dict_mapping(struct tach_reader *r, struct perfdata_pmap *m, uint32_t *id)
{
	struct pd *st = r->state;
	if (m->mapping) {
		*id = m->mapping;
		return TACH_OK;
	}
	struct tach_mapping dm = { m->start, m->start + m->len < m->start ? UINT64_MAX : m->start + m->len,
				   m->pgoff, 0, TACH_NO_STRING,
				   st->no_symbolize ? 0 : TACH_MAPPING_HAS_FUNCTIONS };
	if (tach_dict_intern_string(&r->dict, m->path, strlen(m->path), &dm.file) ||
	    (m->build_id[0] &&
	     tach_dict_intern_string(&r->dict, m->build_id, strlen(m->build_id), &dm.build_id)) ||
	    tach_dict_intern_mapping(&r->dict, &dm, &m->mapping))
		return nomem(r);
	*id = m->mapping;
	return TACH_OK;
}

static int intern(struct tach_reader *r, const char *file, int32_t line, const char *func,
		  size_t fl, const struct tach_frame_native *n, uint32_t *id)
{
	struct tach_frame f = { 0, 0, line, line, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, file, strlen(file), &f.file) ||
	    tach_dict_intern_string(&r->dict, func, fl, &f.func) ||
	    tach_dict_intern_frame_native(&r->dict, &f, n, id))
		return nomem(r);
	return TACH_OK;
}

/* A frame named name (NULL: no symbol) in dso file at ip, as the perf script reader makes
 * the frame of the line perf script prints for it; in source file file at line where
 * DWARF gives them (line TACH_NO_LINE: file is the dso). */
static int make_frame(struct tach_reader *r, struct perfdata_pmap *m, const char *file,
		      int32_t line, const char *name, uint64_t ip, uint32_t *id)
{
	struct pd *st = r->state;
	struct tach_frame_native nat = { ip, 0, 0 };
	*id = NONE;
	if (name && name[0] == '(')
		return TACH_OK;
	if (name && m && m->jit && !strncmp(name, "py::", 4) && strchr(name + 4, ':')) {
		const char *colon = strchr(name + 4, ':');
		struct tach_frame f = { 0, 0, TACH_NO_LINE, TACH_NO_LINE, -1, -1, TACH_NO_OPCODE };
		if (tach_dict_intern_string(&r->dict, colon + 1, strlen(colon + 1), &f.file) ||
		    tach_dict_intern_string(&r->dict, name + 4, (size_t)(colon - name - 4), &f.func) ||
		    tach_dict_intern_frame(&r->dict, &f, id))
			return nomem(r);
		return TACH_OK;
	}
	int rc = m ? dict_mapping(r, m, &nat.mapping) : TACH_OK;
	if (rc)
		return rc;
	const struct tach_frame_native *np = st->no_addresses ? NULL : &nat;
	char buf[4200];
	if (!name && st->no_symbolize && m) {
		const char *base = strrchr(m->path, '/');
		base = base && base[1] ? base + 1 : m->path;
		snprintf(buf, sizeof(buf), "%.4096s+0x%llx", base,
			 (unsigned long long)(ip - m->start + m->pgoff));
		name = buf;
	} else if (!name && !st->no_unknown_addresses) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)ip);
		name = buf;
	} else if (!name) {
		name = "[unknown]";
	}
	return intern(r, file, line, name, strlen(name), np, id);
}

/* The source file and line of a symbolized address, where DWARF has them: those of the
 * outermost frame of its inline chain, the function the ELF symbol names (perf report
 * --sort srcline gives the same place). */
struct srcline {
	char file[4200];
	int32_t line;
};

static int on_line(void *ctx, const struct tachi_sym_frame *f)
{
	struct srcline *l = ctx;
	if (!f->perf_elf && f->line > 0 && f->file[0]) {
		snprintf(l->file, sizeof(l->file), "%.4190s", f->file);
		l->line = f->line;
	}
	return TACH_OK;
}

/* pc as the address looked up: a return address's call is at pc - 1. */
static int source_line(struct tach_reader *r, const struct perfdata_pmap *m, uint64_t pc,
		       struct srcline *l)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	l->file[0] = 0;
	l->line = TACH_NO_LINE;
	int rc = tachi_sym_lookup_inlines(y->sym, m->syn + (pc - m->start), on_line, l);
	return rc == TACH_E_NOMEM ? nomem(r) : rc;
}

/* The mapping of ip in process pid (kernel: a kernel address), NONE outside every one. */
static uint32_t frame_map(struct tach_reader *r, uint32_t pid, bool kernel, uint64_t ip)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	return kernel ? y->kmap : find_range(y, proc_get(r, pid, false), ip);
}

/* The frames table's key of an address of map (kernel: a kernel address). */
static uint32_t frame_key(uint32_t map, bool kernel)
{
	return map != NONE ? map : kernel ? NONE - 1 : NONE - 2;
}

/* When a frame is its ELF symbol's name in its dso alone (no address kept, no source line
 * looked up), the frame already made for that symbol of binary m, if any (*id NONE when
 * not); *raw: the symbol's key, NULL where the frame is not the symbol's alone. */
static int symbol_frame(struct tach_reader *r, const struct perfdata_pmap *m, uint64_t ip,
			const char **raw, uint32_t *id)
{
	struct pd *st = r->state;
	struct pd_syms *y = st->syms;
	*id = NONE;
	if (!m || m->jit || !m->syn || st->no_symbolize || !st->no_addresses ||
	    !st->no_source_lines)
		return TACH_OK;
	int rc = tachi_sym_perf_symbol(y->sym, m->syn + (ip - m->start), raw);
	if (rc)
		return rc == TACH_E_IO ? io_failed(r) : nomem(r);
	if (*raw && !kv_get(&y->symframes, (uint64_t)(m - y->maps), (uint64_t)(uintptr_t)*raw, id))
		*id = NONE;
	return TACH_OK;
}

/* The frame of ip (kernel: a kernel address) in process pid; NONE when skipped. exact: ip
 * is where the thread was (the sampled IP), not a return address. */
static int frame_at(struct tach_reader *r, uint32_t map, bool kernel, uint64_t ip, bool exact,
		    uint32_t *id)
{
	struct pd *st = r->state;
	struct pd_syms *y = st->syms;
	uint32_t key = frame_key(map, kernel);
	if (ft_get(&y->frames, key, ip, id))
		return TACH_OK;
	struct perfdata_pmap *m = map == NONE ? NULL : &y->maps[map];
	const char *raw = NULL;
	int rc = symbol_frame(r, kernel ? NULL : m, ip, &raw, id);
	if (rc || *id != NONE)
		return rc ? rc : ft_put(&y->frames, key, ip, *id) ? TACH_OK : nomem(r);
	const char *name = NULL, *file = m ? m->path : "[unknown]";
	uint32_t sid = NONE;
	if (kernel) {
		file = "[kernel.kallsyms]";
		name = st->no_symbolize ? NULL : kernel_symbol(r, ip);
	} else if (m && m->jit) {
		name = st->no_symbolize ? NULL : jit_symbol(r, m, ip);
	} else if (m && m->syn && !(rc = elf_symbol(r, m, ip, &sid)) && sid != NONE) {
		name = tach_dict_string(&r->dict, sid, NULL);
	}
	char *copy = NULL;
	if (name && name == tach_dict_string(&r->dict, sid, NULL)) {
		/* the dict's strings may move as frames are interned: a copy, whole (a
		 * symbol's name is bounded by its section, not by a buffer here) */
		if (!(copy = strdup(name)))
			return nomem(r);
		name = copy;
	}
	struct srcline src;
	src.file[0] = 0;
	src.line = TACH_NO_LINE;
	if (!rc && name && !kernel && m && m->syn && !m->jit && !st->no_symbolize &&
	    !st->no_source_lines &&
	    !(rc = source_line(r, m, exact || ip <= m->start ? ip : ip - 1, &src)) && src.file[0])
		file = src.file;
	if (!rc)
		rc = make_frame(r, m, file, src.line, name, ip, id);
	free(copy);
	if (rc)
		return rc;
	if (raw && !kv_put(&y->symframes, map, (uint64_t)(uintptr_t)raw, *id))
		return nomem(r);
	return ft_put(&y->frames, key, ip, *id) ? TACH_OK : nomem(r);
}

static int frame_of(struct tach_reader *r, uint32_t pid, bool kernel, uint64_t ip, bool exact,
		    uint32_t *id)
{
	return frame_at(r, frame_map(r, pid, kernel, ip), kernel, ip, exact, id);
}

static int push(struct tach_reader *r, uint32_t id)
{
	struct pd *st = r->state;
	if (id == NONE)
		return TACH_OK;
	if (st->depth >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0,
			     "call chain deeper than %u frames (see max-depth)", r->lim.max_depth);
	if (!TACHI_RESERVE(st->frames, st->frames_cap, st->depth + 1))
		return nomem(r);
	st->frames[st->depth++] = id;
	return TACH_OK;
}

/* The user registers' IP (x86-64: register 8 of perf's numbering), 0 when not recorded. */
static uint64_t user_ip(const struct pd *st, const struct pd_sample *s)
{
	if (!s->regs || !(s->regs_mask >> 8 & 1))
		return 0;
	unsigned k = (unsigned)__builtin_popcountll(s->regs_mask & 0xff);
	return tachi_rd64(s->regs + 8 * k, st->swap);
}

struct chain {
	struct tach_reader *r;
	uint64_t pc;
	bool elf;
};

/* A frame of DWARF's chain at an unwound address, named as addr2line names it; perf
 * prints it "(inlined)", in no file, where that name is not its ELF symbol's. */
static int on_inline(void *ctx, const struct tachi_sym_frame *f)
{
	struct chain *c = ctx;
	if (f->perf_elf) {
		c->elf = true;
		return TACH_OK;
	}
	struct pd *st = c->r->state;
	struct tach_frame_native nat = { c->pc, 0, 1 };
	uint32_t id;
	const char *name = f->func ? f->func : "??";
	/* the source file and line DWARF gives, where perf script names no file */
	bool src = f->line > 0 && f->file[0];
	int rc = intern(c->r, src ? f->file : "", src ? f->line : TACH_NO_LINE, name, strlen(name),
			st->no_addresses ? NULL : &nat, &id);
	return rc ? rc : push(c->r, id);
}

/* The frames of an unwound address as perf script gives them (append_inlines): DWARF's
 * chain where the binary has it, else the frame of a call chain's address. */
static int unwound_frames(struct tach_reader *r, uint32_t pid, uint64_t pc)
{
	struct pd *st = r->state;
	struct pd_syms *y = st->syms;
	uint32_t map = find_range(y, proc_get(r, pid, false), pc), id;
	const struct perfdata_pmap *m = map == NONE ? NULL : &y->maps[map];
	struct chain c = { r, pc, true };
	if (m && m->syn && !st->no_symbolize) {
		c.elf = false;
		int rc = tachi_sym_lookup_inlines(y->sym, m->syn + (pc - m->start), on_inline, &c);
		if (rc == TACH_E_IO)
			return io_failed(r);
		if (rc)
			return rc == TACH_E_NOMEM ? nomem(r) : rc;
	}
	if (!c.elf)
		return TACH_OK;
	int rc = frame_of(r, pid, false, pc, true, &id);
	return rc ? rc : push(r, id);
}

/* perf script's user stack limit (its default max-stack, PERF_MAX_STACK_DEPTH) */
#define USER_MAX 127

/* --call-graph dwarf: the user part of a sample's chain, unwound from its registers and
 * stack copy (unwind.h), innermost first. As perf's unwind-libdw.c, a return address is
 * named and kept at pc - 1, an activation (the IP, an interrupted frame) at its pc. When
 * the unwinder fails or the sample has no registers, the user IP alone stands for it. */
static int user_stack(struct tach_reader *r, const struct pd_sample *s)
{
	struct pd *st = r->state;
	struct tachi_unwind *uw = unwinder(r);
	uint64_t pcs[USER_MAX], regs[64];
	bool exact[USER_MAX];
	size_t n = 0, nregs = (size_t)__builtin_popcountll(s->regs_mask);
	for (size_t i = 0; s->regs && i < nregs; i++)
		regs[i] = tachi_rd64(s->regs + 8 * i, st->swap);
	if (uw && s->regs && tachi_unwind_stack(uw, s->pid, s->tid, s->regs_mask,
						(uint32_t)s->regs_abi, regs, nregs, s->stack,
						(size_t)s->stack_size, pcs, exact, USER_MAX, &n))
		n = 0;
	if (!n) {
		uint64_t ip = (s->misc & PD_MISC_CPUMODE) == PD_MISC_USER ? s->ip : user_ip(st, s);
		exact[0] = true;
		if (ip)
			pcs[n++] = ip;
	}
	int rc = TACH_OK;
	for (size_t i = 0; !rc && i < n; i++) {
		uint64_t pc = exact[i] || !pcs[i] ? pcs[i] : pcs[i] - 1;
		rc = unwound_frames(r, s->pid, pc);
	}
	return rc;
}

static bool kernel_mode(uint64_t mode)
{
	return mode == PD_MISC_KERNEL || mode == PD_MISC_GUEST_KERNEL || mode == PD_MISC_HV;
}

/* The mode a context marker of a call chain enters (mode: the one before), 0 for a
 * marker perf does not know. */
static uint64_t context_mode(uint64_t ip, uint64_t mode)
{
	return ip == CTX_KERNEL ? PD_MISC_KERNEL : ip == CTX_USER ? PD_MISC_USER :
	       ip == CTX_HV ? PD_MISC_HV : ip == CTX_GUEST_KERNEL ? PD_MISC_GUEST_KERNEL :
	       ip == CTX_GUEST_USER ? PD_MISC_GUEST_USER : ip == CTX_GUEST ? mode : 0;
}

#define AHEAD 64

/* The mappings of the first (up to AHEAD) addresses of s's chain, their slots in the
 * frames table asked for meanwhile: a sample's look-ups then wait on memory together,
 * not one after the other. Returns how many are in maps. */
static size_t chain_maps(struct tach_reader *r, const struct pd_sample *s, uint64_t mode,
			 uint32_t *maps)
{
	struct pd *st = r->state;
	size_t n = s->nr < AHEAD ? (size_t)s->nr : AHEAD;
	for (size_t i = 0; i < n; i++) {
		uint64_t ip = tachi_rd64(s->chain + 8 * i, st->swap);
		if (ip >= CTX_MAX) {
			if (!(mode = context_mode(ip, mode)))
				return i;
			maps[i] = NONE;
			continue;
		}
		maps[i] = frame_map(r, s->pid, kernel_mode(mode), ip);
		ft_prefetch(&st->syms->frames, ip);
	}
	return n;
}

void pd_prefetch_chain(struct tach_reader *r, const uint8_t *chain, uint64_t nr)
{
	struct pd *st = r->state;
	if (!st->syms)
		return;
	for (uint64_t i = 0; i < nr && i < AHEAD; i++) {
		uint64_t ip = tachi_rd64(chain + 8 * i, st->swap);
		if (ip < CTX_MAX)
			ft_prefetch(&st->syms->frames, ip);
	}
}

int pd_sample_frames(struct tach_reader *r, const struct pd_sample *s)
{
	struct pd *st = r->state;
	uint64_t mode = s->misc & PD_MISC_CPUMODE;
	bool user_seen = false;
	int rc = TACH_OK;
	st->depth = 0;
	if (!s->chain) {
		uint32_t id;
		if (!(rc = frame_of(r, s->pid, kernel_mode(mode), s->ip, true, &id)))
			rc = push(r, id);
		return rc;
	}
	uint32_t maps[AHEAD];
	size_t ahead = chain_maps(r, s, mode, maps);
	/* the first address of each context is where the thread was, the others return
	 * addresses */
	bool exact = true;
	for (uint64_t i = 0; i < s->nr && !rc; i++) {
		uint64_t ip = tachi_rd64(s->chain + 8 * i, st->swap);
		if (ip >= CTX_MAX) {
			exact = true;
			mode = context_mode(ip, mode);
			/* another marker: perf takes the chain as corrupt and drops all of it */
			if (!mode) {
				st->depth = 0;
				return TACH_OK;
			}
			continue;
		}
		user_seen |= !kernel_mode(mode);
		uint32_t id;
		rc = i < ahead ? frame_at(r, maps[i], kernel_mode(mode), ip, exact, &id)
			       : frame_of(r, s->pid, kernel_mode(mode), ip, exact, &id);
		exact = false;
		if (!rc)
			rc = push(r, id);
	}
	/* --call-graph dwarf: the kernel gave no user part; the unwinder gives it */
	if (!rc && !user_seen && s->stack)
		rc = user_stack(r, s);
	return rc;
}

int pd_root_frame(struct tach_reader *r, const struct pd_sample *s, uint32_t *id)
{
	struct thread *t = thread_get(r, s->tid, s->pid, true);
	if (!t)
		return nomem(r);
	if (t->root != NONE) {
		*id = t->root;
		return TACH_OK;
	}
	char dflt[16];
	const char *comm = t->comm;
	if (!comm) {
		snprintf(dflt, sizeof(dflt), ":%u", s->tid);
		comm = dflt;
	}
	struct tach_frame f = { 0, 0, s->pid > 0 && s->pid <= INT32_MAX ? (int32_t)s->pid : -1, 0,
				-1, -1, TACH_NO_OPCODE };
	f.end_line = f.line;
	if (tach_dict_intern_string(&r->dict, "[comm]", 6, &f.file) ||
	    tach_dict_intern_string(&r->dict, comm, strlen(comm), &f.func) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return nomem(r);
	t->root = *id;
	return TACH_OK;
}

/* The dso of the first user frame, for the program's name (meta.program). */
const char *pd_frame_file(struct tach_reader *r, uint32_t id)
{
	const struct tach_frame *f = tach_dict_frame(&r->dict, id);
	return f ? tach_dict_string(&r->dict, f->file, NULL) : NULL;
}

struct map_find {
	const struct pd_syms *y;
	bool (*fn)(void *ctx, const char *path);
	void *ctx;
	const char *found;
};

static bool map_find_one(void *ctx, uint32_t map)
{
	struct map_find *q = ctx;
	const char *path = q->y->maps[map].path;
	if (path && q->fn(q->ctx, path)) {
		q->found = path;
		return false;
	}
	return true;
}

const char *pd_proc_map_find(struct tach_reader *r, uint32_t pid,
			     bool (*fn)(void *ctx, const char *path), void *ctx)
{
	struct pd_syms *y = ((struct pd *)r->state)->syms;
	struct perfdata_proc *p = y ? proc_get(r, pid, false) : NULL;
	struct map_find q = { y, fn, ctx, NULL };
	if (p && p->space)
		pd_space_walk(&y->spaces, p->space, map_find_one, &q);
	return q.found;
}

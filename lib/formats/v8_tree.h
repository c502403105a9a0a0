/* V8 CPU profiles' call tree and samples, which the .cpuprofile reader (v8/read.c) and the
 * trace-event reader (chrome/read.c) share (v8_tree.c). A reader's state starts with a struct tachi_v8; it adds profiles, then
 * their nodes and samples, and calls tachi_v8_finish; tachi_v8_next gives the samples. */
#ifndef TACHFMT_FMT_V8_TREE_H
#define TACHFMT_FMT_V8_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/json.h"
#include "core/handles.h"

struct tachi_v8_node {
	int64_t id;
	uint64_t off;             /* the node object */
	uint64_t name_off, url_off; /* string tokens; url UINT64_MAX when absent */
	uint64_t kids_off, parent_off; /* "children" and "parent" values, UINT64_MAX: absent */
	uint64_t link_off;        /* the id token that gave this node its parent */
	uint32_t prof;            /* the profile it belongs to */
	uint32_t parent;          /* index, UINT32_MAX for none */
	uint32_t depth;           /* frames from the root to here, this one included */
	uint32_t frame;           /* dict frame, UINT32_MAX until first used */
	int32_t line, col;
	bool root_name, idle;
};

struct tachi_v8_id {
	uint32_t prof, idx;
	int64_t id;
};

struct tachi_v8_sample {
	int64_t t;                /* ns */
	uint64_t time;            /* ns it stands for: up to the next sample of its profile */
	uint32_t node, prof, seq;
};

/* One profile: its span and the thread its samples are on. */
struct tachi_v8_prof {
	int64_t start;            /* startTime, ns */
	int64_t end;              /* endTime, ns; -1 when absent or before startTime */
	int64_t now;              /* the last sample's time, where the next delta counts from */
	uint64_t tid;
	uint32_t iid;
	int32_t pid;              /* for the thread's name root; -1 unknown */
	uint64_t name_off;        /* the thread's name (a string token), UINT64_MAX: none */
	uint32_t name_frame;      /* its dict frame, UINT32_MAX until first used */
	bool dropped;             /* a second recording of a thread (chrome/read.c): not read */
};

/* A head tree node being read (the walk's stack: its ancestors below it). */
struct tachi_v8_pending {
	uint32_t idx;             /* its node */
	bool in_children;         /* in its "children" array, else in its keys */
	bool has_id, has_name;
};

struct tachi_v8 {
	struct tachi_v8_node *nodes;
	size_t nnodes, nodes_cap;
	struct tachi_v8_id *ids;
	struct tachi_v8_sample *s;
	size_t ns, s_cap, cur;
	struct tachi_v8_prof *profs;
	size_t nprofs, profs_cap;
	uint32_t cur_prof;        /* the profile nodes are being added to */
	int64_t origin;           /* the earliest startTime, ns: timestamps count from it */
	uint32_t *walk;
	size_t walk_cap;
	uint32_t *out;
	size_t out_cap;
	char *sbuf;
	size_t sbuf_cap;
	struct tachi_v8_pending *pending; /* the head tree walk's stack */
	size_t pending_n, pending_cap;
	bool stamps;              /* the legacy format: absolute "timestamps", not deltas */
	bool lenient;             /* a trace's chunks, some maybe dropped: links and samples
				   * that name no node are counted, not refused */
	size_t unplaced_parents;  /* nodes whose parent names no node: their stacks start there */
	size_t unplaced_samples;  /* samples that name no node: skipped, their time the previous's */
};

/* A node of the object at off, its parent (an index) known or UINT32_MAX, nothing read
 * yet, for profile st->cur_prof. */
void tachi_v8_node_init(struct tach_reader *r, struct tachi_v8_node *nd, uint64_t off,
			uint32_t parent);
/* The callFrame object at off into nd: its functionName (required), url, lineNumber and
 * columnNumber (0-based in, 1-based out, -1 none). */
int tachi_v8_call_frame(struct tach_reader *r, uint64_t off, struct tachi_v8_node *nd);
/* nd's frame in the dict (interned at its first use): the function ("(anonymous)" when
 * empty), the url ("~" when empty or absent), the line and column. */
int tachi_v8_frame(struct tach_reader *r, struct tachi_v8_node *nd, uint32_t *id);
/* A new profile starting at start ns (its samples' first delta counts from there). */
int tachi_v8_add_profile(struct tach_reader *r, int64_t start, uint32_t *prof);
/* The "nodes" array at off, for profile st->cur_prof. */
int tachi_v8_nodes(struct tach_reader *r, uint64_t off);
/* The legacy format's "head" tree at off (node 10 and older: nested "children" objects,
 * the call frame's keys in the node), for profile st->cur_prof. */
int tachi_v8_head(struct tach_reader *r, uint64_t off);
/* Ids indexed, parents linked and depths found, every node read: before any samples. */
int tachi_v8_tree(struct tach_reader *r);
/* The "samples" and "timeDeltas" arrays at s_off and d_off, for profile prof; with
 * st->stamps, d_off is the legacy "timestamps" (µs), which may have one entry more: the
 * profile's end. */
int tachi_v8_samples(struct tach_reader *r, uint32_t prof, uint64_t s_off, uint64_t d_off);
/* Every sample read: time order, the interval (informational) and each sample's time. */
int tachi_v8_finish(struct tach_reader *r);
/* A time in µs (token t), to ns. */
int tachi_v8_time_ns(struct tach_reader *r, const struct tachi_jtok *t, const char *what,
		     int64_t *out);
/* endTime (token t) of profile prof; one before its start is ignored with a warning. */
int tachi_v8_end(struct tach_reader *r, uint32_t prof, const struct tachi_jtok *t);
/* After the file is checked: the warning for a lone-surrogate escape, if one was read. */
void tachi_v8_lone_warning(struct tach_reader *r);
int tachi_v8_next(struct tach_reader *r, const struct tach_sample **out);
void tachi_v8_free(struct tach_reader *r);

#endif

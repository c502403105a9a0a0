/* What the flame graph writer's files share (flamegraph/write.c: options, aggregation,
 * layout; flamegraph/write_svg.c: the SVG output): its options and state, the frames and render
 * pass the layout fills, and the SVG steps it calls. Private to them. */
#ifndef TACHFMT_FMT_FLAMEGRAPH_WRITE_H
#define TACHFMT_FMT_FLAMEGRAPH_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/dict.h"
#include "core/handles.h"
#include "formats/collapse.h"

enum {
	PAL_HOT, PAL_MEM, PAL_IO, PAL_WAKEUP, PAL_CHAIN, PAL_JAVA, PAL_JS, PAL_PERL, PAL_RED,
	PAL_GREEN, PAL_BLUE, PAL_AQUA, PAL_YELLOW, PAL_PURPLE, PAL_ORANGE, PAL_COUNT
};
#define XPAD 10
#define FONTWIDTH 0.59
#define NO_LABEL UINT32_MAX

struct fopts {
	char *title, *subtitle, *countname, *nametype, *fonttype, *bgcolors;
	uint64_t width, frameheight;
	double fontsize, minwidth;
	bool minwidth_pct, minwidth_set;
	int palette;
	bool hash, reverse, inverted, flamechart, negate;
};

/* A flame chart's run: consecutive samples of one thread with one stack. */
struct run {
	uint64_t ts, seq;
	uint32_t entry;
	uint64_t count, base;
};

struct fstate {
	struct fopts o;
	struct tachi_labeler lab;
	struct tachi_collapse agg;
	uint64_t *count, *base;  /* per entry: the profile's and the baseline's samples */
	size_t ncount, count_cap, nbase, base_cap;
	bool differential;
	struct run *runs;
	size_t nruns, runs_cap;
	uint64_t last_run;       /* 1 + the last run, when every thread shares the chart */
	struct tachi_valuesel value; /* what is counted in the weights' place (collapse.h) */
};

/* A frame of the graph, open while the lines pass through it. */
struct frame {
	uint32_t lab;    /* NO_LABEL: the root, "all" */
	bool waker;      /* above a "--" frame (the chain palette) */
	uint64_t stime;
	int64_t delta;
};

/* One drawing at close: the labels, the two walks over the lines (measure, then write)
 * and where the output stands. */
struct render {
	struct tach_writer *w;
	struct fstate *st;
	struct tach_dict names;  /* label texts, one id per distinct text */
	uint32_t *keylab;        /* line key -> label id */
	uint32_t *path;
	size_t path_cap;
	bool pass2;              /* pass 1 finds the depth and the largest delta */
	uint64_t total;
	double wpt, minw_time, height, ypad1, ypad2;
	uint32_t depthmax;
	int64_t maxdelta;
	struct frame *open;
	size_t nopen, open_cap;
	uint64_t time;
	uint32_t *cp;            /* code points of a name */
	size_t cp_cap;
	bool failed;
};

/* The SVG (flamegraph/write_svg.c): a laid-out frame at depth, ending at etime; the head once the
 * first pass has measured the depth; the tail; the image of a profile without samples. */
int tachi_flamegraph_frame(struct render *R, const struct frame *f, uint32_t depth,
			   uint64_t etime);
int tachi_flamegraph_head(struct render *R);
int tachi_flamegraph_tail(struct render *R);
int tachi_flamegraph_empty(struct render *R);

#endif

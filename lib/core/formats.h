/* The format table's rows (formats.c lists them): one per format, each defined in its
 * format's file under formats/. */
#ifndef TACHFMT_FORMATS_H
#define TACHFMT_FORMATS_H

#include "core/format.h"

extern const struct tachi_format tachi_fmt_tach;
extern const struct tachi_format tachi_fmt_samples;
extern const struct tachi_format tachi_fmt_collapsed;
extern const struct tachi_format tachi_fmt_gecko;
extern const struct tachi_format tachi_fmt_gperf;
extern const struct tachi_format tachi_fmt_pproftext;
extern const struct tachi_format tachi_fmt_pprof;
/* OpenTelemetry profiles (formats/otlp/); before pprof in detection. */
extern const struct tachi_format tachi_fmt_otlp;
extern const struct tachi_format tachi_fmt_sampler;
extern const struct tachi_format tachi_fmt_flamegraph;
extern const struct tachi_format tachi_fmt_pstats;
/* valgrind callgrind's text format, written only (formats/callgrind/). */
extern const struct tachi_format tachi_fmt_callgrind;
extern const struct tachi_format tachi_fmt_speedscope;
/* Linux perf's perf.data (formats/perfdata/). */
extern const struct tachi_format tachi_fmt_perfdata;
/* Linux perf script text (perf/read.c); before folded stacks in detection. */
extern const struct tachi_format tachi_fmt_perf;
/* V8 sampling heap profiles (.heapprofile, formats/heapprofile/); before v8 in detection,
 * whose damaged files it names (resembles). */
extern const struct tachi_format tachi_fmt_heapprofile;
/* V8 CPU profiles (.cpuprofile, v8/read.c). */
extern const struct tachi_format tachi_fmt_v8;
/* V8's --prof tick logs, raw and preprocessed (formats/v8log/). */
extern const struct tachi_format tachi_fmt_v8log;
/* Java Flight Recorder recordings (formats/jfr/). */
extern const struct tachi_format tachi_fmt_jfr;
/* Chrome trace-event JSON: its CPU profiles (formats/chrome/). */
extern const struct tachi_format tachi_fmt_chrome;
/* Chrome trace-event JSON: its spans as stacks (formats/spans/; no probe: "chrome" reads
 * them when a trace holds no CPU profile). */
extern const struct tachi_format tachi_fmt_spans;
/* DTrace aggregations of stacks and bpftrace maps of stacks (formats/dtrace/,
 * formats/bpftrace/); before perf script and folded stacks in detection. */
extern const struct tachi_format tachi_fmt_dtrace;
extern const struct tachi_format tachi_fmt_bpftrace;
/* Ruby stackprof dumps (formats/stackprof/). */
extern const struct tachi_format tachi_fmt_stackprof;
/* GHC's cost-centre profiles: the .prof text and the -pj JSON (formats/ghcprof/,
 * formats/ghcpj/). */
extern const struct tachi_format tachi_fmt_ghcprof;
extern const struct tachi_format tachi_fmt_ghcpj;

/* macOS sample's call graph reports (formats/macsample/). */
extern const struct tachi_format tachi_fmt_macsample;
/* Instruments' deep copies of call trees (formats/instruments/). */
extern const struct tachi_format tachi_fmt_instruments;
/* Instruments' xctrace export XML of a time-profile table (formats/xctrace/). */
extern const struct tachi_format tachi_fmt_xctrace;
/* VTune's CSV top-down call stacks (formats/vtune/). */
extern const struct tachi_format tachi_fmt_vtune;
/* Visual Studio's CallTreeSummary CSV (formats/vsprof/). */
extern const struct tachi_format tachi_fmt_vsprof;
/* FreeBSD pmcstat's call graph text (formats/pmcstat/). */
extern const struct tachi_format tachi_fmt_pmcstat;
/* Papyrus profiles of Skyrim's and Fallout 4's scripts (formats/papyrus/). */
extern const struct tachi_format tachi_fmt_papyrus;
/* Safari's timeline recordings (formats/safari/). */
extern const struct tachi_format tachi_fmt_safari;

/* perf report --stdio call graphs (formats/perfreport/). */
extern const struct tachi_format tachi_fmt_perfreport;

#endif

/* The flamegraph format's table row (flamegraph.c) takes its writer's ops from here. */
#ifndef TACHFMT_FMT_FLAMEGRAPH_H
#define TACHFMT_FMT_FLAMEGRAPH_H

#include "core/format.h"

extern const struct tachi_writer_ops tachi_flamegraph_writer_ops;

#endif

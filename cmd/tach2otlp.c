/* tach2otlp: a profile of any format to OpenTelemetry's profiles signal (OTLP). */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "json", 0, NULL, "w:json", "yes", "write OTLP/JSON, not protobuf", NULL, false },
	{ "no-timestamps", 0, NULL, "w:timestamps", "no",
	  "one summed value per stack and thread, no sample timestamps", NULL, false },
	{ "cpu", 0, NULL, "w:cpu", "yes",
	  "call the time values cpu/nanoseconds (default: wall, or cpu for a CPU-mode profile)",
	  NULL, false },
	{ "service", 0, "NAME", "w:service", NULL, "the resource's service.name", NULL, false },
	{ 0 },
};

static const struct tc_output outputs[] = {
	{ "otlp", "otlp", true, NULL, "OTLP profiles (ExportProfilesServiceRequest)", NULL, 0 },
	{ 0 },
};

const struct tc_prog tc_prog_tach2otlp = {
	.name = "tach2otlp",
	.summary = "Convert a profile to OpenTelemetry profiles (OTLP).",
	.reader = "auto",
	.outputs = outputs,
	.opts = opts,
	.description = "The output is an ExportProfilesServiceRequest of the v1development "
		       "profiles schema, the body OTLP/HTTP posts to /v1development/profiles: "
		       "a Profile per sample type, each sample with its timestamp and values.",
};

#!/usr/bin/env bats
# Formats speedscope reads that had no reader of ours, read as speedscope's own importer
# reads them (its npm bundle, run by speedscope_import.mjs --any, which picks the importer
# by the file's contents as speedscope's app does): the same stacks, weights and total for
# each of our files; damaged ones are one line with the line or offset, exit 1; each file
# is detected without --from, from a file and a pipe.
# FreeBSD pmcstat's call graph text (pmcstat -R FILE -G OUT).

load speedscope_bundle

setup() {
	T=$BATS_TEST_TMPDIR
}

summed() {
	awk '{ n = split($0, a, " "); w[substr($0, 1, length($0) - length(a[n]) - 1)] += a[n] }
		END { for (s in w) print s, w[s] }' | LC_ALL=C sort
}

# Each FILE read by speedscope (which must say it took it as KIND) and by us: the same
# stacks and weights, the same total; and ours the same from a pipe, detected as FMT.
same_as_speedscope() {
	local fmt=$1 kind=$2 f n=0
	shift 2
	mkdir -p "$T/imp"
	for f; do cp "$f" "$T/imp/"; n=$((n + 1)); done
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T"/imp/* \
		2>"$T/imp.err" >/dev/null
	[ "$(grep -cx "Importing as $kind" "$T/imp.err")" -eq "$n" ]
	for f; do
		local imp=$T/imp/${f##*/}.imp.txt
		python3 "$SOURCE_ROOT/tests/cli/ssrest_speedscope.py" "$imp" | summed >"$T/want"
		[ -s "$T/want" ]
		tach-decode -q --no-thread-frames "$f" | summed >"$T/got"
		diff -u "$T/want" "$T/got"
		tach-decode -q --no-thread-frames <"$f" | summed | diff -u "$T/want" -
		[ "$(python3 "$SOURCE_ROOT/tests/cli/ssrest_speedscope.py" --total "$imp")" = \
			"$(awk '{ t += $NF } END { print t }' "$T/got")" ]
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} == "tach-decode: $f: $fmt input" ]]
		cp "$T/want" "$T/want.${f##*/}"
	done
}

# A damaged FILE: exit 1, one line naming WHERE (a line number, or "offset N") and saying
# WHAT.
refused() {
	local file=$1 where=$2 what=$3
	shift 3
	run tach-decode -q "$@" "$file"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"${file##*/}"?"$where: "*"$what"* ]]
}

@test "pmcstat call graphs: speedscope's stacks, counts and total, from a file and a pipe" {
	speedscope_bundle
	same_as_speedscope pmcstat "pmcstat callgraph format" "$TESTDATA"/pmcstat/*.txt
	# a name in two files is one frame, in the file it first came with (the kernel's
	# memcpy shows libc's); a level keeps its last node for a deeper one after it
	grep -qx 'kernel:amd64_syscall:0;kernel:sys_read:0;kernel:uiomove:0;libc.so.7:memcpy:0;libc.so.7:memcpy:0 20' \
		"$T/want.two-events.txt"
	grep -qx 'libthr.so.3:spin:0;app:lock_wait:0;libthr.so.3:spin:0 3' "$T/want.two-events.txt"
	grep -qx 'libb.so:jump_b:0;liba.so:mid_a:0;libb.so:leaf_b:0 4' "$T/want.speedscope-shapes.txt"
	# the counts are the event's samples, no time
	run tach-decode -q -F info "$TESTDATA/pmcstat/two-events.txt"
	[[ $output == *"weight_total: 126"* ]] || { echo "$output"; false; }
}

@test "damaged pmcstat call graphs: one line with the line, exit 1; speedscope refuses them too" {
	speedscope_bundle
	printf '@ x [3 samples]\n\n100.0%%  [3]  a\n  100.0%%  [3]    c @ /lib/c.so\n' >"$T/hole.txt"
	refused "$T/hole.txt" 4 "indented 2 spaces without a node indented 1"
	run "$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T/hole.txt"
	[ "$status" -eq 1 ]
	printf '@ x [3 samples]\n\nno node here\n' >"$T/none.txt"
	refused "$T/none.txt" 3 "no pmcstat call graph node" --from pmcstat
	run "$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T/none.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"none.txt: not imported"* ]]
	printf '@ x [3 samples]\n\n100.0%%  [3]  a\n 100.0%%  [99999999999999999999]  b\n' >"$T/big.txt"
	refused "$T/big.txt" 4 "count is past 64 bits"
	refused "$TESTDATA/pmcstat/two-events.txt" 6 "limit of 3 frames" --max-depth 3
}

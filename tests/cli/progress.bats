#!/usr/bin/env bats
# The progress line: forced with --progress (into a file here, as a terminal would get it),
# erased at the end; never in a pipe or a file by default; --no-progress and -q.

setup() {
	cd "$BATS_TEST_TMPDIR"
	IN=$FIXTURES/tach/cases/rle_long_10000.tach
}

@test "--progress: the samples of the header's total and the rate, erased at the end" {
	tach-decode --progress -F samples "$IN" -o with.txt 2>err
	tach-decode -F samples "$IN" -o without.txt
	cmp with.txt without.txt
	# the line starts with a carriage return, names the program and the input, counts the
	# samples against the TACH header's 10000, and the stream ends erasing it
	grep -aqF $'\rtach-decode: '"$IN"': 10.00 k samples of 10.00 k (100%), ' err
	grep -aqE ' samples/s, [0-9]+\.[0-9] s' err
	[ "$(tail -c 4 err | od -An -c | tr -d ' ')" = '\r033[K' ]
	# nothing else: no newline is left behind in a log
	[ "$(tr -cd '\n' <err | wc -c)" -eq 0 ]
}

@test "by default nothing when standard error is a file or a pipe; --no-progress and -q" {
	tach-decode -F samples "$IN" -o out.txt 2>err
	[ ! -s err ]
	tach-decode -F samples "$IN" 2>&1 >/dev/null | cmp - /dev/null
	tach-decode --progress --no-progress -F samples "$IN" -o out.txt 2>err
	[ ! -s err ]
	# -q silences the automatic line; an explicit --progress still shows
	tach-decode -q --progress -F samples "$IN" -o out.txt 2>err
	grep -aq 'samples of 10.00 k' err
}

@test "several inputs: one line for all, of their summed totals" {
	tach-merge --progress "$IN" "$FIXTURES/tach/cases/recursion.tach" -o m.tach 2>err
	cat -v err
	grep -aq $'^\rtach-merge: inputs: ' err
	grep -aq "samples of 10.01 k (100%)" err
}

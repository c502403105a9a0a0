#!/usr/bin/env bats
# collapsed2tach as a user runs it: each producer's folded style, round trips through
# tach-decode for every TACH fixture, the folded text consumers accept, and every error path.

setup() {
	D=$TESTDATA/collapsed
	CASES=$FIXTURES/tach/cases
	T=$BATS_TEST_TMPDIR
}

# Folded lines summed per stack and sorted: what a flame graph shows.
summed() {
	awk '{ n = $NF; sub(/ [^ ]*$/, ""); s[$0] += n } END { for (k in s) print k " " s[k] }' |
		LC_ALL=C sort
}

@test "each producer's style decodes to the expected stacks" {
	for f in "$D"/*.txt; do
		collapsed2tach -q "$f" -o "$T/x.tach"
		tach-decode --full-paths "$T/x.tach" >"$T/out"
		diff -u "${f%.txt}.expected" "$T/out"
	done
}

@test "tach-decode output of every fixture comes back with the same stacks and counts" {
	local n=0
	for f in "$CASES"/*.tach; do
		for opts in "" "--labels pyspy" "--full-paths" "--no-thread-frames" \
			"--labels pyspy --full-paths --no-thread-frames"; do
			# shellcheck disable=SC2086
			tach-decode -q $opts "$f" | LC_ALL=C sort >"$T/a"
			# shellcheck disable=SC2086
			tach-decode -q $opts "$f" | collapsed2tach | tach-decode -q $opts | LC_ALL=C sort >"$T/b"
			diff -u "$T/a" "$T/b"
			n=$((n + 1))
		done
	done
	[ "$n" -ge 50 ]
}

@test "round trip keeps threads apart and the sample count" {
	f=$CASES/threads_interleaved.tach
	tach-decode "$f" | collapsed2tach -o "$T/x.tach"
	a=$(tach-decode -F info "$f" | sed -n 's/^samples_selected: //p')
	b=$(tach-decode -F info "$T/x.tach" | sed -n 's/^samples_selected: //p')
	[ "$a" = "$b" ]
	tid=$(tach-decode "$f" | head -n 1 | sed 's/^tid:\([0-9]*\);.*/\1/')
	diff <(tach-decode --thread "$tid" "$f") <(tach-decode --thread "$tid" "$T/x.tach")
}

@test "counts become samples one interval apart, repeats stored as REPEAT records" {
	printf 'a.py:f:1;a.py:g:2 1000\na.py:f:1 3\n' | collapsed2tach --interval 250 -o "$T/x.tach"
	tach-decode -F info "$T/x.tach" >"$T/info"
	grep -qx 'sample_interval_us: 250' "$T/info"
	grep -qx 'samples_selected: 1003' "$T/info"
	grep -qx 'repeat_samples: 1001' "$T/info"
	[ "$(stat -c %s "$T/x.tach")" -lt 600 ]
	run tach-decode -F samples "$T/x.tach"
	[ "${lines[4]}" = "0 0 0 4	a.py:g:2:2:-1:-1:-;a.py:f:1:1:-1:-1:-" ]
	[ "${lines[1003]}" = "0 0 249750 4	a.py:g:2:2:-1:-1:-;a.py:f:1:1:-1:-1:-" ]
	[ "${lines[1004]}" = "0 0 250000 4	a.py:f:1:1:-1:-1:-" ]
	run tach-decode --from-us 250000 "$T/x.tach"
	[ "$output" = "tid:0;a.py:f:1 3" ]
}

@test "austin metadata sets the interval and Python version; --interval wins" {
	collapsed2tach "$D/austin3.txt" -o "$T/x.tach"
	tach-decode -F info "$T/x.tach" >"$T/info"
	grep -qx 'sample_interval_us: 100' "$T/info"
	grep -qx 'python_version: 3.12.1' "$T/info"
	# austin counts microseconds: a line is one record of its time (200 us here), after
	# 300 and 100 us of the lines before it; TACH keeps the interval only, the samples text
	# of the input the time
	run tach-decode -F samples --thread 140999 "$D/austin3.txt"
	[ "${lines[3]}" = "140999 1 400 4 200000	/srv/app/sub.py:Worker%3A%3Aloop:5:5:-1:-1:-" ]
	run tach-decode -F samples --thread 140999 "$T/x.tach"
	[ "${lines[4]}" = "140999 1 400 4	/srv/app/sub.py:Worker%3A%3Aloop:5:5:-1:-1:-" ]
	collapsed2tach --interval 10 "$D/austin3.txt" -o "$T/y.tach"
	tach-decode -F info "$T/y.tach" | grep -qx 'sample_interval_us: 10'
}

@test "--labels fixes the style, --keep-thread-frames keeps the root frames" {
	run collapsed2tach --labels raw "$D/cpython.txt" -o "$T/x.tach"
	[ "$status" -eq 0 ]
	run tach-decode -F samples "$T/x.tach"
	[ "${lines[4]}" = "4242 0 0 4	~:worker.py%3Acrunch%3A27:-:-:-:-:-;~:threading.py%3Arun%3A1009:-:-:-:-:-;~:threading.py%3A_bootstrap%3A1012:-:-:-:-:-" ]
	printf 'foo:bar:12 1\n' | collapsed2tach --labels colon | tach-decode -F samples >"$T/out"
	grep -qx '0 0 0 4	foo:bar:12:12:-1:-1:-' "$T/out"
	printf 'P1;T2;/a/x.py:f;L3 1\n' | collapsed2tach --labels austin2 | tach-decode >"$T/out"
	[ "$(cat "$T/out")" = "tid:2;x.py:f:3 1" ]
	printf 'tid:5;a.py:f:1 2\n' | collapsed2tach --keep-thread-frames | tach-decode >"$T/out"
	[ "$(cat "$T/out")" = "tid:0;tid:5;a.py:f:1 2" ]
}

@test "--diff, --metric and --factor pick and scale the counts" {
	collapsed2tach --diff first "$D/diff.txt" | tach-decode >"$T/out"
	printf '%s\n' 'tid:0;main;parse;lex 10' 'tid:0;main;parse 5' 'tid:0;main;old 4' | diff - "$T/out"
	collapsed2tach --diff none "$D/diff.txt" | tach-decode >"$T/out"
	grep -qx 'tid:0;main;parse;lex 10 14' "$T/out"
	# both: the second count as samples, then the first as samples marked baseline (64)
	collapsed2tach --diff both "$D/diff.txt" | tach-decode --format samples | grep -v '^@' |
		awk -F'\t' '{ split($1, h, " "); n[h[4] "\t" $2]++ } END { for (k in n) print n[k] "\t" k }' |
		sort >"$T/out"
	printf '%s\n' $'14\t4\t~:lex:-:-:-:-:-;~:parse:-:-:-:-:-;~:main:-:-:-:-:-' \
		$'10\t68\t~:lex:-:-:-:-:-;~:parse:-:-:-:-:-;~:main:-:-:-:-:-' \
		$'5\t4\t~:parse:-:-:-:-:-;~:main:-:-:-:-:-' $'5\t68\t~:parse:-:-:-:-:-;~:main:-:-:-:-:-' \
		$'3\t4\t~:emit:-:-:-:-:-;~:main:-:-:-:-:-' $'4\t68\t~:old:-:-:-:-:-;~:main:-:-:-:-:-' |
		sort | diff - "$T/out"
	collapsed2tach --metric 3 "$D/austin-full.txt" 2>"$T/err" | tach-decode --full-paths >"$T/out"
	[ "$(cat "$T/out")" = "tid:1;/srv/a.py:f:1;/srv/a.py:g:2 1024" ]
	grep -q 'austin-full.txt:5: warning: 1 line with a negative count skipped' "$T/err"
	collapsed2tach --factor 4 "$D/fractional.txt" 2>"$T/err" | tach-decode >"$T/out"
	printf '%s\n' 'tid:0;main;work 16' 'tid:0;main;idle 1' | diff - "$T/out"
	[ ! -s "$T/err" ]
}

@test "fractional counts are rounded with one warning; -q silences it" {
	run collapsed2tach "$D/fractional.txt" -o "$T/x.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "collapsed2tach: $D/fractional.txt:1: warning: fractional count rounded to an integer (use --factor to scale counts)" ]
	run collapsed2tach -q "$D/fractional.txt" -o "$T/x.tach"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "invalid lines: counted and reported once, or an error with --strict" {
	run collapsed2tach "$D/invalid.txt" -o "$T/x.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "collapsed2tach: $D/invalid.txt:2: warning: 2 lines with invalid format ignored; the first is here: the count is not a number" ]
	run collapsed2tach --strict "$D/invalid.txt" -o "$T/y.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "collapsed2tach: $D/invalid.txt:2: the count is not a number" ]
	[ ! -e "$T/y.tach" ]
	[ -z "$(ls "$T" | grep 'y.tach')" ]
	run bash -c "printf 'a;b 1\nstack only\n' | collapsed2tach --strict > '$T/z.tach'"
	[ "$status" -eq 1 ]
	[ "$output" = "collapsed2tach: <stdin>:2: the count is not a number" ]
}

@test "--max-samples stops runaway counts with the line number" {
	run collapsed2tach --max-samples 100 -o "$T/x.tach" <<<$'a 60\nb 41\n'
	[ "$status" -eq 1 ]
	[ "$output" = "collapsed2tach: <stdin>:2: the counts add up to more than 100 samples (see --max-samples)" ]
	[ ! -e "$T/x.tach" ]
	run collapsed2tach -o "$T/x.tach" <<<$'offcpu;sleep 5000000000\n'
	[ "$status" -eq 1 ]
	[[ "$output" == *"<stdin>:1: the counts add up to more than 4294967295 samples"* ]]
	run collapsed2tach --max-samples 101 -o "$T/x.tach" <<<$'a 60\nb 41\n'
	[ "$status" -eq 0 ]
}

@test "--max-depth limits stacks" {
	run collapsed2tach --max-depth 2 -o "$T/x.tach" <<<$'a;b;c 1\n'
	[ "$status" -eq 1 ]
	[ "$output" = "collapsed2tach: <stdin>:1: stack deeper than the limit of 2 frames" ]
}

@test "bad option values are usage errors" {
	for args in "--labels nope" "--diff third" "--metric 0" "--factor -1" "--factor 1e3" \
		"--interval 0" "--max-samples 0" "--compression lz4" "--level 99" "--bogus" \
		"--max-depth x"; do
		# shellcheck disable=SC2086
		run collapsed2tach $args -o "$T/x.tach" <<<$'a 1\n'
		[ "$status" -eq 2 ]
		[[ "${lines[0]}" == "collapsed2tach: "* ]]
		[ ! -e "$T/x.tach" ]
	done
	# two operands are one profile (merged): two missing files are an I/O error
	run collapsed2tach a b
	[ "$status" -eq 1 ]
}

@test "I/O errors: missing input, unwritable output" {
	run collapsed2tach "$T/missing.txt" -o "$T/x.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "collapsed2tach: $T/missing.txt: No such file or directory" ]
	run collapsed2tach "$D/cpython.txt" -o "$T/nodir/x.tach"
	[ "$status" -eq 1 ]
	# (not -o /dev/full: -o renames a temporary file over its target)
	if [ -c /dev/full ]; then
		run bash -c "collapsed2tach '$D/cpython.txt' > /dev/full"
		[ "$status" -eq 1 ]
		[ "$output" = "collapsed2tach: <stdout>: write error: No space left on device" ]
	fi
}

@test "comments alone give an empty profile (no input at all is an error: see the end)" {
	printf '# only comments\n\n' | collapsed2tach -o "$T/y.tach"
	tach-decode -F info "$T/y.tach" | grep -qx 'samples_selected: 0'
}

@test "uncompressed output decodes the same" {
	collapsed2tach --compression none "$D/pyspy.txt" -o "$T/a.tach"
	collapsed2tach --level 19 "$D/pyspy.txt" -o "$T/b.tach"
	tach-decode -F info "$T/a.tach" | grep -qx 'compression: none'
	diff <(tach-decode -F samples "$T/a.tach") <(tach-decode -F samples "$T/b.tach")
}

@test "-v reports the samples read and written" {
	run collapsed2tach -v --thread 17 "$D/cpython.txt" -o "$T/x.tach"
	[ "$status" -eq 0 ]
	[ "$output" = "collapsed2tach: $D/cpython.txt: 16 samples read, 5 written" ]
}

# tach-decode's collapsed output is read by flamegraph.pl, inferno and speedscope. None of
# them is packaged for Debian, so their line parsing is applied as they implement it:
#   flamegraph.pl: chomp; /^(.*)\s+?(\d+(?:\.\d*)?)$/; split ';' (no CR handling)
#   inferno:       rfind(' '), the count all ASCII digits, frames split on ';'
#   speedscope:    /^(.*) (\d+)$/
# All three must see the same stack and count on every line, and the frames must be the
# ones tach-decode meant (no ';' inside a frame, nothing lost to a CR).
@test "tach-decode collapsed output parses identically in flamegraph.pl, inferno and speedscope" {
	cat >"$T/consumers.pl" <<'EOF'
use strict;
my ($bad, $n) = (0, 0);
while (my $l = <STDIN>) {
	$n++;
	$bad++, next unless $l =~ /\n\z/;
	chomp $l;
	my ($fs, $fc) = $l =~ /^(.*)\s+?(\d+(?:\.\d*)?)$/ or ($bad++, next);
	my $i = rindex($l, ' ');
	my ($is, $ic) = (substr($l, 0, $i), substr($l, $i + 1));
	$bad++, next unless $ic =~ /^[0-9]+\z/;
	my ($ss, $sc) = $l =~ /^(.*) (\d+)$/ or ($bad++, next);
	$bad++, next unless $fs eq $is && $is eq $ss && $fc eq $ic && $ic eq $sc && $fc > 0;
	$bad++, next if $l =~ /[\r\x00-\x1f\x7f]/;
	my @f = split /;/, $fs;
	$bad++, next if grep { $_ eq '' } @f;
}
print "$n $bad\n";
EOF
	local total=0
	for f in "$CASES"/*.tach; do
		for opts in "" "--labels pyspy --full-paths" "--no-thread-frames"; do
			# shellcheck disable=SC2086
			tach-decode -q $opts "$f" >"$T/out"
			read -r n bad < <(perl "$T/consumers.pl" <"$T/out")
			[ "$bad" -eq 0 ]
			total=$((total + n))
			# sorted the way CPython sorts: count descending, then the stack bytewise
			awk '{ print $NF "\t" $0 }' "$T/out" | LC_ALL=C sort -t $'\t' -k1,1nr -k2,2 |
				cut -f2- | diff - "$T/out"
		done
	done
	[ "$total" -gt 100 ]
}

@test "tach-decode turns ';' in names into ':' and control bytes into '?', with a warning" {
	found=
	for f in "$CASES"/*.tach; do
		tach-decode "$f" >"$T/out" 2>"$T/err"
		if grep -q "contains ';'" "$T/err"; then
			found=$f
			break
		fi
	done
	[ -n "$found" ]
	tach-decode -F samples "$found" | grep -q '%3B'
	# read back, the replaced names give the same stacks
	tach-decode -q --no-thread-frames "$found" | summed >"$T/a"
	tach-decode -q --no-thread-frames "$found" | collapsed2tach -q |
		tach-decode -q --no-thread-frames | summed >"$T/b"
	diff "$T/a" "$T/b"
}

@test "input in which no line is a stack is an error, not an empty profile" {
	printf '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n' >"$T/x.png"
	run collapsed2tach "$T/x.png" -o "$T/x.tach"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "collapsed2tach: $T/x.png:1: not folded stacks: no line is a stack and a count (here: no count after the stack: \"?PNG\")" ]
	[ ! -e "$T/x.tach" ]
	run collapsed2tach -o "$T/y.tach" <<<'{"meta": {"version": 31}, "threads": []}'
	[ "$status" -eq 1 ]
	[[ $output == 'collapsed2tach: <stdin>:1: not folded stacks: no line is a stack and a count (here: the count is not a number: "{"meta": '* ]]
	[ ! -e "$T/y.tach" ]
	# one stack among junk still converts, with the usual warning
	run collapsed2tach -o "$T/z.tach" <<<$'junk\na;b 3\n'
	[ "$status" -eq 0 ]
	[ "$(tach-decode --no-thread-frames "$T/z.tach")" = "a;b 3" ]
	# a line with a zero count is a stack too: the file is folded stacks, but every stack
	# line is skipped, which is no profile
	run collapsed2tach -o "$T/w.tach" <<<$'junk\na;b 0\n'
	[ "$status" -eq 1 ]
	[[ $output == *"<stdin>:2: no samples: every stack line was skipped (0 with a negative count, 1 with a count of 0; the first is here)" ]]
}

@test "a stack of empty frame names decodes without touching a missing label buffer" {
	printf ';; 1\n' | collapsed2tach -o "$T/e.tach"
	run tach-decode --no-thread-frames "$T/e.tach"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "; 1" ]
}

@test "empty input, and input whose every stack line is skipped, are errors that say why; no -o file" {
	: >"$T/empty"
	run collapsed2tach "$T/empty" -o "$T/out.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "collapsed2tach: $T/empty: offset 0: empty input: no profile in it" ]
	[ ! -e "$T/out.tach" ]
	run bash -c ": | tach-decode --from collapsed"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: <stdin>: offset 0: empty input: no profile in it" ]
	printf '# a comment\na;b -3\nc;d 0\na;b -1\n' >"$T/skipped.folded"
	run collapsed2tach "$T/skipped.folded" -o "$T/out.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "collapsed2tach: $T/skipped.folded:2: no samples: every stack line was skipped (2 with a negative count, 1 with a count of 0; the first is here)" ]
	[ ! -e "$T/out.tach" ]
	# one line kept is a profile, with the skipped ones warned about
	printf 'a;b -3\nc;d 2\n' | collapsed2tach -o "$T/out.tach"
	[ "$(tach-decode --no-thread-frames "$T/out.tach")" = "c;d 2" ]
}

@test "an endless stream with no stack in it stops at the input limit, as a whole input would" {
	run bash -c "yes '# not a stack' | timeout 300 collapsed2tach --max-input 64K -o '$T/out.tach'"
	[ "$status" -eq 1 ]
	[[ $output == "collapsed2tach: <stdin>: offset "*": no sample in the first 65536 bytes (see max-input): not collapsed input" ]]
	[ ! -e "$T/out.tach" ]
	run bash -c "tr -dc 'a-z;\n' </dev/urandom | timeout 300 tach-decode --from collapsed --max-input 64K"
	[ "$status" -eq 1 ]
	[[ $output == *"no sample in the first 65536 bytes"* ]]
	# what follows its first sample is read however long it is
	{ echo 'a;b 1'; yes '# x' | head -n 20000; } | collapsed2tach --max-input 64K -o "$T/out.tach"
	[ "$(tach-decode --no-thread-frames "$T/out.tach")" = "a;b 1" ]
}

#!/usr/bin/env bats
# tach2flamegraph as a user runs it: well-formed SVG, the graph tach-decode's collapsed
# stacks give, every option and every error path. The comparison with flamegraph.pl's own
# SVGs is tests/flamegraph_compare.py.

setup() {
	TMP=$(mktemp -d)
	CASES=$FIXTURES/tach/cases
}

teardown() {
	rm -rf "$TMP"
}

# tests/data/NAME.samples or a here-document -> $TMP/NAME.tach
encode() {
	tach-encode "$TESTDATA/$1.samples" -o "$TMP/$1.tach"
}

# The frame titles of an SVG, sorted.
titles() {
	grep -o '<title>[^<]*</title>' "$1" | sed 's/<[/]*title>//g' | sort
}

@test "help lists the options; version names the library" {
	run tach2flamegraph --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--flamechart"* ]]
	[[ "$output" == *"--minwidth PX"* ]]
	run tach2flamegraph --version
	[ "$status" -eq 0 ]
	[[ "$output" == *"libtachfmt"* ]]
}

@test "usage errors exit 2" {
	local f=$CASES/single_sample.tach a
	for a in "--width 5" "--width x" "--width 2000000" "--height 1" "--fontsize 0" \
		"--fontsize 1e3" "--minwidth x" "--minwidth 5%x" "--colors nope" \
		"--bgcolors nope" "--bgcolors #12345g" "--bogus" "--status nope"; do
		run tach2flamegraph $a "$f"
		[ "$status" -eq 2 ] || { echo "$a: $status"; false; }
		[[ "$output" == "tach2flamegraph: "* ]]
	done
	run tach2flamegraph --colors nope "$f"
	[[ "$output" == *"unknown palette nope"* ]]
	run tach2flamegraph --title
	[ "$status" -eq 2 ]
}

@test "bad input exits 1 with file and offset, and leaves no -o file" {
	for f in "$FIXTURES"/tach/errors/err_*.tach; do
		case $f in *err_footer_filesize_wrong*) continue ;; esac
		run tach2flamegraph "$f" -o "$TMP/out.svg"
		[ "$status" -eq 1 ] || { echo "$f: $status"; false; }
		[[ "$output" == *"tach2flamegraph: $f: offset "* ]]
	done
	[ -z "$(ls "$TMP")" ]
	run tach2flamegraph "$TMP/missing.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"missing.tach: No such file or directory"* ]]
}

@test "a write error exits 1" {
	run bash -c 'tach2flamegraph "$0" >/dev/full' "$CASES/threads_interleaved.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach2flamegraph: <stdout>: write error: No space left on device"* ]]
}

@test "every fixture gives well-formed SVG, the same bytes twice, from a pipe too" {
	for f in "$CASES"/*.tach; do
		tach2flamegraph -q "$f" -o "$TMP/a.svg"
		xmllint --noout --nonet "$TMP/a.svg" || { echo "$f"; false; }
		tach2flamegraph -q <"$f" >"$TMP/b.svg"
		cmp "$TMP/a.svg" "$TMP/b.svg"
	done
}

@test "the graph is the one of tach-decode's collapsed stacks, thread frames included" {
	for f in "$CASES"/threads_interleaved.tach "$CASES"/deep_stack_300.tach; do
		tach-decode "$f" >"$TMP/f.folded"
		"$BUILD_ROOT/tests/convert" collapsed flamegraph "$TMP/f.folded" "$TMP/want.svg" \
			r:labels=raw r:keep-thread-frames=yes w:thread-frames=no
		tach2flamegraph "$f" -o "$TMP/got.svg"
		cmp "$TMP/want.svg" "$TMP/got.svg"
		grep -q '<title>tid:' "$TMP/got.svg"
		tach-decode --no-thread-frames "$f" >"$TMP/f.folded"
		"$BUILD_ROOT/tests/convert" collapsed flamegraph "$TMP/f.folded" "$TMP/want.svg" \
			r:labels=raw r:keep-thread-frames=yes w:thread-frames=no
		tach2flamegraph --no-thread-frames "$f" -o "$TMP/got.svg"
		cmp "$TMP/want.svg" "$TMP/got.svg"
		! grep -q '<title>tid:' "$TMP/got.svg" || false
	done
}

@test "names and the user's texts are escaped; bad bytes repaired" {
	printf '@interval_us 100\n1 0 100 3\t~:a&b <"x">:-:-:-:-:-;~:%%C3%%28bad:-:-:-:-:-\n' >"$TMP/n.samples"
	tach-encode "$TMP/n.samples" -o "$TMP/n.tach"
	tach2flamegraph --title '<T&"t">' --subtitle 'a<b' --countname 'c&d' --nametype 'n"t' \
		--fonttype 'F<o>' "$TMP/n.tach" -o "$TMP/n.svg"
	xmllint --noout --nonet "$TMP/n.svg"
	grep -q '<title>a&amp;b &lt;&quot;x&quot;&gt; (1 c&amp;d, 100.00%)</title>' "$TMP/n.svg"
	grep -q '>&lt;T&amp;&quot;t&quot;&gt;</text>' "$TMP/n.svg"
	grep -q 'id="subtitle"[^>]*>a&lt;b</text>' "$TMP/n.svg"
	grep -q 'data-nametype="n&quot;t"' "$TMP/n.svg"
	grep -q 'font-family:F&lt;o&gt;;' "$TMP/n.svg"
	grep -q $'<title>\xef\xbf\xbd(bad (1 c&amp;d' "$TMP/n.svg"
}

@test "size options: --width, --height, --fontsize, --subtitle, --minwidth" {
	local f=$CASES/threads_interleaved.tach
	tach2flamegraph --width 800 --height 20 "$f" -o "$TMP/a.svg"
	grep -q '<svg version="1.1" width="800"' "$TMP/a.svg"
	grep -q 'height="19.0" fill' "$TMP/a.svg"
	tach2flamegraph "$f" -o "$TMP/b.svg"
	tach2flamegraph --subtitle sub "$f" -o "$TMP/c.svg"
	local hb hc
	hb=$(grep -o '<svg [^>]*' "$TMP/b.svg" | grep -o ' height="[0-9.]*"' | tr -dc 0-9)
	hc=$(grep -o '<svg [^>]*' "$TMP/c.svg" | grep -o ' height="[0-9.]*"' | tr -dc 0-9)
	[ "$hc" -eq $((hb + 24)) ]
	tach2flamegraph --fontsize 10 "$f" -o "$TMP/d.svg"
	grep -q 'font-size:10px' "$TMP/d.svg"
	# a tiny font: every name fits whole
	tach2flamegraph --fontsize 0.0001 "$f" | grep -q '<text [^>]*>tid:[0-9]*</text>'
	[ "$(titles "$TMP/b.svg" | wc -l)" -gt "$(tach2flamegraph --minwidth 30% "$f" | grep -c '<title>')" ]
	[ "$(tach2flamegraph --minwidth 300 "$f" | grep -c '<title>')" -lt "$(titles "$TMP/b.svg" | wc -l)" ]
	[ "$(tach2flamegraph --minwidth 0 "$f" | grep -c '<title>')" -eq "$(titles "$TMP/b.svg" | wc -l)" ]
}

@test "colours: every palette, --hash, --bgcolors; the same name the same colour" {
	local f=$CASES/threads_interleaved.tach p
	for p in hot mem io wakeup chain java js perl red green blue aqua yellow purple orange; do
		tach2flamegraph --colors $p "$f" -o "$TMP/$p.svg"
		xmllint --noout "$TMP/$p.svg"
	done
	! cmp -s "$TMP/hot.svg" "$TMP/mem.svg" || false
	grep -q 'stop-color="#e0ffe0"' "$TMP/mem.svg"
	grep -q 'stop-color="#e0e0ff"' "$TMP/io.svg"
	grep -q 'stop-color="#e8e8e8"' "$TMP/red.svg"
	tach2flamegraph --bgcolors '#123abc' "$f" | grep -q 'stop-color="#123abc"'
	tach2flamegraph --bgcolors grey "$f" | grep -q 'stop-color="#f8f8f8"'
	tach2flamegraph --hash "$f" -o "$TMP/h.svg"
	! cmp -s "$TMP/hot.svg" "$TMP/h.svg" || false
	# one fill per name
	[ "$(grep -o '<title>[^(]*(\|fill="rgb[^"]*"' "$TMP/h.svg" | paste - - | sort -u | cut -f1 | uniq -d | wc -l)" -eq 0 ]
}

@test "--reverse, --inverted and their titles" {
	local f=$CASES/threads_interleaved.tach
	tach2flamegraph "$f" -o "$TMP/n.svg"
	tach2flamegraph --reverse "$f" -o "$TMP/r.svg"
	# the same names, merged from the other end
	[ "$(titles "$TMP/n.svg" | sed 's/ (.*//' | sort -u)" = "$(titles "$TMP/r.svg" | sed 's/ (.*//' | sort -u)" ]
	! cmp -s <(titles "$TMP/n.svg") <(titles "$TMP/r.svg") || false
	tach2flamegraph --inverted "$f" -o "$TMP/i.svg"
	grep -q '>Icicle Graph</text>' "$TMP/i.svg"
	grep -q 'data-inverted="1"' "$TMP/i.svg"
	# the root "all" at the top: y is the top padding, 3 font sizes
	grep -q '<title>all ([^<]*</title><rect x="10.0" y="36"' "$TMP/i.svg"
	tach2flamegraph --title Mine --inverted "$f" | grep -q '>Mine</text>'
}

@test "--flamechart: each thread's runs in timestamp order" {
	cat >"$TMP/c.samples" <<-'EOF2'
	@interval_us 100
	2 0 100 0	~:b:-:-:-:-:-;~:main:-:-:-:-:-
	1 0 100 0	~:a:-:-:-:-:-;~:main:-:-:-:-:-
	1 0 200 0	~:a:-:-:-:-:-;~:main:-:-:-:-:-
	2 0 200 0	~:c:-:-:-:-:-;~:main:-:-:-:-:-
	1 0 300 0	~:b:-:-:-:-:-;~:main:-:-:-:-:-
	1 0 400 0	~:a:-:-:-:-:-;~:main:-:-:-:-:-
	EOF2
	tach-encode "$TMP/c.samples" -o "$TMP/c.tach"
	tach2flamegraph --flamechart "$TMP/c.tach" -o "$TMP/c.svg"
	grep -q '>Flame Chart</text>' "$TMP/c.svg"
	# thread 1: a a | b | a, then thread 2: b | c; x grows in that order
	grep -o '<title>[a-c] ([0-9]* samples[^<]*</title><rect x="[0-9.]*"' "$TMP/c.svg" |
		sed 's/<title>\(.\) (\([0-9]*\).*x="\(.*\)"/\3 \1\2/' | sort -n | cut -d' ' -f2 | tr '\n' ' ' >"$TMP/order"
	[ "$(cat "$TMP/order")" = "a2 b1 a1 b1 c1 " ]
	# merged, the a frames are one
	tach2flamegraph "$TMP/c.tach" | grep -q '<title>a (3 samples'
	tach2flamegraph --no-thread-frames --flamechart "$TMP/c.tach" | grep -q '<title>main (6 samples'
}

@test "differential input: widths from the second count, colour and sign from the change" {
	printf 'm;a 2 5\nm;b 4 1\nm;c 3 0\n' >"$TMP/d.folded"
	collapsed2tach -q --labels raw --keep-thread-frames --diff both "$TMP/d.folded" -o "$TMP/d.tach"
	tach2flamegraph --no-thread-frames "$TMP/d.tach" -o "$TMP/d.svg"
	grep -q '<title>a (5 samples, 83.33%; +50.00%)</title>' "$TMP/d.svg"
	grep -q '<title>b (1 samples, 16.67%; -50.00%)</title>' "$TMP/d.svg"
	# the largest change is 3: a red of 210*(3-3)/3, b blue of 210*(3-3)/3
	grep -q '<title>a [^<]*</title><rect [^>]*fill="rgb(255,0,0)"' "$TMP/d.svg"
	grep -q '<title>b [^<]*</title><rect [^>]*fill="rgb(0,0,255)"' "$TMP/d.svg"
	tach2flamegraph --no-thread-frames --negate "$TMP/d.tach" -o "$TMP/n.svg"
	grep -q '<title>a (5 samples, 83.33%; -50.00%)</title><rect [^>]*fill="rgb(0,0,255)"' "$TMP/n.svg"
	# only the baseline: no width, so below the default --minwidth
	! grep -q '<title>c ' "$TMP/d.svg" || false
}

@test "filters: --thread, --status" {
	local f=$CASES/threads_interleaved.tach tid
	tid=$(tach-decode "$f" | head -1 | sed 's/^tid:\([0-9]*\);.*/\1/')
	tach2flamegraph --thread "$tid" "$f" -o "$TMP/t.svg"
	[ "$(grep -o '<title>tid:[0-9]*' "$TMP/t.svg" | sort -u)" = "<title>tid:$tid" ]
	encode mixed
	tach2flamegraph --status gil-wait "$TMP/mixed.tach" -o "$TMP/s.svg"
	[ "$(grep -c '<title>' "$TMP/s.svg")" -lt "$(tach2flamegraph "$TMP/mixed.tach" | grep -c '<title>')" ]
}

@test "no samples: an SVG that says so, and a warning" {
	run tach2flamegraph "$CASES/empty.tach" -o "$TMP/e.svg"
	[ "$status" -eq 0 ]
	[[ "$output" == *"no stack counts found"* ]]
	xmllint --noout "$TMP/e.svg"
	grep -q 'No stack counts found' "$TMP/e.svg"
}

@test "the man page documents every option" {
	local o
	for o in $(tach2flamegraph --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "\*$o\*" "$SOURCE_ROOT/docs/tach2flamegraph.1.scd" || { echo "missing $o"; false; }
	done
}

@test "common options: -v, -f, --strict, --max-depth, --from-us, --to-us" {
	local f=$CASES/threads_interleaved.tach
	run tach2flamegraph -v "$f" -o "$TMP/v.svg"
	[ "$status" -eq 0 ]
	[[ "$output" == *"samples read,"*"written"* ]]
	tach2flamegraph -f --strict "$f" | cmp - "$TMP/v.svg"
	run tach2flamegraph --max-depth 1 "$CASES/deep_stack_300.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach2flamegraph: $CASES/deep_stack_300.tach: "* ]]
	encode mixed
	tach2flamegraph --from-us 5700 --to-us 5900 "$TMP/mixed.tach" -o "$TMP/t.svg"
	grep -q '<title>all (2 samples, 100%)</title>' "$TMP/t.svg"
}

@test "high-cardinality input (past the lookahead threshold): the same graph as its lines added up beforehand" {
	python3 "$TESTDATA/wide_folded.py" "$TMP/wide.folded" "$TMP/summed.folded"
	tach2flamegraph "$TMP/wide.folded" -o "$TMP/a.svg"
	tach2flamegraph "$TMP/summed.folded" -o "$TMP/b.svg"
	cmp "$TMP/a.svg" "$TMP/b.svg"
	# and the root counts every sample of the lines, in flamegraph.pl's digit groups
	total=$(python3 -c 'import sys; print(f"{sum(int(l.split()[-1]) for l in open(sys.argv[1])):,}")' "$TMP/wide.folded")
	grep -q "<title>all ($total samples, 100%)</title>" "$TMP/a.svg"
}

@test "--value time: widths and titles in µs, the folded --value time's numbers" {
	local f=$CASES/recursion.tach n iv
	n=$(tach-decode -F samples "$f" | grep -vc '^@')
	iv=$(tach-decode -F samples "$f" | sed -n 's/^@interval_us //p')
	tach2flamegraph --value time "$f" -o "$TMP/t.svg"
	grep -q "<title>all ($(python3 -c "print(f'{$n * $iv:,}')") us, 100%)</title>" "$TMP/t.svg"
	# the same graph as the counts, scaled: every frame's share is the same
	tach2flamegraph "$f" -o "$TMP/c.svg"
	diff <(grep -o '[0-9.]*%)</title>' "$TMP/c.svg") <(grep -o '[0-9.]*%)</title>' "$TMP/t.svg")
	run tach2flamegraph --value nosuch "$f" -o "$TMP/x.svg"
	[ "$status" -ne 0 ]
	[ ! -e "$TMP/x.svg" ]
}

@test "perf and JFR input are drawn with their own tools' labels: stackcollapse-perf.pl's and jfrconv's" {
	local f=$FIXTURES/perf/real/sort-fp.perf
	# the frames as stackcollapse-perf.pl folded that capture, drawn
	tach2flamegraph -q "$FIXTURES/perf/real/sort-fp-collapsed.txt" -o "$TMP/want.svg"
	tach2flamegraph "$f" -o "$TMP/got.svg"
	cmp "$TMP/want.svg" "$TMP/got.svg"
	# no pid in a root, no :0 line suffix in any title
	! titles "$TMP/got.svg" | grep -Eq '^\[comm\]|:[0-9]+ \(' || false
	tach2flamegraph -q "$FIXTURES/perf/real/sort-fp-collapsed-tid.txt" |
		cmp - <(tach2flamegraph --perf-root tid "$f")
	# --annotate kernel as the script's --kernel (up to its last blank line, as it reads)
	tac "$FIXTURES/perf/inputs/perf-dd-stacks-01.txt" | sed -n '/^$/,$p' | tac >"$TMP/dd.txt"
	tach2flamegraph --annotate kernel "$TMP/dd.txt" -o "$TMP/k.svg"
	tach2flamegraph -q "$FIXTURES/perf/expected/perf-dd-stacks-01-collapsed-kernel.txt" | cmp - "$TMP/k.svg"
	# --labels cpython: the frames as tach-decode prints them by default
	tach2flamegraph --labels cpython "$f" -o "$TMP/c.svg"
	titles "$TMP/c.svg" | grep -q '^\[comm\]:sort:'
	# jfrconv's folded lines of the recording, drawn
	local j=$FIXTURES/jfr/ap-cpu
	tach2flamegraph "$j.collapsed" | cmp - <(tach2flamegraph "$j.jfr")
	tach2flamegraph "$j.threads.collapsed" | cmp - <(tach2flamegraph --threads "$j.jfr")
	# a filter that keeps nothing: the empty graph and its warning, exit 0
	run tach2flamegraph --from-us 99999999999999 "$f" -o "$TMP/e.svg"
	[ "$status" -eq 0 ]
	[[ $output == *"the graph is empty"* ]]
	grep -q '</svg>' "$TMP/e.svg"
}

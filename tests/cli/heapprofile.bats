#!/usr/bin/env bats
# V8 sampling heap profiles (.heapprofile): one recorded now by `node --heap-prof` and our
# small one read as speedscope's own importer reads them (its npm bundle, run by
# speedscope_import.mjs --any): the same stacks and byte weights, the same total; pprof's
# total is the sum of the nodes' selfSize; damaged input is one line with its offset.

load speedscope_bundle

setup() {
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/heapprofile
}

summed() {
	awk '{ n = split($0, a, " "); w[substr($0, 1, length($0) - length(a[n]) - 1)] += a[n] }
		END { for (s in w) print s, w[s] }' | LC_ALL=C sort
}

# the sum of every node's selfSize, from the JSON
self_total() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); t, todo = 0, [d["head"]]
while todo:
    n = todo.pop(); t += n["selfSize"]; todo += n["children"]
print(t)' "$1"
}

same_as_speedscope() {
	local f=$1
	cp "$f" "$T/x.heapprofile"
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T/x.heapprofile" >"$T/imp" 2>/dev/null
	python3 "$SOURCE_ROOT/tests/cli/heapprofile_speedscope.py" "$T/imp" | summed >"$T/want"
	[ -s "$T/want" ]
	tach-decode -q --no-thread-frames "$f" | summed >"$T/got"
	diff -u "$T/want" "$T/got"
	tach-decode -q --no-thread-frames <"$f" | summed | diff -u "$T/want" -
	[ "$(awk -F'\t' '/^#/ { print $4 }' "$T/imp")" = "$(self_total "$f")" ]
	[ "$(awk '{ t += $NF } END { print t }' "$T/got")" = "$(self_total "$f")" ]
	run tach-decode -v -q -F info "$f"
	[[ ${lines[0]} == "tach-decode: $f: heapprofile input" ]]
}

@test "node --heap-prof now: speedscope's stacks and bytes; pprof's total is the selfSizes'" {
	speedscope_bundle
	local node
	node=$(command -v node || echo "$NODE")
	cp "$D/alloc.js" "$T/"
	(cd "$T" && "$node" --heap-prof --heap-prof-dir "$T" --heap-prof-name a.heapprofile \
		--heap-prof-interval 4096 alloc.js)
	same_as_speedscope "$T/a.heapprofile"
	grep -q ';leaf [0-9]*$' "$T/got"
	if command -v go >/dev/null; then
		tach2pprof -q "$T/a.heapprofile" -o "$T/a.pb.gz"
		go tool pprof -top -sample_index=space -unit=B "$T/a.pb.gz" 2>/dev/null >"$T/top"
		grep -q "of $(self_total "$T/a.heapprofile")B total\$" "$T/top"
	fi
}

@test "our profile: anonymous functions, lines, V8's own nodes, the root no frame" {
	speedscope_bundle
	same_as_speedscope "$D/small.heapprofile"
	grep -qx 'main.js:(anonymous):1;main.js:work:10 4096' "$T/got"
	grep -qx 'main.js:(anonymous):1;(V8 API) 32' "$T/got"
}

@test "damaged heap profiles: one line with the offset, exit 1" {
	local f=$D/small.heapprofile
	sed 's/"selfSize":4096/"selfSize":-1/' "$f" >"$T/neg.heapprofile"
	run tach-decode -q "$T/neg.heapprofile"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"neg.heapprofile: offset "*"selfSize must be an integer"* ]]
	sed 's/"selfSize":32,//' "$f" >"$T/nosize.heapprofile"
	run tach-decode -q "$T/nosize.heapprofile"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"offset "*'node without a "selfSize"'* ]]
	head -c 300 "$f" >"$T/cut.heapprofile"
	run tach-decode -q --from heapprofile "$T/cut.heapprofile"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"offset "* ]]
}

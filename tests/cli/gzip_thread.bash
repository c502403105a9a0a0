# Shared by tach2pprof.bats and tach2gecko.bats: their gzip, compressed in 128 KiB chunks on
# worker threads when there is a second CPU (lib/base/gzip.c).

# gzip_big_profile OUT: a profile whose pprof and Gecko outputs are many chunks: 8,000
# samples on 3 threads, nearly every one a stack of its own.
gzip_big_profile() {
	awk 'BEGIN { print "@interval_us 100"; ts = 1000000; x = 7
		for (i = 0; i < 8000; i++) {
			x = (x * 69069 + 1) % 4294967296
			d = 4 + int(x / 65536) % 12; s = ""
			for (k = d - 1; k >= 0; k--) {
				x = (x * 69069 + 1) % 4294967296
				s = s sprintf("%smod%d.py:fn%d:%d", k < d - 1 ? ";" : "", k,
					      int(x / 65536) % 40, int(x / 256) % 900 + 1)
			}
			printf "%d 0 %d %d\t%s\n", i % 3 + 1, ts += 100, int(x / 4096) % 4, s
		} }' >"$1.samples"
	tach-encode -o "$1" "$1.samples"
}

# threads_made PROG ARGS...: how many threads (clone calls) the run makes
threads_made() {
	strace -f -e trace=clone,clone3 -o "$BATS_TEST_TMPDIR/threads.st" "$@" >/dev/null
	grep -c 'clone' "$BATS_TEST_TMPDIR/threads.st" || true
}

# gzip_thread_check PROG EXT DIR FILE: the same bytes with one thread and with two (from a
# file, stdin and to -o, at the default level and at 9, on FILE and on a profile of many
# chunks), which gunzip to the plain output; the workers really made; a bad input leaves no
# byte on stdout and no -o file; a write error reads as the writer's own.
gzip_thread_check() {
	local prog=$1 ext=$2 dir=$3 f e lv
	gzip_big_profile "$dir/big.tach"
	for f in "$4" "$dir/big.tach"; do
		$prog --no-gzip "$f" >"$dir/plain"
		for lv in "" "--level 9"; do
			TACHFMT_THREADS=1 $prog $lv "$f" >"$dir/one.$ext"
			TACHFMT_THREADS=2 $prog $lv "$f" >"$dir/two.$ext"
			cmp "$dir/one.$ext" "$dir/two.$ext"
			TACHFMT_THREADS=7 $prog $lv "$f" | cmp - "$dir/one.$ext"
			TACHFMT_THREADS=2 $prog $lv - <"$f" | cmp - "$dir/one.$ext"
			TACHFMT_THREADS=2 $prog $lv "$f" -o "$dir/o.$ext"
			cmp "$dir/one.$ext" "$dir/o.$ext"
			gzip -t "$dir/one.$ext"
			gzip -dc "$dir/one.$ext" | cmp - "$dir/plain"
		done
	done
	# the big profile's output is more than 4 chunks of 128 KiB, so workers had work
	[ "$(wc -c <"$dir/plain")" -gt $((4 * 131072)) ]
	if command -v strace >/dev/null; then
		# LeakSanitizer cannot run under ptrace; a sanitizer build would abort at exit
		local ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
		export ASAN_OPTIONS
		local plain gz
		plain=$(TACHFMT_THREADS=2 threads_made $prog --no-gzip "$dir/big.tach")
		gz=$(TACHFMT_THREADS=2 threads_made $prog "$dir/big.tach")
		echo "threads: $plain plain, $gz gzip"
		[ "$gz" -ge $((plain + 2)) ]
		[ "$(TACHFMT_THREADS=1 threads_made $prog "$dir/big.tach")" -eq 0 ]
	fi
	for e in "$FIXTURES"/tach/errors/err_*.tach; do
		tach-decode "$e" >/dev/null 2>&1 && continue
		run bash -c 'TACHFMT_THREADS=2 "$0" "$1" | wc -c' "$prog" "$e"
		[ "${lines[-1]}" -eq 0 ]
		run env TACHFMT_THREADS=2 $prog "$e" -o "$dir/bad.$ext"
		[ "$status" -eq 1 ]
		[ ! -e "$dir/bad.$ext" ]
	done
	[ -c /dev/full ] || skip "/dev/full is not the full device on this machine"
	for f in "$4" "$dir/big.tach"; do
		run bash -c 'TACHFMT_THREADS=2 "$0" "$1" >/dev/full' "$prog" "$f"
		[ "$status" -eq 1 ]
		[[ "$output" == "$prog: <stdout>: write error: No space left on device" ]]
	done
}

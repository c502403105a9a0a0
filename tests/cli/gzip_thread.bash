# Shared by tach2pprof.bats and tach2gecko.bats: their gzip, compressed on a thread of the
# runner when there is a second CPU (cmd/common/gzpipe.c).

# gzip_thread_check PROG EXT DIR FILE: the same bytes with one thread and with two (from a
# file, stdin and to -o, at the default level and at 9); the pipe really taken; a bad input
# leaves no byte on stdout and no -o file; a write error reads as the writer's own.
gzip_thread_check() {
	local prog=$1 ext=$2 dir=$3 f=$4 e lv
	for lv in "" "--level 9"; do
		TACHFMT_THREADS=1 $prog $lv "$f" >"$dir/one.$ext"
		TACHFMT_THREADS=2 $prog $lv "$f" >"$dir/two.$ext"
		cmp "$dir/one.$ext" "$dir/two.$ext"
		TACHFMT_THREADS=2 $prog $lv - <"$f" | cmp - "$dir/one.$ext"
		TACHFMT_THREADS=2 $prog $lv "$f" -o "$dir/o.$ext"
		cmp "$dir/one.$ext" "$dir/o.$ext"
	done
	if command -v strace >/dev/null; then
		# LeakSanitizer cannot run under ptrace; a sanitizer build would abort at exit
		local ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
		export ASAN_OPTIONS
		TACHFMT_THREADS=2 strace -f -e trace=pipe2 -o "$dir/st" $prog "$f" >/dev/null
		grep -q pipe2 "$dir/st"
		TACHFMT_THREADS=1 strace -f -e trace=pipe2 -o "$dir/st" $prog "$f" >/dev/null
		! grep -q pipe2 "$dir/st" || false
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
	run bash -c 'TACHFMT_THREADS=2 "$0" "$1" >/dev/full' "$prog" "$f"
	[ "$status" -eq 1 ]
	[[ "$output" == "$prog: <stdout>: write error: No space left on device" ]]
}

# Loaded by the bats files that bound a command's time and memory.

# bounded SECONDS MIB COMMAND...: COMMAND within SECONDS and MIB of memory: its address
# space (prlimit), or under ASan, which reserves terabytes of it, its peak resident size.
bounded() {
	local secs=$1 mib=$2
	shift 2
	if ldd "$(command -v tach-decode)" 2>/dev/null | grep -q libasan; then
		python3 -c 'import resource, subprocess, sys
try:
    rc = subprocess.run(sys.argv[3:], timeout=int(sys.argv[1])).returncode
except subprocess.TimeoutExpired:
    rc = 124
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10
if peak > int(sys.argv[2]):
    print("peak %d MiB, over %s" % (peak, sys.argv[2]), file=sys.stderr)
    rc = 125
sys.exit(rc)' "$secs" "$mib" "$@"
	else
		timeout "$secs" prlimit --as=$((mib << 20)) "$@"
	fi
}

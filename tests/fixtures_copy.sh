#!/bin/sh
# usage: fixtures_copy.sh TREE_COPY SHARED
# The fixtures in the source tree must be byte-identical to the shared reference set when
# that exists (exit 77, meson's "skipped", when it does not, as in a release tarball).
copy=$1 shared=$2
[ -d "$copy/tach" ] || { echo "no fixtures at $copy" >&2; exit 1; }
[ -d "$shared" ] || { echo "no shared fixtures at $shared: nothing to compare"; exit 77; }
if diff -r "$shared" "$copy"; then
	echo "$copy equals $shared"
else
	echo "tests/fixtures differs from $shared: copy it again, unchanged" >&2
	exit 1
fi

#!/bin/sh
# The Python package as a user gets it: a wheel built from this tree (pip wheel, offline,
# Debian's python3-mesonpy), installed into a fresh venv, then test_tachfmt.py under pytest
# against the build tree's programs. Exit 77 (skipped) where Python lacks meson-python,
# venv or pytest; ./build.sh test installs them.
set -eu
src=$SOURCE_ROOT
py=
for c in ${TACHFMT_PYTHON:-} /usr/bin/python3 python3; do
	if "$c" -c 'import mesonpy, venv, pytest, ensurepip' 2>/dev/null; then
		py=$c
		break
	fi
done
if [ -z "$py" ]; then
	echo "skipped: no python3 with mesonpy, venv and pytest (python3-mesonpy python3-venv python3-pytest)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== wheel ($py)"
# The wheel builds the library from the tree with its own default options, the same in
# every pass of one build.sh run: the later passes take the first one's (TACHFMT_CHECK_CACHE
# lives for one run of one tree; tests/cli/checked.bash).
cached=${TACHFMT_CHECK_CACHE:+$TACHFMT_CHECK_CACHE/wheel}
if [ -n "$cached" ] && ls "$cached"/tachfmt-*.whl >/dev/null 2>&1; then
	mkdir "$tmp/dist" && cp "$cached"/tachfmt-*.whl "$tmp/dist/"
	echo "(built earlier in this run)"
else
	"$py" -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$tmp/dist" "$src" >"$tmp/wheel.log" 2>&1 ||
		{ cat "$tmp/wheel.log"; exit 1; }
	if [ -n "$cached" ]; then
		mkdir -p "$cached" && cp "$tmp"/dist/tachfmt-*.whl "$cached/"
	fi
fi
ls "$tmp/dist"
# --system-site-packages: pytest from Debian; tachfmt only from the wheel.
"$py" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install -q --no-index --no-deps "$tmp"/dist/tachfmt-*.whl
cd "$tmp"
PROGRAMS=$BUILD_ROOT/cmd CORPUS=$src/tests/fuzz/corpus \
	"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/tests/python/test_tachfmt.py"

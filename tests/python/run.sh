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
"$py" -m pip wheel -q --no-build-isolation --no-deps --no-index -w "$tmp/dist" "$src" >"$tmp/wheel.log" 2>&1 ||
	{ cat "$tmp/wheel.log"; exit 1; }
ls "$tmp/dist"
# --system-site-packages: pytest from Debian; tachfmt only from the wheel.
"$py" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install -q --no-index --no-deps "$tmp"/dist/tachfmt-*.whl
cd "$tmp"
PROGRAMS=$BUILD_ROOT/cmd CORPUS=$src/tests/fuzz/corpus \
	"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$src/tests/python/test_tachfmt.py"

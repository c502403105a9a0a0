#!/usr/bin/env python3
"""Fails when the library's layers are crossed the wrong way, or its files call in a circle.

usage: layers.py LIBDIR [ARCHIVE]

The layers, lowest first: base < model < symbolize < core < formats (LIBDIR/base/, ...). A
file may use its own layer and those below it, never one above:

- includes: every `#include "X/..."` line of a .c or .h file under LIBDIR names a header of
  layer X, which must not be above the file's own (tachfmt.h, the public header, is below
  them all), and must exist; a file in a format's folder (formats/X/) includes no header of
  another format's folder, what several formats share being in formats/ itself;
- calls (with ARCHIVE, the static library built from LIBDIR): every tachi_ or tach_ symbol
  an object leaves undefined must be defined by an object of its own layer or one below (nm
  tells both). One upward reference is the design: the format table (core/formats.c) lists the
  formats' rows (and detection's "auto" row), data that those files define; it calls none
  of them, and such a listing is not a use. And the files' graph of uses, within a layer
  too, must have no circle: a circle is one module in two files, or two that should be one.
"""
import os
import re
import subprocess
import sys

LAYERS = ["base", "model", "symbolize", "core", "formats"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A format's folder includes no other format's headers (formats/X/ from formats/Y/), but
# for these pairs: speedscope's probe asks V8's, as a V8 profile is no speedscope file.
SIDEWAYS_OK = {("speedscope", "v8")}
# The one allowed upward reference: the table's rows (see above).
TABLE = ("core/formats.c", re.compile(r"^tachi_fmt_\w+$"))


def rank(layer):
    return LAYERS.index(layer) if layer in LAYERS else None


def sideways(rel, inc):
    """Whether a file in one format's folder includes a header of another format's folder."""
    a, b = rel.split("/"), inc.split("/")
    if a[0] != "formats" or b[0] != "formats" or len(a) < 3 or len(b) < 3:
        return False
    return a[1] != b[1] and (a[1], b[1]) not in SIDEWAYS_OK


def check_includes(libdir):
    errors = []
    for layer in LAYERS:
        for dirpath, _, files in os.walk(os.path.join(libdir, layer)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, libdir)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for m in INCLUDE.finditer(text):
                    inc = m.group(1)
                    line = text.count("\n", 0, m.start()) + 1
                    if inc == "tachfmt.h":
                        continue
                    target = inc.split("/")[0] if "/" in inc else None
                    if rank(target) is None:
                        errors.append(f"{rel}:{line}: includes \"{inc}\", in no layer "
                                      f"(write it as LAYER/NAME.h)")
                    elif not os.path.exists(os.path.join(libdir, inc)):
                        errors.append(f"{rel}:{line}: includes \"{inc}\", which is not there")
                    elif rank(target) > rank(layer):
                        errors.append(f"{rel}:{line}: {layer}/ includes \"{inc}\" of {target}/, "
                                      f"a higher layer")
                    elif sideways(rel, inc):
                        errors.append(f"{rel}:{line}: includes \"{inc}\", another format's")
    return errors


def object_source(member):
    """base_hash.c.o -> base/hash.c (meson names objects by their path with / as _)."""
    name = os.path.basename(member)
    if name.endswith(".o"):
        name = name[:-2]
    layer, _, rest = name.partition("_")
    return f"{layer}/{rest}" if layer in LAYERS else None


def symbols(archive):
    out = subprocess.run(["nm", "-A", archive], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = {}, {}
    for line in out.splitlines():
        # ARCHIVE:MEMBER:[ADDR] TYPE NAME
        head, _, rest = line.rpartition(":")
        member = head.split(":")[-1]
        parts = rest.split()
        # the library's own symbols: internal (tachi_) and public (tach_) alike, since a
        # file that calls another's public function uses it as surely
        if len(parts) < 2 or not parts[-1].startswith(("tachi_", "tach_")):
            continue
        src = object_source(member)
        if src is None:
            continue
        kind, sym = parts[-2], parts[-1]
        if kind == "U":
            undefined.setdefault(src, set()).add(sym)
        elif kind.isupper():
            defined[sym] = (src, kind)
    return defined, undefined


def cycle(graph):
    """One circle of graph (node -> set of nodes), as a list of nodes, or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def check_calls(archive):
    errors = []
    defined, undefined = symbols(archive)
    graph = {}
    for src, syms in sorted(undefined.items()):
        layer = src.split("/")[0]
        for sym in sorted(syms):
            if sym not in defined:
                continue  # defined outside the library's objects
            dsrc, kind = defined[sym]
            dlayer = dsrc.split("/")[0]
            if src == TABLE[0] and TABLE[1].match(sym) and kind not in "TW":
                continue  # a row the table lists, not a use
            if rank(dlayer) > rank(layer):
                errors.append(f"{src} uses {sym} of {dsrc}: {layer}/ reaches up into {dlayer}/")
            graph.setdefault(src, set()).add(dsrc)
    found = cycle(graph)
    if found:
        errors.append("files that use each other in a circle: " + " -> ".join(found))
    return errors


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    errors = check_includes(sys.argv[1])
    if len(sys.argv) == 3:
        errors += check_calls(sys.argv[2])
    for e in errors:
        print(e)
    if errors:
        return 1
    print("layers one-way: base < model < symbolize < core < formats, no upward include or call, "
          "no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())

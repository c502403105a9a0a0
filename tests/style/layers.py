#!/usr/bin/env python3
"""Fails when the library's layers are crossed the wrong way, or files call in a circle.

usage: layers.py LIBDIR [ARCHIVE] [--files DIR]...

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
- --files DIR (the programs' cmd/, the Python module's python/): the same rule of no circle
  among DIR's .c files, read from their source, so that it holds in every build (the
  module is built only with -Dpython): a file uses another when it names a function or
  variable that the other defines at file scope, not static.
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


def circle_error(graph):
    """The error for a circle in graph (file -> {file: symbols}), or None."""
    found = cycle({n: set(uses) for n, uses in graph.items()})
    if not found:
        return None
    steps = [f"{a} -> {b} ({', '.join(sorted(graph[a][b])[:4])})"
             for a, b in zip(found, found[1:])]
    return "files that use each other in a circle: " + "; ".join(steps)


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
            graph.setdefault(src, {}).setdefault(dsrc, set()).add(sym)
    found = circle_error(graph)
    if found:
        errors.append(found)
    return errors


# Strings, character constants and comments (one pass, so that neither hides in the other),
# then preprocessor lines with their continuations.
NOT_CODE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)
PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
IDENT = re.compile(r"[A-Za-z_]\w*")
TYPE_ONLY = re.compile(r"^(struct|union|enum)\s+\w+$")


def code_of(text):
    text = NOT_CODE.sub(lambda m: "\n" * m.group(0).count("\n") + " ", text)
    return PREPROCESSOR.sub("", text)


def top_level(code):
    """The file-scope declarations of code, each the text before its ';' or '{'."""
    depth, start = 0, 0
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                yield code[start:i].strip(), "{"
            depth += 1
        elif ch == "}":
            depth -= 1
            start = i + 1
        elif ch == ";" and depth == 0:
            yield code[start:i].strip(), ";"
            start = i + 1
        if depth == 0 and ch in "{;":
            start = i + 1


def definitions(code):
    """The names a file defines at file scope and not static: functions and variables."""
    names = set()
    for decl, end in top_level(code):
        words = IDENT.findall(decl)
        if not words or words[0] in ("static", "typedef", "extern") or TYPE_ONLY.match(decl):
            continue
        head = decl.split("=")[0]
        if "(" in head:
            if end == "{":  # a function's body; ';' ends a prototype
                names.add(IDENT.findall(head[:head.index("(")])[-1])
            continue
        if end == "{" and "=" not in decl:
            continue  # a struct, union or enum's own body
        for declarator in decl.split(","):
            ids = IDENT.findall(declarator.split("=")[0].split("[")[0])
            if ids:
                names.add(ids[-1])
    names.discard("main")
    return names


def check_files(top):
    """No circle among the .c files under top, read from their source."""
    base = os.path.dirname(os.path.abspath(top))
    codes = {}
    for dirpath, _, files in os.walk(top):
        for name in sorted(files):
            if name.endswith(".c"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    codes[os.path.relpath(path, base)] = code_of(f.read())
    owner = {}
    for rel, code in sorted(codes.items()):
        for name in definitions(code):
            owner.setdefault(name, rel)
    graph = {}
    for rel, code in sorted(codes.items()):
        for name in set(IDENT.findall(code)):
            if owner.get(name, rel) != rel:
                graph.setdefault(rel, {}).setdefault(owner[name], set()).add(name)
    if not codes:
        return [f"{top}: no .c files"]
    found = circle_error(graph)
    return [found] if found else []


def main():
    args = sys.argv[1:]
    dirs = []
    while len(args) >= 2 and args[-2] == "--files":
        dirs.insert(0, args[-1])
        del args[-2:]
    if len(args) not in (1, 2) or "--files" in args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    errors = check_includes(args[0])
    if len(args) == 2:
        errors += check_calls(args[1])
    for d in dirs:
        errors += check_files(d)
    for e in errors:
        print(e)
    if errors:
        return 1
    print("layers one-way: base < model < symbolize < core < formats, no upward include or call, "
          "no circle" + "".join(f"; no circle among {os.path.basename(os.path.normpath(d))}/'s "
                                "files" for d in dirs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

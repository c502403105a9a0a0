#!/usr/bin/env python3
"""What inferno's xctrace collapser (collapse/xctrace.rs) makes of an xctrace export, to
check our reader; Python's own XML parser reads the file.

    xctrace_fold.py FILE            inferno's folded lines: each row's backtrace, root
                                    first, counted once a row (weights not read)
    xctrace_fold.py FILE --tach     the same stacks as tach-decode writes them: each
                                    thread's tid:N and [comm] root (its fmt, its pid)
    xctrace_fold.py FILE --time     --tach with each line's weights summed, in µs
                                    (tach-decode --value time)

Prints "stack count" lines, the counts of equal stacks summed, sorted. The collapser's
rules: an element with ref="N" is the earlier element with id="N"; a row's <backtrace>
lists frames innermost first; a frame is its name attribute, a Rust name with its hash
fixed (common.rs); a row without a backtrace (<sentinel/>) is not counted. Written from
those rules, not from our C code."""
import sys
import xml.etree.ElementTree as ET
from collections import Counter

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from dtrace_fold import fix_rust  # noqa: E402  (inferno's one Rust fix for them all)


def main():
    path, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    root = ET.parse(path).getroot()
    assert root.tag == "trace-query-result", root.tag
    ids = {}

    def deref(e):
        if e is None:
            return None
        if "ref" in e.attrib:
            return ids[e.attrib["ref"]]
        for d in e.iter():
            if "id" in d.attrib:
                ids[d.attrib["id"]] = d
        return e

    out = Counter()
    for node in root.findall("node"):
        for row in node.findall("row"):
            cols = {c.tag: deref(c) for c in row}
            bt = cols.get("backtrace")
            if bt is None:
                continue
            names = []
            for fr in bt.findall("frame"):
                name = deref(fr).attrib["name"]
                fixed = fix_rust(name)
                names.append(fixed if fixed is not None else name)
            stack = ";".join(reversed(names))
            value = 1
            if mode in ("--tach", "--time"):
                th = cols["thread"]
                tid = int(th.find("tid").text if th.find("tid").get("ref") is None
                          else ids[th.find("tid").get("ref")].text)
                proc = deref(th.find("process"))
                pid = int(deref(proc.find("pid")).text)
                stack = f"tid:{tid};[comm]:{th.attrib['fmt']}:{pid};{stack}"
            if mode == "--time":
                value = int(cols["weight"].text)
            out[stack] += value
    for stack, v in sorted(out.items()):
        print(stack, round(v / 1000) if mode == "--time" else v)


main()

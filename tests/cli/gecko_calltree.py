#!/usr/bin/env python3
"""Load a Gecko profile with the Firefox Profiler's own importer (profiler-cli) and check
that every thread's call tree is what the samples say.

usage: gecko_calltree.py PROFILER_CLI_CMD PROFILE [SAMPLES_TXT [--traced | --categories |
       --processed]]

PROFILER_CLI_CMD is the command as one string (e.g. "/x/node /x/profiler-cli.js"),
SAMPLES_TXT is `tach-decode --format samples` of the same input, or --info to print what
`thread info` says of the first thread. Threads must appear in
first-seen order of (thread id, interpreter id); for each, the top-down tree (idle samples
included) must equal the input's stacks counted by (file, function): every node's total and
self count, and what profiler-cli leaves out of long lists and deep trees by count and
samples; and every thread's samples are at the input's own times (the time line the
importer draws, and the durations its traced running time sums: each sample's time to the
next): a record of weight N at TIMESTAMP with TIME_NS is N samples TIME_NS / N apart (one
interval apart without TIME_NS), read from PROFILE's samples as meta.startTime plus each
sample's time, to the us. With --traced, also each function's time as the profiler
shows it (traced running time, from the sample times) equal to the time-to-next-sample
rule applied to SAMPLES_TXT, to the us. With --processed (PROFILE in the processed format,
tach2gecko --processed), the call trees are of time: every node's total and self as the
importer sums the sample weights (ms), to the us, equal to the samples' own times (a record
of weight N with TIME_NS is N samples of TIME_NS / N to the us each, without TIME_NS N
intervals), and the times are read from its samples' time column. With --same-names OTHER (in place of SAMPLES_TXT), every call path of PROFILE's trees is
one of OTHER's, thread by thread (the processed and the Gecko output of one input name
functions alike). With --categories (a JFR recording's samples, whose
frames carry their JFR frame type as file), instead of the call trees each thread's
category breakdown as the
importer counts it: a sample in its leaf frame's type ("[C++]" -> "C++"), an idle one
(no state bit, where some sample has one) in Idle; and every frame row of PROFILE in its
location's type, or Idle. Exit 0 when equal, 1 with a report if not. Without SAMPLES_TXT,
only load PROFILE: exit 0 when the importer accepts it, 1 with its message when not.
"""
import gzip
import codecs
import json
import os
import re
import shlex
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiler_session import Session  # noqa: E402
from samples_text import unescape  # noqa: E402

# The writer replaces each invalid byte with U+FFFD; Python's "replace" would merge a
# truncated sequence into one.
codecs.register_error("perbyte", lambda e: ("\ufffd", e.start + 1))


def text(b):
    s = b.decode("utf-8", "perbyte")
    return "".join("?" if ord(c) < 0x20 or c == "\x7f" else c for c in s)


comm_pid = {}  # (tid, iid) -> the pid perf's [comm] root frame gives


def parse_samples(path, timed=False):
    """Per thread, its stacks and their sample counts, or with timed their samples' own
    times (us)."""
    threads = {}  # (tid, iid) -> Counter(path -> n), in first-seen order
    has_line = {}  # (file, func) -> bool
    interval = 0
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
            if line.startswith("@interval_us "):
                interval = int(line.split()[1])
            if not line or line[0] in "#@":
                continue
            head, _, frames = line.partition("\t")
            fields = head.split(" ")
            tid, iid, _ts, _status = fields[:4]  # then TIME_NS, WEIGHT
            weight = int(fields[5]) if len(fields) > 5 else 1
            if timed:
                weight *= (int(fields[4]) // weight + 500) // 1000 if len(fields) > 4 \
                    else interval
            key = (int(tid), int(iid))
            stack = []
            for fr in frames.split(";") if frames else []:
                parts = fr.split(":")
                file, func, lineno = unescape(parts[0]), unescape(parts[1]), parts[2]
                fk = (file, func)
                has_line[fk] = has_line.get(fk, False) or (lineno not in ("-", "-1"))
                # perf's root frame names the process: its line is the pid
                if file == b"[comm]" and lineno.isdigit() and int(lineno) > 0:
                    comm_pid[key] = lineno
                stack.append(fk)
            c = threads.setdefault(key, Counter())
            if stack:
                c[tuple(reversed(stack))] += weight
    return threads, has_line


JFR_TYPES = ("Interpreted", "JIT compiled", "C1 compiled", "Inlined", "Native", "C++",
             "Kernel")
STATE_BITS = 1 | 2 | 4  # has GIL, on CPU, unknown: none of them is idle


def jfr_categories(path):
    """(tid, iid) -> Counter(category name -> samples): the leaf's JFR type, or Idle."""
    rows, recorded = [], False
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
            if not line or line[0] in "#@":
                continue
            head, _, frames = line.partition("\t")
            fields = head.split(" ")
            weight = int(fields[5]) if len(fields) > 5 else 1
            status = int(fields[3])
            recorded = recorded or bool(status & STATE_BITS)
            leaf = unescape(frames.split(";")[0].split(":")[0]).decode() if frames else ""
            rows.append(((int(fields[0]), int(fields[1])), status, leaf, weight))
    out = {}
    for key, status, leaf, weight in rows:
        c = out.setdefault(key, Counter())
        if recorded and not status & STATE_BITS:
            c["Idle"] += weight
        elif leaf[1:-1] in JFR_TYPES:
            c[leaf[1:-1]] += weight
        else:
            c["(not a JFR type: %s)" % leaf] += weight
    return out


def check_frame_categories(profile):
    """Every frame row whose location names a JFR type ("f (file:line)", "f (in file)") is
    in that type's category, or Idle (a leaf's row in idle samples)."""
    opener = gzip.open if open(profile, "rb").read(2) == b"\x1f\x8b" else open
    with opener(profile, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    names = [c["name"] for c in doc["meta"]["categories"]]
    errors, typed = [], 0
    for th in doc["threads"]:
        strings = th["stringTable"]
        for row in th["frameTable"]["data"]:
            m = re.search(r"\((?:in )?\[([^\]]*)\](?::\d+)?\)$", strings[row[0]])
            if not m or m.group(1) not in JFR_TYPES:
                continue
            typed += 1
            if names[row[6]] not in (m.group(1), "Idle"):
                errors.append("%s: frame %r in category %s" %
                              (th["name"], strings[row[0]], names[row[6]]))
    if not typed:
        errors.append("no frame of a JFR type")
    return errors


def sample_times(path):
    """(tid, iid) -> the times (us) of its samples, first-seen order of threads, each
    thread's sorted."""
    times, interval = {}, 0
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
            if line.startswith("@interval_us "):
                interval = int(line.split()[1])
            if not line or line[0] in "#@":
                continue
            f_ = [int(x) for x in line.partition("\t")[0].split(" ")]
            weight = f_[5] if len(f_) > 5 else 1
            step = interval
            if len(f_) > 4 and f_[4] // weight // 1000 != interval:
                step = (f_[4] // weight + 500) // 1000
            t = times.setdefault((f_[0], f_[1]), [])
            t.extend((f_[2] + k * step, step) for k in range(weight))
    out = {}
    for k, v in times.items():
        v.sort(key=lambda x: x[0])
        out[k] = [x[0] for x in v]
        # the writer's stackless sample that ends a last sample whose own time is not
        # the interval (the importer gives the last sample the interval); not in the
        # processed format, whose samples weigh their own time
        if v and v[-1][1] != interval and not PROCESSED:
            out[k].append(v[-1][0] + v[-1][1])
    return out


def check_times(profile, samples):
    """The profile's sample times against the samples text's, thread by thread."""
    with open(profile, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data)
    start = doc["meta"]["startTime"]
    want = sample_times(samples)
    got = []
    for th in doc["threads"]:
        if th.get("name") == "No samples" and not want:
            continue
        if "schema" not in th["samples"]:  # the processed format's columns
            got.append(sorted(round((start + t) * 1000) for t in th["samples"]["time"]))
            continue
        sch = th["samples"]["schema"]
        got.append(sorted(round((start + row[sch["time"]]) * 1000)
                          for row in th["samples"]["data"]))
    errors = []
    if len(got) != len(want):
        return ["%d threads with samples, expected %d" % (len(got), len(want))]
    for g, (key, w) in zip(got, want.items()):
        if g != w:
            bad = next(i for i, (a, b) in enumerate(zip(g + [None], w + [None])) if a != b)
            errors.append("thread %d, interpreter %d: %d samples, expected %d; sample %d at "
                          "%s us, expected %s" % (key[0], key[1], len(g), len(w), bad,
                                                  g[bad] if bad < len(g) else "-",
                                                  w[bad] if bad < len(w) else "-"))
    return errors


def traced_profile(profile):
    """Per thread of PROFILE, the Firefox Profiler's traced running time of each function
    (us): its importer (processGeckoProfile) sets a Gecko profile's sample weights to null,
    so its call tree counts samples, and the time it shows for a function (the sidebar's
    traced running time, computeTracedTiming) gives each sample with a stack the time to
    the next sample of its thread, the last one meta.interval. Functions are location
    strings; a list per thread of (self, total, name)."""
    with open(profile, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data)
    iv = round(doc["meta"]["interval"] * 1000)
    out = []
    for th in doc["threads"]:
        sch = th["samples"]["schema"]
        rows = sorted(th["samples"]["data"], key=lambda r: r[sch["time"]])
        times = [round(r[sch["time"]] * 1000) for r in rows]
        stk, frm, strs = th["stackTable"], th["frameTable"], th["stringTable"]
        pre, sfr = stk["schema"]["prefix"], stk["schema"]["frame"]
        loc = frm["schema"]["location"]
        self_t, total_t = Counter(), Counter()
        for i, r in enumerate(rows):
            s = r[sch["stack"]]
            if s is None:
                continue
            dt = times[i + 1] - times[i] if i + 1 < len(rows) else iv
            names = []
            while s is not None:
                names.append(strs[frm["data"][stk["data"][s][sfr]][loc]])
                s = stk["data"][s][pre]
            self_t[names[0]] += dt
            for n in set(names):
                total_t[n] += dt
        if rows or th.get("name") != "No samples":
            out.append(sorted((self_t[n], total_t[n], n) for n in total_t))
    return out


def traced_samples(path):
    """The same from the samples text, by the time-to-next-sample rule: a record stands
    for the time to the next record of its thread, the last one for its own time (TIME_NS
    to the us a sample, or one interval a sample); functions are (file, function)."""
    recs, interval = {}, 0
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
            if line.startswith("@interval_us "):
                interval = int(line.split()[1])
            if not line or line[0] in "#@":
                continue
            head, _, frames = line.partition("\t")
            f_ = [int(x) for x in head.split(" ")]
            weight = f_[5] if len(f_) > 5 else 1
            own = weight * ((f_[4] // weight + 500) // 1000 if len(f_) > 4 else interval)
            keys = [tuple(fr.split(":")[:2]) for fr in frames.split(";")] if frames else []
            recs.setdefault((f_[0], f_[1]), []).append((f_[2], own, keys))
    out = []
    for rs in recs.values():
        rs.sort(key=lambda r: r[0])
        self_t, total_t = Counter(), Counter()
        for i, (ts, own, keys) in enumerate(rs):
            if not keys:
                continue
            dt = rs[i + 1][0] - ts if i + 1 < len(rs) else own
            self_t[keys[0]] += dt
            for k in set(keys):
                total_t[k] += dt
        out.append(sorted((self_t[k], total_t[k], ":".join(map(lambda b: text(unescape(b)), k)))
                          for k in total_t))
    return out


def check_traced(profile, samples):
    """Each function's traced running time against the rule's, thread by thread: the
    (self, total) pairs of all functions, as multisets (names differ by format)."""
    got, want = traced_profile(profile), traced_samples(samples)
    if len(got) != len(want):
        return ["traced: %d threads, expected %d" % (len(got), len(want))]
    errors = []
    for k, (g, w) in enumerate(zip(got, want)):
        gs, ws = Counter((a, b) for a, b, _ in g), Counter((a, b) for a, b, _ in w)
        if gs != ws:
            errors.append("thread %d: traced running times differ (self, total us):" % k)
            errors.extend("  profile %d %d %s" % x for x in g if (x[0], x[1]) in gs - ws)
            errors.extend("  expected %d %d %s" % x for x in w if (x[0], x[1]) in ws - gs)
    return errors


def label(fk, has_line):
    """The function name profiler-cli prints (nameWithLibrary) for a frame."""
    file, func = text(fk[0]), text(fk[1])
    if not file:
        return func
    # NATIVE_MAPPINGS=1: a native frame in the source file DWARF names is in a library
    # the samples text does not name (its mapping's file): any library, that function
    if has_line[fk] and os.environ.get("NATIVE_MAPPINGS") == "1" and not file.endswith(".py"):
        return "*!" + func
    if has_line[fk]:
        return "%s!%s" % (file, func if func else "(root scope) " + file)
    if file == "~" or ")" in file:
        return func
    # NATIVE_MAPPINGS=1 (perf.data's frames, each in a mapping of its file): a native
    # frame's library is named by the mapping file's last component; an address in none
    # ("[unknown]") the importer leaves as the writer names it
    if os.environ.get("NATIVE_MAPPINGS") == "1":
        if file == "[unknown]" and func.startswith("0x"):
            return "%s (in %s)" % (func, file)
        if file.startswith("/"):
            return "%s!%s" % (file.rsplit("/", 1)[1], func)
    # "FUNC (in FILE)": the importer drops a C++ thunk's prefix from the name
    thunk = "non-virtual thunk to "
    return "%s!%s" % (file, func[len(thunk):] if func.startswith(thunk) else func)


class Node:
    def __init__(self):
        self.total = 0
        self.self = 0
        self.children = {}


def build(stacks):
    root = Node()
    for path, n in stacks.items():
        node = root
        node.total += n
        for lab in path:
            node = node.children.setdefault(lab, Node())
            node.total += n
        node.self += n
    return root


def compare(got, exp, path, errors):
    """got: a profiler-cli call node (JSON), exp: the expected Node at the same path. The
    profiler-cli lists at most 100 children per node and 200 levels; what it leaves out is
    summarised in childrenTruncated, which must match the expected children not shown."""
    where = ";".join(path) or "<root>"
    # the processed format's weights are ms: to the us
    total, self_ = ((round(got["totalSamples"] * 1000), round(got["selfSamples"] * 1000))
                    if PROCESSED is True else (got["totalSamples"], got["selfSamples"]))
    if path and (total != exp.total or self_ != exp.self):
        errors.append("%s: profiler total %d self %d, input total %d self %d" %
                      (where[-300:], total, self_, exp.total, exp.self))
    shown = set()
    for ch in got.get("children", []):
        lab = ch["nameWithLibrary"]
        if lab not in exp.children and "!" in lab and "*!" + lab.split("!", 1)[1] in exp.children:
            lab = "*!" + lab.split("!", 1)[1]
        if lab in shown or lab not in exp.children:
            errors.append("%s: unexpected child %s" % (where[-300:], lab))
            continue
        shown.add(lab)
        compare(ch, exp.children[lab], path + (lab,), errors)
    trunc = got.get("childrenTruncated") or {"count": 0, "combinedSamples": 0}
    combined = round(trunc["combinedSamples"] * 1000) if PROCESSED is True \
        else trunc["combinedSamples"]
    # a call node of no time the importer does not show (a V8 sample 0 us before the next)
    hidden = [c for lab, c in exp.children.items()
              if lab not in shown and (c.total or PROCESSED is not True)]
    if len(hidden) != trunc["count"] or sum(c.total for c in hidden) != combined:
        errors.append("%s: %d children not shown with %d samples, input has %d with %d" %
                      (where[-300:], trunc["count"], combined, len(hidden),
                       sum(c.total for c in hidden)))


PROCESSED = False


def main():
    global PROCESSED
    cli, profile = shlex.split(sys.argv[1]), sys.argv[2]
    PROCESSED = len(sys.argv) > 4 and sys.argv[4] == "--processed"
    if PROCESSED:
        # weights of time, unless the input's samples carry none (then one each)
        with open(profile, "rb") as f:
            data = f.read()
        doc = json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
        kinds = {th["samples"]["weightType"] for th in doc["threads"]}
        if len(kinds) != 1 or kinds - {"tracing-ms", "samples"}:
            sys.exit("processed profile with weight types %s" % sorted(kinds))
        timed = kinds == {"tracing-ms"}
    samples = sys.argv[3] if len(sys.argv) > 3 else None
    traced = len(sys.argv) > 4 and sys.argv[4] == "--traced"
    cats = jfr_categories(sys.argv[3]) if len(sys.argv) > 4 and sys.argv[4] == "--categories" \
        else None
    names_of = sys.argv[4] if samples == "--same-names" else None
    if names_of:
        samples = None
    info = samples == "--info"
    if info:
        samples = None
    if PROCESSED and not timed:
        PROCESSED = "counts"
    threads, has_line = parse_samples(samples, PROCESSED is True) if samples else ({}, {})
    expected = []
    for key, stacks in threads.items():
        c = Counter()
        for path, n in stacks.items():
            c[tuple(label(fk, has_line) for fk in path)] += n
        expected.append((key, build(c)))

    ses = Session(cli)
    run, load = ses.run, ses.load

    errors = check_times(profile, samples) if samples else []
    if traced:
        errors += check_traced(profile, samples)
    if cats is not None:
        errors += check_frame_categories(profile)
    def paths():
        """Per thread, the call paths (nameWithLibrary) the loaded profile's tree has."""
        listing = json.loads(run("thread", "list", "--json", "--limit", "100000"))
        out = []
        for t in sorted(listing["threads"], key=lambda t: t["threadIndex"]):
            tree = json.loads(run("thread", "samples-top-down", "--json", "--include-idle",
                                  "--max-lines", "10000000", "--thread", t["threadHandle"]))
            found, todo = set(), [((), tree["regularCallTree"])]
            while todo:
                path, node = todo.pop()
                for ch in node.get("children", []):
                    todo.append((path + (ch["nameWithLibrary"],), ch))
                    found.add(path + (ch["nameWithLibrary"],))
            out.append(found)
        return out

    def same_names(other):
        """Every call path of PROFILE is one of OTHER's (a node of no time is not shown in
        PROFILE, of weights of time, where OTHER counts its samples), thread by thread."""
        got = paths()
        ses.stop()
        load(other)
        want = paths()
        if len(got) != len(want):
            print("%d threads, %s has %d" % (len(got), other, len(want)))
            return 1
        bad = [(k, p) for k, (g, w) in enumerate(zip(got, want)) for p in sorted(g - w)]
        for k, p in bad[:20]:
            print("thread %d: call path %s not in %s" % (k, ";".join(p)[-300:], other))
        return 1 if bad else 0

    try:
        load(profile)
        if info:
            sys.stdout.write(run("thread", "info"))
            return 0
        if names_of:
            return same_names(names_of)
        if not samples:
            return 0
        listing = json.loads(run("thread", "list", "--json", "--limit", "100000"))
        got = sorted(listing["threads"], key=lambda t: t["threadIndex"])
        if not expected and len(got) == 1 and got[0]["name"] == "No samples":
            got = []  # the writer's stand-in thread for an input without samples
        if len(got) != len(expected):
            errors.append("%d threads, expected %d" % (len(got), len(expected)))
        for t, ((tid, iid), exp) in zip(got, expected):
            h = t["threadHandle"]
            # the process is the interpreter, or for a Chrome trace's k-th profile of one
            # thread (interpreter pid + k * 2^24) the pid
            pids = {str(iid), str(iid % (1 << 24))} if iid >> 24 else {str(iid)}
            pids |= {comm_pid[(tid, iid)]} if (tid, iid) in comm_pid else set()
            if t["pid"] not in pids or float(t["tid"]) != float(tid):
                errors.append("%s: pid %s tid %s, expected interpreter %d thread %d" %
                              (h, t["pid"], t["tid"], iid, tid))
            errs = []
            if cats is None:
                tree = json.loads(run("thread", "samples-top-down", "--json", "--include-idle",
                                      "--max-lines", "10000000", "--thread", h))
                compare(tree["regularCallTree"], exp, (), errs)
            else:
                got_c = Counter()
                br = json.loads(run("thread", "samples", "--json", "--include-idle",
                                    "--thread", h))["categoryBreakdown"]
                for c in br["categories"]:
                    if c["samples"]:
                        got_c[c["name"]] += c["samples"]
                if got_c != cats.get((tid, iid), Counter()):
                    errs.append("categories %s, expected %s" %
                                (dict(sorted(got_c.items())),
                                 dict(sorted(cats.get((tid, iid), Counter()).items()))))
            if errs:
                errors.append("%s (thread %d, interpreter %d): %s differs" %
                              (h, tid, iid, "call tree" if cats is None else "category breakdown"))
                errors.extend("  " + e for e in errs)
    finally:
        ses.close()
    if errors:
        print("\n".join(errors[:60]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check tachfmt's reading of a Firefox Profiler file against the profiler's own importer.

usage: gecko_read_check.py PROFILER_CLI_CMD PROFILE SAMPLES_TXT

SAMPLES_TXT is `tach-decode -F samples PROFILE`. PROFILE is loaded with profiler-cli (the
importer bundled in it); thread by thread, in order, its call tree must equal what the
samples say: every path of function names as the profiler shows them, with its self count
(for a processed profile weighed in tracing-ms, its self time to the us), under the
thread's name (the samples' [comm] root, which is the profiler's thread name, or its
"NAME (tid T)" form). Each thread's sample times (us) must be the file's own: its
profile's meta.startTime plus each sample's time, exactly (the last stackless sample of a
thread, which ends the one before, left out). Exit 0 when all equal, 1 with a report.
"""
import gzip
import json
import os
import shlex
import sys
from collections import Counter
from decimal import Decimal, ROUND_HALF_UP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profiler_session import Session  # noqa: E402
from samples_text import unescape as unescape_bytes  # noqa: E402


def unescape(s):
    return unescape_bytes(s).decode("utf-8", "replace")


def read_samples(path, timed):
    """[(tid, name, Counter(path -> self), [times])] in first-seen order of threads."""
    threads = {}
    interval = 0
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "surrogateescape").rstrip("\n")
            if line.startswith("@interval_us "):
                interval = int(line.split()[1])
            if not line or line[0] in "#@":
                continue
            head, _, frames = line.partition("\t")
            fields = [int(x) for x in head.split(" ")]
            weight = fields[5] if len(fields) > 5 else 1
            # a line without its time stands for one interval
            value = (round(fields[4] / 1000) if len(fields) > 4 else interval * weight) \
                if timed else weight
            stack, name = [], None
            for fr in frames.split(";") if frames else []:
                parts = fr.split(":")
                if parts[0] == "[comm]":
                    name = unescape(parts[1])
                stack.append(unescape(parts[1]))
            t = threads.setdefault((fields[0], fields[1]), [fields[0], name, Counter(), []])
            t[3].append(fields[2])
            if stack:
                t[2][tuple(reversed(stack))] += value
    return list(threads.values())


def file_times(doc):
    """Each thread's sample times (us) as the file gives them, or None with processes."""
    if doc.get("processes"):
        return None
    start = doc["meta"]["startTime"]
    out = []
    for th in doc["threads"]:
        s = th["samples"]
        if "schema" in s:
            rows = [(r[s["schema"]["stack"]], r[s["schema"]["time"]]) for r in s["data"]]
        else:
            times = s.get("time")
            if times is None:
                times, acc = [], 0
                for d in s["timeDeltas"]:
                    acc += d
                    times.append(acc)
            rows = list(zip(s["stack"], times))
        if rows and rows[-1][0] is None:
            rows = rows[:-1]
        us = [int(((Decimal(start) + Decimal(t)) * 1000).quantize(1, ROUND_HALF_UP))
              for _, t in rows]
        # a weight of N (samples or bytes): N samples an interval apart, as the samples
        # text lists them
        if s.get("weightType") in ("samples", "bytes") and s.get("weight"):
            step = int(Decimal(doc["meta"]["interval"]) * 1000)
            us = [u + k * step for u, w in zip(us, s["weight"]) for k in range(w)]
        out.append(sorted(us))
    return out


def tree_paths(node, path, out, timed, errors):
    trunc = node.get("childrenTruncated")
    if trunc and trunc.get("count"):
        errors.append("%s: children left out" % ";".join(path))
    for ch in node.get("children", []):
        p = path + (ch["name"],)
        self_ = round(ch["selfSamples"] * 1000) if timed else ch["selfSamples"]
        if self_:
            out[p] += self_
        tree_paths(ch, p, out, timed, errors)


def main():
    cli, profile, samples = shlex.split(sys.argv[1]), sys.argv[2], sys.argv[3]
    with open(profile, "rb") as f:
        data = f.read()
    # the times exactly as written: start + time in floats is a fraction of a us off at
    # today's epoch ms
    doc = json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data,
                     parse_float=Decimal)
    if "meta" not in doc and "profile" in doc:
        doc = doc["profile"]
    timed = any(th.get("samples", {}).get("weightType") == "tracing-ms"
                for th in doc["threads"])
    want = read_samples(samples, timed)
    errors = []
    ft = file_times(doc)
    if ft is not None:
        got_t = [t for t in ft if t]
        want_t = [sorted(w[3]) for w in want]
        if got_t != want_t:
            errors.append("sample times differ from the file's: %d threads, %d read" %
                          (len(got_t), len(want_t)))
    ses = Session(cli)
    try:
        ses.load(profile)
        listing = json.loads(ses.run("thread", "list", "--json", "--limit", "100000"))
        got = [t for t in sorted(listing["threads"], key=lambda t: t["threadIndex"])]
        read = iter([w for w in want if w[2]])
        seen = 0
        for t in got:
            tree = json.loads(ses.run("thread", "samples-top-down", "--json", "--include-idle",
                                      "--max-lines", "10000000", "--thread", t["threadHandle"]))
            paths = Counter()
            tree_paths(tree["regularCallTree"], (), paths, timed, errors)
            if not paths:
                continue
            seen += 1
            w = next(read, None)
            if w is None:
                errors.append("%s: thread %s not read" % (t["threadHandle"], t.get("tid")))
                continue
            if t.get("tid") is not None and float(t["tid"]) != w[0]:
                errors.append("%s: tid %s, read %d" % (t["threadHandle"], t["tid"], w[0]))
            if w[1] is not None and w[1] != t["name"] and \
                    not t["name"].startswith(w[1] + " (tid "):
                errors.append("%s: named %r, read %r" % (t["threadHandle"], t["name"], w[1]))
            # the thread's name as a root frame of its own, which the Gecko file keeps
            # for a perf or Chrome thread (tach2gecko's) and the reader adds otherwise
            if w[1] is not None and all(p[0] != w[1] for p in paths):
                paths = Counter({(w[1],) + p: n for p, n in paths.items()})
            if paths != w[2]:
                for p in sorted(set(paths) | set(w[2]))[:20]:
                    if paths[p] != w[2][p]:
                        errors.append("%s: %s: profiler %d, read %d" %
                                      (t["threadHandle"], ";".join(p)[-300:], paths[p], w[2][p]))
        if seen != len([w for w in want if w[2]]):
            errors.append("%d threads with samples in the profiler, %d read" %
                          (seen, len([w for w in want if w[2]])))
    finally:
        ses.close()
    if errors:
        print("\n".join(errors[:60]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compares speedscope's reading of a trace of spans with its reading of our conversion.

usage: spans_check.py TRACE PEER.txt OURS.txt

PEER.txt: speedscope_read.mjs's output for TRACE with speedscope's Trace Event Format
importer; OURS.txt: its output for tach2speedscope's conversion of TRACE. Each stack's self
time must be the same in both. Ours start with the thread's name where TRACE names the
thread (the reader's root frame that names a thread; speedscope names its profile instead):
that frame is dropped here. The totals differ by design: speedscope's counts the time in
which no span is open too, which is no sample of ours; the sum of the stacks' times is the
same in both.
"""
import json
import sys


def thread_names(path):
    text = open(path, encoding="utf-8").read().strip()
    if text.startswith("["):
        text = text.rstrip().rstrip(",")
        if not text.endswith("]"):
            text += "]"
    doc = json.loads(text)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return {e["args"]["name"] for e in events
            if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "thread_name"
            and isinstance(e.get("args"), dict) and e["args"].get("name")}


def read(path, names):
    stacks = {}
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#"):
            continue
        stack, _, w = line.rpartition(" ")
        frames = stack.split(";")
        if names and frames[0] in names and len(frames) > 1:
            frames = frames[1:]
        key = ";".join(frames)
        stacks[key] = round(stacks.get(key, 0) + float(w), 3)
    return stacks


def main():
    trace, peer_path, ours_path = sys.argv[1:4]
    names = thread_names(trace)
    peer, ours = read(peer_path, set()), read(ours_path, names)
    bad = 0
    for k in sorted(set(peer) | set(ours)):
        if peer.get(k) != ours.get(k):
            print(f"{k}: speedscope {peer.get(k)}, ours {ours.get(k)}")
            bad += 1
    if not peer:
        print("speedscope read no stack")
        bad += 1
    if bad:
        sys.exit(1)
    print(f"{len(peer)} stacks, {round(sum(peer.values()), 3)} us: the same as speedscope's")


main()

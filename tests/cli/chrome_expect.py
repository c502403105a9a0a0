#!/usr/bin/env python3
"""What the chrome reader must make of a trace-event JSON file, computed here from the
events alone, and tach-decode's samples text turned into the same lines, for diff:

    @start_time_us 0
    @interval_us N
    TID PID TIMESTAMP STATUS<TAB>FRAME;FRAME;...   (innermost first, one line per sample)

where FRAME is "FUNC|FILE|LINE|COL" (-1: none).

  chrome_expect.py expect TRACE   the reader's rules, as tachfmt(5) states them: a profile
      per Profile event (its pid and id), on the Profile event's pid/tid; its chunks'
      nodes ("parent" links), samples and timeDeltas in file order, the first delta from
      args.data.startTime; endTime from the chunk that has it. Frames as for a .cpuprofile
      (v8_expect.py), then the thread's thread_name (the last given) as the outermost frame
      "NAME|[comm]|PID|-1". Weights are time: a sample stands for the time up to the next
      one of its profile, a profile's first also from its startTime (and is put there),
      its last up to its endTime (else the median gap); the interval is the median of the
      gaps within profiles, halved while the weights miss the total time by more than 1%;
      a weight is the running total, over the profiles one after the other, rounded to
      intervals, at least 1. All samples then in time order (ties: profile, file order),
      times from the earliest startTime.
  chrome_expect.py decode < SAMPLES_TEXT    tach-decode --format samples of the same file.
"""
import json
from decimal import Decimal
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v8_expect import decode, ns, weights  # noqa: E402  (the same rules for times and the text)


def frame(cf):
    line, col = cf.get("lineNumber", -1), cf.get("columnNumber", -1)
    return "%s|%s|%d|%d" % (cf["functionName"] or "(anonymous)", cf.get("url") or "~",
                            line + 1 if line >= 0 else -1, col + 1 if col >= 0 else -1)


def profiles(events):
    """Per (pid, id): the Profile event and the chunks, in file order."""
    names, profs = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("name") in ("Profile", "ProfileChunk"):
            p = profs.setdefault((e["pid"], json.dumps(e["id"])), {"chunks": []})
            if e["name"] == "Profile":
                p["event"] = e
            else:
                p["chunks"].append(e)
    return names, [profs[k] for k in sorted(profs)]


def durations_weights(samples, q):
    """v8_expect's running total rounded to q, over each sample's duration "d"."""
    return weights([[0, 0, 0, s["d"]] for s in samples], q)


def expect(path):
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8-sig"), parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names, profs = profiles(events)
    samples, seq, before = [], 0, {}
    for i, p in enumerate(profs):
        ev, data = p["event"], p["event"]["args"]["data"]
        p["start"] = t = ns(data["startTime"])
        p["end"], p["nodes"], p["parent"] = -1, {}, {}
        # a second profile of one thread is a thread of its own: interpreter pid + 2^24 each
        k = before.get((ev["tid"], ev["pid"]), 0)
        before[(ev["tid"], ev["pid"])] = k + 1
        iid = (ev["pid"] + k * 2**24) % 2**32
        p["thread"] = (ev["tid"], ev["pid"], iid, names.get((ev["pid"], ev["tid"])))
        mine = []
        for c in p["chunks"]:
            d = c["args"]["data"]
            cpu = d.get("cpuProfile", {})
            for n in cpu.get("nodes", []):
                p["nodes"][n["id"]] = n
                if n.get("parent") is not None:
                    p["parent"][n["id"]] = n["parent"]
            for nid, delta in zip(cpu.get("samples", []), d.get("timeDeltas", cpu.get("timeDeltas", []))):
                t += ns(delta)
                mine.append({"t": t, "seq": seq, "prof": i, "nid": nid})
                seq += 1
            if "endTime" in d:
                p["end"] = ns(d["endTime"])
        if p["end"] < p["start"]:
            p["end"] = -1
        mine.sort(key=lambda s: (s["t"], s["seq"]))
        samples += mine
    gaps = sorted(b["t"] - a["t"] for a, b in zip(samples, samples[1:]) if a["prof"] == b["prof"])
    median = gaps[len(gaps) // 2] if gaps else 1000000
    for k, s in enumerate(samples):
        p = profs[s["prof"]]
        nxt = samples[k + 1] if k + 1 < len(samples) else None
        if nxt and nxt["prof"] == s["prof"]:
            s["d"] = nxt["t"] - s["t"]
        else:
            s["d"] = p["end"] - s["t"] if p["end"] >= s["t"] else (median or 1000)
    for k, s in enumerate(samples):
        start = profs[s["prof"]]["start"]
        if (k == 0 or samples[k - 1]["prof"] != s["prof"]) and s["t"] > start:
            s["d"] += s["t"] - start
            s["t"] = start
    us = 1000
    if samples:
        total = sum(s["d"] for s in samples)
        us = max(1, (median + 500) // 1000)
        while us > 1:
            n = sum(durations_weights(samples, us * 1000))
            if abs(n * us * 1000 - total) * 100 <= total:
                break
            us //= 2
        for s, w in zip(samples, durations_weights(samples, us * 1000)):
            s["w"] = w
    origin = min((p["start"] for p in profs), default=0)
    samples.sort(key=lambda s: (s["t"], s["prof"], s["seq"]))
    print("@start_time_us 0")
    print("@interval_us %d" % us)
    for s in samples:
        p = profs[s["prof"]]
        stack, k = [], s["nid"]
        while k is not None:
            n = p["nodes"][k]
            if not (k not in p["parent"] and n["callFrame"]["functionName"] == "(root)"):
                stack.append(frame(n["callFrame"]))
            k = p["parent"].get(k)
        tid, pid, iid, name = p["thread"]
        if name is not None:
            stack.append("%s|[comm]|%d|-1" % (name, pid))
        status = 0 if p["nodes"][s["nid"]]["callFrame"]["functionName"] == "(idle)" else 2
        ts = max(0, s["t"] - origin) // 1000
        for k in range(s["w"]):
            print("%d %d %d %d\t%s" % (tid, iid, ts + k * us, status, ";".join(stack)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["expect"] and len(sys.argv) == 3:
        expect(sys.argv[2])
    elif sys.argv[1:] == ["decode"]:
        decode(threads=True)
    else:
        sys.exit(__doc__)

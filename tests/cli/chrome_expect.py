#!/usr/bin/env python3
"""What the chrome reader must make of a trace-event JSON file, computed here from the
events alone, and tach-decode's samples text turned into the same lines, for diff:

    @start_time_us 0
    @interval_us N
    TID PID TIMESTAMP STATUS TIME_NS<TAB>FRAME;FRAME;...   (innermost first, one per sample)

where FRAME is "FUNC|FILE|LINE|COL" (-1: none).

  chrome_expect.py expect TRACE   the reader's rules, as tachfmt(5) states them: a profile
      per Profile event (its pid and id), on the Profile event's pid/tid; its chunks'
      nodes ("parent" links), samples and timeDeltas in file order, the first delta from
      args.data.startTime; endTime from the chunk that has it. Chunks of an id with no
      Profile event are skipped. Two profiles of one pid/tid are one recording: the
      one with more samples is kept (ties: the longer from startTime to endTime, or to
      its last sample, then the first), the other dropped. Frames as for a .cpuprofile (v8_expect.py),
      then the thread's thread_name (the last given) as the outermost frame
      "NAME|[comm]|PID|-1". A sample stands for the time up to the next one of its
      profile, a profile's last up to its endTime (else 0); the interval is the median of
      the gaps within profiles (rounded to us) and weighs nothing. All samples then in
      time order (ties: profile, file order), times from the earliest startTime kept.
  chrome_expect.py decode < SAMPLES_TEXT    tach-decode --format samples of the same file.
"""
import json
from decimal import Decimal
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v8_expect import decode, ns  # noqa: E402  (the same rules for times and the text)


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


def expect(path):
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8-sig"), parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names, profs = profiles(events)
    profs = [p for p in profs if "event" in p]  # orphan chunks: skipped
    samples, seq = [], 0
    for i, p in enumerate(profs):
        ev, data = p["event"], p["event"]["args"]["data"]
        p["start"] = t = ns(data["startTime"])
        p["end"], p["nodes"], p["parent"] = -1, {}, {}
        p["thread"] = (ev["tid"], ev["pid"], ev["pid"] % 2**32, names.get((ev["pid"], ev["tid"])))
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
        p["span"] = max(0, (p["end"] if p["end"] >= 0 else t) - p["start"])
        p["count"] = len(mine)
        mine.sort(key=lambda s: (s["t"], s["seq"]))
        p["samples"] = mine
    kept = {}
    for i, p in enumerate(profs):
        k = p["thread"][:2]
        if k not in kept or (p["count"], p["span"]) > (profs[kept[k]]["count"], profs[kept[k]]["span"]):
            kept[k] = i
    keep = set(kept.values())
    for i, p in enumerate(profs):
        if i in keep:
            samples += p["samples"]
    gaps = sorted(b["t"] - a["t"] for a, b in zip(samples, samples[1:]) if a["prof"] == b["prof"])
    us = max(1, (gaps[len(gaps) // 2] + 500) // 1000) if gaps else 1000
    for k, s in enumerate(samples):
        p = profs[s["prof"]]
        nxt = samples[k + 1] if k + 1 < len(samples) else None
        if nxt and nxt["prof"] == s["prof"]:
            s["d"] = nxt["t"] - s["t"]
        else:
            s["d"] = p["end"] - s["t"] if p["end"] >= s["t"] else 0
    origin = min((profs[i]["start"] for i in keep), default=0)
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
        print("%d %d %d %d %d\t%s" % (tid, iid, ts, status, s["d"], ";".join(stack)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["expect"] and len(sys.argv) == 3:
        expect(sys.argv[2])
    elif sys.argv[1:] == ["decode"]:
        decode(threads=True)
    else:
        sys.exit(__doc__)

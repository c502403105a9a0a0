#!/usr/bin/env python3
"""Writes the example profiles of examples/ in the samples text form (see tachfmt(5)).

The profiles are made up, but shaped like what CPython's sampling profiler records:
  webapp.samples  a threaded web server: the main thread waits in its accept loop while
                  three workers serve requests (database waits off the GIL, JSON decoding
                  and recursive template rendering on CPU, GIL contention, an exception
                  being handled, a garbage collection);
  batch.samples   a single-threaded batch job: parsing, a recursive sort, compression in
                  native code, with a collection now and then.
The output depends only on this script (a fixed seed): run it from the repository root,
  python3 examples/gen_examples.py
and commit the .samples files it writes.
"""
import os
import random

GIL, CPU, UNKNOWN, GIL_WAIT, EXC, MAIN = 1, 2, 4, 8, 16, 32
RUNNING = GIL | CPU

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/lib/python3.15"
APP = "/srv/shop/app"

THREAD_BOOT = [  # outermost first
    (f"{PY}/threading.py", "_bootstrap", 1012),
    (f"{PY}/threading.py", "_bootstrap_inner", 1075),
    (f"{PY}/threading.py", "run", 1012),
    (f"{PY}/concurrent/futures/thread.py", "_worker", 93),
    (f"{PY}/concurrent/futures/thread.py", "run", 59),
    (f"{APP}/server.py", "handle", 88),
    (f"{APP}/routes.py", "dispatch", 41),
]


def fmt(stack):
    """stack: outermost first; the text form wants innermost first."""
    return ";".join(f"{f}:{fn}:{ln}" for f, fn, ln in reversed(stack))


def render_nodes(rng, depth):
    frames = []
    for _ in range(depth):
        frames.append((f"{APP}/templates.py", "render_node", rng.choice((95, 97, 102))))
    return frames


def webapp_request(rng):
    """One request as a list of (stack, status) phases with durations in ticks."""
    kind = rng.choices(("orders", "user", "report", "health"), (4, 3, 2, 1))[0]
    base = list(THREAD_BOOT)
    phases = []
    if kind == "orders":
        v = base + [(f"{APP}/views.py", "list_orders", 120)]
        db = v + [(f"{APP}/db.py", "query", 55), (f"{APP}/db.py", "execute", 71)]
        phases.append((db + [(f"{PY}/socket.py", "recv_into", 720)], 0, rng.randint(4, 12)))
        phases.append((v + [(f"{APP}/db.py", "fetch_rows", 88),
                            (f"{APP}/models.py", "Order.__init__", 33)], RUNNING, rng.randint(2, 6)))
        phases.append((v + [(f"{APP}/views.py", "to_json", 140),
                            (f"{PY}/json/__init__.py", "dumps", 231),
                            (f"{PY}/json/encoder.py", "encode", 200),
                            (f"{PY}/json/encoder.py", "iterencode", 258)], RUNNING, rng.randint(1, 4)))
    elif kind == "user":
        v = base + [(f"{APP}/views.py", "get_user", 64)]
        cache = v + [(f"{APP}/cache.py", "get", 30)]
        if rng.random() < 0.3:
            # A cache miss: the KeyError is being handled while the database is asked.
            phases.append((cache + [(f"{APP}/cache.py", "_load", 44)], RUNNING | EXC, 1))
            phases.append((cache + [(f"{APP}/cache.py", "_load", 47), (f"{APP}/db.py", "query", 55),
                                    (f"{APP}/db.py", "execute", 71),
                                    (f"{PY}/socket.py", "recv_into", 720)], EXC, rng.randint(2, 6)))
        phases.append((cache + [(f"{PY}/json/__init__.py", "loads", 346),
                                (f"{PY}/json/decoder.py", "decode", 337),
                                (f"{PY}/json/decoder.py", "raw_decode", 353)], RUNNING, rng.randint(1, 5)))
    elif kind == "report":
        v = base + [(f"{APP}/views.py", "render_report", 210),
                    (f"{APP}/templates.py", "render", 80)]
        for _ in range(rng.randint(3, 7)):
            d = rng.randint(2, 9)
            inner = rng.choice(((f"{APP}/templates.py", "escape", 20),
                                (f"{APP}/templates.py", "format_money", 28),
                                (f"{APP}/templates.py", "lookup", 61)))
            st = v + render_nodes(rng, d) + [inner]
            status = RUNNING if rng.random() < 0.8 else GIL_WAIT
            phases.append((st, status, rng.randint(1, 4)))
    else:
        phases.append((base + [(f"{APP}/views.py", "health", 12)], RUNNING, 1))
    return phases


def webapp():
    rng = random.Random(20261121)
    start, interval = 5_000_000_000, 1000
    main_tid = 140245101090624
    workers = [140245073123008, 140245064730304, 140245056337600]
    lines = [
        "# A threaded web server sampled every millisecond (made-up, see gen_examples.py).",
        "@python_version 3.15.0",
        f"@start_time_us {start}",
        f"@interval_us {interval}",
    ]
    main_stack = [(f"{APP}/server.py", "<module>", 140), (f"{APP}/server.py", "serve_forever", 61),
                  (f"{PY}/selectors.py", "select", 468)]
    accept = [(f"{APP}/server.py", "<module>", 140), (f"{APP}/server.py", "serve_forever", 66),
              (f"{APP}/server.py", "accept", 75), (f"{PY}/socket.py", "accept", 295)]
    queues = {t: [] for t in workers}
    for tick in range(120):
        ts = start + (tick + 1) * interval
        # The main thread mostly sleeps in select(); now and then it accepts a connection.
        if rng.random() < 0.15:
            lines.append(f"{main_tid} 0 {ts} {MAIN | RUNNING}\t{fmt(accept)}")
        else:
            lines.append(f"{main_tid} 0 {ts + 3} {MAIN}\t{fmt(main_stack)}")
        for i, tid in enumerate(workers):
            q = queues[tid]
            if not q:
                if rng.random() < 0.2:
                    idle = [(f"{PY}/threading.py", "_bootstrap", 1012),
                            (f"{PY}/threading.py", "_bootstrap_inner", 1075),
                            (f"{PY}/threading.py", "run", 1012),
                            (f"{PY}/concurrent/futures/thread.py", "_worker", 90),
                            (f"{PY}/queue.py", "get", 171),
                            (f"{PY}/threading.py", "wait", 359)]
                    q.append((idle, 0, rng.randint(1, 5)))
                else:
                    q.extend(webapp_request(rng))
            stack, status, left = q[0]
            if status & RUNNING and rng.random() < 0.12:
                status = GIL_WAIT  # another worker holds the GIL
            shown = stack
            if status & GIL and rng.random() < 0.02:
                shown = stack + [("~", "<GC>", -1)]
            if left <= 1:
                q.pop(0)
            else:
                q[0] = (stack, q[0][1], left - 1)
            lines.append(f"{tid} 0 {ts + 10 + 7 * i} {status}\t{fmt(shown)}")
    return lines


def batch():
    rng = random.Random(7)
    start, interval = 9_000_000_000, 500
    tid = 139876543210000
    lines = [
        "# A single-threaded batch job sampled every 500 us (made-up, see gen_examples.py).",
        "@python_version 3.15.0",
        f"@start_time_us {start}",
        f"@interval_us {interval}",
    ]
    job = "/opt/etl/job.py"
    top = [(job, "<module>", 210), (job, "main", 190)]
    ts = start
    plan = []
    for _ in range(4):
        plan.append(("parse", rng.randint(20, 35)))
        plan.append(("sort", rng.randint(30, 50)))
        plan.append(("compress", rng.randint(10, 25)))
        plan.append(("write", rng.randint(5, 12)))
    for step, n in plan:
        for _ in range(n):
            ts += interval
            if step == "parse":
                st = top + [(job, "load", 40), (f"{PY}/csv.py", "__next__", 116),
                            (job, "parse_row", rng.choice((52, 55, 58)))]
                status = RUNNING
            elif step == "sort":
                d = rng.randint(3, 14)
                st = top + [(job, "sort_rows", 70)] + [(job, "quicksort", 81)] * d
                st.append((job, rng.choice(("partition", "partition", "key")), 95))
                status = RUNNING
            elif step == "compress":
                st = top + [(job, "save", 120), (f"{PY}/gzip.py", "write", 312),
                            ("<native>", "zlib.Compress.compress", -1)]
                status = CPU  # zlib releases the GIL while it compresses
            else:
                st = top + [(job, "save", 124), (f"{PY}/gzip.py", "close", 356),
                            (f"{PY}/gzip.py", "flush", 380)]
                status = 0  # waiting for the disk
            if status & GIL and rng.random() < 0.03:
                st = st + [("~", "<GC>", -1)]
            lines.append(f"{tid} 0 {ts} {status | MAIN}\t{fmt(st)}")
    return lines


def main():
    for name, lines in (("webapp", webapp()), ("batch", batch())):
        text = "\n".join(lines) + "\n"
        # Frames without a location are written with "-" as their line.
        text = text.replace(":-1;", ":-;").replace(":-1\n", ":-\n")
        with open(os.path.join(HERE, name + ".samples"), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()

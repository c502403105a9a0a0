#!/usr/bin/env python3
"""A py-spy-shaped speedscope file for benchmarks: N samples over 4 threads, stacks 10 to
40 frames deep drawn from 2000 frames (a prefix tree, so stacks repeat as in real
profiles), weights 0.01 s. Deterministic for given arguments.

  gen_speedscope.py N OUT
"""
import json
import random
import sys


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rnd = random.Random(15)
    frames = [{"name": "f%d" % i, "file": "/srv/app/mod%d.py" % (i % 97), "line": i % 500 + 1,
               "col": None} for i in range(2000)]
    roots = [[rnd.randrange(2000) for _ in range(40)] for _ in range(300)]
    threads = 4
    with open(out, "w") as f:
        f.write('{"$schema":"https://www.speedscope.app/file-format-schema.json","profiles":[')
        for t in range(threads):
            k = n // threads
            f.write('%s{"type":"sampled","name":"Thread %d \\"t%d\\"","unit":"seconds",'
                    '"startValue":0.0,"endValue":%r,"samples":[' % ("," if t else "", 1000 + t, t, k / 100))
            for i in range(k):
                r = roots[min(int(rnd.paretovariate(1.2)) - 1, 299)]
                f.write(("," if i else "") + json.dumps(r[:rnd.randrange(10, 41)], separators=(",", ":")))
            f.write('],"weights":[' + ",".join(["0.01"] * k) + "]}")
        f.write('],"shared":{"frames":' + json.dumps(frames, separators=(",", ":")) +
                '},"activeProfileIndex":null,"exporter":"py-spy@0.4.0","name":"py-spy profile"}\n')


if __name__ == "__main__":
    main()

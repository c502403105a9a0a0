"""Folded stacks of GHC profiles, made comparable:
    ghc_fold.py ours NAMES [FILE]        tach-decode's collapsed lines (stdin or FILE)
    ghc_fold.py peer NAMES FILE          folded lines as inferno's ghcprof collapser writes
    ghc_fold.py speedscope NAMES PROFILE IMPORT
                                         speedscope_import.mjs output, the profile whose
                                         name ends in PROFILE ("time" or "allocation")
NAMES is where the cost centres' names (MODULE.LABEL) are known from: a -pj JSON profile,
or a .prof report. Each frame label is cut to the cost centre's name: tachfmt labels a
frame FILE:NAME:LINE (NAME alone without a file), speedscope's import BASENAME:NAME:0
(its file is GHC's whole span, which has colons, as names like "CAF:main1" do), inferno
writes NAME. The lines are summed per stack, lines of 0 dropped (inferno prints a stack of
no ticks with 0; tachfmt gives none), and sorted."""
import json
import re
import sys
from collections import defaultdict


def names_of(path):
    text = open(path).read()
    if text.lstrip().startswith('{'):
        return {f"{c['module']}.{c['label']}" for c in json.loads(text)['cost_centres']}
    names, tree = set(), False
    for line in text.splitlines():
        f = line.split()
        if len(f) > 3 and f[:2] == ['COST', 'CENTRE'] and 'no.' in f:
            tree = True
        elif tree and len(f) > 2:
            names.add(f'{f[1]}.{f[0]}')
    return names


def cutter(names):
    def cut(frame):
        if frame in names:
            return frame
        body = re.sub(r':-?\d+$', '', frame)
        for i, c in enumerate(body):
            if c == ':' and body[i + 1:] in names:
                return body[i + 1:]
        return frame
    return cut


def main():
    mode, cut = sys.argv[1], cutter(names_of(sys.argv[2]))
    sums = defaultdict(int)
    if mode == 'speedscope':
        for line in open(sys.argv[4]).read().splitlines():
            if line.startswith('#'):
                continue
            name, rest = line.split('\t', 1)
            if name.endswith(' ' + sys.argv[3]):
                stack, w = rest.rsplit(' ', 1)
                sums[';'.join(cut(f) for f in stack.split(';'))] += int(float(w))
    else:
        src = open(sys.argv[3]) if len(sys.argv) > 3 else sys.stdin
        for line in src.read().splitlines():
            if line.strip():
                stack, w = line.rsplit(' ', 1)
                if mode == 'ours':
                    stack = ';'.join(cut(f) for f in stack.split(';'))
                sums[stack] += int(w)
    for k in sorted(s for s in sums if sums[s]):
        print(k, sums[k])


main()

"""What the folded-stack test generators share: their input lines, and what they add up to."""


def write(out, exp, rows):
    """Writes rows, (stack, count) pairs in input order, to OUT as folded lines, and to EXP
    the collapsed text they add up to: one line per stack, by descending count, then by
    text."""
    counts = {}
    with open(out, "w") as f:
        for key, n in rows:
            counts[key] = counts.get(key, 0) + n
            f.write(f"{key} {n}\n")
    with open(exp, "w") as f:
        for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            f.write(f"{key} {n}\n")

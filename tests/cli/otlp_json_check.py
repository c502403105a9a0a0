#!/usr/bin/env python3
"""Checks an OTLP/JSON file against protoc's decoding of the protobuf form of the same
message (protoc --decode's text format), without a protobuf library:

  otlp_json_check.py DECODED.txt FILE.json

Both become trees of {field name: [values]} (snake_case names; JSON's lowerCamelCase
ones converted), numbers as decimal text, strings and bytes as bytes: the JSON's trace and
span IDs are hex (OTLP's rule), other bytes base64. Prints the first difference and exits
1 when the trees differ. Also checks the JSON rules the tree cannot show: 64-bit integers
are strings, 32-bit ones numbers.
"""
import base64
import json
import re
import sys

HEX = {"traceId", "spanId", "profileId"}
INT64 = {"intValue", "timeUnixNano", "durationNano", "period", "values",
         "timestampsUnixNano", "memoryStart", "memoryLimit", "fileOffset", "address",
         "line", "column", "startLine"}


def unescape(s):
    """protoc's C-style escapes to bytes."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = s[i + 1]
        if n in "01234567":
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
        elif n == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", s[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        else:
            out += {"n": b"\n", "r": b"\r", "t": b"\t", '"': b'"', "'": b"'",
                    "\\": b"\\"}[n]
            i += 2
    return bytes(out)


def parse_text(lines):
    root = {}
    stack = [root]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            node = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(node)
            stack.append(node)
            continue
        key, _, val = line.partition(": ")
        if val.startswith('"'):
            val = unescape(val[1:-1])
        stack[-1].setdefault(key, []).append(val)
    return root


def snake(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def from_json(obj, problems, path=""):
    tree = {}
    for k, v in obj.items():
        vals = v if isinstance(v, list) else [v]
        out = []
        for x in vals:
            if isinstance(x, dict):
                out.append(from_json(x, problems, path + "." + k))
            elif isinstance(x, bool):
                out.append("true" if x else "false")
            elif isinstance(x, int):
                if k in INT64:
                    problems.append("%s.%s: a 64-bit integer as a number" % (path, k))
                out.append(str(x))
            elif k in HEX:
                out.append(bytes.fromhex(x))
            elif k in INT64:
                out.append(x)
            elif k in ("bytesValue", "originalPayload"):
                out.append(base64.b64decode(x))
            else:
                out.append(x.encode())
        tree[snake(k)] = out
    return tree


def diff(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s: only in %s" % (path, k, "protoc" if k in a else "JSON")
            if len(a[k]) != len(b[k]):
                return "%s.%s: %d values in protoc's, %d in the JSON" % (
                    path, k, len(a[k]), len(b[k]))
            for i, (x, y) in enumerate(zip(a[k], b[k])):
                d = diff(x, y, "%s.%s[%d]" % (path, k, i))
                if d:
                    return d
        return None
    return None if a == b else "%s: %r in protoc's, %r in the JSON" % (path, a, b)


def main():
    with open(sys.argv[1]) as f:
        want = parse_text(f)
    with open(sys.argv[2]) as f:
        problems = []
        got = from_json(json.load(f), problems)
    d = diff(want, got)
    if d or problems:
        sys.exit(d or problems[0])


if __name__ == "__main__":
    main()

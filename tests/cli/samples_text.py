"""What the checkers share in reading `tach-decode -F samples` text (tachfmt(5), SAMPLES
TEXT FORM)."""


def unescape(s):
    """A file or function field's bytes: each %XX decoded (the samples text's escapes)."""
    out = bytearray()
    b = s.encode("utf-8", "surrogateescape")
    i = 0
    while i < len(b):
        if b[i] == 0x25 and i + 2 < len(b):
            out.append(int(b[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(b[i])
            i += 1
    return bytes(out)

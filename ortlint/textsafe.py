"""Text from the analyzed tree, made safe to show: file names and source text reach every report.

A file named `x.c\\nfake.c:1:1: ORT001 leak: forged.c` printed a forged finding line; a string
literal holding ESC or BEL bytes, quoted in a trace, sent raw escape sequences to the terminal;
a file name that is not UTF-8 (Python keeps its bytes as lone surrogates) made every writer
raise UnicodeEncodeError. Two encoders, one per kind of output:

* `terminal_safe` for text meant for people (text reports, messages on stderr): control
  characters (C0 but tab, DEL, C1), Unicode line separators and bidirectional controls become
  visible escapes (`\\n`, `\\x1b`, `\\u202e`), and an undecodable byte becomes `\\xe9`;
* `json_safe` for JSON text (reports, SARIF, baselines, the cache): a lone surrogate becomes its
  JSON escape `\\udce9`, which a reader decodes back to the same string, so a path survives
  byte for byte (`os.fsencode` gives the original bytes).
"""
from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029" + _BIDI + "\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _visible(m: re.Match[str]) -> str:
    c = m.group()
    named = _NAMED.get(c)
    if named is not None:
        return named
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with nothing a terminal or a log viewer would act on (see the module docstring)."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_visible, text)


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def json_safe(text: str) -> str:
    """JSON text (as `json.dumps(..., ensure_ascii=False)` writes it) with every lone surrogate
    written as its escape, so that the text encodes as UTF-8. Surrogates can only occur inside
    string literals, where the escape means the same character."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape, text)

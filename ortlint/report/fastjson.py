"""`json.dumps(obj, indent=N)` without the slow path.

With `indent` set, the standard library falls back to its pure-Python generator-based encoder
(the C encoder only does compact output): a 100 000-line tree's report took a third of a second
to format, more than the rest of a warm-cache run. This writer produces byte-identical text for
the types reports use (dict, list, tuple, str, int, float, bool, None) with a plain recursive
walk and the C string escaper; anything else goes through `json.dumps` as before.

Unlike `json.dumps`, the text always encodes as UTF-8: a lone surrogate (a file name byte that
is not UTF-8, kept by Python's surrogateescape) is written as its `\\udcXX` escape
(`textsafe.json_safe`), which reads back as the same string.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring, encode_basestring_ascii

from ..textsafe import json_safe


class _Unsupported(Exception):
    pass


def dumps(obj: object, indent: int = 2, ensure_ascii: bool = True) -> str:
    """Same text as `json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii)`, lone surrogates
    escaped."""
    out: list[str] = []
    try:
        _write(obj, out, encode_basestring_ascii if ensure_ascii else encode_basestring, "\n", " " * indent)
    except _Unsupported:
        return json_safe(json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii))
    return "".join(out) if ensure_ascii else json_safe("".join(out))


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == float("inf"):
        return "Infinity"
    if o == -float("inf"):
        return "-Infinity"
    return float.__repr__(o)


def _key(k: object, enc) -> str:  # noqa: ANN001
    if isinstance(k, str):
        return enc(k)
    if isinstance(k, float):
        return enc(_float(k))
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if isinstance(k, int):
        return enc(int.__repr__(k))
    raise _Unsupported


def _write(o: object, out: list[str], enc, nl: str, step: str) -> None:  # noqa: ANN001
    if isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = nl + step
        sep = "[" + inner
        for item in o:
            if type(item) is str:  # the common leaves inline: this walk is the whole cost
                out.append(sep + enc(item))
            elif type(item) is int:
                out.append(sep + int.__repr__(item))
            else:
                out.append(sep)
                _write(item, out, enc, inner, step)
            sep = "," + inner
        out.append(nl + "]")
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = nl + step
        sep = "{" + inner
        for k, v in o.items():
            key = enc(k) if type(k) is str else _key(k, enc)
            if type(v) is str:
                out.append(sep + key + ": " + enc(v))
            elif type(v) is int:
                out.append(sep + key + ": " + int.__repr__(v))
            else:
                out.append(sep + key + ": ")
                _write(v, out, enc, inner, step)
            sep = "," + inner
        out.append(nl + "}")
    elif isinstance(o, str):
        out.append(enc(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    else:
        raise _Unsupported

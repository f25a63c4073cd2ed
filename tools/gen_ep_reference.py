#!/usr/bin/env python3
"""Derive the reference table of the ONNX Runtime plugin execution-provider ABI from the real
headers: the `OrtEpApi` function table, the function-pointer fields of the structs an EP or a
custom op *implements* (`OrtEp`, `OrtEpFactory`, `OrtKernelImpl`, `OrtDataTransferImpl`,
`OrtSyncStreamImpl`, `OrtNodeComputeInfo`, `OrtCustomOp`, ...), the function-pointer typedefs a
plugin library exports (`CreateEpApiFactoriesFn`, ...) and the legacy exported provider functions
(`OrtSessionOptionsAppendExecutionProvider_CUDA` and siblings).

The headers are read, never copied: the output is a TSV in the style of
../shared/reference/ort_api_functions.tsv with a leading `struct` column and a `side` column:

    struct  side  name  returns  out_params  release_hint  ownership_hint  params

* `side` = `api` (an `OrtEpApi` entry, called as `ep_api->F(...)`), `implementer` (a field of a
  struct the EP fills in, called as `x->F(x, ...)` on a value of that struct type), `typedef`
  (a function-pointer type a plugin library exports) or `export` (a plain exported function);
* `out_params` = `index:declaration:SAL annotation` for every `_Out*` parameter, `;`-separated;
* `release_hint` = the release function the documentation or the declaration names for the
  out-parameter's type (`ReleaseEpDevice` for `OrtEpDevice**`);
* `ownership_hint` = `caller-owns` / `borrowed` / `ort-takes-ownership`, derived by pattern from
  the documentation of the entry (check the odd ones).

    python3 tools/gen_ep_reference.py onnxruntime_ep_c_api.h onnxruntime_c_api.h \\
        PROVIDERS/*_provider_factory.h > rules/reference/ort_ep_api.tsv
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

# Structs whose function-pointer fields the API *user* fills in and ORT (or a wrapping EP) calls.
IMPLEMENTER_STRUCTS = (
    "OrtEp", "OrtEpFactory", "OrtKernelImpl", "OrtDataTransferImpl", "OrtSyncStreamImpl",
    "OrtSyncNotificationImpl", "OrtNodeComputeInfo", "OrtExternalResourceImporterImpl",
    "OrtEpProfilerImpl", "OrtLoopKernelHelper", "OrtScanKernelHelper", "OrtCustomOp",
    "OrtExternalMemoryHandle", "OrtExternalSemaphoreHandle",
)
API_TABLES = ("OrtEpApi",)
EXPORT_PREFIX = "OrtSessionOptionsAppendExecutionProvider"
COLUMNS = ("struct", "side", "name", "returns", "out_params", "release_hint", "ownership_hint", "params")

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_STATUS_TYPES = {"OrtStatus*", "OrtStatusPtr"}


@dataclass
class Entry:
    struct: str
    side: str
    name: str
    returns: str
    params: list[str]
    doc: str


def strip_comments(text: str) -> str:
    """Comments blanked to spaces (offsets kept) so that declarations can be matched."""
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def matching(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just after the bracket closing the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [" ".join(p.split()) for p in parts if p.strip()]


def normalize_type(t: str) -> str:
    t = " ".join(re.sub(r"\b(?:_Check_return_|_Ret_maybenull_|ORT_EXPORT|ORT_API_CALL)\b", " ", t).split())
    t = re.sub(r"\s*\*", "*", t)
    return "OrtStatus*" if t in _STATUS_TYPES else t


def member_entries(struct: str, side: str, body: str, raw_body: str) -> list[Entry]:
    """The function-pointer members of one struct body, in declaration order."""
    entries = []
    pos = 0
    for stmt in split_top(body, ";"):
        # the documentation is the comment text just before this member in the raw body
        at = body.find(stmt.split("(")[0].strip(), pos) if stmt else -1
        doc_text = raw_body[pos:at] if at >= 0 else ""
        pos = at + 1 if at >= 0 else pos
        entry = parse_member(struct, side, stmt, doc_text)
        if entry is not None:
            entries.append(entry)
    return entries


def parse_member(struct: str, side: str, stmt: str, doc: str) -> Entry | None:
    stmt = re.sub(r"\bNO_EXCEPTION\b|\bORT_MUST_USE_RESULT\b|\bORT_ALL_ARGS_NONNULL\b", " ", stmt).strip()
    doc = " ".join(re.sub(r"[/*]+", " ", doc).split())
    m = re.match(r"ORT_API2_STATUS\s*\(\s*(\w+)\s*,?(.*)\)$", stmt, re.S)
    if m:
        return Entry(struct, side, m.group(1), "OrtStatus*", split_top(m.group(2)), doc)
    m = re.match(r"ORT_API_T\s*\((.*)\)$", stmt, re.S)
    if m:
        parts = split_top(m.group(1))
        return Entry(struct, side, parts[1], normalize_type(parts[0]), parts[2:], doc)
    m = re.match(r"ORT_CLASS_RELEASE\s*\(\s*(\w+)\s*\)$", stmt)
    if m:
        return Entry(struct, side, "Release" + m.group(1), "void", [f"_Frees_ptr_opt_ Ort{m.group(1)}* input"], doc)
    m = re.match(r"(.+?)\(\s*ORT_API_CALL\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", stmt, re.S)
    if m:
        return Entry(struct, side, m.group(2), normalize_type(m.group(1)), split_top(m.group(3)), doc)
    return None


def structs(text: str) -> dict[str, tuple[str, str]]:
    """`struct Name { ... }` bodies: name -> (body without comments, raw body)."""
    clean = strip_comments(text)
    found: dict[str, tuple[str, str]] = {}
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{", clean):
        start = m.end() - 1
        end = matching(clean, start, "{", "}")
        found.setdefault(m.group(1), (clean[start + 1:end - 1], text[start + 1:end - 1]))
    return found


def typedef_entries(text: str) -> list[Entry]:
    """`typedef OrtStatus* (*CreateEpApiFactoriesFn)(...)`: what a plugin library exports."""
    clean = strip_comments(text)
    out = []
    for m in re.finditer(r"typedef\s+(OrtStatus\s*\*|OrtStatusPtr)\s*\(\s*(?:ORT_API_CALL\s*)?\*\s*(\w+)\s*\)\s*\(", clean):
        end = matching(clean, m.end() - 1, "(", ")")
        doc = text[max(0, text.rfind("/**", 0, m.start())):m.start()]
        doc = " ".join(re.sub(r"[/*]+", " ", doc).split()) if "*/" in doc else ""
        out.append(Entry("typedef", "typedef", m.group(2), "OrtStatus*", split_top(clean[m.end():end - 1]), doc))
    return out


def export_entries(text: str) -> list[Entry]:
    """`ORT_API_STATUS(OrtSessionOptionsAppendExecutionProvider_X, ...)` plain exports."""
    clean = strip_comments(text)
    out = []
    for m in re.finditer(r"ORT_API_STATUS\s*\(\s*(" + EXPORT_PREFIX + r"\w*)\s*,", clean):
        end = matching(clean, m.start() + clean[m.start():].index("("), "(", ")")
        params = split_top(clean[m.end():end - 1])
        out.append(Entry("export", "export", m.group(1), "OrtStatus*", params, ""))
    return out


def out_params(params: list[str]) -> list[tuple[int, str, str]]:
    outs = []
    for i, p in enumerate(params):
        ann = re.match(r"(_(?:Out|Outptr|Inout)\w*_)(?:\s*\([^()]*\))?\s*(.*)$", p)
        if ann and ann.group(1).startswith(("_Out", "_Outptr")):
            outs.append((i, ann.group(2), ann.group(1)))
    return outs


def pointee(decl: str) -> tuple[str, int, bool]:
    m = re.match(r"(const\s+)?(?:struct\s+)?(\w+)\s*((?:\*\s*(?:const\s*)?)+)", decl)
    if not m:
        return "", 0, False
    return m.group(2), m.group(3).count("*"), bool(m.group(1))


def release_hint(entry: Entry, releases: set[str]) -> str:
    """The release function for the (first) owned out-parameter's type: the type's own
    `ReleaseX` when the tables have one, else the one the documentation names."""
    for _i, decl, _ann in out_params(entry.params):
        type_name, stars, const = pointee(decl)
        if stars >= 2 and not const and type_name.startswith("Ort") and "Release" + type_name[3:] in releases:
            return "Release" + type_name[3:]
    named = re.search(r"(?:released? (?:via|with|by)|call)\s+(?:Ort\w+::)?(Release\w+)", entry.doc)
    return named.group(1) if named and out_params(entry.params) else ""


def ownership_hint(entry: Entry, release: str) -> str:
    doc = entry.doc.lower()
    owned = re.search(r"must be released|caller must release|owned by the caller|should call release", doc)
    if owned and out_params(entry.params):
        return "caller-owns"
    if re.search(r"do not free|must not be released|owned by (?:ort|the )|must not call|should not be released", doc):
        return "borrowed"
    if re.search(r"ort takes ownership|ownership (?:is )?transfer(?:s|red)? to ort|ort will call \w+::release", doc):
        return "ort-takes-ownership"
    return "caller-owns" if release and out_params(entry.params) else ""


def entries_of(headers: list[Path]) -> list[Entry]:
    found: list[Entry] = []
    for path in headers:
        text = path.read_text(errors="replace")
        bodies = structs(text)
        for name in API_TABLES:
            if name in bodies:
                found.extend(member_entries(name, "api", *bodies[name]))
        for name in IMPLEMENTER_STRUCTS:
            if name in bodies:
                found.extend(member_entries(name, "implementer", *bodies[name]))
        found.extend(typedef_entries(text))
        found.extend(export_entries(text))
    seen: set[tuple[str, str]] = set()
    unique = []
    for e in found:
        if (e.struct, e.name) not in seen:
            seen.add((e.struct, e.name))
            unique.append(e)
    return unique


def row(entry: Entry, releases: set[str]) -> list[str]:
    rel = release_hint(entry, releases) if entry.returns == "OrtStatus*" or entry.name.startswith("Create") else ""
    outs = ";".join(f"{i}:{decl}:{ann}" for i, decl, ann in out_params(entry.params))
    returns = "status" if entry.returns == "OrtStatus*" else entry.returns
    return [entry.struct, entry.side, entry.name, returns, outs, rel, ownership_hint(entry, rel), " | ".join(entry.params)]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    entries = entries_of([Path(a) for a in argv])
    releases = {e.name for e in entries if e.name.startswith("Release")}
    print("\t".join(COLUMNS))
    for e in entries:
        print("\t".join(c.replace("\t", " ") for c in row(e, releases)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Generate rules/onnxruntime-genai.toml, the release map of the ONNX Runtime GenAI C API, from
its real header `src/ort_genai_c.h` (and, optionally, the C++ wrapper `src/ort_genai.h`, whose
`OgaString` return types say which `const char**` results the caller must destroy).

Also writes the derived reference table (`--table FILE`, TSV: name, returns, out_params,
release_hint, ownership_hint, params) that tests/test_policy_genai.py checks the policy against.

The rules of the API, read from the header and written down here once:

* every `OgaX` with an `OgaDestroyX(OgaX*)` is a resource; a non-const `OgaX**` out-parameter
  hands one to the caller (Create*, Load*, GetOutput/GetLogits copies, NamedTensorsGet, ...);
  GenAI objects are reference counted inside, so no entry takes over a handle it is given
  (`OgaNamedTensorsSet`, `OgaGenerator_SetModelInput`, `OgaEngineAddRequest` all leave the caller
  responsible), and `OgaCreateTensorFromBuffer` borrows its `data` buffer;
* a function returning `OgaResult*` returns NULL on success and an error result otherwise, which
  the caller releases with `OgaDestroyResult`; on failure no out-parameter is written: that is
  `returns = "status"` with `status_kind = "oga.Result"`. Helpers that check a result are left to
  the summaries inferred from their code (`OgaCheckResult` in ort_genai.h) except where those
  cannot tell (STATUS_HELPERS);
* a `const char**` result is owned (OgaDestroyString) when the documentation says so or the C++
  wrapper returns it as an `OgaString`, otherwise borrowed from the first argument (valid "until
  the next call", "the string at the given index");
* other pointer results (`const int32_t**`, `void**`, `const int32_t*` returns) are borrowed from
  the object they are read from;
* a `T**` parameter is a result when it is the last one or documented `\\param[out]`; otherwise (and
  for every `T* const*`) it is an input array (`OgaTokenizerEncodeBatch(tok, strings, n, &out)`).

    python3 tools/gen_genai_policy.py ort_genai_c.h [ort_genai.h] --table rules/reference/ort_genai_c.tsv \\
        > rules/onnxruntime-genai.toml
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

_DECL = re.compile(r"OGA_EXPORT\s+(?P<ret>[\w\s\*]+?)\s*OGA_API_CALL\s+(?P<name>\w+)\s*\((?P<params>[^;]*?)\)\s*;", re.S)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# Status-checking helpers of real bindings, whose inferred summaries cannot tell: `ThrowIfError`
# (GenAI Java binding, src/java/src/main/native/utils.cpp) keeps `result != nullptr` in a bool
# before testing it. It throws a GenAIException for a non-NULL OgaResult*, destroys it and returns
# true on error.
STATUS_HELPERS = [
    ('["ThrowIfError", "Helpers::ThrowIfError"]',
     "The GenAI Java binding: throws a GenAIException for a non-NULL OgaResult*, destroys it, returns true on error.",
     '{ arg = 1, success_returns = 0, failure_returns = 1, on_failure = "continue", release_with = "OgaDestroyResult" }'),
]

# Objects that co-own the model they are made from, read from the implementation (not the
# header): `GeneratorParams(const Model&)` and `Generator(const Model&, ...)` keep
# `model.shared_from_this()` in `model_` (src/generators.h: "Co-owns the model"), and
# OgaDestroyModel only drops the C API's reference (`ExternalRelease`). The model lives while
# they do: `acquire.keeps` = the model argument.
KEEPS_ALIVE = {"OgaCreateGeneratorParams": 0, "OgaCreateGenerator": 0}


@dataclass
class Fn:
    name: str
    returns: str
    params: list[str]
    doc: str


def functions(text: str) -> list[Fn]:
    """Every exported function with the documentation comment just before it."""
    out = []
    clean = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    prev_end = 0
    for m in _DECL.finditer(clean):
        doc_raw = text[prev_end:m.start()]
        doc = " ".join(re.sub(r"[/*]+", " ", "".join(_COMMENT.findall(doc_raw))).split())
        params = [" ".join(p.split()) for p in split_params(m.group("params"))]
        params = [] if params == ["void"] else params
        out.append(Fn(m.group("name"), " ".join(m.group("ret").split()).replace(" *", "*"), params, doc))
        prev_end = m.end()
    return out


def split_params(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


def wrapper_owned_strings(text: str) -> set[str]:
    """C API functions whose `const char*` result the C++ wrapper hands out as an `OgaString`."""
    owned = set()
    for m in re.finditer(r"\bOgaString\s+\w+\s*\([^)]*\)[^{;]*\{", text):
        end = text.find("\n  }", m.end())
        owned.update(re.findall(r"\b(Oga\w+)\s*\(", text[m.end():end]))
    return owned - {"OgaCheckResult", "OgaString"}


def pointee(decl: str) -> tuple[str, int, bool]:
    m = re.match(r"(const\s+)?(\w+)\s*((?:\*\s*(?:const\s*)?)+)", decl)
    if not m:
        return "", 0, False
    return m.group(2), m.group(3).count("*"), bool(m.group(1))


class Genai:
    def __init__(self, fns: list[Fn], owned_strings: set[str]):
        self.fns = fns
        self.destroys = {f.name[len("OgaDestroy"):]: f.name for f in fns if f.name.startswith("OgaDestroy")}
        self.owned_strings = owned_strings

    def out_params(self, fn: Fn) -> list[tuple[int, str, str]]:
        """(index, declaration, what): what = owned:KIND | borrowed:KIND | scalar."""
        outs = []
        documented_out = set(re.findall(r"\\param\[out\]\s+(\w+)", fn.doc))
        for i, p in enumerate(fn.params):
            type_name, stars, const = pointee(p)
            name = re.findall(r"\w+", p)[-1] if re.findall(r"\w+", p) else ""
            is_out = (i == len(fn.params) - 1 or name in documented_out) and not re.search(r"\*\s*const\s*\*", p)
            if stars >= 2 and is_out:
                short = type_name[3:] if type_name.startswith("Oga") else ""
                if short and not const and short in self.destroys:
                    outs.append((i, p, f"owned:oga.{short}"))
                elif type_name == "char" and const:
                    owned = fn.name in self.owned_strings or re.search(r"OgaDestroyString|must be freed|caller must free", fn.doc, re.I)
                    outs.append((i, p, "owned:oga.String" if owned else "borrowed:oga.borrowed.String"))
                else:
                    outs.append((i, p, "borrowed:oga.borrowed.Data"))
            elif stars == 1 and not const and type_name in ("size_t", "int32_t", "int64_t", "uint64_t", "double", "bool", "int",
                                                              "OgaElementType") and i > 0:
                outs.append((i, p, "scalar"))
        return outs

    def table_rows(self) -> list[list[str]]:
        rows = []
        for fn in self.fns:
            outs = self.out_params(fn)
            owned = [w.split(":", 1)[1] for _i, _p, w in outs if w.startswith("owned:")]
            release = ""
            if owned:
                release = "OgaDestroyString" if owned[0] == "oga.String" else self.destroys.get(owned[0][4:], "")
            hint = "caller-owns" if owned else ("borrowed" if any(w.startswith("borrowed") for *_x, w in outs) else "")
            returns = "result" if fn.returns == "OgaResult*" else fn.returns
            rows.append([fn.name, returns, ";".join(f"{i}:{p}:{w}" for i, p, w in outs), release, hint, " | ".join(fn.params)])
        return rows

    def call(self, fn: Fn) -> tuple[str | None, str]:
        """The [[call]] entry of one function, or None and where it goes instead."""
        lines = ["[[call]]", f'name = "{fn.name}"']
        if fn.returns == "OgaResult*":
            lines.append('returns = "status"')
            lines.append('status_kind = "oga.Result"')
        body = []
        if fn.name == "OgaDestroyResult":
            body.append('release = { arg = 0, kinds = ["oga.Result"] }')
        elif fn.name == "OgaDestroyString":
            body.append('release = { arg = 0, kinds = ["oga.String"] }')
        elif fn.name.startswith("OgaDestroy") and fn.name[len("OgaDestroy"):] in self.destroys:
            body.append(f'release = {{ arg = 0, kinds = ["oga.{fn.name[len("OgaDestroy"):]}"] }}')
        elif fn.name == "OgaResultGetError":
            body.append('borrow = [{ kind = "oga.borrowed.ErrorMessage", into = "return", from = 0 }]')
        acquires, borrows = [], []
        for i, _p, what in self.out_params(fn):
            if what.startswith("owned:"):
                maybe = ", nullable = true" if re.search(r"set to a nullptr|may be null", fn.doc, re.I) else ""
                keeps = f", keeps = {KEEPS_ALIVE[fn.name]}" if fn.name in KEEPS_ALIVE else ""
                acquires.append(f'{{ kind = "{what[6:]}", into = "*{i}"{maybe}{keeps} }}')
            elif what.startswith("borrowed:"):
                src = ", from = 0" if fn.params and pointee(fn.params[0])[0].startswith("Oga") else ""
                borrows.append(f'{{ kind = "{what[9:]}", into = "*{i}"{src} }}')
        if fn.returns.startswith("const") and fn.returns.endswith("*") and fn.name != "OgaResultGetError" and fn.params:
            borrows.append('{ kind = "oga.borrowed.Data", into = "return", from = 0 }')
        if acquires:
            body.append("acquire = [" + ", ".join(acquires) + "]")
        if borrows:
            body.append("borrow = [" + ", ".join(borrows) + "]")
        if not body:
            return None, "status" if fn.returns == "OgaResult*" else "neutral"
        if fn.name == "OgaCreateTensorFromBuffer":
            lines.append('note = "The tensor borrows `data` (it must outlive the tensor); nothing passed to it is taken over."')
        return "\n".join(lines + body) + "\n", "call"

    def render(self) -> str:
        out: list[str] = []
        w = out.append
        w("# Release map for the ONNX Runtime GenAI C API (src/ort_genai_c.h of microsoft/onnxruntime-genai).")
        w("#")
        w("# OgaResult* is NULL on success and an error the caller destroys with OgaDestroyResult")
        w("# (returns = \"status\", status_kind = \"oga.Result\"): a dropped result is ORT004, a leaked one")
        w("# ORT001, as for OrtStatus*. Generated by tools/gen_genai_policy.py from the header; edit the")
        w("# generator, not this file.")
        w("")
        w("[policy]")
        w('name = "onnxruntime-genai"')
        w("uses = ['\\bOga[A-Z]']")
        w("scoped = true")
        w('description = "OgaModel, OgaTokenizer, OgaGenerator, ... with their OgaDestroy* functions, owned strings, OgaResult*"')
        w("")
        w("[[kind]]")
        w('id = "oga.Result"')
        w('label = "OgaResult"')
        w("")
        for short in sorted(k for k in self.destroys if k not in ("Result", "String")):
            w("[[kind]]")
            w(f'id = "oga.{short}"')
            w(f'label = "Oga{short}"')
            w("")
        w("[[kind]]")
        w('id = "oga.String"')
        w('label = "GenAI string"')
        w("")
        for kid, label in (("oga.borrowed.String", "string owned by its GenAI object"),
                           ("oga.borrowed.Data", "buffer owned by its GenAI object"),
                           ("oga.borrowed.ErrorMessage", "error message (owned by the OgaResult)")):
            w("[[kind]]")
            w(f'id = "{kid}"')
            w(f'label = "{label}"')
            w("owned = false")
            w("")
        w("# ---------------------------------------------------------------- helpers of real bindings")
        for names, note, check in STATUS_HELPERS:
            w("[[call]]")
            w(f"names = {names}")
            w(f'note = "{note}"')
            w(f"status_check = {check}")
            w("")
        w("# ---------------------------------------------------------------- acquisitions, releases, borrows")
        status_only, neutral = [], []
        for fn in self.fns:
            entry, where = self.call(fn)
            if entry is not None:
                out.append(entry)
            elif where == "status":
                status_only.append(fn.name)
            else:
                neutral.append(fn.name)
        w("# ---------------------------------------------------------------- calls that only return an OgaResult*")
        w("[[call]]")
        w('returns = "status"')
        w('status_kind = "oga.Result"')
        w("names = [")
        out.extend("  " + ", ".join(f'"{n}"' for n in status_only[i:i + 3]) + "," for i in range(0, len(status_only), 3))
        w("]")
        w("")
        w("[[neutral]]")
        w('note = "GenAI functions that return no OgaResult* and hand out nothing the caller owns."')
        w("names = [")
        out.extend("  " + ", ".join(f'"{n}"' for n in neutral[i:i + 3]) + "," for i in range(0, len(neutral), 3))
        w("]")
        return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("header", type=Path, help="src/ort_genai_c.h")
    ap.add_argument("wrapper", type=Path, nargs="?", help="src/ort_genai.h (the C++ wrapper), optional")
    ap.add_argument("--table", type=Path, help="also write the derived reference table here")
    args = ap.parse_args(argv)
    fns = functions(args.header.read_text(errors="replace"))
    owned = wrapper_owned_strings(args.wrapper.read_text(errors="replace")) if args.wrapper else set()
    gen = Genai(fns, owned)
    if args.table:
        with args.table.open("w", encoding="utf-8") as fh:
            fh.write("\t".join(("name", "returns", "out_params", "release_hint", "ownership_hint", "params")) + "\n")
            for row in gen.table_rows():
                fh.write("\t".join(c.replace("\t", " ") for c in row) + "\n")
    sys.stdout.write(gen.render())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

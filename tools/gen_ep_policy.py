#!/usr/bin/env python3
"""Regenerate rules/onnxruntime-ep.toml from the plugin-EP reference table
rules/reference/ort_ep_api.tsv (itself made by tools/gen_ep_reference.py from the real headers).

What the table cannot decide is written down here with its reason:

* `OrtEpApi` entries are `table` calls (`ep_api->CreateEpDevice(...)`, `GetEpApi()->F(...)`),
  handled like `OrtApi`'s: a non-const `OrtX**` out-parameter whose type has a `ReleaseX` is
  acquired, a `const T**` one is borrowed from the first argument.
* Fields of implementer structs are `field_of` calls (`factory->CreateEp(factory, ...)`):
  an out-parameter is acquired only when the documentation names a *field of the same struct* as
  its release (`CreateEp`/`ReleaseEp`, `CreateAllocator`/`ReleaseAllocator`,
  `ImportMemory`/`ReleaseMemory`), because only then is the pairing visible to the caller.
  Everything else a field hands out (`OrtDataTransferImpl`, `OrtSyncStreamImpl`, ...) is released
  through the object's own `Release` field or belongs to the factory, depending on the EP.
* A field is also matched on receivers of unknown type (`untyped`) unless its name is an `OrtApi`
  entry (`CreateAllocator`: the OrtApi entry wins) or a word too common to mean this ABI
  (GENERIC_FIELDS).
* The legacy exports (`OrtSessionOptionsAppendExecutionProvider_CUDA(options, id)`) are plain
  calls returning `OrtStatus*`.
* Function-pointer typedefs a plugin library exports (`CreateEpApiFactoriesFn`, called by ORT
  through `create_fn_`) are listed in the reference table but not in the policy: the IR names a
  call through a variable by the variable, not by its type.

    python3 tools/gen_ep_policy.py rules/reference/ort_ep_api.tsv [../shared/reference] > rules/onnxruntime-ep.toml
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_ort_policy import out_params, pointee, read  # noqa: E402  (one reader of the reference tables)

# Field names that say too little to be matched on a receiver of unknown type: C++ classes
# everywhere have methods called so.
GENERIC_FIELDS = {"Compute", "Release", "GetName", "Flush", "Activate", "Compile", "Sync", "Transpose",
                  "GetVersion", "GetVendor", "GetHandle", "CanCopy", "StartEvent", "StopEvent",
                  "StartProfiling", "EndProfiling", "CreateState", "OnRunStart", "OnRunEnd",
                  "WaitOnHost", "WaitOnDevice", "CreateNotification", "ImportMemory", "ImportSemaphore",
                  "GetCapability", "ReplayGraph", "SetDynamicOptions", "OnSessionRunEnd", "ConcatOutput"}
# OrtEpApi entries are reached as `ep_api->F(...)` (a `table` call) and, as often in plugin EPs,
# as `factory->ep_api.F(...)` where the holder's class is declared in a header the analysis does
# not see (a `method` call of the bare name). Not `any`: EPs define plain helpers with the same
# names and other arguments (`CreateKernelRegistry(ep_name, state, &registry)`).
API_STYLE = 'style = ["table", "method"]'
# Not described here: the status macros plugin EPs define in their headers (`RETURN_IF_ERROR` of
# the example plugin EP's plugin_ep_utils.h). As `status_check = { on_failure = "return" }` they
# would make the caller return without running the C++ destructors of its scope (a unique_ptr
# alive across the macro would be reported as leaked); expanding the header's macro is the fix.
# `IGNORE_ORTSTATUS` (releases the status, continues) has no such problem and is described.
# Kinds of what an implementer field hands out, by the releasing field's name.
FIELD_KINDS = {
    ("OrtEpFactory", "ReleaseEp"): ("ort.Ep", "OrtEp (created by an OrtEpFactory)"),
    ("OrtEpFactory", "ReleaseAllocator"): ("ort.Allocator", "OrtAllocator"),
    ("OrtEp", "ReleaseAllocator"): ("ort.Allocator", "OrtAllocator"),
    ("OrtExternalResourceImporterImpl", "ReleaseMemory"): ("ort.ep.ExternalMemoryHandle", "OrtExternalMemoryHandle"),
    ("OrtExternalResourceImporterImpl", "ReleaseSemaphore"): ("ort.ep.ExternalSemaphoreHandle", "OrtExternalSemaphoreHandle"),
}
# Kinds other policy files declare (rules/onnxruntime.toml); not declared again here.
DECLARED_ELSEWHERE = {"ort.Allocator", "ort.KeyValuePairs", "ort.Status"}


def params(row: dict[str, str]) -> list[str]:
    return [p.strip() for p in row["params"].split("|")] if row["params"] else []


def q(s: str) -> str:
    return '"' + s + '"'


def qlist(names: list[str], indent: str = "  ") -> list[str]:
    return [indent + ", ".join(q(n) for n in names[i:i + 4]) + "," for i in range(0, len(names), 4)]


class Generator:
    def __init__(self, rows: list[dict[str, str]], ort_api_names: set[str]):
        self.rows = rows
        self.ort_api_names = ort_api_names
        self.api_releases = {r["name"][len("Release"):]: r["name"] for r in rows
                             if r["side"] == "api" and r["name"].startswith("Release")}
        self.kinds: dict[str, str] = {}
        self.borrowed: dict[str, str] = {}

    # -- OrtEpApi ------------------------------------------------------------------------

    def api_call(self, row: dict[str, str]) -> str | None:
        name = row["name"]
        lines = ["[[call]]", f"name = {q(name)}", API_STYLE]
        if row["returns"] == "status":
            lines.append('returns = "status"')
        body: list[str] = []
        short = name[len("Release"):] if name.startswith("Release") else None
        if short is not None and short in self.api_releases:
            self.kinds[f"ort.{short}"] = f"Ort{short}"
            body.append(f'release = {{ arg = 0, kinds = ["ort.{short}"] }}')
        acquires, borrows = [], []
        first = params(row)[0] if params(row) else ""
        from_first = ", from = 0" if re.search(r"\bOrt\w+\s*\*", first) and "**" not in first else ""
        for idx, decl, ann in out_params(row):
            type_name, stars, const = pointee(decl)
            short_t = type_name[3:] if type_name.startswith("Ort") else type_name
            maybe = ", nullable = true" if "maybenull" in ann else ""
            if stars >= 2 and not const and (short_t in self.api_releases or row["release_hint"] == f"Release{short_t}"):
                kid = f"ort.{short_t}"
                if kid not in DECLARED_ELSEWHERE:
                    self.kinds[kid] = type_name
                acquires.append(f'{{ kind = "{kid}", into = "*{idx}"{maybe} }}')
            elif stars >= 2 and const and ann.startswith("_Outptr") and type_name.startswith(("Ort", "char")):
                kid = "ort.borrowed." + ("String" if type_name == "char" else short_t)
                self.borrowed[kid] = "string (owned by its ORT object)" if type_name == "char" else f"borrowed {type_name}"
                borrows.append(f'{{ kind = "{kid}", into = "*{idx}"{from_first}{maybe} }}')
        if acquires:
            body.append("acquire = [" + ", ".join(acquires) + "]")
        if borrows:
            body.append("borrow = [" + ", ".join(borrows) + "]")
        if not body:
            return None
        return "\n".join(lines + body) + "\n"

    # -- implementer structs -------------------------------------------------------------

    def field_call(self, row: dict[str, str]) -> str | None:
        struct, name = row["struct"], row["name"]
        lines = ["[[call]]", f"name = {q(name)}", f"field_of = [{q(struct)}]"]
        if row["returns"] == "status":
            lines.append('returns = "status"')
        body: list[str] = []
        if (struct, name) in FIELD_KINDS:
            kid, label = FIELD_KINDS[(struct, name)]
            handle = next((i for i, p in enumerate(params(row)) if i > 0), None)
            if handle is not None:
                self.kinds.setdefault(kid, label) if kid not in DECLARED_ELSEWHERE else None
                body.append(f'release = {{ arg = {handle}, kinds = ["{kid}"] }}')
        for idx, decl, ann in out_params(row):
            kind = FIELD_KINDS.get((struct, row["release_hint"]))
            type_name, stars, const = pointee(decl)
            if kind and stars >= 2 and not const:
                maybe = ", nullable = true" if "maybenull" in ann else ""
                body.append(f'acquire = [{{ kind = "{kind[0]}", into = "*{idx}"{maybe} }}]')
        if row["returns"] != "status" and not body:
            return None
        if row["returns"] == "status" and self.untyped_ok(name):
            lines.append("untyped = true")
        return "\n".join(lines + body) + "\n"

    def untyped_ok(self, name: str) -> bool:
        return name not in self.ort_api_names and name not in GENERIC_FIELDS and \
            len(re.findall(r"[A-Z][a-z0-9]+", name)) >= 2

    def arities(self) -> dict[str, str]:
        """Entry or field name -> its parameter count (a list when structs differ), as TOML."""
        counts: dict[str, set[int]] = {}
        for row in self.rows:
            if row["side"] in ("api", "implementer"):
                counts.setdefault(row["name"], set()).add(len(params(row)))
        return {name: str(next(iter(c))) if len(c) == 1 else "[" + ", ".join(map(str, sorted(c))) + "]"
                for name, c in counts.items()}

    # -- output --------------------------------------------------------------------------

    def render(self) -> str:
        api_calls, api_status, api_neutral = [], [], []
        for row in (r for r in self.rows if r["side"] == "api"):
            entry = self.api_call(row)
            if entry is not None:
                api_calls.append(entry)
            elif row["returns"] == "status":
                api_status.append(row["name"])
            else:
                api_neutral.append(row["name"])
        field_calls, field_neutral = [], []
        for row in (r for r in self.rows if r["side"] == "implementer"):
            entry = self.field_call(row)
            if entry is not None:
                field_calls.append(entry)
            elif not row["name"].startswith("Release") and row["name"] != "KernelDestroy":
                field_neutral.append(f'{row["struct"]}::{row["name"]}')
        exports = [r["name"] for r in self.rows if r["side"] == "export"]

        out: list[str] = []
        w = out.append
        w("# Release map for the ONNX Runtime plugin execution-provider ABI (onnxruntime_ep_c_api.h):")
        w("# the OrtEpApi table (`ort_api->GetEpApi()`), the function-pointer fields of the structs an EP")
        w("# or a custom op implements (OrtEpFactory, OrtEp, OrtKernelImpl, OrtDataTransferImpl,")
        w("# OrtSyncStreamImpl, OrtNodeComputeInfo, OrtCustomOp, ...) and the legacy exported")
        w("# OrtSessionOptionsAppendExecutionProvider_* functions.")
        w("#")
        w("# Generated by tools/gen_ep_policy.py from rules/reference/ort_ep_api.tsv (made by")
        w("# tools/gen_ep_reference.py from the real headers); edit the generators, not this file.")
        w("")
        w("[policy]")
        w('name = "onnxruntime-ep"')
        w("scoped = true")
        w('description = "OrtEpApi handles and statuses, OrtStatus* returned by EP/custom-op ABI fields, legacy provider exports"')
        w("")
        for kid, label in sorted(self.kinds.items()):
            w("[[kind]]")
            w(f"id = {q(kid)}")
            w(f"label = {q(label)}")
            w("")
        for kid, label in sorted(self.borrowed.items()):
            w("[[kind]]")
            w(f"id = {q(kid)}")
            w(f"label = {q(label)}")
            w("owned = false")
            w("")
        w("[table_arity]")
        w("# How many arguments each OrtEpApi entry and implementer field takes (a field's count")
        w("# includes its `this_ptr`): a call of the same name with another count (a C++ method of")
        w("# a plugin EP's own class, `tensor.GetTensorDataType()`) is not that entry. A name the")
        w("# OrtApi also has adds its counts to the OrtApi's; fields of one name in several structs")
        w("# list theirs.")
        for name, count in sorted(self.arities().items()):
            w(f"{name} = {count}")
        w("")
        w("# ---------------------------------------------------------------- helpers of plugin EPs")
        w("[[call]]")
        w('name = "IGNORE_ORTSTATUS"')
        w('note = "The example plugin EP\'s macro (plugin_ep_utils.h): wraps the status in an Ort::Status, which releases it; execution continues."')
        w('status_check = { arg = 0, on_failure = "continue" }')
        w("")
        w("# ---------------------------------------------------------------- OrtEpApi")
        out.extend(api_calls)
        w("[[call]]")
        w(API_STYLE)
        w('returns = "status"')
        w("names = [")
        out.extend(qlist(api_status))
        w("]")
        w("")
        w("[[neutral]]")
        w('style = "table"')
        w('note = "OrtEpApi entries that return no status and hand out nothing the caller owns."')
        w("names = [")
        out.extend(qlist(api_neutral))
        w("]")
        w("")
        w("[[neutral]]")
        w('style = "method"')
        w("names = [")
        out.extend(qlist(api_neutral))
        w("]")
        w("")
        w("# ---------------------------------------------------------------- fields of implementer structs")
        out.extend(field_calls)
        w("[[neutral]]")
        w('style = "method"')
        w('note = "Fields of implementer structs that return no status and hand out nothing the caller owns."')
        w("names = [")
        out.extend(qlist(field_neutral))
        w("]")
        w("")
        w("# ---------------------------------------------------------------- legacy exported provider functions")
        w("[[call]]")
        w('returns = "status"')
        w('note = "Plain exported functions of the provider libraries: each returns an OrtStatus* the caller releases."')
        w("names = [")
        out.extend(qlist(exports))
        w("]")
        return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    table = Path(argv[0] if argv else "rules/reference/ort_ep_api.tsv")
    ref = Path(argv[1] if len(argv) > 1 else "../shared/reference")
    ort_api = ref / "ort_api_functions.tsv"
    names = {r["name"] for r in read(ort_api)} if ort_api.exists() else {"CopyTensors", "CreateAllocator", "ReleaseAllocator"}
    sys.stdout.write(Generator(read(table), names).render())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Regenerate rules/onnxruntime.toml from the reference tables of the OrtApi and OrtTrainingApi
function tables (../shared/reference/ort_api_functions.tsv, ort_training_api_functions.tsv).

The decisions the tables cannot make are written down here, in one place, with their reason:
which out-parameters are borrowed although their type has a Release function, which strings
belong to an allocator, and the helpers and macros of real bindings. The output is committed;
tests/test_policy.py checks that it still covers every entry of the reference tables.

    python3 tools/gen_ort_policy.py ../shared/reference > rules/onnxruntime.toml
"""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

# Out-parameters whose type has a Release function but which the caller does not own.
BORROWED_DESPITE_TYPE = {
    "GetAllocatorWithDefaultOptions": "the default allocator belongs to ORT",
    "KernelContext_GetOutput": "outputs belong to the kernel context",
    "GetSharedAllocator": "shared allocators belong to the environment",
    "CreateSharedAllocator": "released with ReleaseSharedAllocator(env, device, type), not by handle",
    "KernelContext_GetSyncStream": "the stream belongs to the kernel context",
}
# Out-parameters with no Release function of their own that the caller nevertheless owns.
OWNED_WITHOUT_TYPE = {
    "AllocatorAlloc": "ort.AllocatorMemory",
    "GetAvailableProviders": "ort.AvailableProviders",
    # the array itself comes from the allocator; its elements (values the caller releases) are
    # not tracked one by one
    "GetBoundOutputValues": "ort.AllocatorMemory",
}
# Out-parameters that must not be tracked at all (not released by the OrtApi, or odd types).
IGNORED_OUTS = {"RegisterCustomOpsLibrary", "GetExecutionProviderApi", "GetTensorRTProviderOptionsByName",
                "GetCUDAProviderOptionsByName", "KernelContext_GetResource", "KernelContext_GetScratchBuffer",
                "GetHardwareDevices"}
# OrtTrainingApi entries that return an OrtStatus* but acquire nothing, so the reference table
# (which lists acquisitions and releases only) leaves them out; from onnxruntime_training_c_api.h.
TRAINING_STATUS_ONLY = [
    "SaveCheckpoint", "TrainingSessionGetTrainingModelOutputCount", "TrainingSessionGetEvalModelOutputCount",
    "LazyResetGrad", "SetLearningRate", "GetLearningRate", "OptimizerStep", "RegisterLinearLRScheduler",
    "SchedulerStep", "GetParametersSize", "CopyParametersToBuffer", "CopyBufferToParameters",
    "ExportModelForInferencing", "SetSeed", "TrainingSessionGetTrainingModelInputCount",
    "TrainingSessionGetEvalModelInputCount", "AddProperty", "GetProperty", "GetParameterTypeAndShape",
    "UpdateParameter",
]
# Arrays filled with values the caller releases element by element (`_Inout_updates_all_`).
OUTPUT_ARRAYS = {"Run": 7, "TrainStep": 5, "EvalStep": 5}


def read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def out_params(row: dict[str, str]) -> list[tuple[int, str, str]]:
    outs = []
    for part in filter(None, row["out_params"].split(";")):
        idx, decl, ann = part.split(":", 2)
        outs.append((int(idx), decl.strip(), ann))
    return outs


def pointee(decl: str) -> tuple[str, int, bool]:
    """'const OrtTensorTypeAndShapeInfo** out' -> ('OrtTensorTypeAndShapeInfo', 2, True)."""
    m = re.match(r"(const\s+)?(?:struct\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*((?:\*\s*(?:const\s*)?)+)", decl)
    if not m:
        return "", 0, False
    return m.group(2), m.group(3).count("*"), bool(m.group(1))


def first_param_is_ort_object(row: dict[str, str]) -> bool:
    first = row["params"].split("|")[0] if row["params"] else ""
    return bool(re.search(r"\b(const\s+)?Ort[A-Za-z]+\s*\*", first)) and "**" not in first


def q(s: str) -> str:
    return '"' + s + '"'


def main() -> None:
    ref = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/reference")
    api = read(ref / "ort_api_functions.tsv")
    training = read(ref / "ort_training_api_functions.tsv")
    rows = api + [r for r in training if r["name"] not in {a["name"] for a in api}]
    known = {r["name"] for r in rows}
    rows += [{"name": n, "returns": "status", "out_params": "", "release_hint": "", "ownership_hint": "", "params": ""}
             for n in TRAINING_STATUS_ONLY if n not in known]
    releases = {r["name"][len("Release"):]: r["name"] for r in rows
                if r["name"].startswith("Release") and "_Frees_ptr" in r["params"]}
    releases["CUDAProviderOptionsV2"] = "ReleaseCUDAProviderOptions"
    releases["TensorRTProviderOptionsV2"] = "ReleaseTensorRTProviderOptions"

    out: list[str] = []
    w = out.append
    w("# Release map for the ONNX Runtime C API (OrtApi, ORT_API_VERSION 29) and OrtTrainingApi.")
    w("#")
    w("# Every call is a `table` call: it matches through any function-table expression")
    w("# (api->, g_ort->, ort->, OrtGetApiBase()->GetApi(...)->, tapi->). Argument indexes count the")
    w("# C parameters from 0. Generated by tools/gen_ort_policy.py from ../shared/reference;")
    w("# edit the generator, not this file.")
    w("")
    w("[policy]")
    w('name = "onnxruntime"')
    w("# a file whose text matches one of these uses ONNX Runtime (ortlint/policy_scope.py): `Ort`-prefixed")
    w("# C names (OrtApi, OrtStatus*, ORT_API_CALL), the C++ API's `Ort::`, onnxruntime-extensions' `Ortx`,")
    w("# the library's name in includes, namespaces, Java packages, Go modules and .NET namespaces")
    w("uses = ['\\bOrt(?:[A-Z_]|::|x[A-Z])', '\\bORT_[A-Z]', '(?i:onnxruntime)']")
    w("# its kinds are reported only in such files: elsewhere `x->GetProperty()` is not this table's entry")
    w("scoped = true")
    w('description = "OrtApi and OrtTrainingApi handles, OrtStatus*, allocator-owned memory, borrowed pointers"')
    w("")
    w("[constants]")
    w("ORT_OK = 0")
    w("")
    w("[table_arity]")
    w("# How many arguments each entry takes: a `table` call of the same name with another count")
    w("# (`engine->Run(x, n)` of an unrelated class) is not that entry.")
    for row in sorted(rows, key=lambda r: r["name"]):
        if row["params"]:
            w(f"{row['name']} = {len(row['params'].split('|'))}")
    w("")
    w("[preprocess]")
    w("# Decorations blanked out (same length, so offsets stay) before parsing.")
    w("blank = [\"JNIEXPORT\", \"JNICALL\", \"ORT_API_CALL\", \"ORT_MUST_USE_RESULT\", \"NO_EXCEPTION\",")
    w("         \"ORT_EXPORT\", \"ORT_ALL_ARGS_NONNULL\", \"ORT_API_STATUS_IMPL\", \"_Use_decl_annotations_\",")
    w("         \"__declspec\", \"__cdecl\", \"__stdcall\", \"WINAPI\", \"CALLBACK\", \"ORTCHAR_T_IS_WCHAR\"]")
    w("blank_calls = [\"__declspec\", \"__attribute__\", \"_Success_\", \"_When_\", \"_At_\"]")
    w("# Microsoft SAL annotations such as _In_, _Outptr_, _In_reads_(n), _Inout_updates_all_(n).")
    w("blank_patterns = ['\\b_(?:In|Out|Inout|Outptr|Ret|Frees|Check|Pre|Post|Deref|Field|Printf|Null|Notnull|Maybenull|Result|Acquires|Releases|Requires|Analysis)[A-Za-z0-9_]*_\\b(?:\\s*\\([^()]*\\))?']")
    w("")

    kinds: dict[str, str] = {"ort.Status": "OrtStatus", "ort.AllocatorMemory": "allocator-owned memory",
                             "ort.AvailableProviders": "provider name list"}
    for type_name in releases:
        if type_name not in ("Status", "AvailableProviders", "SharedAllocator"):
            kinds[f"ort.{type_name}"] = "Ort" + type_name if not type_name.startswith("Ort") else type_name
    borrowed_kinds: dict[str, str] = {}

    calls: list[str] = []
    status_only: list[str] = []
    for row in rows:
        name = row["name"]
        entry = build_call(row, releases, kinds, borrowed_kinds)
        if entry is None:
            if row["returns"] == "status":
                status_only.append(name)
            continue
        calls.append(entry)

    w("[[kind]]")
    w('id = "ort.Status"')
    w('label = "OrtStatus"')
    w("")
    for kid, label in sorted(kinds.items()):
        if kid == "ort.Status":
            continue
        w("[[kind]]")
        w(f"id = {q(kid)}")
        w(f"label = {q(label)}")
        if kid == "ort.AllocatorMemory":
            w('wrong_release_rule = "ORT005"  # it belongs to the allocator: free() on it is a foreign free')
        w("")
    for kid, label in sorted(borrowed_kinds.items()):
        w("[[kind]]")
        w(f"id = {q(kid)}")
        w(f"label = {q(label)}")
        w("owned = false")
        w("")

    w("# ---------------------------------------------------------------- helpers of real bindings")
    w("[[call]]")
    w('name = "checkOrtStatus"')
    w('note = "The ORT Java binding: throws an OrtException for a non-NULL status, always releases it, returns ORT_OK on success."')
    w('status_check = { arg = 2, success_returns = "ORT_OK", on_failure = "continue" }')
    w("")
    w("[[call]]")
    w('name = "ORT_ABORT_ON_ERROR"')
    w('note = "ONNX Runtime C samples: print the message, release the status, abort()."')
    w('status_check = { arg = 0, on_failure = "abort" }')
    w("")
    w("[[call]]")
    w('names = ["Ort::ThrowOnError", "ThrowOnError", "Ort::detail::ThrowOnError", "ORT_CXX_API_THROW_ON_ERROR"]')
    w('note = "ONNX Runtime C++ API: releases a non-NULL status and throws Ort::Exception."')
    w('status_check = { arg = 0, on_failure = "throw" }')
    w("")
    w("[[call]]")
    w('name = "allocarray"')
    w('note = "The ORT Java binding\'s calloc wrapper (OrtJniUtil.c): NULL on failure, released with free()."')
    w('acquire = { kind = "libc.heap", into = "return" }')
    w("")
    w("# ---------------------------------------------------------------- acquisitions, releases, borrows")
    out.extend(calls)
    w("# ---------------------------------------------------------------- calls that only return a status")
    w("[[call]]")
    w('style = "table"')
    w('returns = "status"')
    w("names = [")
    for i in range(0, len(status_only), 4):
        w("  " + ", ".join(q(n) for n in status_only[i:i + 4]) + ",")
    w("]")
    w("")
    others = [r["name"] for r in rows if r["returns"] not in ("status",) and build_call(r, releases, dict(kinds), {}) is None]
    w("[[neutral]]")
    w('style = "table"')
    w('note = "OrtApi entries that return no status and hand out nothing the caller owns."')
    w("names = [")
    for i in range(0, len(others), 4):
        w("  " + ", ".join(q(n) for n in others[i:i + 4]) + ",")
    w("]")
    print("\n".join(out))


def build_call(row: dict[str, str], releases: dict[str, str], kinds: dict[str, str], borrowed_kinds: dict[str, str]) -> str | None:
    name = row["name"]
    lines = ["[[call]]", f"name = {q(name)}", 'style = "table"']
    if row["returns"] == "status":
        lines.append('returns = "status"')
    body: list[str] = []
    if name == "ReleaseStatus":
        body.append('release = { arg = 0, kinds = ["ort.Status"] }')
    elif name == "ReleaseAvailableProviders":
        body.append('release = { arg = 0, kinds = ["ort.AvailableProviders"] }')
    elif name in releases.values():
        released = sorted(f"ort.{t}" for t, fn in releases.items() if fn == name and f"ort.{t}" in kinds)
        if released:
            body.append("release = { arg = 0, kinds = [" + ", ".join(q(k) for k in released) + "] }")
    elif name == "AllocatorFree":
        body.append('release = { arg = 1, kinds = ["ort.AllocatorMemory"] }')
    elif name == "CreateStatus":
        body.append('acquire = [{ kind = "ort.Status", into = "return", nullable = false }]')
        if 'returns = "status"' in lines:
            lines.remove('returns = "status"')
    elif name == "GetErrorMessage":
        borrowed_kinds["ort.borrowed.ErrorMessage"] = "error message (owned by the status)"
        body.append('borrow = [{ kind = "ort.borrowed.ErrorMessage", into = "return", from = 0 }]')
    acquires, borrows = [], []
    if name in OUTPUT_ARRAYS:
        acquires.append(f'{{ kind = "ort.Value", into = "{OUTPUT_ARRAYS[name]}[]" }}')
    elif name not in IGNORED_OUTS:
        for idx, decl, ann in out_params(row):
            type_name, stars, const = pointee(decl)
            hint = row["ownership_hint"]
            short = type_name[3:] if type_name.startswith("Ort") else type_name
            if name in OWNED_WITHOUT_TYPE:
                acquires.append(f'{{ kind = "{OWNED_WITHOUT_TYPE[name]}", into = "*{idx}" }}')
            elif type_name in ("char", "void", "size_t") and "allocator-owned" in hint and "borrowed" not in hint.split(",")[0:1]:
                acquires.append(f'{{ kind = "ort.AllocatorMemory", into = "*{idx}" }}')
            elif not const and short in releases and name not in BORROWED_DESPITE_TYPE and \
                    ("caller-owns" in hint or "borrowed" not in hint):
                maybe = ", nullable = true" if "maybenull" in ann else ""
                acquires.append(f'{{ kind = "ort.{short}", into = "*{idx}"{maybe} }}')
            elif stars >= 2 and (const or "borrowed" in hint or name in BORROWED_DESPITE_TYPE) and \
                    ann.startswith(("_Out", "_Outptr")) and type_name.startswith(("Ort", "char", "void", "int64_t")):
                kid = "ort.borrowed." + {"void": "Data", "char": "String", "int64_t": "Shape"}.get(type_name, short)
                label = {"void": "tensor data (owned by the OrtValue)", "char": "string (owned by its ORT object)",
                         "int64_t": "shape data (owned by its ORT object)"}.get(type_name, f"borrowed {type_name}")
                borrowed_kinds[kid] = label
                src = ", from = 0" if first_param_is_ort_object(row) else ""
                maybe = ", nullable = true" if "maybenull" in ann else ""
                borrows.append(f'{{ kind = "{kid}", into = "*{idx}"{src}{maybe} }}')
    if acquires:
        body.append("acquire = [" + ", ".join(acquires) + "]")
    if borrows:
        body.append("borrow = [" + ", ".join(borrows) + "]")
    if not body:
        return None
    return "\n".join(lines + body) + "\n"


if __name__ == "__main__":
    main()

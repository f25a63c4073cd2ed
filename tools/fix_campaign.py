"""Fixes on public code (issue 33): every fix ortlint offers in C/C++/JNI files of whole
repositories, applied to a copy in a temporary folder, compiled and linted again.

Each candidate file (one that mentions a status release or JNI array elements) is copied alone
into a temporary folder and analyzed there; each fix is applied to another copy, compiled with
`gcc`/`g++ -fsyntax-only` and linted again. Flags: the file's own folder, the repository's
`include` folders, the folder of its onnxruntime_c_api.h (when the repository has none,
`--ort-include`, by default the fixtures' stand-in), the JDK's jni.h. A header the compiler still
misses is looked for in the tree (its folder added so that the `#include` spelling resolves)
and, when the tree does not hold it (a build generates it: `onnxruntime_config.h`, the JNI
headers of `javac -h`), an empty stand-in is written: a file that needed its declarations still
fails, and is not judged. A fix counts as compiling only when the original file compiled with
the same flags. The trees are never written to.

    python tools/fix_campaign.py /work/wholerepos/<owner+name> ... [--limit-files 40] [--ort-include DIR]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.fixcheck import ROOT, check_fix, compile_errors, jni_includes, lint_with_fixes  # noqa: E402

SUFFIXES = (".c", ".cc", ".cpp", ".cxx")
CANDIDATE = re.compile(rb"ReleaseStatus|ArrayElements")
MISSING = re.compile(r"fatal error: ([^\s:]+): No such file or directory")
MAX_HEADER_ROUNDS = 12


def includes_of(repo: Path, ort_include: str) -> list[str]:
    """The repository's own ORT header folder, else `ort_include` (a real one from another tree:
    the fixtures' stand-in declares too little for most code)."""
    found = []
    ort = None
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if os.path.basename(folder) == "include":
            found.append(folder)
        if "onnxruntime_c_api.h" in files and ort is None:
            ort = folder
    return [ort or ort_include] + found[:40] + jni_includes()


class HeaderIndex:
    """The repository's headers by file name, to resolve an `#include` the flags miss."""

    def __init__(self, repo: Path):
        self.by_name: dict[str, list[str]] = {}
        for folder, dirs, files in os.walk(repo):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in files:
                if name.endswith((".h", ".hpp", ".hh", ".hxx", ".inc")):
                    self.by_name.setdefault(name, []).append(os.path.join(folder, name))

    def root_for(self, spelled: str) -> str | None:
        """The folder that makes `#include "spelled"` resolve, when the tree holds the header."""
        for path in self.by_name.get(os.path.basename(spelled), []):
            if path.endswith("/" + spelled):
                return path[: -len(spelled) - 1]
        return None


def resolve_headers(path: Path, flags: list[str], index: HeaderIndex, stubs: Path) -> list[str]:
    """`flags` plus what makes the missing headers of `path` found (a folder of the tree or an
    empty stand-in under `stubs`), round by round as the compiler names them."""
    flags = list(flags)
    for _ in range(MAX_HEADER_ROUNDS):
        errors = compile_errors(path, flags)
        match = MISSING.search(errors or "")
        if match is None:
            break
        spelled = match.group(1)
        root = index.root_for(spelled)
        if root is not None and root not in flags:
            flags.append(root)
            continue
        stub = stubs / spelled
        if stub.exists() and str(stubs) in flags:
            break  # the stand-in is there and still missed: a spelling it cannot serve
        stub.parent.mkdir(parents=True, exist_ok=True)
        if not stub.exists():
            stub.write_text("/* an empty stand-in for a generated header (tools/fix_campaign.py) */\n")
        if str(stubs) not in flags:
            flags.append(str(stubs))
    return flags


def candidates(repo: Path, limit: int) -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            if name.endswith(SUFFIXES) and path.is_file() and CANDIDATE.search(path.read_bytes()):
                out.append(path)
    return out[:limit]


def check_file(repo: Path, source: Path, work: Path, flags: list[str], totals: Counter) -> None:
    """Every fix of every finding of one file: applied, compiled, linted again (one line each)."""
    copy = work / source.name
    copy.parent.mkdir(parents=True)
    shutil.copyfile(source, copy)
    before = lint_with_fixes(copy)
    original_compiles = compile_errors(copy, flags) == ""
    totals["files"] += 1
    totals["files_compiling"] += original_compiles
    for i, finding in enumerate(before.findings):
        totals["findings"] += 1
        totals["with_fix"] += bool(finding.fixes)
        for j, fix in enumerate(finding.fixes):
            outcome = check_fix(copy, finding, fix, before, work / f"fix{i}_{j}", flags if original_compiles else None)
            kind = "safe" if fix.safe else "unsafe"
            judged = original_compiles and outcome.compiles is not None
            totals[f"{kind}_fixes"] += 1
            totals[f"{kind}_applied"] += outcome.applied
            totals[f"{kind}_relinted_clean"] += bool(outcome.applied and outcome.gone and not outcome.new)
            totals[f"{kind}_compile_judged"] += judged
            totals[f"{kind}_compiled"] += bool(judged and outcome.compiles)
            compiles = outcome.compiles if original_compiles else "n/a (original does not compile)"
            print(f"{repo.name}/{source.relative_to(repo)}:{finding.line} {finding.rule} {fix.title!r} safe={fix.safe} "
                  f"applied={outcome.applied} gone={outcome.gone} new={len(outcome.new)} compiles={compiles}", flush=True)
            if judged and not outcome.compiles:
                print("    " + outcome.errors.strip().replace("\n", "\n    ")[:2000], flush=True)
            for f in outcome.new:
                print(f"    new: {f.rule} line {f.line}: {f.message}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--limit-files", type=int, default=40)
    parser.add_argument("--ort-include", default=str(ROOT / "fixtures/include"),
                        help="the folder of onnxruntime_c_api.h for a repository without one "
                             "(e.g. <onnxruntime tree>/include/onnxruntime/core/session)")
    args = parser.parse_args()
    totals: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="ortlint-fixes-") as tmp:
        work = Path(tmp)
        for repo_arg in args.repos:
            repo = Path(repo_arg)
            includes = includes_of(repo, args.ort_include)
            index = HeaderIndex(repo)
            stubs = work / repo.name / "generated"
            for n, source in enumerate(candidates(repo, args.limit_files)):
                flags = resolve_headers(source, [str(source.parent)] + includes, index, stubs)
                check_file(repo, source, work / repo.name / str(n), flags, totals)
    print(dict(sorted(totals.items())), flush=True)


if __name__ == "__main__":
    main()

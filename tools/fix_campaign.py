"""Fixes on public code (issue 33): every fix ortlint offers in C/C++/JNI files of whole
repositories, applied to a copy in a temporary folder, compiled and linted again.

Each candidate file (one that mentions a status release or JNI array elements) is copied alone
into a temporary folder and analyzed there; each fix is applied to another copy, compiled with
`gcc`/`g++ -fsyntax-only` (the file's own folder, the repository's `include` folders, the folder
of its onnxruntime_c_api.h, the JDK's jni.h; when the repository has no ORT header, the
fixtures' stand-in) and linted again. A fix counts as compiling only when the original file
compiled with the same flags. The trees are never written to.

    python tools/fix_campaign.py /work/wholerepos/<owner+name> ... [--limit-files 40]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.fixcheck import ROOT, check_fix, compile_errors, jni_includes, lint_with_fixes  # noqa: E402

SUFFIXES = (".c", ".cc", ".cpp", ".cxx")
CANDIDATE = re.compile(rb"ReleaseStatus|ArrayElements")


def includes_of(repo: Path) -> list[str]:
    found = []
    ort = None
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if os.path.basename(folder) == "include":
            found.append(folder)
        if "onnxruntime_c_api.h" in files and ort is None:
            ort = folder
    return ([ort] if ort else []) + found[:40] + jni_includes() + ([] if ort else [str(ROOT / "fixtures/include")])


def candidates(repo: Path, limit: int) -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            if name.endswith(SUFFIXES) and path.is_file() and CANDIDATE.search(path.read_bytes()):
                out.append(path)
    return out[:limit]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--limit-files", type=int, default=40)
    args = parser.parse_args()
    totals = {"findings": 0, "with_fix": 0, "fixes": 0, "clean": 0, "compiled": 0, "compile_judged": 0}
    rows = []
    with tempfile.TemporaryDirectory(prefix="ortlint-fixes-") as tmp:
        work = Path(tmp)
        for repo_arg in args.repos:
            repo = Path(repo_arg)
            includes = includes_of(repo)
            for n, source in enumerate(candidates(repo, args.limit_files)):
                copy = work / repo.name / str(n) / source.name
                copy.parent.mkdir(parents=True)
                shutil.copyfile(source, copy)
                flags = [str(source.parent)] + includes
                before = lint_with_fixes(copy)
                original_compiles = compile_errors(copy, flags) == ""
                for i, finding in enumerate(before.findings):
                    totals["findings"] += 1
                    if not finding.fixes:
                        continue
                    totals["with_fix"] += 1
                    fix = finding.fixes[0]
                    totals["fixes"] += 1
                    outcome = check_fix(copy, finding, fix, before, work / repo.name / str(n) / f"fix{i}", flags)
                    judged = original_compiles and outcome.compiles is not None
                    totals["compile_judged"] += judged
                    totals["compiled"] += bool(judged and outcome.compiles)
                    ok = outcome.applied and outcome.gone and not outcome.new
                    totals["clean"] += ok
                    rel = source.relative_to(repo)
                    rows.append(f"{repo.name}/{rel}:{finding.line} {finding.rule} {fix.title!r} safe={fix.safe} "
                                f"applied={outcome.applied} gone={outcome.gone} new={len(outcome.new)} "
                                f"compiles={'n/a (original does not compile)' if not original_compiles else outcome.compiles}")
                    print(rows[-1], flush=True)
    print(totals, flush=True)


if __name__ == "__main__":
    main()

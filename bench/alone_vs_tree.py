#!/usr/bin/env python3
"""A file analyzed alone gets the findings a run over its whole repository gives it (issue 30).

    python bench/alone_vs_tree.py --files 20 [--ortlint PATH] [--repos OWNER+NAME,...]

For each repository (extracted by `whole_repos.py extract` into /work/wholerepos/OWNER+NAME),
run `ortlint .` once from its root with a fresh cache folder (as CI does, warming the cache the
way a developer's earlier run would), then pick files of that run that have findings (spread over
the repositories, the first by sorted path of each) and analyze each alone from the repository
root with the same cache folder, as pre-commit and an editor do. Prints, per file, the findings
in the tree run and alone, and every difference: (rule, line, column, message).

The run over the tree is what a user sees in CI; the file alone is what the hook shows. They
should agree: headers are indexed from the repository root and callee summaries come from the
cache. A cold cache (`--cold`) shows what the cache adds: calls into other files are unknown.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_ORTLINT = HERE.parent / ".venv" / "bin" / "ortlint"
DEFAULT_TREES = Path("/work/wholerepos")
DEFAULT_REPOS = ("IBM+onnxruntime-ep-telum", "triton-inference-server+onnxruntime_backend", "kibae+onnxruntime-server",
                 "rhasspy+piper", "MrSyabro+luaort", "RapidAI+RapidOcrOnnx", "microsoft+onnxruntime-genai",
                 "onnxruntime+onnxruntime-ep-tensorrt", "RedisAI+RedisAI", "royshil+obs-backgroundremoval")


def _run(ortlint: str, root: Path, cache: str | None, target: str) -> dict:
    args = [ortlint, "--format", "json", "--exit-zero"] + (["--cache-dir", cache] if cache else ["--no-cache"]) + [target]
    out = subprocess.run(args, cwd=root, capture_output=True, text=True, check=False)
    return json.loads(out.stdout)


def _key(f: dict) -> tuple:
    return (f["rule"], f["line"], f.get("column", f.get("col")), f["message"])


def _by_file(doc: dict) -> dict[str, set[tuple]]:
    out: dict[str, set[tuple]] = {}
    for f in doc["findings"]:
        out.setdefault(os.path.normpath(f["path"]), set()).add(_key(f))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ortlint", default=str(DEFAULT_ORTLINT))
    ap.add_argument("--trees", type=Path, default=DEFAULT_TREES)
    ap.add_argument("--repos", default=",".join(DEFAULT_REPOS))
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--cold", action="store_true", help="analyze the files alone without the tree run's cache")
    args = ap.parse_args()
    repos = [r for r in args.repos.split(",") if (args.trees / r).is_dir()]
    per_repo = max(1, -(-args.files // len(repos)))
    total = same = 0
    for repo in repos:
        root = args.trees / repo
        with tempfile.TemporaryDirectory() as cache:
            tree = _by_file(_run(args.ortlint, root, cache, "."))
            for path in sorted(tree)[:per_repo]:
                if total >= args.files:
                    break
                alone = _by_file(_run(args.ortlint, root, None if args.cold else cache, path)).get(path, set())
                total += 1
                same += alone == tree[path]
                print(f"{repo}/{path}: tree {len(tree[path])}, alone {len(alone)}" + ("" if alone == tree[path] else "  DIFFERENT"))
                for k in sorted(tree[path] - alone):
                    print(f"    only in the tree run: {k}")
                for k in sorted(alone - tree[path]):
                    print(f"    only alone:           {k}")
    print(f"{same}/{total} files: the same findings alone as in the run over their repository")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())

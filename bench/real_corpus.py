#!/usr/bin/env python3
"""Extract the real-code benchmark (bench/real_corpus.toml) from local git snapshots.

    python bench/real_corpus.py --mirrors /work/.mirror --out /tmp/realcode
    python bench/real_corpus.py --mirrors /work/.mirror --out /tmp/realcode --group native

Each source's paths are written at its pinned commit under OUT/GROUP/OWNER+NAME/, keeping only
the files ortlint reads (C, C++, headers, Java, Go), so the tree is the same on every machine that
has the snapshots. The code is public and stays out of this repository.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".java", ".go")


def load_sources(manifest: Path) -> list[dict]:
    return tomllib.loads(manifest.read_text(encoding="utf-8"))["source"]


def repo_dir(mirrors: Path, repo: str) -> Path:
    return mirrors / repo.replace("/", "+") / "repo"


def files_at(git_dir: Path, commit: str, paths: list[str]) -> list[str]:
    out = subprocess.run(["git", "-C", str(git_dir), "ls-tree", "-r", "--name-only", commit, "--", *[p for p in paths if p]],
                         check=True, capture_output=True, text=True).stdout
    return [f for f in out.splitlines() if f.endswith(SUFFIXES)]


def extract(source: dict, mirrors: Path, out: Path) -> tuple[int, int]:
    """Write one source's files; returns (files, lines)."""
    git_dir = repo_dir(mirrors, source["repo"])
    if not git_dir.exists():
        raise SystemExit(f"no snapshot of {source['repo']} at {git_dir}")
    target = out / source["group"] / source["repo"].replace("/", "+")
    files = lines = 0
    for name in files_at(git_dir, source["commit"], source["paths"]):
        blob = subprocess.run(["git", "-C", str(git_dir), "show", f"{source['commit']}:{name}"],
                              check=True, capture_output=True).stdout
        dest = target / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(blob)
        files += 1
        lines += blob.count(b"\n")
    return files, lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True, help="folder of snapshots: OWNER+NAME/repo")
    ap.add_argument("--out", type=Path, required=True, help="where to write the tree")
    ap.add_argument("--manifest", type=Path, default=HERE / "real_corpus.toml")
    ap.add_argument("--group", action="append", help="only these groups (native, java, go)")
    args = ap.parse_args(argv)
    total_files = total_lines = 0
    for source in load_sources(args.manifest):
        if args.group and source["group"] not in args.group:
            continue
        files, lines = extract(source, args.mirrors, args.out)
        total_files += files
        total_lines += lines
        print(f"{source['group']:7} {source['repo']:45} {source['commit'][:12]} {files:5} files {lines:8} lines")
    print(f"total: {total_files} files, {total_lines} lines in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

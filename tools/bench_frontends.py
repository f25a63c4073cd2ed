"""Time the two C/C++ front ends on the same files: tree-sitter vs libclang (precise mode).

    .venv/bin/python tools/bench_frontends.py [--repeat 5] [--db compile_commands.json] [FILE_OR_DIR...]

Without arguments it times every C/C++ fixture with a compile database generated like
tests/test_clang_frontend.py does. With --db, the files (default: every file listed in the
database) are timed with that database. Only parsing and lowering to IR is timed (what the
front end does); the analysis that follows is the same for both.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ortlint.api import default_policy  # noqa: E402
from ortlint.discover import SourceFile, language_of  # noqa: E402
from ortlint.orchestration.parsing import parse_file  # noqa: E402


def fixture_database(folder: Path) -> tuple[str, list[Path]]:
    from tests.test_clang_frontend import clang_fixtures, compile_entry  # noqa: PLC0415
    files = clang_fixtures()
    db = folder / "compile_commands.json"
    db.write_text(json.dumps([compile_entry(p) for p in files]))
    return str(db), files


def files_of_database(db: str) -> list[Path]:
    out = []
    for entry in json.loads(Path(db).read_text()):
        out.append((Path(entry.get("directory", ".")) / entry["file"]).resolve())
    return out


def time_file(path: Path, db: str | None, repeat: int) -> tuple[float, list[str]]:
    """Median seconds of `repeat` parses (after one warm-up), and the notes of the last one."""
    policy = default_policy()
    source = SourceFile(str(path), language_of(str(path)) or "c")
    notes: list[str] = []
    samples = []
    for i in range(repeat + 1):
        start = time.perf_counter()
        unit = parse_file(source, policy, compile_commands=db)
        elapsed = time.perf_counter() - start
        if i:
            samples.append(elapsed)
        notes = [m for _loc, m in unit.notes if "tree-sitter instead" in m]
    return statistics.median(samples), notes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--db", help="compile_commands.json (default: generated for the fixtures)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.db:
            db, files = args.db, [Path(p).resolve() for p in args.paths] or files_of_database(args.db)
        else:
            db, files = fixture_database(Path(tmp))
        rows = []
        for path in files:
            ts, _ = time_file(path, None, args.repeat)
            cl, fallback = time_file(path, db, args.repeat)
            lines = path.read_bytes().count(b"\n")
            rows.append((path, lines, ts, cl, bool(fallback)))
            flag = "  (fell back to tree-sitter)" if fallback else ""
            print(f"{path.name:40} {lines:6} lines  tree-sitter {ts * 1000:8.1f} ms  libclang {cl * 1000:8.1f} ms{flag}")
        ok = [r for r in rows if not r[4]]
        if ok:
            ts_med = statistics.median(r[2] for r in ok) * 1000
            cl_med = statistics.median(r[3] for r in ok) * 1000
            ts_mean = statistics.mean(r[2] for r in ok) * 1000
            cl_mean = statistics.mean(r[3] for r in ok) * 1000
            print(f"\n{len(ok)} files, {sum(r[1] for r in ok)} lines (files libclang could compile)")
            print(f"per file: tree-sitter median {ts_med:.1f} ms, mean {ts_mean:.1f} ms; "
                  f"libclang median {cl_med:.1f} ms, mean {cl_mean:.1f} ms; ratio of medians {cl_med / ts_med:.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

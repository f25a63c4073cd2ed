#!/usr/bin/env python3
"""Diff two `ortlint --format json` reports: which findings and notes vanished, which are new.

    python bench/diff_findings.py before.json after.json [--strip PREFIX]

Findings are matched on (path, rule, line, function); a finding whose message changed but whose
key did not is listed as changed. Paths are shown relative to --strip (default: their common
folder). Used for the before/after lists that closing notes quote for real code.
"""
from __future__ import annotations

import argparse
import json
import os
import sys


def load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def key(f: dict) -> tuple:
    return (f["path"], f["rule"], f["line"], f.get("function") or "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--strip", help="path prefix to drop when printing")
    args = ap.parse_args(argv)
    a, b = load(args.before), load(args.after)
    paths = [f["path"] for f in a["findings"] + b["findings"]]
    strip = args.strip if args.strip is not None else (os.path.commonpath(paths) + "/" if paths else "")

    def show(f: dict) -> str:
        path = f["path"][len(strip):] if f["path"].startswith(strip) else f["path"]
        return f"{path}:{f['line']} {f.get('rule', f.get('level', ''))} {f.get('function') or ''}: {f['message'][:160]}"

    ka = {key(f): f for f in a["findings"]}
    kb = {key(f): f for f in b["findings"]}
    gone = [ka[k] for k in sorted(ka.keys() - kb.keys())]
    new = [kb[k] for k in sorted(kb.keys() - ka.keys())]
    changed = [kb[k] for k in sorted(ka.keys() & kb.keys()) if ka[k]["message"] != kb[k]["message"]]
    na = {(n["path"], n["line"], n["message"]) for n in a.get("notices", [])}
    nb = {(n["path"], n["line"], n["message"]) for n in b.get("notices", [])}
    print(f"findings: {len(ka)} before, {len(kb)} after; {len(gone)} vanished, {len(new)} new, {len(changed)} changed")
    print(f"notices: {len(na)} before, {len(nb)} after")
    for title, items in (("vanished", gone), ("new", new), ("changed (new message)", changed)):
        if items:
            print(f"\n{title}:")
            for f in items:
                print("  " + show(f))
    for title, items in (("notices gone", na - nb), ("notices new", nb - na)):
        if items:
            print(f"\n{title}:")
            for p, line, msg in sorted(items):
                p = p[len(strip):] if p.startswith(strip) else p
                print(f"  {p}:{line} {msg[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

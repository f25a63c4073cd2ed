#!/usr/bin/env python3
"""The whole-repository benchmark (issue 29): `ortlint .` on whole public repositories, as users run it.

    python bench/whole_repos.py extract                               # once: every repository of the manifest
    python bench/whole_repos.py run --label base --ortlint /work/wt-base/.venv/bin/ortlint
    python bench/whole_repos.py run --label mine                      # this worktree's .venv/bin/ortlint
    python bench/whole_repos.py table /work/results/mine              # the table again, with precision
    python bench/whole_repos.py triage /work/results/mine             # precision per repository and class
    python bench/whole_repos.py triage /work/results/mine --show --only k2-fsa/sherpa-onnx   # what to triage next
    python bench/whole_repos.py diff /work/results/base /work/results/mine                  # appeared / vanished
    python bench/whole_repos.py slowest /work/results/mine --against /work/results/base     # slowest functions

`extract` writes each repository of bench/whole_repos.toml whole, at its pinned commit, with `git
archive` (symlinks, .gitignore files and all) into OUT/OWNER+NAME/. `run` runs one ortlint
executable in each of those folders, one repository at a time (`ortlint --format json --verbose
--no-cache --output R .`), and measures the process tree: CPU (user+sys), wall time, peak
resident memory. `triage` applies the verdicts of bench/triage/OWNER+NAME.toml to a results folder
by stable finding key; `diff` compares two results folders by the same key. See bench/README.md.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import load_average, run_process  # noqa: E402

MANIFEST = HERE / "whole_repos.toml"
VERDICTS = HERE / "triage"
DEFAULT_MIRRORS = Path("/work/.mirror")
DEFAULT_OUT = Path("/work/wholerepos")
DEFAULT_RESULTS = Path("/work/results")
DEFAULT_ORTLINT = HERE.parent / ".venv" / "bin" / "ortlint"
VERDICT_VALUES = ("real", "false", "debatable")
SEED = "29"  # the default sample seed: change it only to draw a new sample on purpose
ANCHOR_MAX = 120

# ----------------------------------------------------------------------------- the manifest


@dataclass(frozen=True)
class Repo:
    repo: str  # owner/name
    commit: str
    category: str
    why: str
    languages: tuple[str, ...]

    @property
    def slug(self) -> str:
        """OWNER+NAME: the folder, results and verdict file name of this repository."""
        return self.repo.replace("/", "+")


def load_manifest(path: Path = MANIFEST) -> list[Repo]:
    """The repositories of the benchmark, checked: a full commit id, no repeats."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    repos = [Repo(e["repo"], e["commit"], e["category"], e["why"], tuple(e["languages"])) for e in data["repo"]]
    for r in repos:
        if not re.fullmatch(r"[0-9a-f]{40}", r.commit):
            raise SystemExit(f"{path}: {r.repo}: commit must be 40 hex digits, not {r.commit!r}")
    if len({r.repo for r in repos}) != len(repos):
        raise SystemExit(f"{path}: a repository is listed twice")
    return repos


def select(repos: list[Repo], only: str | None) -> list[Repo]:
    """`--only a/b,c+d`: owner/name or OWNER+NAME, or a unique part of one."""
    if not only:
        return repos
    out = []
    for token in (t.strip() for t in only.split(",") if t.strip()):
        hits = [r for r in repos if token in (r.repo, r.slug)] or [r for r in repos if token.lower() in r.repo.lower()]
        if len(hits) != 1:
            raise SystemExit(f"--only {token}: matches {len(hits)} repositories of the manifest")
        out.extend(h for h in hits if h not in out)
    return out


# ----------------------------------------------------------------------------- extract


def missing_blobs(git_dir: Path, commit: str) -> list[str]:
    """Paths whose content the snapshot lacks (a snapshot may leave out its largest files: models,
    tokenizer data); `git archive` cannot write them and stops, so they are left out."""
    listing = subprocess.run(["git", "-C", str(git_dir), "ls-tree", "-r", "-z", commit], check=True,
                             capture_output=True).stdout.decode("utf-8", "surrogateescape")
    blobs = {}
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        _mode, kind, sha = meta.split()
        if kind == "blob":
            blobs.setdefault(sha, []).append(path)
    check = subprocess.run(["git", "-C", str(git_dir), "cat-file", "--batch-check"], input="\n".join(blobs).encode(),
                           check=True, capture_output=True).stdout.decode()
    gone = [line.split()[0] for line in check.splitlines() if line.endswith(" missing")]
    return sorted(p for sha in gone for p in blobs[sha])


def _attribute_pattern(path: str) -> str:
    """A path as an anchored gitattributes pattern (glob characters escaped, quoted if it has blanks)."""
    escaped = re.sub(r"([*?\[\\])", r"\\\1", path)
    return "/" + escaped if not re.search(r"\s", path) else json.dumps("/" + escaped)


def extract_one(repo: Repo, mirrors: Path, out: Path) -> str:
    """Write the repository whole at its commit into OUT/OWNER+NAME (via a .part folder, so an
    interrupted extraction never looks complete). Idempotent: OUT/OWNER+NAME.commit records what
    is there; OUT/OWNER+NAME.missing lists the files the snapshot lacks."""
    dest, stamp = out / repo.slug, out / f"{repo.slug}.commit"
    if dest.is_dir() and stamp.exists() and stamp.read_text().strip() == repo.commit:
        return "present"
    git_dir = mirrors / repo.slug / "repo"
    if not git_dir.exists():
        raise SystemExit(f"no snapshot of {repo.repo} at {git_dir} (fetch it first)")
    part = out / f"{repo.slug}.part"
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    missing = missing_blobs(git_dir, repo.commit)
    attributes = out / f"{repo.slug}.attributes"
    attributes.write_text("".join(f"{_attribute_pattern(p)} export-ignore\n" for p in missing), encoding="utf-8")
    archive = subprocess.Popen(["git", "-C", str(git_dir), "-c", f"core.attributesFile={attributes}", "archive",
                                "--worktree-attributes", "--format=tar", repo.commit], stdout=subprocess.PIPE)
    untar = subprocess.run(["tar", "-x", "-C", str(part)], stdin=archive.stdout)
    assert archive.stdout is not None
    archive.stdout.close()
    if archive.wait() != 0 or untar.returncode != 0:
        shutil.rmtree(part, ignore_errors=True)
        raise SystemExit(f"{repo.repo}: git archive {repo.commit} failed")
    attributes.unlink()
    shutil.rmtree(dest, ignore_errors=True)
    stamp.unlink(missing_ok=True)
    part.rename(dest)
    (out / f"{repo.slug}.missing").write_text("".join(p + "\n" for p in missing), encoding="utf-8")
    stamp.write_text(repo.commit + "\n")
    return f"extracted ({len(missing)} files missing from the snapshot)" if missing else "extracted"


def cmd_extract(args: argparse.Namespace) -> int:
    for repo in select(load_manifest(), args.only):
        started = time.perf_counter()
        what = extract_one(repo, args.mirrors, args.out)
        print(f"{repo.repo:45} {repo.commit[:12]} {what:9} {time.perf_counter() - started:6.1f} s  {args.out / repo.slug}")
    return 0


# ----------------------------------------------------------------------------- stable finding keys


def _source_lines(tree: Path, rel: str, cache: dict[str, list[str] | None]) -> list[str] | None:
    if rel not in cache:
        try:
            cache[rel] = (tree / rel).read_bytes().decode("utf-8", "replace").splitlines()
        except OSError:
            cache[rel] = None
    return cache[rel]


def anchor_text(lines: list[str] | None, f: dict) -> str:
    """The source text the finding points at (line:column to end_line:end_column), whitespace
    collapsed: what the user wrote there (`api->CreateSession(env, path, opts, &s)`), independent of
    line numbers and of ortlint's message wording. An empty span gives its whole line."""
    if not lines or not 1 <= f["line"] <= len(lines):
        return re.sub(r"\d+", "N", f["message"])[:ANCHOR_MAX]
    line, end_line = f["line"], max(f["line"], min(f.get("end_line") or f["line"], len(lines)))
    col, end_col = max(f.get("column", 1), 1), f.get("end_column") or 0
    if end_line == line:
        text = lines[line - 1][col - 1:end_col - 1] if end_col > col else ""
    else:
        text = " ".join([lines[line - 1][col - 1:]] + lines[line:end_line - 1] + [lines[end_line - 1][:max(end_col - 1, 0)]])
    text = " ".join(text.split()) or " ".join(lines[line - 1].split())
    return text if len(text) <= ANCHOR_MAX else text[:ANCHOR_MAX - 1] + "…"


def real_path(tree: Path, rel: str) -> str:
    """The path of the real file (symlinks resolved) relative to the tree; `rel` when outside it."""
    try:
        resolved = (tree / rel).resolve()
        return resolved.relative_to(tree.resolve()).as_posix()
    except (OSError, ValueError):
        return rel


def compute_keys(tree: Path, findings: list[dict]) -> list[dict]:
    """One record per finding: its stable `key`, and `dup` when it repeats an earlier finding of
    the same real file (the same file reached through a symlink).

    key = "RULE | REAL_PATH | FUNCTION | N | ANCHOR": the real path relative to the repository
    root, the enclosing function as ortlint names it, the source text at the finding (see
    anchor_text), and N, the ordinal among the other unique findings with the same rule, path,
    function and anchor (by line, column, message). No line numbers: code moving does not change it."""
    cache: dict[str, list[str] | None] = {}
    records, seen = [], {}
    for i, f in enumerate(findings):
        path = real_path(tree, f["path"])
        anchor = anchor_text(_source_lines(tree, f["path"], cache), f)
        same = (f["rule"], path, f["line"], f["column"], f.get("end_line"), f.get("end_column"), f["message"])
        records.append({"index": i, "rule": f["rule"], "path": path, "function": f.get("function", ""),
                        "anchor": anchor, "dup": same in seen, "same": same})
        seen.setdefault(same, i)
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        if not r["dup"]:
            groups[(r["rule"], r["path"], r["function"], r["anchor"])].append(r)
    for members in groups.values():
        members.sort(key=lambda r: (r["same"][2], r["same"][3], r["same"][6]))
        for n, r in enumerate(members, 1):
            r["n"] = n
    by_same = {r["same"]: r for r in records if not r["dup"]}
    for r in records:
        if r["dup"]:
            r["n"] = by_same[r["same"]]["n"]
        r["key"] = f"{r['rule']} | {r['path']} | {r['function']} | {r['n']} | {r['anchor']}"
        del r["same"]
    return records


def split_key(key: str) -> tuple[str, str, str, int, str]:
    rule, path, function, n, anchor = key.split(" | ", 4)
    return rule, path, function, int(n), anchor


# ----------------------------------------------------------------------------- notes


NOTE_CAUSES = (  # (cause, pattern): the first that matches the notice's message wins
    ("lost: time", r"^internal error.*(took more than|time limit)"),
    ("lost: memory", r"^internal error.*(MB|memory)"),
    ("lost: crash", r"^internal error"),
    ("state bound", r"too many distinct|may be incomplete|budget"),
    ("inline bound", r"inlines more than"),
    ("time limit", r"took more than|within [\d.]+ s|time limit"),
    ("memory limit", r"needed more than [\d.]+ MB|memory limit"),
    ("too large", r"nested too deeply|too many destructors|too many copies|too many deferred|recursion limit|"
                  r"nested more than"),
    ("could not parse", r"could not parse|tree-sitter could not"),
    ("could not expand", r"could not expand"),
    ("skipped file", r"binary file|UTF-8|cannot read|unreadable|not a regular file|broken symlink"),
    ("compile db", r"compile database|libclang"),
    ("suppression", r"suppression comment"),
)


def note_cause(message: str) -> str:
    """What kind of notice this is: the run lost something (exit 2), a bound cut an analysis short,
    code could not be parsed, a file was skipped, ..."""
    for cause, pattern in NOTE_CAUSES:
        if re.search(pattern, message):
            return cause
    return "other"


def note_counts(notices: list[dict]) -> dict[str, int]:
    return dict(sorted(Counter(note_cause(n.get("message", "")) for n in notices).items()))


# ----------------------------------------------------------------------------- run


def tool_identity(ortlint: Path) -> dict:
    """What was measured: `ortlint --version`, and the git commit of the checkout the executable's
    virtual environment belongs to (an editable install in a worktree), with a dirty flag."""
    version = subprocess.run([str(ortlint), "--version"], capture_output=True, text=True).stdout.strip()
    checkout = ortlint.resolve().parent.parent.parent  # CHECKOUT/.venv/bin/ortlint
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {"ortlint": str(ortlint), "version": version,
            "checkout": str(checkout) if commit.returncode == 0 else None,
            "commit": commit.stdout.strip() if commit.returncode == 0 else None, "dirty": bool(dirty)}


def ortlint_args(fmt: str, output: Path, jobs: int | None) -> list[str]:
    args = ["--format", fmt, "--verbose", "--no-cache", "--output", str(output)]
    return args + (["--jobs", str(jobs)] if jobs is not None else []) + ["."]


def measure_one(repo: Repo, tree: Path, results: Path, args: argparse.Namespace) -> dict:
    """Run ortlint in the repository's folder once, as a user does, and measure the process tree."""
    report_path = results / f"{repo.slug}.json"
    report_path.unlink(missing_ok=True)
    stats_path = results / f"{repo.slug}.stats.json"
    stats_path.unlink(missing_ok=True)
    cmd = (["nice", "-n", str(args.nice)] if args.nice else []) + [str(args.ortlint)] + \
        ortlint_args("json", report_path, args.jobs)
    env = dict(os.environ, ORTLINT_STATS=str(stats_path))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = run_process(cmd, env=env, timeout=args.timeout, cwd=str(tree), stderr=str(results / f"{repo.slug}.stderr"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.exists() else {}
    stats = json.loads(stats_path.read_text(encoding="utf-8") or "{}") if stats_path.exists() else {}
    findings = report.get("findings", [])
    keys = compute_keys(tree, findings)
    (results / f"{repo.slug}.keys.json").write_text(json.dumps(keys, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return {
        "repo": repo.repo, "commit": repo.commit, "category": repo.category,
        "files": stats.get("files", report.get("summary", {}).get("files")), "lines": stats.get("lines"),
        "functions": stats.get("functions"),
        "findings": len(findings), "by_rule": dict(sorted(Counter(f["rule"] for f in findings).items())),
        "symlink_duplicates": sum(1 for k in keys if k["dup"]),
        "notes": note_counts(report.get("notices", [])), "notices": len(report.get("notices", [])),
        "user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime,
        "wall": proc.wall, "peak_rss_mb": proc.peak_rss_mb, "exit": proc.returncode, "load": proc.load,
        "timed_out": args.timeout is not None and proc.wall >= args.timeout and not report,
        "phases": {k: v for k, v in stats.items() if k.endswith("_seconds")},
        "slowest_functions": stats.get("slowest_functions", []),
    }


def sarif_one(repo: Repo, tree: Path, results: Path, args: argparse.Namespace) -> float:
    """A second run for the SARIF report (ortlint writes one format per run); only its wall time is kept."""
    cmd = (["nice", "-n", str(args.nice)] if args.nice else []) + [str(args.ortlint)] + \
        ortlint_args("sarif", results / f"{repo.slug}.sarif", args.jobs)
    return run_process(cmd, timeout=args.timeout, cwd=str(tree)).wall


def cmd_run(args: argparse.Namespace) -> int:
    results = args.results or DEFAULT_RESULTS / args.label
    results.mkdir(parents=True, exist_ok=True)
    args.ortlint = Path(args.ortlint).absolute()
    if not args.ortlint.exists():
        raise SystemExit(f"--ortlint {args.ortlint}: no such executable")
    summary_path = results / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {"repos": {}}
    summary.update({"label": args.label or results.name, "tool": tool_identity(args.ortlint), "tree": str(args.out),
                    "command": "ortlint " + " ".join(ortlint_args("json", Path("R.json"), args.jobs)),
                    "nice": args.nice, "cpus": os.cpu_count()})
    for repo in select(load_manifest(), args.only):
        tree = args.out / repo.slug
        stamp = args.out / f"{repo.slug}.commit"
        if not stamp.exists() or stamp.read_text().strip() != repo.commit:
            raise SystemExit(f"{tree}: not extracted at {repo.commit[:12]}; run `whole_repos.py extract` first")
        print(f"{repo.repo} ...", end=" ", flush=True)
        row = measure_one(repo, tree, results, args)
        if args.sarif:
            row["sarif_wall"] = sarif_one(repo, tree, results, args)
        row["date"] = time.strftime("%Y-%m-%d %H:%M:%S")
        summary["repos"][repo.repo] = row
        summary_path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        print(f"exit {row['exit']}, {row['findings']} findings, {row['user'] + row['sys']:.1f} s CPU, "
              f"{row['wall']:.1f} s wall, {row['peak_rss_mb']:.0f} MB (load {row['load']:.1f})", flush=True)
    print()
    print(format_table(summary, load_verdicts_for(summary), results))
    return 0


# ----------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    key: str
    verdict: str
    cls: str
    why: str


def load_verdicts(path: Path) -> dict[str, Verdict]:
    """bench/triage/OWNER+NAME.toml: `[[finding]]` entries with key, verdict, class (required for
    false), why. A mistake stops the run: verdicts are data others rely on."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[str, Verdict] = {}
    for i, e in enumerate(data.get("finding", []), 1):
        where = f"{path}: finding {i}"
        if e.get("verdict") not in VERDICT_VALUES:
            raise SystemExit(f"{where}: verdict must be one of {VERDICT_VALUES}, not {e.get('verdict')!r}")
        if e["verdict"] == "false" and not e.get("class"):
            raise SystemExit(f"{where}: a false verdict needs a class")
        if not e.get("why"):
            raise SystemExit(f"{where}: no why")
        try:
            split_key(e["key"])
        except (KeyError, ValueError):
            raise SystemExit(f"{where}: key must be 'RULE | PATH | FUNCTION | N | ANCHOR'") from None
        if e["key"] in out:
            raise SystemExit(f"{where}: key given twice: {e['key']}")
        out[e["key"]] = Verdict(e["key"], e["verdict"], e.get("class", ""), e["why"])
    return out


def load_verdicts_for(summary: dict) -> dict[str, dict[str, Verdict]]:
    return {name: load_verdicts(VERDICTS / f"{name.replace('/', '+')}.toml") for name in summary.get("repos", {})}


def match_verdicts(keys: list[dict], verdicts: dict[str, Verdict]) -> dict[int, Verdict]:
    """Finding index -> verdict. By exact key; else, when ortlint names the function differently
    now, by rule, path and anchor if exactly one finding and one verdict share them."""
    out: dict[int, Verdict] = {}
    used: set[str] = set()
    for k in keys:
        v = verdicts.get(k["key"])
        if v is not None:
            out[k["index"]] = v
            used.add(v.key)
    loose_findings: dict[tuple, list[dict]] = defaultdict(list)
    for k in keys:
        if k["index"] not in out and not k["dup"]:
            loose_findings[(k["rule"], k["path"], k["anchor"])].append(k)
    loose_verdicts: dict[tuple, list[Verdict]] = defaultdict(list)
    for v in verdicts.values():
        if v.key not in used:
            rule, path, _fn, _n, anchor = split_key(v.key)
            loose_verdicts[(rule, path, anchor)].append(v)
    for group, members in loose_findings.items():
        vs = loose_verdicts.get(group, [])
        if len(members) == 1 and len(vs) == 1:
            out[members[0]["index"]] = vs[0]
    for k in keys:  # a duplicate through a symlink shares its original's verdict
        if k["dup"] and k["index"] not in out:
            v = verdicts.get(k["key"])
            if v is not None:
                out[k["index"]] = v
    return out


# ----------------------------------------------------------------------------- results


@dataclass
class RepoResults:
    name: str
    findings: list[dict]
    keys: list[dict]
    notices: list[dict] = field(default_factory=list)

    @property
    def unique(self) -> list[dict]:
        """Keys of the findings that are not symlink duplicates: what precision is computed over."""
        return [k for k in self.keys if not k["dup"]]


def load_results(results: Path, name: str) -> RepoResults | None:
    slug = name.replace("/", "+")
    report_path = results / f"{slug}.json"
    if not report_path.exists():
        return None
    report = json.loads(report_path.read_text(encoding="utf-8"))
    findings = report.get("findings", [])
    keys_path = results / f"{slug}.keys.json"
    if keys_path.exists():
        keys = json.loads(keys_path.read_text(encoding="utf-8"))
    else:  # results of an older run: the keys need the extracted tree
        summary = json.loads((results / "summary.json").read_text())
        keys = compute_keys(Path(summary["tree"]) / slug, findings)
    return RepoResults(name, findings, keys, report.get("notices", []))


def sample_rank(seed: str, key: str) -> str:
    """A finding's place in the seeded random order: a hash of its key, so the same finding keeps
    its place whatever else a run finds (a later run's sample is mostly the verdicts already made)."""
    return hashlib.sha256(f"{seed}\0{key}".encode()).hexdigest()


def sample(res: RepoResults, size: int, seed: str) -> list[dict]:
    """The `size` unique findings first in the seeded order (all when there are no more)."""
    return sorted(res.unique, key=lambda k: sample_rank(seed, k["key"]))[:size]


@dataclass
class Tally:
    findings: int = 0
    unique: int = 0
    triaged: int = 0
    real: int = 0
    false: int = 0
    debatable: int = 0
    sampled: int = 0
    sampled_triaged: int = 0

    @property
    def precision(self) -> float | None:
        return self.real / (self.real + self.false) if self.real + self.false else None


def tally(res: RepoResults, verdicts: dict[str, Verdict], size: int, seed: str) -> tuple[Tally, Counter, Counter]:
    """Counts over unique findings, false classes and debatable classes."""
    matched = match_verdicts(res.keys, verdicts)
    t = Tally(findings=len(res.findings), unique=len(res.unique))
    false_classes, debatable_classes = Counter(), Counter()
    for k in res.unique:
        v = matched.get(k["index"])
        if v is None:
            continue
        t.triaged += 1
        setattr(t, v.verdict, getattr(t, v.verdict) + 1)
        if v.verdict == "false":
            false_classes[v.cls] += 1
        elif v.verdict == "debatable":
            debatable_classes[v.cls or "-"] += 1
    picked = sample(res, size, seed)
    t.sampled = len(picked)
    t.sampled_triaged = sum(1 for k in picked if k["index"] in matched)
    return t, false_classes, debatable_classes


# ----------------------------------------------------------------------------- table


def _compact(counts: dict, short: dict | None = None) -> str:
    return " ".join(f"{(short or {}).get(k, k)}:{v}" for k, v in counts.items()) or "-"


NOTE_SHORT = {"state bound": "bound", "inline bound": "inline", "time limit": "time", "memory limit": "mem",
              "could not parse": "parse", "could not expand": "expand", "too large": "large", "skipped file": "skip",
              "compile db": "cdb", "suppression": "supp", "lost: time": "LOST-time", "lost: memory": "LOST-mem",
              "lost: crash": "LOST-crash"}


def format_table(summary: dict, verdicts: dict[str, dict[str, Verdict]], results: Path,
                 size: int = 40, seed: str = SEED) -> str:
    """Per repository: files, lines, findings by rule, notes by cause, CPU, wall, peak MB, exit,
    symlink duplicates, and the precision of the triaged findings."""
    tool = summary.get("tool", {})
    head = (f"{summary.get('label')}: {tool.get('version')} ({tool.get('commit', '')[:10] if tool.get('commit') else '?'}"
            f"{' dirty' if tool.get('dirty') else ''}), `{summary.get('command')}` in each repository")
    cols = ("repository", "files", "lines", "find", "dup", "by rule", "notes", "CPU s", "wall s", "peak MB", "exit",
            "triaged", "R/F/D", "prec")
    rows = []
    total = Counter()
    for name, r in summary.get("repos", {}).items():
        res = load_results(results, name)
        t = tally(res, verdicts.get(name, {}), size, seed)[0] if res else Tally()
        if res is not None:  # the notes again, in case the causes were refined since the run
            r["notes"] = note_counts(res.notices)
        cpu = r["user"] + r["sys"]
        rows.append((name, r.get("files") or 0, r.get("lines") or 0, r["findings"], r.get("symlink_duplicates", 0),
                     _compact({k.replace("ORT0", ""): v for k, v in r["by_rule"].items()}),
                     _compact(r["notes"], NOTE_SHORT), f"{cpu:.1f}", f"{r['wall']:.1f}", f"{r['peak_rss_mb']:.0f}",
                     r["exit"], f"{t.triaged}/{t.unique}", f"{t.real}/{t.false}/{t.debatable}",
                     f"{t.precision:.2f}" if t.precision is not None else "-"))
        total.update({"files": r.get("files") or 0, "lines": r.get("lines") or 0, "find": r["findings"],
                      "dup": r.get("symlink_duplicates", 0), "cpu": cpu, "wall": r["wall"], "triaged": t.triaged,
                      "unique": t.unique, "real": t.real, "false": t.false, "debatable": t.debatable})
    prec = total["real"] / (total["real"] + total["false"]) if total["real"] + total["false"] else None
    rows.append(("TOTAL", total["files"], total["lines"], total["find"], total["dup"], "", "", f"{total['cpu']:.1f}",
                 f"{total['wall']:.1f}", "", "", f"{total['triaged']}/{total['unique']}",
                 f"{total['real']}/{total['false']}/{total['debatable']}", f"{prec:.2f}" if prec is not None else "-"))
    widths = [max(len(str(c)) for c in col) for col in zip(cols, *rows)]
    fmt = lambda row: "  ".join(str(c).ljust(w) if i in (0, 5, 6) else str(c).rjust(w)  # noqa: E731
                                for i, (c, w) in enumerate(zip(row, widths)))
    lines = [head, fmt(cols), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    lines.append("find: findings as reported; dup: of them, repeats of a finding of the same real file through a "
                 "symlink; by rule: ORT0xx:count; triaged: unique findings with a verdict / unique findings; "
                 "R/F/D: real/false/debatable; prec: R/(R+F)")
    return "\n".join(lines)


def cmd_table(args: argparse.Namespace) -> int:
    summary = json.loads((args.results / "summary.json").read_text())
    if args.only:
        wanted = {r.repo for r in select(load_manifest(), args.only)}
        summary["repos"] = {k: v for k, v in summary["repos"].items() if k in wanted}
    print(format_table(summary, load_verdicts_for(summary), args.results, args.sample, args.seed))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


# ----------------------------------------------------------------------------- triage


def show_finding(f: dict, k: dict, tree: Path | None, context: int) -> str:
    """A finding as a triager needs it: key, location, message, trace, and the source around it."""
    out = [f"key = {json.dumps(k['key'], ensure_ascii=False)}",
           f"  {f['path']}:{f['line']}:{f['column']} {f['rule']} in {f.get('function')}(): {f['message']}"]
    out += [f"    {s['path']}:{s['line']}: {s['message']}" for s in f.get("trace", [])[:12]]
    if tree is not None and context:
        lines = _source_lines(tree, f["path"], {})
        if lines:
            lo, hi = max(1, f["line"] - context), min(len(lines), f["line"] + context)
            out += [f"    {'>' if n == f['line'] else ' '}{n:5} {lines[n - 1]}" for n in range(lo, hi + 1)]
    return "\n".join(out)


def stub_entry(k: dict, f: dict) -> str:
    """A verdict entry to fill in (TOML): the key, and the location as a comment."""
    return (f"\n[[finding]]  # {f['path']}:{f['line']} {f['message'][:150]}\n"
            f"key = {json.dumps(k['key'], ensure_ascii=False)}\nverdict = \"\"\nclass = \"\"\nwhy = \"\"\n")


def _print_classes(false_classes: Counter, debatable_classes: Counter, weights: dict[str, Counter]) -> None:
    """Class counts in the triaged sample, and estimated in all unique findings (each repository's
    sample scaled to its size)."""
    for kind, counts in (("false ", false_classes), ("debat.", debatable_classes)):
        for cls, n in counts.most_common():
            print(f"    {kind} {n:4}  (est. {weights[kind][cls]:6.0f})  {cls}")


def _triage_helpers(args: argparse.Namespace, summary: dict, name: str, res: RepoResults, matched: dict) -> None:
    """--list, --show, --stub for one repository."""
    picked = [k for k in sample(res, args.sample, args.seed) if k["index"] not in matched]
    if args.list:
        for k in res.unique:
            if k["index"] not in matched:
                print(f"    untriaged: {k['key']}")
    if args.show:
        tree = Path(summary["tree"]) / name.replace("/", "+")
        for k in picked:
            print(show_finding(res.findings[k["index"]], k, tree, args.context))
    if args.stub and picked:
        args.stub.mkdir(parents=True, exist_ok=True)
        stub = args.stub / f"{name.replace('/', '+')}.toml"
        stub.write_text("".join(stub_entry(k, res.findings[k["index"]]) for k in picked), encoding="utf-8")
        print(f"    {len(picked)} entries to fill in {stub}")


def cmd_triage(args: argparse.Namespace) -> int:
    """Per repository and pooled: verdict counts, precision, false and debatable classes. A sample
    stands for its repository: `est.` scales each repository's triaged counts by unique/triaged,
    which is how a precision over all findings (not over the samples) is estimated."""
    summary = json.loads((args.results / "summary.json").read_text())
    names = [r.repo for r in select(load_manifest(), args.only) if r.repo in summary["repos"]]
    total = Tally()
    pooled = {"false ": Counter(), "debat.": Counter()}
    estimated = {"false ": Counter(), "debat.": Counter()}
    est_verdicts = Counter()
    for name in names:
        res = load_results(args.results, name)
        if res is None:
            continue
        verdicts = load_verdicts(VERDICTS / f"{name.replace('/', '+')}.toml")
        t, false_classes, debatable_classes = tally(res, verdicts, args.sample, args.seed)
        for field_name in ("findings", "unique", "triaged", "real", "false", "debatable", "sampled", "sampled_triaged"):
            setattr(total, field_name, getattr(total, field_name) + getattr(t, field_name))
        scale = t.unique / t.triaged if t.triaged else 0.0
        weights = {"false ": Counter({c: n * scale for c, n in false_classes.items()}),
                   "debat.": Counter({c: n * scale for c, n in debatable_classes.items()})}
        pooled["false "].update(false_classes)
        pooled["debat."].update(debatable_classes)
        for kind in weights:
            estimated[kind].update(weights[kind])
        est_verdicts.update({"real": t.real * scale, "false": t.false * scale, "debatable": t.debatable * scale})
        matched = match_verdicts(res.keys, verdicts)
        stale = len(set(verdicts) - {v.key for v in matched.values()})
        prec = f"{t.precision:.2f}" if t.precision is not None else "-"
        print(f"{name}: {t.findings} findings ({t.unique} unique), {t.triaged} triaged: {t.real} real, {t.false} false, "
              f"{t.debatable} debatable; precision {prec}; sample {t.sampled_triaged}/{t.sampled} triaged"
              + (f"; {stale} verdicts match no finding" if stale else ""))
        _print_classes(false_classes, debatable_classes, weights)
        _triage_helpers(args, summary, name, res, matched)
    prec = f"{total.precision:.2f}" if total.precision is not None else "-"
    er, ef = est_verdicts["real"], est_verdicts["false"]
    est_prec = f"{er / (er + ef):.2f}" if er + ef else "-"
    print(f"\nall: {total.findings} findings ({total.unique} unique), {total.triaged} triaged: {total.real} real, "
          f"{total.false} false, {total.debatable} debatable; precision of the triaged {prec}; "
          f"sample {total.sampled_triaged}/{total.sampled} triaged")
    print(f"estimated over all {total.unique} unique findings (each sample scaled to its repository): "
          f"{er:.0f} real, {ef:.0f} false, {est_verdicts['debatable']:.0f} debatable; precision {est_prec}")
    _print_classes(pooled["false "], pooled["debat."], estimated)
    return 0


# ----------------------------------------------------------------------------- diff


def cmd_diff(args: argparse.Namespace) -> int:
    """Per repository: findings that appeared in B or vanished from A, by stable key (a key
    counted as often as it occurs), with the verdict a vanished or appeared finding carries."""
    a_sum = json.loads((args.a / "summary.json").read_text())
    b_sum = json.loads((args.b / "summary.json").read_text())
    names = [r.repo for r in select(load_manifest(), args.only) if r.repo in a_sum["repos"] or r.repo in b_sum["repos"]]
    for name in names:
        a, b = load_results(args.a, name), load_results(args.b, name)
        if a is None or b is None:
            print(f"{name}: only in {'B' if a is None else 'A'}")
            continue
        verdicts = load_verdicts(VERDICTS / f"{name.replace('/', '+')}.toml")
        a_keys = Counter(k["key"] for k in a.keys)
        b_keys = Counter(k["key"] for k in b.keys)
        vanished, appeared = a_keys - b_keys, b_keys - a_keys
        va = match_verdicts(a.keys, verdicts)
        vb = match_verdicts(b.keys, verdicts)
        gone = Counter(va[k["index"]].verdict if k["index"] in va else "untriaged"
                       for k in a.keys if k["key"] in vanished)
        new = Counter(vb[k["index"]].verdict if k["index"] in vb else "untriaged"
                      for k in b.keys if k["key"] in appeared)
        print(f"{name}: {len(a.findings)} -> {len(b.findings)} findings; vanished {sum(vanished.values())} "
              f"({_compact(dict(gone))}), appeared {sum(appeared.values())} ({_compact(dict(new))})")
        if args.list:
            for k in a.keys:
                if k["key"] in vanished:
                    v = va.get(k["index"])
                    print(f"    - {k['key']}" + (f"   [{v.verdict} {v.cls}]" if v else ""))
            for k in b.keys:
                if k["key"] in appeared:
                    v = vb.get(k["index"])
                    print(f"    + {k['key']}" + (f"   [{v.verdict} {v.cls}]" if v else ""))
    return 0


def cmd_slowest(args: argparse.Namespace) -> int:
    """Per repository: the slowest functions of a results folder (as the workers measured each
    one: CPU seconds since the runs that record CPU, wall seconds before), the costliest request
    a worker ran (a function, or a recursive component analyzed as a whole), and the CPU of the
    whole run; with --against, the same figures of another results folder, and what each of
    those functions took there when it was among its slowest too. Prints figures, asserts nothing."""
    summary = json.loads((args.results / "summary.json").read_text())
    other = json.loads((args.against / "summary.json").read_text())["repos"] if args.against else {}
    names = [r.repo for r in select(load_manifest(), args.only) if r.repo in summary["repos"]]
    for name in names:
        row, before = summary["repos"][name], other.get(name)
        print(f"{name}: CPU {row['user'] + row['sys']:.1f} s" +
              (f" (against {before['user'] + before['sys']:.1f} s)" if before else "") + _costliest(args.results, name))
        earlier = {(f[0], f[1], f[2]): f[3] for f in (before or {}).get("slowest_functions", [])}
        for path, fn, line, seconds in row.get("slowest_functions", [])[:args.top]:
            was = earlier.get((path, fn, line))
            print(f"  {seconds:8.3f} s  {fn}  {path}:{line}" + (f"   (was {was:.3f} s)" if was is not None else ""))
        if before:
            now = {(f[0], f[1], f[2]) for f in row.get("slowest_functions", [])}
            for (path, fn, line), seconds in earlier.items():
                if (path, fn, line) not in now:
                    print(f"  {'':8}    {fn}  {path}:{line}   (was {seconds:.3f} s; not among the slowest now)")
    return 0


def _costliest(results: Path, name: str) -> str:
    """The costliest request of a worker (`max_analysis_cpu_*` of the run's stats), if recorded."""
    path = results / f"{name.replace('/', '+')}.stats.json"
    if not path.exists():
        return ""
    stats = json.loads(path.read_text())
    if not stats.get("max_analysis_cpu_item"):
        return ""
    return f"; costliest request {stats['max_analysis_cpu_seconds']:.3f} s CPU: {stats['max_analysis_cpu_item']}"


# ----------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)

    ex = sub.add_parser("extract", help="write every repository whole at its commit")
    ex.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS, help="snapshots: MIRRORS/OWNER+NAME/repo")
    ex.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ex.add_argument("--only")
    ex.set_defaults(func=cmd_extract)

    rn = sub.add_parser("run", help="run ortlint in each repository and measure it")
    rn.add_argument("--ortlint", default=str(DEFAULT_ORTLINT), help="the executable (default: this worktree's .venv)")
    rn.add_argument("--label", help=f"results go to {DEFAULT_RESULTS}/LABEL unless --results is given")
    rn.add_argument("--results", type=Path)
    rn.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where `extract` wrote the repositories")
    rn.add_argument("--only")
    rn.add_argument("--jobs", type=int, help="ortlint --jobs (default: not passed, ortlint's own default)")
    rn.add_argument("--timeout", type=float, default=3600, help="seconds per repository (the process tree is killed)")
    rn.add_argument("--nice", type=int, default=10, help="run ortlint under `nice -n N` (0: not)")
    rn.add_argument("--sarif", action="store_true", help="also write OWNER+NAME.sarif (a second run per repository)")
    rn.set_defaults(func=cmd_run)

    for name, func, text in (("table", cmd_table, "print the table of a results folder"),
                             ("triage", cmd_triage, "apply the verdicts, print precision, draw the sample")):
        p = sub.add_parser(name, help=text)
        p.add_argument("results", type=Path)
        p.add_argument("--only")
        p.add_argument("--sample", type=int, default=40, help="sample size per repository")
        p.add_argument("--seed", default=SEED)
        p.set_defaults(func=func)
        if name == "table":
            p.add_argument("--json", type=Path, help="also write the summary (all figures) here")
        else:
            p.add_argument("--list", action="store_true", help="list every untriaged finding's key")
            p.add_argument("--show", action="store_true", help="show the untriaged findings of the sample")
            p.add_argument("--context", type=int, default=3, help="--show: source lines around the finding")
            p.add_argument("--stub", type=Path, help="write DIR/OWNER+NAME.toml: verdict entries to fill in")

    df = sub.add_parser("diff", help="findings that appeared or vanished between two results folders")
    df.add_argument("a", type=Path)
    df.add_argument("b", type=Path)
    df.add_argument("--only")
    df.add_argument("--list", action="store_true", help="list the keys")
    df.set_defaults(func=cmd_diff)

    sl = sub.add_parser("slowest", help="the slowest functions per repository of a results folder")
    sl.add_argument("results", type=Path)
    sl.add_argument("--against", type=Path, help="another results folder: its figures beside them")
    sl.add_argument("--only")
    sl.add_argument("--top", type=int, default=5, help="functions per repository (a run records its 5 slowest)")
    sl.set_defaults(func=cmd_slowest)

    args = ap.parse_args(argv)
    if args.command == "run" and not (args.label or args.results):
        ap.error("run: give --label or --results")
    return args.func(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `... | head`
        sys.exit(0)

"""Synthetic inputs for the benchmark: a mixed C/C++/JNI/Java tree built from the project's own
fixtures, and pathological functions that must end within the analysis budget.

The tree is made of *copies* of the fixtures. Each fixture file (with the local headers it
includes) or each `fixtures/multi/<case>/` folder is a *group*; every copy of a group gets its
own tag, and inside it:

* functions defined in the group are renamed (`twice` -> `twice_c3g17`), with every reference to
  them (callers, function pointers, macro bodies); C++ classes/namespaces and Java classes that
  qualify methods are renamed the same way, so every function of the tree has a distinct name;
* names the policy describes, names of the ORT/JNI headers and of the libraries (anything in
  `rules/*.toml` or `fixtures/include/*.h`), `main` and `JNI_On*` are never renamed, nor is a
  member access (`x.f`, `x->f`): only functions *defined* in the fixture and their callers change;
* files are renamed with the same tag (`new_delete_c3g17.cpp`, `OwnershipEscapes_c3g17.java`) and
  `#include "local.h"` lines follow.

Line structure is unchanged, so each copy has the findings of its fixture on the same lines.
"""
from __future__ import annotations

import os
import random
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SOURCE_SUFFIXES = {".c", ".h", ".cc", ".cpp", ".hpp", ".java"}
NEVER_RENAME = {"main", "JNI_OnLoad", "JNI_OnUnload", "operator", "this", "super", "self"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INCLUDE = re.compile(r'(#\s*include\s*["<])([^">]+)([">])')  # `<...>` too: a fixture's header may be included so


@dataclass
class Group:
    """Files copied and renamed together."""

    name: str  # e.g. "c/goto_cleanup" or "multi/helpers"
    files: list[Path]  # fixture files (sources and the local headers they include)
    base: Path  # folder the files are relative to
    names: set[str] = field(default_factory=set)  # identifiers to rename
    lines: int = 0

    def language_mix(self) -> str:
        exts = {p.suffix for p in self.files}
        if ".java" in exts:
            return "java"
        if any(".cpp" == e or ".cc" == e for e in exts):
            return "cpp"
        if any(b"jni.h" in p.read_bytes() for p in self.files):
            return "jni"
        return "c"


def reserved_names(root: Path = ROOT, policy=None) -> set[str]:
    """Identifiers that belong to the policy (every call, neutral name and constant it knows,
    and the parts of qualified names) and to the ORT/JNI headers (code, not comments)."""
    if policy is None:
        from ortlint.api import default_policy
        policy = default_policy()
    words: set[str] = set(NEVER_RENAME)
    names = {name for _style, name in policy.calls}
    names |= {name for group in policy.neutral.values() for name in group}
    names |= set(policy.constants) | set(policy.blank_words) | set(policy.blank_calls)
    for name in names:
        words.update(_IDENT.findall(name))
    for path in sorted((root / "fixtures" / "include").glob("*.h")):
        text = path.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)
        words.update(_IDENT.findall(text))
    return words


def fixture_groups(fixtures: Path = FIXTURES) -> list[Group]:
    """Every fixture as a group: one per source file of c/, cpp/, jni/, java/ (with the local
    headers it includes) and one per folder of multi/ (but those with their own `*.toml` policy,
    which the tree is not analyzed with, and those marked `synth: whole-program`). Sorted, so the
    tree is reproducible.

    `synth: whole-program` marks a fixture whose expectations hold for that code as a whole
    program and not beside every other fixture: the tree-wide facts (a global released by any
    function of the tree, a method name no other class defines) make a copy's result depend on
    what the other groups define (another fixture releasing a global of the same name)."""
    groups: list[Group] = []
    for lang_dir in sorted(p for p in fixtures.iterdir() if p.is_dir() and p.name not in ("include", "multi")):
        for src in sorted(lang_dir.iterdir()):
            if not src.is_file() or src.suffix not in SOURCE_SUFFIXES or src.suffix in (".h", ".hpp"):
                continue
            files = [src] + _local_headers(src)
            if _whole_program(files):
                continue
            groups.append(Group(f"{lang_dir.name}/{src.stem}", files, lang_dir))
    multi = fixtures / "multi"
    if multi.is_dir():
        for case in sorted(p for p in multi.iterdir() if p.is_dir()):
            files = sorted(p for p in case.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES)
            if files and not any(case.glob("*.toml")) and not _whole_program(files):  # a case with its own policy needs it: not in the default-policy tree
                groups.append(Group(f"multi/{case.name}", files, case))
    return groups


def _whole_program(files: list[Path]) -> bool:
    return any(b"synth: whole-program" in p.read_bytes() for p in files)


def _local_headers(src: Path) -> list[Path]:
    out = []
    for m in _INCLUDE.finditer(src.read_text(encoding="utf-8", errors="replace")):
        header = src.parent / m.group(2)
        if header.is_file() and header not in out:
            out.append(header)
    return out


def defined_names(group: Group, policy=None) -> set[str]:
    """Names to rename in a group: functions it defines, and the classes and namespaces that
    qualify its methods (never method names themselves: calls to them are member accesses)."""
    from ortlint.discover import SourceFile, language_of
    from ortlint.orchestration.parsing import parse_file
    if policy is None:
        from ortlint.api import default_policy
        policy = default_policy()
    names: set[str] = set()
    for path in group.files:
        language = language_of(str(path))
        if language is None:
            continue
        unit = parse_file(SourceFile(str(path), language), policy)
        for fn in unit.functions:
            names.update(_renamable_parts(fn.name, language))
        if language == "java":  # the public class must match the file name
            names.add(path.stem)
    return names


def _renamable_parts(qualified: str, language: str) -> list[str]:
    """`f` -> [f]; `A::B::m` -> [A, B] (the method keeps its name); `f::<lambda@3>` -> [f];
    Java `Cls.m` / `Cls.task$anon@30.call` -> [Cls]."""
    if language == "java":
        first = qualified.split(".")[0].split("$")[0]
        return [first] if _IDENT.fullmatch(first) else []
    parts = qualified.split("::")
    keep = parts if len(parts) == 1 else parts[:-1]
    return [p for p in keep if _IDENT.fullmatch(p)]


def prepare_groups(policy=None, fixtures: Path = FIXTURES) -> list[Group]:
    reserved = reserved_names(fixtures.parent if fixtures != FIXTURES else ROOT, policy)
    groups = fixture_groups(fixtures)
    for g in groups:
        g.names = {n for n in defined_names(g, policy) if n not in reserved}
        g.lines = sum(_count_lines(p.read_bytes()) for p in g.files)
    return groups


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


_JAVA_IMPORT = re.compile(r"^import\s[^;\n]*;", re.M)


def rename_text(text: str, names: set[str], tag: str, headers: dict[str, str]) -> str:
    """Rename the identifiers in `names` (never after `.` or `->`: member accesses keep their
    names) and the local includes listed in `headers`."""
    if names:
        alternatives = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
        pattern = re.compile(r"(?<![\w$])(?<!\.)(?<!->)(" + alternatives + r")(?![\w$])")
        text = pattern.sub(lambda m: f"{m.group(1)}_{tag}", text)
        # a Java import names classes after dots (`import static a.b.Helpers.load;`)
        dotted = re.compile(r"(?<=\.)(" + alternatives + r")(?![\w$])")
        text = _JAVA_IMPORT.sub(lambda m: dotted.sub(lambda d: f"{d.group(1)}_{tag}", m.group(0)), text)
    if headers:
        text = _INCLUDE.sub(lambda m: m.group(1) + headers.get(m.group(2), m.group(2)) + m.group(3), text)
    return text


def renamed_file_name(path: Path, tag: str) -> str:
    return f"{path.stem}_{tag}{path.suffix}"


def write_group_copy(group: Group, copy: int, index: int, out: Path) -> list[Path]:
    """One renamed copy of a group under `out`; returns the files written."""
    tag = f"c{copy}g{index}"
    headers: dict[str, str] = {}
    for p in group.files:  # every tail of a header's path, as `#include "project/x.h"` names it
        if p.suffix in (".h", ".hpp"):
            parts = p.relative_to(group.base).parts
            for k in range(len(parts)):
                headers.setdefault("/".join(parts[k:]), "/".join(parts[k:-1] + (renamed_file_name(p, tag),)))
    folder = out / f"copy{copy:04d}" / group.name.replace("/", "_")
    written = []
    for path in group.files:
        rel = path.relative_to(group.base)
        target = folder / rel.parent / renamed_file_name(path, tag)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        target.write_text(rename_text(text, group.names, tag, headers), encoding="utf-8", errors="surrogateescape")
        written.append(target)
    return written


@dataclass
class Tree:
    root: Path
    files: list[Path]
    lines: int
    copies: int
    by_language: dict[str, int]  # lines per language mix (c, cpp, jni, java)


def build_tree(out: Path, lines: int, groups: list[Group] | None = None, seed: int = 7) -> Tree:
    """A tree of about `lines` lines: whole copies of every fixture group, then a seeded random
    choice of groups for the rest. `fixtures/include/` is copied once to `include/`."""
    if groups is None:
        groups = prepare_groups()
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    include = FIXTURES / "include"
    total = 0
    if include.is_dir():
        shutil.copytree(include, out / "include", dirs_exist_ok=True)
        for p in sorted((out / "include").iterdir()):
            files.append(p)
            total += _count_lines(p.read_bytes())
    by_language: dict[str, int] = {}
    per_copy = sum(g.lines for g in groups)
    rng = random.Random(seed)
    copy = 0
    while total < lines:
        if lines - total >= per_copy:
            chosen = list(enumerate(groups))
        else:
            chosen = list(enumerate(groups))
            rng.shuffle(chosen)
        for index, group in chosen:
            if total >= lines:
                break
            files.extend(write_group_copy(group, copy, index, out))
            total += group.lines
            mix = group.language_mix()
            by_language[mix] = by_language.get(mix, 0) + group.lines
        copy += 1
    return Tree(out, files, total, copy, by_language)


# ----------------------------------------------------------------------------- pathological inputs

def sequential_branches(n: int, name: str = "many_branches") -> str:
    """`n` independent `if`s, each acquiring a buffer of its own, released at the end: 2^n paths."""
    lines = ["#include <stdlib.h>", "", f"int {name}(const int *c) {{"]
    for i in range(n):
        lines.append(f"  char *p{i} = NULL;")
    for i in range(n):
        lines.append(f"  if (c[{i}]) {{ p{i} = malloc({i + 1}); if (!p{i}) return -1; }}")
    for i in range(n):
        lines.append(f"  free(p{i});")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def goto_ladder(n: int, name: str = "many_labels") -> str:
    """A cleanup ladder with `n` rungs: `n` acquisitions, each failure jumping to its label."""
    lines = ['#include "onnxruntime_c_api.h"', "", f"int {name}(const OrtApi *api, OrtEnv *env, const int *c) {{",
             "  int rc = -1;"]
    for i in range(n):
        lines.append(f"  OrtSessionOptions *o{i} = NULL;")
    for i in range(n):
        lines.append(f"  if (api->CreateSessionOptions(&o{i}) != NULL) goto fail{i};")
        lines.append(f"  if (c[{i}]) goto fail{i + 1};")
    lines.append("  rc = 0;")
    for i in range(n, 0, -1):
        lines.append(f"fail{i}:")
        lines.append(f"  api->ReleaseSessionOptions(o{i - 1});")
    lines += ["fail0:", "  return rc;", "}", ""]
    return "\n".join(lines)


def deep_loops(depth: int, name: str = "deep_loops") -> str:
    """`depth` nested loops, each allocating and conditionally freeing."""
    lines = ["#include <stdlib.h>", "", f"int {name}(int n, const int *c) {{", "  int total = 0;"]
    for d in range(depth):
        pad = "  " * (d + 1)
        lines.append(f"{pad}for (int i{d} = 0; i{d} < n; i{d}++) {{")
        lines.append(f"{pad}  char *b{d} = malloc(16);")
        lines.append(f"{pad}  if (!b{d}) continue;")
        lines.append(f"{pad}  if (c[{d}]) {{ free(b{d}); continue; }}")
    lines.append("  " * (depth + 1) + "total++;")
    for d in range(depth - 1, -1, -1):
        pad = "  " * (d + 1)
        lines.append(f"{pad}  free(b{d});")
        lines.append(f"{pad}}}")
    lines += ["  return total;", "}", ""]
    return "\n".join(lines)


def long_function(n: int, name: str = "long_body") -> str:
    """One function of `n` straight-line statement groups (allocate, test, use, free): one huge
    block sequence, to catch work that grows with the square of a function's length."""
    lines = ["#include <stdlib.h>", "", f"int {name}(const int *c) {{", "  int total = 0;"]
    for i in range(n):
        lines.append(f"  char *p{i} = malloc({i % 64 + 1}); if (p{i}) {{ total += c[{i % 16}]; free(p{i}); }}")
    lines += ["  return total;", "}", ""]
    return "\n".join(lines)


def straight_line(n: int, name: str = "straight_line") -> str:
    """One block of `n` declarations that the state must remember (`char *pN = NULL;`, as in
    generated code): each event's work grows with the state, quadratic without a budget."""
    lines = ["#include <stdlib.h>", "", f"int {name}(int k) {{"]
    lines += [f"  char *p{i} = NULL;" for i in range(n)]
    lines += ["  return k;", "}", ""]
    return "\n".join(lines)


_DEFINITION = re.compile(r"^[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)


def function_names(text: str) -> set[str]:
    """Names of the C functions defined in a generated file (for checking notes name them)."""
    return set(_DEFINITION.findall(text))


def big_file(target_bytes: int, groups: list[Group] | None = None) -> str:
    """A generated C file of about `target_bytes`: renamed copies of the C fixtures' functions
    concatenated (one translation unit, thousands of functions)."""
    if groups is None:
        groups = prepare_groups()
    c_groups = [g for g in groups if len(g.files) == 1 and g.files[0].suffix == ".c"]
    parts = ['#include <stdlib.h>', '#include <string.h>', '#include <stdio.h>', '#include "onnxruntime_c_api.h"',
             '#include <jni.h>', ""]
    size = sum(len(p) + 1 for p in parts)
    k = 0
    while size < target_bytes:
        for index, group in enumerate(c_groups):
            text = group.files[0].read_text(encoding="utf-8", errors="replace")
            text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#include"))
            chunk = rename_text(text, group.names, f"b{k}g{index}", {})
            parts.append(chunk)
            size += len(chunk) + 1
            if size >= target_bytes:
                break
        k += 1
    return "\n".join(parts) + "\n"


def write_pathological(out: Path, scale: float = 1.0, groups: list[Group] | None = None) -> dict[str, Path]:
    """The pathological inputs, as files under `out`. `scale` < 1 makes them small (tests)."""
    out.mkdir(parents=True, exist_ok=True)
    include = FIXTURES / "include"
    if include.is_dir():
        shutil.copytree(include, out / "include", dirs_exist_ok=True)
    files = {
        "branches": ("many_branches.c", sequential_branches(max(4, int(3000 * scale)))),
        "gotos": ("many_labels.c", goto_ladder(max(4, int(300 * scale)))),
        "loops": ("deep_loops.c", deep_loops(max(3, int(60 * scale)))),
        "long": ("long_body.c", long_function(max(10, int(5000 * scale)))),
        "straight": ("straight_line.c", straight_line(max(10, int(20000 * scale)))),
        "big": ("big_file.c", big_file(max(20_000, int(5 * 1024 * 1024 * scale)), groups)),
    }
    paths = {}
    for key, (name, text) in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        paths[key] = path
    return paths


def tree_lines(paths: list[Path]) -> int:
    return sum(_count_lines(p.read_bytes()) for p in paths)


def main(argv: list[str] | None = None) -> None:
    """`python bench/synth.py [DIR] [LINES]`: build one tree and print its folder."""
    import argparse
    import sys
    import tempfile
    parser = argparse.ArgumentParser(description="Build a synthetic tree from ortlint's fixtures.")
    parser.add_argument("folder", nargs="?", help="where to build it (default: a new temporary folder)")
    parser.add_argument("lines", nargs="?", type=int, default=10_000, help="about how many lines (default: 10000)")
    args = parser.parse_args(argv)
    target = Path(args.folder) if args.folder else Path(tempfile.mkdtemp(prefix="ortlint-tree-"))
    tree = build_tree(target, args.lines)
    print(f"{tree.root}: {len(tree.files)} files, {tree.lines} lines, {tree.copies} copies, {tree.by_language}",
          file=sys.stderr)
    print(os.fspath(tree.root))


if __name__ == "__main__":  # pragma: no cover - manual use
    main()

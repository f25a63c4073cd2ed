"""Every C/C++ fixture again, in precise mode: libclang with a generated compile_commands.json.

Expectations are the fixture's `// expect:` comments, plus the ones tagged `[clang]`; those
tagged `[tree-sitter]` are not expected here. Each tagged line says why the two front ends
disagree. The tests also check that the files really went through libclang (no fallback
notice), and the fallbacks themselves: libclang missing, a file not in the database, a file
that does not compile, auto-discovery.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
from pathlib import Path

import pytest

from ortlint.api import default_policy
from ortlint.frontends.clang import frontend as clang_frontend
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.runner import run
from tests.expectations import as_expected, expected_findings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
INCLUDE = FIXTURES / "include"
SOURCES = (".c", ".cc", ".cpp", ".cxx")


def _jni_includes() -> list[str]:
    homes = [os.environ.get("JAVA_HOME", "")] + sorted(glob.glob("/usr/lib/jvm/*"))
    for home in homes:
        inc = os.path.join(home, "include")
        if home and os.path.isfile(os.path.join(inc, "jni.h")):
            return [inc] + [os.path.dirname(p) for p in glob.glob(os.path.join(inc, "*", "jni_md.h"))]
    return []


JNI = _jni_includes()


def _libclang_available() -> bool:
    try:
        clang_frontend._cindex()
        return True
    except clang_frontend.ClangFallback:
        return False


pytestmark = pytest.mark.skipif(not _libclang_available(), reason="libclang cannot be loaded")


def clang_fixtures() -> list[Path]:
    out = []
    for p in sorted(FIXTURES.rglob("*")):
        if p.suffix not in SOURCES or "multi" in p.relative_to(FIXTURES).parts:
            continue
        if b"<jni.h>" in p.read_bytes() and not JNI:
            continue
        if b"precise: not compilable" in p.read_bytes():  # by design (a header the tree does not have)
            continue
        out.append(p)
    return out


def compile_entry(path: Path) -> dict:
    cpp = path.suffix != ".c"
    args = ["clang++" if cpp else "clang", "-std=gnu++17" if cpp else "-std=gnu11", f"-I{INCLUDE}", f"-I{path.parent}"]
    args += [f"-I{d}" for d in JNI]
    args += ["-c", path.name, "-o", f"/tmp/{path.stem}.o"]
    return {"directory": str(path.parent), "file": path.name, "arguments": args}


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("compdb")
    db = folder / "compile_commands.json"
    db.write_text(json.dumps([compile_entry(p) for p in clang_fixtures()], indent=1))
    return str(db)


def lint_precise(paths: list[str], db: str | None):
    return run(RunConfig(paths, default_policy(), compile_commands=db))


@pytest.mark.parametrize("path", clang_fixtures(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_with_libclang(path: Path, database: str) -> None:
    report = lint_precise([str(path)], database)
    fallbacks = [n.message for n in report.notices if "tree-sitter instead" in n.message]
    assert not fallbacks, fallbacks
    got = {(Path(f.path).name, f.line, f.rule) for f in as_expected(report.findings)}
    expected = expected_findings(path, "clang")
    missing, extra = sorted(expected - got), sorted(got - expected)
    assert not missing and not extra, f"missing: {missing}\nunexpected: {extra}"


def test_fixtures_compile_without_errors(database: str) -> None:
    """The stub headers are complete enough: libclang reports no error in any fixture (the
    deliberately broken ones aside: unparsable code, and a macro from a header the fixture
    does not include, as a tree's includer-provided macros are)."""
    for path in clang_fixtures():
        if path.name in ("unparsable_code.c", "member_macro_without_semicolon.cpp",
                         "member_macro_without_semicolon_clean.cpp"):
            continue
        report = lint_precise([str(path)], database)
        errors = [n.message for n in report.notices if "libclang reported" in n.message]
        assert not errors, (path.name, errors)


def test_file_missing_from_database_falls_back(tmp_path: Path) -> None:
    src = tmp_path / "leak.c"
    src.write_text("#include <stdlib.h>\nvoid f(void) { char *p = malloc(4); }\n")
    (tmp_path / "compile_commands.json").write_text("[]")
    report = lint_precise([str(src)], str(tmp_path / "compile_commands.json"))
    assert [f.rule for f in report.findings] == ["ORT001"]
    assert any("not listed in compile_commands.json" in n.message for n in report.notices)


def test_file_that_does_not_compile_falls_back(tmp_path: Path) -> None:
    src = tmp_path / "broken.c"
    src.write_text('#include "no_such_header.h"\n#include <stdlib.h>\nvoid f(void) { char *p = malloc(4); }\n')
    db = tmp_path / "compile_commands.json"
    db.write_text(json.dumps([{"directory": str(tmp_path), "file": "broken.c", "arguments": ["cc", "-c", "broken.c"]}]))
    report = lint_precise([str(src)], str(db))
    assert [f.rule for f in report.findings] == ["ORT001"]
    notes = [n.message for n in report.notices if "tree-sitter instead" in n.message]
    assert notes and "no_such_header.h" in notes[0]


def test_libclang_missing_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "leak.c"
    src.write_text("#include <stdlib.h>\nvoid f(void) { char *p = malloc(4); }\n")
    db = tmp_path / "compile_commands.json"
    db.write_text(json.dumps([{"directory": str(tmp_path), "file": "leak.c", "arguments": ["cc", "-c", "leak.c"]}]))
    monkeypatch.setitem(clang_frontend._STATE, "error", "libclang cannot be loaded (test); analyzed with tree-sitter instead")
    report = lint_precise([str(src)], str(db))
    assert [f.rule for f in report.findings] == ["ORT001"]
    assert any("libclang cannot be loaded" in n.message for n in report.notices)


def test_compile_database_is_discovered_in_build_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    src = tmp_path / "src" / "macro_leak.c"
    src.parent.mkdir()
    shutil.copy(FIXTURES / "cpp" / "status_macros.h", src.parent / "status_macros.h")
    src.write_text('#include <stdlib.h>\n#include "status_macros.h"\n'
                   'int f(int bad) { char *p = malloc(4); FAIL_IF(bad); free(p); return 0; }\n')
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "compile_commands.json").write_text(json.dumps(
        [{"directory": str(src.parent), "file": str(src), "arguments": ["cc", "-c", str(src)]}]))
    report = lint_precise([str(tmp_path / "src")], None)
    assert any("using this compile database" in n.message for n in report.notices)
    assert [(f.rule, f.line) for f in report.findings] == [("ORT001", 3)]
    off = lint_precise([str(tmp_path / "src")], "")
    # without the database, the header index reads the same macro from status_macros.h
    assert not any("using this compile database" in n.message for n in off.notices)
    assert [(f.rule, f.line) for f in off.findings] == [("ORT001", 3)]


def test_compile_database_folder_is_accepted(tmp_path: Path) -> None:
    db = tmp_path / "compile_commands.json"
    db.write_text("[]")
    assert clang_frontend.resolve_compile_commands(str(tmp_path), []) == str(db)


def test_cached_results_follow_edited_headers(tmp_path: Path) -> None:
    """Precise mode expands macros from headers: a cached result must not survive a header edit."""
    (tmp_path / "check.h").write_text(
        "#define CHECK(e) do { OrtStatus *s_ = (e); if (s_ != NULL) { api->ReleaseStatus(s_); } } while (0)\n")
    (tmp_path / "a.c").write_text(
        '#include <stddef.h>\n#include "onnxruntime_c_api.h"\n#include "check.h"\n'
        "int f(const OrtApi *api) {\n"
        "  OrtSessionOptions *o = NULL;\n"
        "  CHECK(api->CreateSessionOptions(&o));\n"
        "  CHECK(api->SetIntraOpNumThreads(o, 1));\n"
        "  api->ReleaseSessionOptions(o);\n"
        "  return 0;\n"
        "}\n")
    db = [{"directory": str(tmp_path), "file": str(tmp_path / "a.c"),
           "arguments": ["cc", "-I", str(INCLUDE), "-I", str(tmp_path), "-c", "a.c"]}]
    (tmp_path / "compile_commands.json").write_text(json.dumps(db))
    config = RunConfig([str(tmp_path / "a.c")], default_policy(), compile_commands=str(tmp_path / "compile_commands.json"),
                       cache_dir=str(tmp_path / "cache"))
    assert not run(config).findings
    header = tmp_path / "check.h"
    header.write_text(
        "#define CHECK(e) do { OrtStatus *s_ = (e); if (s_ != NULL) { api->ReleaseStatus(s_); return -1; } } while (0)\n")
    os.utime(header, ns=(1, 1))  # a different mtime even on coarse clocks
    again = run(config)
    assert [(f.line, f.rule) for f in again.findings] == [(6, "ORT001")]  # the hidden return leaks `o`

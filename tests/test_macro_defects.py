"""One finding per macro defect (engine/macro_defects.py): a macro of the analyzed tree that loses
what it acquires in every expansion is reported once, at its #define, with the expansions listed;
what depends on the call site stays there (fixtures/c/macro_defect_once*.c cover the lines)."""
from __future__ import annotations

import json
from pathlib import Path

from ortlint.api import lint
from tests.clihelpers import FIXTURES, ortlint

HEADER = """#include "onnxruntime_c_api.h"
#include <stdio.h>
#define CHECK_ORT(api, expr)                  \\
  do {                                        \\
    OrtStatus *s_ = (expr);                   \\
    if (s_) {                                 \\
      puts((api)->GetErrorMessage(s_));       \\
      return 1;                               \\
    }                                         \\
  } while (0)
"""


def _tree(tmp_path: Path, calls: int) -> Path:
    (tmp_path / "include").mkdir(parents=True)
    (tmp_path / "include" / "check.h").write_text(HEADER)
    (tmp_path / "include" / "onnxruntime_c_api.h").write_text((FIXTURES / "include" / "onnxruntime_c_api.h").read_text())
    body = "\n".join(f"  CHECK_ORT(api, api->SetIntraOpNumThreads(o, {i}));" for i in range(calls))
    for name in ("a", "b"):
        (tmp_path / f"{name}.c").write_text(f'#include "include/check.h"\nint {name}(const OrtApi *api, OrtSessionOptions *o) {{\n'
                                            f"{body}\n  return 0;\n}}\n")
    return tmp_path


def test_a_header_macro_defect_is_reported_once_at_its_definition_with_every_expansion(tmp_path: Path) -> None:
    report = lint([str(_tree(tmp_path, 3))])
    assert len(report.findings) == 1
    f = report.findings[0]
    assert (Path(f.path).name, f.line, f.rule) == ("check.h", 3, "ORT001")
    assert f.expansions == 6 and len(f.related) == 6
    assert sorted((Path(s.path).name, s.line) for s in f.related) == [(n, line) for n in ("a.c", "b.c") for line in (3, 4, 5)]
    assert f.message.startswith("macro CHECK_ORT has this defect in each of its 6 expansions (2 functions, listed)")
    assert f.trace[0].message == "macro CHECK_ORT is defined here"


def test_the_folded_finding_keeps_its_identity_when_expansions_are_added(tmp_path: Path) -> None:
    one = lint([str(_tree(tmp_path / "one", 1))]).findings[0]
    three = lint([str(_tree(tmp_path / "three", 3))]).findings[0]
    assert one.anchor == three.anchor == "macro:CHECK_ORT:ORT001"


def test_json_and_sarif_carry_the_expansions(tmp_path: Path) -> None:
    tree = _tree(tmp_path, 2)
    doc = json.loads(ortlint("--no-cache", "--format", "json", str(tree)).stdout)
    assert [f["macro_expansions"] for f in doc["findings"]] == [4]
    sarif = json.loads(ortlint("--no-cache", "--format", "sarif", str(tree)).stdout)
    result = sarif["runs"][0]["results"][0]
    assert result["properties"]["macroExpansions"] == 4
    assert len(result["relatedLocations"]) == 4


def test_a_macro_from_a_header_outside_the_tree_is_not_folded(tmp_path: Path) -> None:
    """An SDK's macro (an include folder outside the analyzed tree) is not the tree's to fix: each
    expansion stays a finding at its call site."""
    sdk = _tree(tmp_path / "sdk", 1) / "include"
    app = tmp_path / "app"
    app.mkdir()
    (app / "x.c").write_text('#include "check.h"\nint x(const OrtApi *api, OrtSessionOptions *o) {\n'
                             "  CHECK_ORT(api, api->SetIntraOpNumThreads(o, 1));\n"
                             "  CHECK_ORT(api, api->SetInterOpNumThreads(o, 1));\n  return 0;\n}\n")
    (app / "ortlint.toml").write_text(f"include-dirs = [{json.dumps(str(sdk))}]\n")  # the project is app/
    out = ortlint("--no-cache", "--format", "json", "--config", str(app / "ortlint.toml"), str(app))
    doc = json.loads(out.stdout)
    assert [(Path(f["path"]).name, f["line"], f["rule"]) for f in doc["findings"]] == [("x.c", 3, "ORT001"), ("x.c", 4, "ORT001")], out.stderr

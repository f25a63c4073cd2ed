"""SARIF output: valid against the official 2.1.0 schema and complete enough for GitHub code
scanning (rule metadata, relative URIs, code flows, related locations, stable fingerprints,
tool notifications)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from tests.clihelpers import FIXTURES, LEAK_C, SHARED, ortlint, write

SCHEMA_PATH = SHARED / "sarif-schema-2.1.0.json"
CASES = SHARED / "conformance" / "cases"


@pytest.fixture(scope="module")
def validator() -> Draft4Validator:
    if not SCHEMA_PATH.is_file():
        pytest.skip(f"SARIF schema not found at {SCHEMA_PATH}")
    return Draft4Validator(json.loads(SCHEMA_PATH.read_text()), format_checker=Draft4Validator.FORMAT_CHECKER)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def sarif(*args: str) -> dict:
    r = ortlint("--isolated", "--format", "sarif", *args)
    assert r.code in (0, 1, 2), r.stderr
    return json.loads(r.stdout)


def assert_valid(validator: Draft4Validator, doc: dict) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def test_fixtures_validate(validator: Draft4Validator) -> None:
    doc = sarif(str(FIXTURES))
    assert doc["runs"][0]["results"], "the fixtures contain findings"
    assert_valid(validator, doc)


def test_conformance_cases_validate(validator: Draft4Validator) -> None:
    if not CASES.is_dir():
        pytest.skip("conformance cases not available")
    assert_valid(validator, sarif(str(CASES)))


def test_empty_run_and_tool_notifications_validate(validator: Draft4Validator, tmp_path: Path) -> None:
    write(tmp_path, "bin.c", b"\x7fELF\x00\x00\x01")
    write(tmp_path, "ok.c", "int f(void) { return 0; }\n")
    doc = sarif(".", "missing.c")
    assert_valid(validator, doc)
    run = doc["runs"][0]
    assert run["results"] == []
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is True
    notes = {(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], n["level"]): n["message"]["text"]
             for n in invocation["toolExecutionNotifications"]}
    assert notes[("bin.c", "warning")] == "binary file (contains NUL bytes); skipped"
    assert notes[("missing.c", "error")] == "no such file or directory"


def test_driver_describes_every_rule() -> None:
    driver = sarif(str(FIXTURES / "c" / "goto_cleanup.c"))["runs"][0]["tool"]["driver"]
    assert driver["name"] == "ortlint" and driver["version"] and driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    assert ids == sorted(ids) and "ORT001" in ids and "ORT010" in ids
    for rule in driver["rules"]:
        assert rule["name"] and rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"] and not rule["fullDescription"]["text"].startswith(rule["id"])
        assert "## What it does" in rule["help"]["markdown"] and "What it does" in rule["help"]["text"]
        assert rule["helpUri"].endswith(f"/docs/rules/{rule['id']}.md")
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        props = rule["properties"]
        assert props["tags"] and props["precision"] in ("very-high", "high", "medium", "low")
        assert props["problem.severity"] in ("error", "warning", "recommendation")


def test_result_shape(tmp_path: Path) -> None:
    write(tmp_path, "src/leak.c", LEAK_C)
    run = sarif("src")["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    (result,) = run["results"]
    assert result["ruleId"] == "ORT001" and run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "ORT001"
    assert result["level"] == "error" and "not released" in result["message"]["text"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "src/leak.c", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 3, "startColumn": 13, "endLine": 3, "endColumn": 22}
    flow = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [step["location"]["physicalLocation"]["region"]["startLine"] for step in flow] == [3, 4, 5]
    assert flow[0]["location"]["message"]["text"] == "heap block acquired by malloc() into `p`"
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"]["region"]["startLine"] == 5
    assert set(result["partialFingerprints"]) == {"ortlintFingerprint/v1"}


def _fingerprints(doc: dict) -> dict[int, str]:
    return {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r["partialFingerprints"]["ortlintFingerprint/v1"]
            for r in doc["runs"][0]["results"]}


def test_fingerprints_survive_unrelated_lines_inserted_above(tmp_path: Path) -> None:
    src = write(tmp_path, "a.c", LEAK_C)
    before = _fingerprints(sarif("a.c"))
    src.write_text("// new header comment\n#include <stdio.h>\n\nstatic int unrelated(void) {\n  return 1;\n}\n\n" + LEAK_C)
    after = _fingerprints(sarif("a.c"))
    assert list(before) == [3] and list(after) == [10]
    assert before[3] == after[10]


def test_fingerprints_do_not_depend_on_how_the_path_was_given(tmp_path: Path) -> None:
    write(tmp_path, "src/a.c", LEAK_C)
    assert _fingerprints(sarif("src")) == _fingerprints(sarif(str(tmp_path / "src" / "a.c"))) == _fingerprints(sarif("./src/"))


def test_repeated_fingerprints_are_numbered(tmp_path: Path) -> None:
    write(tmp_path, "a.c", '#include <string.h>\nvoid f(void) {\n  strdup("x");\n  strdup("x");\n}\n')
    prints = _fingerprints(sarif("a.c"))
    assert len(prints) == 2 and prints[4] == prints[3] + ":2"


def test_leak_with_several_exits_lists_each_as_related_location(tmp_path: Path) -> None:
    write(tmp_path, "a.c", "#include <stdlib.h>\nint f(int n) {\n  char *p = malloc(4);\n  if (n == 1)\n    return 1;\n"
                           "  if (n == 2)\n    return 2;\n  free(p);\n  return 0;\n}\n")
    (result,) = sarif("a.c")["runs"][0]["results"]
    lines = sorted(r["physicalLocation"]["region"]["startLine"] for r in result["relatedLocations"])
    assert lines == [5, 7]
    assert [r["id"] for r in result["relatedLocations"]] == [0, 1]


def test_conformance_scorer_reads_our_sarif(tmp_path: Path) -> None:
    score = SHARED / "conformance" / "score.py"
    if not score.is_file():
        pytest.skip("conformance scorer not available")
    out = tmp_path / "r.sarif"
    ortlint("--isolated", "--format", "sarif", "--output", str(out), str(CASES))
    summary = tmp_path / "summary.json"
    proc = subprocess.run([sys.executable, str(score), "--sarif", str(out), "--json", str(summary)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(out.read_text())["runs"][0]["results"]
    assert f"reported: {len(results)} findings, {len(results)} in case files" in proc.stdout

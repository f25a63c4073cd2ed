"""The public conformance suite (../shared/conformance), scored with its own scorer."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ortlint.api import lint
from ortlint.report.sarif import format_sarif

CONFORMANCE = Path(__file__).resolve().parents[2] / "shared" / "conformance"


@pytest.mark.skipif(not (CONFORMANCE / "score.py").exists(), reason="conformance suite not present")
def test_conformance_suite_recall_and_precision(tmp_path: Path) -> None:
    report = lint([str(CONFORMANCE / "cases")])
    sarif = tmp_path / "r.sarif"
    sarif.write_text(format_sarif(report), encoding="utf-8")
    summary = tmp_path / "summary.json"
    subprocess.run([sys.executable, str(CONFORMANCE / "score.py"), "--sarif", str(sarif), "--json", str(summary)],
                   check=True, capture_output=True)
    result = json.loads(summary.read_text())
    per_rule = result["per_rule"]
    c_side = {r: v for r, v in per_rule.items() if r != "ORT010"}
    tp = sum(v["tp"] for v in c_side.values())
    fn = sum(v["fn"] for v in c_side.values())
    fp = sum(v["fp"] for v in c_side.values())
    assert tp / (tp + fn) >= 0.95 and tp / (tp + fp) >= 0.95, result["missed"] + result["false"]

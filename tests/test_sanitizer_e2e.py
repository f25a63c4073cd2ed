"""End to end with real sanitizer logs: the fixtures under fixtures/sanitizer/programs are built
with `gcc -fsanitize=address -g` against the fake ONNX Runtime API in fixtures/sanitizer/fakeort,
run with inputs that take their error paths, and the logs they print go to `ortlint sanitizer`.

The programs are compiled from a copy in a temporary build folder, so the frames name paths that
only share a suffix with the analyzed tree, as logs from a CI machine do. Everything is built and
run once per module (about a second of gcc per program).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from tests.clihelpers import FIXTURES, SHARED, ortlint

SANITIZER = FIXTURES / "sanitizer"
RUNS = [  # (program, arguments): each takes an error path
    ("leaks", ["bad.onnx"]),
    ("leaks", ["model.onnx", "early"]),
    ("double_free", ["model.onnx", "retry"]),
    ("use_after_free", ["model.onnx", "verbose"]),
    ("slots", ["model.onnx", "twice"]),
    ("slots", ["model.onnx", "drop"]),
]
ENV = {**os.environ, "ASAN_OPTIONS": "detect_leaks=1:symbolize=1:abort_on_error=0", "LSAN_OPTIONS": ""}


def _asan_unavailable(build: Path) -> str | None:
    """Why this machine cannot produce sanitizer logs, or None when it can."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return "gcc is not installed"
    probe = build / "probe.c"
    probe.write_text("#include <stdlib.h>\nint main(void) { void *p = malloc(7); p = 0; return 0; }\n")
    compiled = subprocess.run([gcc, "-fsanitize=address", "-g", str(probe), "-o", str(build / "probe")],
                              capture_output=True, text=True, timeout=120)
    if compiled.returncode != 0:
        return f"gcc cannot build with -fsanitize=address: {compiled.stderr.strip()[:200]}"
    ran = subprocess.run([str(build / "probe")], capture_output=True, text=True, timeout=60, env=ENV)
    if "LeakSanitizer" not in ran.stderr:
        return f"LeakSanitizer does not run here (under ptrace?): {ran.stderr.strip()[:200]}"
    return None


@pytest.fixture(scope="module")
def sanitizer_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("asan-build")
    reason = _asan_unavailable(build)
    if reason:
        pytest.skip(reason)
    src = build / "checkout" / "fixtures" / "sanitizer"  # another folder, same path suffix as the tree
    shutil.copytree(SANITIZER, src)
    fake = build / "fake_ort.o"
    subprocess.run(["gcc", "-fsanitize=address", "-g", "-c", str(src / "fakeort" / "fake_ort.c"), "-o", str(fake)],
                   check=True, timeout=120)
    for program in sorted({p for p, _ in RUNS}):
        subprocess.run(["gcc", "-fsanitize=address", "-g", "-I", str(src / "fakeort"),
                        str(src / "programs" / f"{program}.c"), str(fake), "-o", str(build / program)],
                       check=True, timeout=120)
    chunks = []
    for program, args in RUNS:
        ran = subprocess.run([str(build / program), *args], capture_output=True, text=True, timeout=60, env=ENV)
        assert ran.returncode != 0, f"{program} {args} should fail under ASan"
        chunks.append(f"$ ./{program} {' '.join(args)}\n{ran.stdout}{ran.stderr}")
    log = build / "asan.log"
    log.write_text("".join(chunks))
    return log


@pytest.fixture(autouse=True)
def _in_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SANITIZER)


def _json(log: Path) -> dict:
    r = ortlint("sanitizer", str(log), "programs", "--isolated", "--format", "json")
    assert r.code == 1, r.stderr
    return json.loads(r.stdout)


def test_every_runtime_error_is_related(sanitizer_log: Path) -> None:
    reports = _json(sanitizer_log)["reports"]
    got = [(r["kind"], r["site"]["path"], r["site"]["line"], r["site"]["function"],
            r["finding"] and (r["finding"]["rule"], r["finding"]["path"], r["finding"]["line"])) for r in reports]
    assert got == [
        ("leak", "programs/leaks.c", 23, "probe", ("ORT001", "programs/leaks.c", 23)),  # the failed status
        ("leak", "programs/leaks.c", 40, "run_model", ("ORT001", "programs/leaks.c", 40)),  # session options
        ("leak", "programs/leaks.c", 13, "open_session", ("ORT001", "programs/leaks.c", 47)),  # returned by a helper
        ("double-free", "programs/double_free.c", 21, "run", ("ORT002", "programs/double_free.c", 21)),
        ("use-after-free", "programs/use_after_free.c", 20, "inspect", ("ORT006", "programs/use_after_free.c", 20)),
        ("leak", "programs/slots.c", 20, "load_cached", None),  # a global slot
        ("leak", "programs/slots.c", 32, "holder_open", None),  # an escaping store
    ]


def test_runtime_figures(sanitizer_log: Path) -> None:
    reports = _json(sanitizer_log)["reports"]
    assert [(r["bytes"], r["objects"]) for r in reports] == [(48, 1), (16, 1), (8, 1), (8, 1), (8, 1), (8, 1), (8, 1)]
    assert set(reports[0]) == {"kind", "bytes", "objects", "site", "finding", "explanation"}


def test_indirect_leak_is_grouped_under_its_direct_leak(sanitizer_log: Path) -> None:
    options = _json(sanitizer_log)["reports"][1]
    assert "16 more byte(s) in 1 object(s) leak indirectly" in options["explanation"]


def test_helper_that_returns_the_handle_is_followed_to_the_caller(sanitizer_log: Path) -> None:
    session = _json(sanitizer_log)["reports"][2]
    assert "open_session() hands it to its caller (returned at programs/leaks.c:18)" in session["explanation"]


def test_global_slot_and_escaping_store_are_explained(sanitizer_log: Path) -> None:
    cached, holder = _json(sanitizer_log)["reports"][5:]
    assert "escaped at programs/slots.c:20" in cached["explanation"]
    assert "`g_cached`" in cached["explanation"] and "no code in the tree releases" in cached["explanation"]
    assert "escaped at programs/slots.c:38" in holder["explanation"] and "`h->session`" in holder["explanation"]
    assert "released only by holder_close() at programs/slots.c:44" in holder["explanation"]


def test_text_output_shows_findings_and_traces(sanitizer_log: Path) -> None:
    r = ortlint("sanitizer", str(sanitizer_log), "programs", "--isolated")
    assert r.code == 1
    assert "programs/double_free.c:21: double-free: double free" in r.stdout
    assert "    explained by programs/double_free.c:21:3: ORT002 double-release:" in r.stdout
    assert "programs/double_free.c:19: `session` released by ReleaseSession()" in r.stdout  # the trace
    assert "    + Indirect leak of 16 byte(s) in 1 object(s) hanging off it" in r.stdout
    assert r.stdout.rstrip().endswith("7 sanitizer reports: 5 explained by a finding, 2 not.")


def test_sarif_one_result_per_report_and_valid(sanitizer_log: Path) -> None:
    r = ortlint("sanitizer", str(sanitizer_log), "programs", "--isolated", "--format", "sarif")
    doc = json.loads(r.stdout)
    results = doc["runs"][0]["results"]
    assert [x["ruleId"] for x in results] == ["ORT001", "ORT001", "ORT001", "ORT002", "ORT006", "ORTSAN", "ORTSAN"]
    assert results[0]["message"]["text"].startswith("Sanitizer: Direct leak of 48 byte(s) in 1 object(s). Explained by ORT001: ")
    assert results[5]["message"]["text"].startswith("Sanitizer: Direct leak of 8 byte(s) in 1 object(s). Not explained by a finding: escaped at")
    related = results[2]["relatedLocations"]  # the allocation stack inside the tree: helper, caller, main
    assert [loc["physicalLocation"]["region"]["startLine"] for loc in related] == [13, 47, 64]
    schema = SHARED / "sarif-schema-2.1.0.json"
    if schema.is_file():
        validator = Draft4Validator(json.loads(schema.read_text()), format_checker=Draft4Validator.FORMAT_CHECKER)
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
        assert not errors, errors[:5]


def test_same_log_twice_counts_each_site_once(sanitizer_log: Path, tmp_path: Path) -> None:
    doubled = tmp_path / "twice.log"
    doubled.write_text(sanitizer_log.read_text() * 2)
    reports = _json(doubled)["reports"]
    assert len(reports) == 7
    assert [(r["bytes"], r["objects"]) for r in reports][:2] == [(96, 2), (32, 2)]
    assert "(reported 2 times)" in reports[0]["explanation"]


def test_frames_outside_the_tree(sanitizer_log: Path) -> None:
    r = ortlint("sanitizer", str(sanitizer_log), "fakeort", "--isolated", "--format", "json")
    reports = json.loads(r.stdout)["reports"]
    assert reports and all(x["finding"] is None for x in reports)
    # analyzing only the fake library: each stack's first in-tree frame is inside it, and the
    # explanation follows the handle out to callers outside the tree
    assert all(x["site"] is None or x["site"]["path"] == "fakeort/fake_ort.c" for x in reports)
    assert any("outside the analyzed tree" in x["explanation"] for x in reports)
    # the options' log id, allocated by the same constructor, still hangs off the options
    assert sum("leak indirectly" in x["explanation"] for x in reports) == 1 and len(reports) == 7

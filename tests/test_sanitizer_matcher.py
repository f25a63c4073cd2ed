"""Relating reports to findings on small trees and hand-written logs: the reasons given when no
finding explains a report (infeasible path, unknown callee, incomplete analysis, outside the
tree) and the path-suffix matching of frames."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ortlint.api import default_policy, lint
from ortlint.findings import Notice
from ortlint.sanitizer.facts import TreeCode
from ortlint.sanitizer.log import parse_log
from ortlint.sanitizer.matcher import PathIndex, relate
from tests.clihelpers import ortlint, write

HEADER = '#include "onnxruntime_c_api.h"\n'
CODE = HEADER + """\
void released_everywhere(const OrtApi *api) {
  OrtSessionOptions *o = NULL;
  OrtStatus *st = api->CreateSessionOptions(&o);
  if (st != NULL) {
    api->ReleaseStatus(st);
    return;
  }
  api->ReleaseSessionOptions(o);
}

void handed_away(const OrtApi *api) {
  OrtSessionOptions *o = NULL;
  OrtStatus *st = api->CreateSessionOptions(&o);
  if (st != NULL) {
    api->ReleaseStatus(st);
    return;
  }
  register_options(o);
}
"""


def leak_at(path: str, line: int, function: str, size: int = 16) -> str:
    return (f"Direct leak of {size} byte(s) in 1 object(s) allocated from:\n"
            f"    #0 0x7f00 in malloc (/lib/libasan.so.8+0xbfb00)\n"
            f"    #1 0x7f01 (/opt/ort/libonnxruntime.so+0x1234)\n"
            f"    #2 0x5500 in {function} {path}:{line}:19\n"
            f"    #3 0x5501 in main /elsewhere/main.c:3\n\n")


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "src/opts.c", CODE)
    return tmp_path


def explain(log_text: str, paths: list[str]):
    report = lint(paths)
    return relate(parse_log(log_text), report, TreeCode(report.files, default_policy())).explained


def test_path_suffix_picks_the_longest_match(tmp_path: Path) -> None:
    index = PathIndex(["a/src/model.c", "b/test/model.c", "c/other.c"])
    assert index.resolve("/ci/build/src/model.c") == "a/src/model.c"
    assert index.resolve("C:\\\\ci\\\\test\\\\model.c") == "b/test/model.c"
    assert index.resolve("/usr/include/stdio.h") is None and index.resolve(None) is None


def test_infeasible_path(tree: Path) -> None:
    (e,) = explain(leak_at("/ci/work/src/opts.c", 4, "released_everywhere"), ["src"])
    assert e.finding is None and e.site.line == 4 and e.site.function == "released_everywhere"
    assert "considers infeasible" in e.explanation


def test_passed_to_an_unknown_function(tree: Path) -> None:
    (e,) = explain(leak_at("/ci/work/src/opts.c", 14, "handed_away"), ["src"])
    assert e.finding is None
    assert "escaped at src/opts.c:19: passed to register_options()" in e.explanation


def test_incomplete_analysis_is_named(tree: Path) -> None:
    report = lint(["src"])
    report.notices.append(Notice("src/opts.c", 2, "released_everywhere() has too many distinct paths to analyze "
                                                  "completely; findings for it may be incomplete", "note"))
    (e,) = relate(parse_log(leak_at("/x/src/opts.c", 4, "released_everywhere")), report,
                  TreeCode(report.files, default_policy())).explained
    assert e.finding is None and "analysis of released_everywhere() was incomplete" in e.explanation


def test_outside_the_tree(tree: Path) -> None:
    (e,) = explain(leak_at("/ci/vendor/lib.c", 4, "vendor_init"), ["src"])
    assert e.site is None and e.finding is None and "outside the tree" in e.explanation


def test_truncated_report_is_kept_and_said(tree: Path) -> None:
    log = tree / "cut.log"
    log.write_text("==5==ERROR: LeakSanitizer: detected memory leaks\n\nDirect leak of 7 byte(s) in 1 object(s) allocated from:\n")
    r = ortlint("sanitizer", str(log), "src", "--isolated", "--format", "json")
    assert r.code == 1
    (report,) = json.loads(r.stdout)["reports"]
    assert report == {"kind": "leak", "bytes": 7, "objects": 1, "site": None, "finding": None,
                      "explanation": "the log ends before the report's stack; nothing to relate it to"}
    text = ortlint("sanitizer", str(log), "src", "--isolated")
    assert "log line 3: warning: the leak report starting here has no stack frames (truncated log?)" in text.stdout
    assert "Traceback" not in text.stdout + text.stderr


def test_exit_codes_and_garbage(tree: Path) -> None:
    clean = write(tree, "clean.log", "all 12 tests passed\n")
    r = ortlint("sanitizer", str(clean), "src", "--isolated")
    assert r.code == 0 and "No sanitizer report in the log." in r.stdout
    assert "no AddressSanitizer or LeakSanitizer report found" in r.stderr
    garbage = write(tree, "garbage.log", bytes(range(256)) * 4)
    r = ortlint("sanitizer", str(garbage), "src", "--isolated", "--format", "json")
    assert r.code == 0 and json.loads(r.stdout) == {"reports": []}
    r = ortlint("sanitizer", str(tree / "missing.log"), "src")
    assert r.code == 2 and "cannot read the log" in r.stderr and "Traceback" not in r.stderr
    r = ortlint("sanitizer", str(tree), "src")
    assert r.code == 2 and "cannot read the log" in r.stderr


def test_log_from_standard_input(tree: Path) -> None:
    from click.testing import CliRunner

    from ortlint.cli import main
    result = CliRunner().invoke(main, ["sanitizer", "-", "src", "--isolated", "--format", "json"],
                                input=leak_at("/b/src/opts.c", 14, "handed_away"))
    assert result.exit_code == 1
    (report,) = json.loads(result.stdout)["reports"]
    assert report["site"] == {"path": "src/opts.c", "line": 14, "function": "handed_away"}


def test_python_api(tree: Path) -> None:
    from ortlint.api import explain_sanitizer_log
    result = explain_sanitizer_log(leak_at("/b/src/opts.c", 14, "handed_away"), ["src"])
    (e,) = result.explained
    assert e.site.function == "handed_away" and e.finding is None and "register_options" in e.explanation


def test_no_crash_on_shuffled_and_cut_logs(tree: Path) -> None:
    """Lines of real-looking logs in random order and cut at random places: never a traceback."""
    import random

    from tests.test_sanitizer_log import DOUBLE, LEAKS, UAF
    lines = (LEAKS + DOUBLE + UAF + leak_at("/b/src/opts.c", 14, "handed_away")).splitlines()
    rng = random.Random(15)
    for i in range(15):
        sample = rng.sample(lines, k=rng.randint(1, len(lines)))
        text = "\n".join(sample)[: rng.randint(0, 4000)]
        log = write(tree, f"fuzz{i}.log", text)
        for fmt in ("text", "json", "sarif"):
            r = ortlint("sanitizer", str(log), "src", "--isolated", "--format", fmt)
            assert r.code in (0, 1), (text, r.stderr)
            assert "Traceback" not in r.stdout + r.stderr and "internal error" not in r.stderr


BOTH = HEADER + """\
int both(const OrtApi *api, OrtEnv *env, OrtSessionOptions *o, int k) {
  OrtSession *s = NULL;
  OrtStatus *st = api->CreateSession(env, "m.onnx", o, &s);
  if (k)
    return 1;
  if (st != NULL) {
    api->ReleaseStatus(st);
    return 2;
  }
  api->ReleaseSession(s);
  return 0;
}
"""


def test_status_or_handle_of_one_call_told_apart_by_the_allocating_frames(tree: Path) -> None:
    write(tree, "src/both.c", BOTH)
    stack = "    #{} 0x5500 in both /ci/src/both.c:4:19\n\n"
    status = ("Direct leak of 40 byte(s) in 1 object(s) allocated from:\n    #0 0x7f00 in malloc (/lib/libasan.so.8+0xbf)\n"
              "    #1 0x7f01 in OrtApis::CreateStatus(OrtErrorCode, char const*) (/usr/lib/libonnxruntime.so+0x12)\n"
              + stack.format(2))
    session = ("Direct leak of 900 byte(s) in 1 object(s) allocated from:\n    #0 0x7f00 in operator new(unsigned long) (/lib/libasan.so.8+0xbf)\n"
               "    #1 0x7f01 in OrtApis::CreateSession (/usr/lib/libonnxruntime.so+0x34)\n" + stack.format(2))
    first, second = explain(status + session, ["src/both.c"])
    assert "OrtStatus" in first.finding.message and "OrtSession" in second.finding.message
    assert first.finding.line == second.finding.line == 4


def test_use_after_free_inside_a_second_release_is_the_double_release(monkeypatch: pytest.MonkeyPatch) -> None:
    """A release function that reads the object before freeing it turns a double release into a
    heap-use-after-free report inside the release: still ORT002 at the second release."""
    from tests.clihelpers import FIXTURES
    monkeypatch.chdir(FIXTURES / "sanitizer")
    log = ("==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020 at pc 0x55 bp 0x7f sp 0x7f\n"
           "READ of size 8 at 0x6020 thread T0\n"
           "    #0 0x55f7 in release_session /b/fakeort/fake_ort.c:62\n"
           "    #1 0x55f8 in run /b/programs/double_free.c:21\n\n"
           "0x6020 is located 8 bytes inside of 16-byte region [0x6020,0x6030)\n"
           "freed by thread T0 here:\n    #0 0x7ff7 in free (/lib/libasan.so.8+0x1)\n"
           "    #1 0x55f9 in run /b/programs/double_free.c:19\n\n"
           "previously allocated by thread T0 here:\n    #0 0x7ff7 in malloc (/lib/libasan.so.8+0x2)\n"
           "    #1 0x55fa in run /b/programs/double_free.c:12\n")
    (e,) = explain(log, ["programs"])
    assert e.kind == "use-after-free" and e.finding.rule == "ORT002" and e.finding.line == 21
    assert [s.line for s in e.allocation] == [12]


GLOBAL_TWICE = HEADER + """\
static OrtSession *g_session;

int open_global(const OrtApi *api, OrtEnv *env, OrtSessionOptions *o) {
  OrtStatus *st = api->CreateSession(env, "m.onnx", o, &g_session);
  if (st != NULL) {
    api->ReleaseStatus(st);
    return -1;
  }
  return 0;
}

void close_global(const OrtApi *api) {
  api->ReleaseSession(g_session);
}
"""


def test_double_free_of_an_escaped_handle_names_the_escape(tree: Path) -> None:
    write(tree, "src/global.c", GLOBAL_TWICE)
    log = ("==1==ERROR: AddressSanitizer: attempting double-free on 0x6020 in thread T0:\n"
           "    #0 0x7ff7 in free (/lib/libasan.so.8+0x1)\n    #1 0x55f8 in close_global /b/src/global.c:14\n\n"
           "freed by thread T0 here:\n    #0 0x7ff7 in free (/lib/libasan.so.8+0x1)\n"
           "    #1 0x55f9 in close_global /b/src/global.c:14\n\n"
           "previously allocated by thread T0 here:\n    #0 0x7ff7 in malloc (/lib/libasan.so.8+0x2)\n"
           "    #1 0x55fa in open_global /b/src/global.c:5\n")
    (e,) = explain(log, ["src/global.c"])
    assert e.finding is None and e.site.function == "close_global"
    assert "stopped following the block allocated at src/global.c:5" in e.explanation
    assert "stored into the global `g_session`" in e.explanation
    assert "released by close_global() at src/global.c:14, and ortlint does not follow" in e.explanation

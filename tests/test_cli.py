"""The command line as users drive it: exit codes, formats, selection, configuration,
suppressions, baselines and the plumbing of options into the runner."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ortlint.cli import execution
from ortlint.orchestration.cache import default_cache_dir
from ortlint.findings import RULES, Finding, Report, Step
from ortlint.report.github import format_github
from tests.clihelpers import CLEAN_C, FIXTURES, LEAK_C, ROOT, ortlint, write


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in an empty folder, so no configuration file of this repository leaks in."""
    monkeypatch.chdir(tmp_path)
    for var in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(var, raising=False)


# ----------------------------------------------------------------------------- exit codes


def test_clean_file_exits_0(tmp_path: Path) -> None:
    write(tmp_path, "ok.c", CLEAN_C)
    r = ortlint("ok.c")
    assert r.code == 0, r.stdout
    assert r.stdout == "No problems found in 1 file.\n"


def test_finding_exits_1_with_location_trace_and_summary(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    r = ortlint("leak.c")
    assert r.code == 1
    lines = r.stdout.splitlines()
    assert re.match(r"^leak\.c:3:13: ORT001 leak: heap block acquired by malloc\(\) into `p` is not released", lines[0])
    assert lines[1:3] == ["    3 |   char *p = malloc(n);", "      |             ^~~~~~~~~"]  # the source and a caret
    assert all(line.startswith("    leak.c:") for line in lines[3:-1])
    assert lines[-1] == "Found 1 problem in 1 file."


def test_exit_zero(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    r = ortlint("--exit-zero", "leak.c")
    assert r.code == 0 and "ORT001" in r.stdout


def test_default_path_is_the_current_folder(tmp_path: Path) -> None:
    write(tmp_path, "src/leak.c", LEAK_C)
    r = ortlint()
    assert r.code == 1 and "src/leak.c:3:13: ORT001" in r.stdout


def test_explicit_check_subcommand_is_the_same(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    assert ortlint("check", "leak.c").stdout == ortlint("leak.c").stdout


def test_missing_path_exits_2_but_other_files_are_reported(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    r = ortlint("leak.c", "nope.c")
    assert r.code == 2
    assert "leak.c:3:13: ORT001" in r.stdout
    assert "nope.c: error: no such file or directory" in r.stdout


def test_missing_path_is_on_stderr_for_machine_formats(tmp_path: Path) -> None:
    r = ortlint("--format", "json", "nope.c")
    assert r.code == 2
    assert "nope.c: no such file or directory" in r.stderr
    json.loads(r.stdout)


@pytest.mark.parametrize("args, message", [
    (["--frobnicate"], "No such option"),
    (["--format", "xml"], "Invalid value for '--format'"),
    (["--jobs", "-1"], "Invalid value for '--jobs'"),
    (["--select", "ORT999"], "--select: unknown rule 'ORT999'"),
    (["--ignore", "lek"], "did you mean 'leak'?"),
    (["--extension", ".cu=fortran"], "unknown language 'fortran'"),
    (["--compile-commands", "missing.json"], "missing.json: no such file or directory"),
    (["--rules", "missing.toml"], "missing.toml: cannot read policy file"),
])
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    write(tmp_path, "ok.c", CLEAN_C)
    r = ortlint(*args, "ok.c")
    assert r.code == 2
    assert message in r.stderr


def test_version() -> None:
    r = ortlint("--version")
    assert r.code == 0 and re.fullmatch(r"ortlint \d+\.\d+\.\d+\S*\n",
                                        r.stdout)


def test_python_dash_m(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    proc = subprocess.run([sys.executable, "-m", "ortlint", "--quiet", "leak.c"], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("leak.c:3:13: ORT001 leak:")


def test_internal_error_exits_2_with_a_clear_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(config, progress=None):
        raise RuntimeError("engine exploded")
    monkeypatch.setattr(execution, "run", boom)
    write(tmp_path, "ok.c", CLEAN_C)
    r = ortlint("ok.c")
    assert r.code == 2
    assert "internal error: RuntimeError: engine exploded" in r.stderr
    assert "ORTLINT_DEBUG=1" in r.stderr


# ----------------------------------------------------------------------------- text output


def test_quiet_prints_only_the_findings(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    r = ortlint("-q", "leak.c")
    assert r.code == 1
    assert len(r.stdout.splitlines()) == 1 and r.stdout.startswith("leak.c:3:13: ORT001")


def test_notes_are_counted_and_listed_with_verbose() -> None:
    path = str(FIXTURES / "c" / "unparsable_code.c")
    plain = ortlint(path)
    assert "could not parse code" not in plain.stdout
    assert re.search(r"\(\d+ notes?, shown with --verbose\)\.$", plain.stdout.strip())
    verbose = ortlint("-v", path)
    assert ": note: could not parse code at line 11" in verbose.stdout


@pytest.mark.parametrize("args, env, colored", [
    (["--color", "always"], {}, True),
    (["--color", "never"], {"FORCE_COLOR": "1"}, False),
    ([], {}, False),  # auto: the test runner's stdout is not a terminal
    ([], {"FORCE_COLOR": "1"}, True),
    ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
])
def test_color(tmp_path: Path, args: list[str], env: dict[str, str], colored: bool) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    r = ortlint(*args, "leak.c", env=env)
    assert ("\033[" in r.stdout) == colored


def test_output_file(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    r = ortlint("--color", "auto", "--output", "out.txt", "leak.c", env={"FORCE_COLOR": "1"})
    assert r.code == 1 and r.stdout == ""
    text = (tmp_path / "out.txt").read_text()
    assert text.startswith("leak.c:3:13: ORT001") and "\033[" not in text


def test_output_to_unwritable_place_exits_2(tmp_path: Path) -> None:
    write(tmp_path, "ok.c", CLEAN_C)
    r = ortlint("--output", str(tmp_path / "no" / "such" / "dir" / "out.txt"), "ok.c")
    assert r.code == 2 and "cannot write" in r.stderr


# ----------------------------------------------------------------------------- rule selection

MIXED_C = """#include <stdlib.h>
void leaky(int n) {
  char *p = malloc(n);
  if (n > 3)
    return;
  free(p);
}
void twice(void) {
  char *q = malloc(2);
  free(q);
  free(q);
}
"""


@pytest.mark.parametrize("args, rules", [
    ([], {"ORT001", "ORT002"}),
    (["--select", "ORT001"], {"ORT001"}),
    (["--select", "double-release"], {"ORT002"}),
    (["--select", "ORT001,ORT002", "--ignore", "leak"], {"ORT002"}),
    (["--select", "ORT00"], {"ORT001", "ORT002"}),
    (["--ignore", "ORT001", "--ignore", "ORT002"], set()),
    (["--select", "ALL", "--ignore", "ORT002"], {"ORT001"}),
])
def test_select_and_ignore(tmp_path: Path, args: list[str], rules: set[str]) -> None:
    write(tmp_path, "m.c", MIXED_C)
    r = ortlint("--format", "json", *args, "m.c")
    found = {f["rule"] for f in json.loads(r.stdout)["findings"]}
    assert found == rules
    assert r.code == (1 if rules else 0)


# ----------------------------------------------------------------------------- configuration


def test_pyproject_found_by_walking_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n\n[tool.ortlint]\nselect = ["ORT002"]\n')
    write(tmp_path, "src/m.c", MIXED_C)
    monkeypatch.chdir(tmp_path / "src")
    r = ortlint("--format", "json", "m.c")
    assert {f["rule"] for f in json.loads(r.stdout)["findings"]} == {"ORT002"}


def test_pyproject_without_our_table_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, ".ortlint.toml", 'ignore = ["ORT001"]\n')
    write(tmp_path, "sub/pyproject.toml", '[project]\nname = "x"\n')
    write(tmp_path, "sub/m.c", MIXED_C)
    monkeypatch.chdir(tmp_path / "sub")
    r = ortlint("--format", "json", "m.c")
    assert {f["rule"] for f in json.loads(r.stdout)["findings"]} == {"ORT002"}


def test_dot_ortlint_toml_wins_over_pyproject_in_the_same_folder(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.ortlint]\nselect = ["ORT001"]\n')
    write(tmp_path, ".ortlint.toml", 'select = ["ORT002"]\n')
    write(tmp_path, "m.c", MIXED_C)
    r = ortlint("--format", "json", "m.c")
    assert {f["rule"] for f in json.loads(r.stdout)["findings"]} == {"ORT002"}


def test_command_line_wins_and_lists_add(tmp_path: Path) -> None:
    write(tmp_path, ".ortlint.toml", 'select = ["ORT002"]\nformat = "json"\n')
    write(tmp_path, "m.c", MIXED_C)
    r = ortlint("--select", "ORT001", "m.c")  # --select replaces; format still from the file
    assert {f["rule"] for f in json.loads(r.stdout)["findings"]} == {"ORT001"}
    write(tmp_path, ".ortlint.toml", 'ignore = ["ORT002"]\nformat = "json"\n')
    r = ortlint("--ignore", "ORT001", "m.c")  # --ignore adds
    assert json.loads(r.stdout)["findings"] == []
    r = ortlint("--format", "text", "m.c")
    assert r.stdout.startswith("m.c:3:13: ORT001")


def test_isolated_and_explicit_config(tmp_path: Path) -> None:
    write(tmp_path, ".ortlint.toml", 'select = ["ORT002"]\n')
    write(tmp_path, "other.toml", 'select = ["ORT001"]\n')
    write(tmp_path, "m.c", MIXED_C)
    rules = lambda r: {f["rule"] for f in json.loads(r.stdout)["findings"]}  # noqa: E731
    assert rules(ortlint("--format", "json", "--isolated", "m.c")) == {"ORT001", "ORT002"}
    assert rules(ortlint("--format", "json", "--config", "other.toml", "m.c")) == {"ORT001"}


def test_config_paths_rules_and_excludes_are_relative_to_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "proj/pyproject.toml", '[tool.ortlint]\npaths = ["src"]\nexclude = ["gen_*"]\n'
          'rules = ["policy/mine.toml"]\nextensions = { ".inl" = "c" }\n')
    write(tmp_path, "proj/policy/mine.toml", '[[kind]]\nid = "mine.H"\nlabel = "H"\n\n'
          '[[call]]\nname = "h_open"\nacquire = { kind = "mine.H", into = "return" }\n\n'
          '[[call]]\nname = "h_close"\nrelease = { arg = 0, kinds = ["mine.H"] }\n')
    write(tmp_path, "proj/src/a.inl", "void f(void) {\n  H *h = h_open();\n}\n")
    write(tmp_path, "proj/src/gen_b.c", LEAK_C)
    monkeypatch.chdir(tmp_path / "proj")
    r = ortlint()
    assert r.code == 1
    assert r.stdout.startswith("src/a.inl:2:10: ORT001 leak: H acquired by h_open()")
    assert "gen_b.c" not in r.stdout


@pytest.mark.parametrize("text, expected", [
    ('[tool.ortlint]\nselct = ["ORT001"]\n', r"pyproject\.toml:2: \[tool\.ortlint\] selct: unknown key; did you mean 'select'\?"),
    ('[tool.ortlint]\njobs = "many"\n', r"pyproject\.toml:2: \[tool\.ortlint\] jobs: expected a whole number"),
    ('[tool.ortlint]\n\nformat = "xml"\n', r"pyproject\.toml:3: \[tool\.ortlint\] format: expected one of text, sarif, json, github"),
    ('[tool.ortlint]\nselect = ["ORT999"]\n', r"pyproject\.toml:2: \[tool\.ortlint\] select: unknown rule 'ORT999'"),
    ('[tool.ortlint]\nignore = "leak\n', r"pyproject\.toml: invalid TOML: .*line 2"),
    ('[tool.ortlint]\nextensions = [".cu"]\n', r"pyproject\.toml:2: \[tool\.ortlint\] extensions: expected a table"),
])
def test_bad_configuration_names_file_line_and_key(tmp_path: Path, text: str, expected: str) -> None:
    write(tmp_path, "pyproject.toml", text)
    write(tmp_path, "ok.c", CLEAN_C)
    r = ortlint("ok.c")
    assert r.code == 2
    assert re.search(expected, r.stderr), r.stderr


def test_options_reach_the_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}
    real_run = execution.run

    def spy(config, progress=None):
        seen["config"] = config
        return real_run(config)
    monkeypatch.setattr(execution, "run", spy)
    write(tmp_path, "ok.c", CLEAN_C)
    write(tmp_path, "compile_commands.json", "[]")
    r = ortlint("-j", "3", "--unknown-calls", "keep", "--compile-commands", "compile_commands.json",
                "--exclude", "gen_*", "--no-default-excludes", "--extension", "cu=cpp", "ok.c")
    assert r.code == 0, r.stderr
    config = seen["config"]
    assert config.jobs == 3
    assert config.options.unknown_calls == "keep"
    assert config.compile_commands == "compile_commands.json"
    assert config.excludes == ("gen_*",) and config.use_default_excludes is False
    assert config.extensions == {".cu": "cpp"}
    write(tmp_path, ".ortlint.toml", "jobs = 2\n")
    ortlint("ok.c")
    assert seen["config"].jobs == 2
    (tmp_path / ".ortlint.toml").unlink()
    ortlint("ok.c")
    assert seen["config"].jobs == 0  # default: all cores


# ----------------------------------------------------------------------------- suppressions

SUPPRESSED_C = """#include <stdlib.h>
void a(void) {
  char *p = malloc(1);  // ortlint: ignore[ORT001]
}
void b(void) {
  // ortlint: ignore[leak]
  char *p = malloc(1);
}
void c(void) {
  char *p = malloc(1);  /* ortlint: ignore */
}
void d(void) {
  char *p = malloc(1);  // ortlint: ignore[ORT002]
}
void e(void) {
  // ortlint: ignore[ORT001]

  char *p = malloc(1);
}
void f(void) {
  char *p = malloc(1);  // ortlint: ignore[ORT01, leak]
}
"""


def test_suppressions(tmp_path: Path) -> None:
    write(tmp_path, "s.c", SUPPRESSED_C)
    r = ortlint("--format", "json", "s.c")
    doc = json.loads(r.stdout)
    assert sorted(f["function"] for f in doc["findings"]) == ["d", "e"]  # wrong rule; two lines above
    assert doc["summary"]["suppressed"] == 4
    problems = [n for n in doc["notices"] if "suppression" in n["message"]]
    assert [(n["line"], n["level"]) for n in problems] == [(21, "warning")]
    assert "unknown rule 'ORT01'" in problems[0]["message"]
    text = ortlint("s.c").stdout
    assert "s.c:21: warning: unknown rule 'ORT01' in suppression comment" in text
    assert "(4 suppressed, 1 warning)" in text


def test_suppressions_come_back_from_the_cache(tmp_path: Path) -> None:
    """The runner applies suppression comments from the contents it already read; a rerun of
    the unchanged tree replays them with the rest, and an edited comment is seen at once."""
    write(tmp_path, "s.c", SUPPRESSED_C)
    cold = ortlint("--format", "json", "--cache-dir", "cache", "s.c").stdout
    warm = ortlint("--format", "json", "--cache-dir", "cache", "s.c").stdout
    assert warm == cold and json.loads(warm)["summary"]["suppressed"] == 4
    write(tmp_path, "s.c", SUPPRESSED_C.replace("ignore[ORT002]", "ignore[ORT001]"))
    edited = json.loads(ortlint("--format", "json", "--cache-dir", "cache", "s.c").stdout)
    assert sorted(f["function"] for f in edited["findings"]) == ["e"] and edited["summary"]["suppressed"] == 5


def test_suppression_in_a_string_does_not_count(tmp_path: Path) -> None:
    write(tmp_path, "s.c", '#include <stdlib.h>\nvoid f(void) {\n  char *p = malloc(1); puts("ortlint: ignore");\n}\n')
    assert ortlint("s.c").code == 1


# ----------------------------------------------------------------------------- baseline

TWO_LEAKS_C = LEAK_C + """void second(int n) {
  char *q = malloc(n);
  if (n)
    return;
  free(q);
}
"""


def test_baseline_round_trip_survives_line_shifts(tmp_path: Path) -> None:
    src = write(tmp_path, "src/a.c", LEAK_C)
    r = ortlint("--write-baseline", "baseline.json", "src")
    assert r.code == 0 and r.stderr == "ortlint: wrote 1 finding to baseline baseline.json (1 file)\n" and r.stdout == ""
    doc = json.loads((tmp_path / "baseline.json").read_text())
    assert doc["ortlint-baseline"] == 1 and doc["findings"][0]["path"] == "src/a.c"
    assert "line" not in doc["findings"][0]
    assert ortlint("--baseline", "baseline.json", "src").code == 0

    src.write_text("/* a new header\n   comment */\n#include <stdio.h>\n\n" + LEAK_C.replace("\n", "\n\n", 2))
    r = ortlint("--baseline", "baseline.json", "src")
    assert r.code == 0, r.stdout
    assert "No problems found in 1 file (1 in baseline)." in r.stdout

    src.write_text(TWO_LEAKS_C)
    r = ortlint("--baseline", "baseline.json", "src")
    assert r.code == 1
    assert "ORT001" in r.stdout and "into `q`" in r.stdout and "into `p`" not in r.stdout


def test_baseline_from_another_folder_and_in_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "proj/src/a.c", LEAK_C)
    monkeypatch.chdir(tmp_path / "proj")
    assert ortlint("--write-baseline", "ortlint-baseline.json", "src").code == 0
    write(tmp_path, "proj/.ortlint.toml", 'baseline = "ortlint-baseline.json"\npaths = ["src"]\n')
    monkeypatch.chdir(tmp_path / "proj" / "src")
    assert ortlint().code == 0  # the baseline matches although paths are now seen from src/


def test_baseline_counts_repeated_fingerprints(tmp_path: Path) -> None:
    one = "#include <stdlib.h>\nvoid f(void) {\n  free(malloc(1));\n  strdup(\"x\");\n}\n"
    write(tmp_path, "a.c", one)
    assert ortlint("--write-baseline", "b.json", "a.c").code == 0
    write(tmp_path, "a.c", one.replace('  strdup("x");\n', '  strdup("x");\n  strdup("x");\n'))
    r = ortlint("--format", "json", "--baseline", "b.json", "a.c")
    doc = json.loads(r.stdout)
    assert r.code == 1 and len(doc["findings"]) == 1 and doc["summary"]["baselined"] == 1


@pytest.mark.parametrize("content, message", [
    (None, "baseline file not found"),
    ("{not json", "not a baseline file (invalid JSON"),
    ('{"findings": []}', "not an ortlint baseline"),
    ('{"ortlint-baseline": 1, "findings": [{"rule": "ORT001"}]}', "findings[0]: expected an object"),
])
def test_bad_baseline_exits_2(tmp_path: Path, content: str | None, message: str) -> None:
    if content is not None:
        write(tmp_path, "b.json", content)
    write(tmp_path, "ok.c", CLEAN_C)
    r = ortlint("--baseline", "b.json", "ok.c")
    assert r.code == 2 and message in r.stderr and "b.json" in r.stderr


# ----------------------------------------------------------------------------- unknown calls

HANDOFF_C = """#include <stdlib.h>
void f(Queue *q) {
  char *p = malloc(8);
  if (p == NULL)
    return;
  queue_push(q, p);
}
"""


def test_unknown_calls_policy_and_listing(tmp_path: Path) -> None:
    write(tmp_path, "h.c", HANDOFF_C)
    assert ortlint("h.c").code == 0  # escape: queue_push may own p now
    r = ortlint("--unknown-calls", "keep", "h.c")
    assert r.code == 1 and "ORT001" in r.stdout
    r = ortlint("--list-unknown-calls", "h.c")
    assert r.code == 0
    assert re.search(r"^queue_push\s+1$", r.stdout, re.M)


# ----------------------------------------------------------------------------- formats


def test_output_is_identical_whatever_jobs_is(tmp_path: Path) -> None:
    """json and github are computed from the same report as sarif and text, so two formats suffice."""
    targets = [str(FIXTURES)]
    for fmt in ("text", "sarif"):
        outputs = []
        for jobs in ("1", "2"):
            out = tmp_path / f"{fmt}-{jobs}.out"
            ortlint("--isolated", "--format", fmt, "--jobs", jobs, "--output", str(out), *targets)
            outputs.append(out.read_bytes())
        assert outputs[0] == outputs[1], fmt
        assert outputs[0] == (tmp_path / f"{fmt}-1.out").read_bytes()


def test_json_schema(tmp_path: Path) -> None:
    write(tmp_path, "m.c", MIXED_C)
    write(tmp_path, "bin.c", b"\x00\x01\x02")
    doc = json.loads(ortlint("--format", "json", ".").stdout)
    assert list(doc) == ["schema", "tool", "summary", "findings", "notices", "unknown_callees"]
    assert doc["schema"] == 1 and doc["tool"]["name"] == "ortlint"
    assert doc["summary"] == {"files": 2, "findings": 2, "suppressed": 0, "baselined": 0, "outside_scope": 0,
                              "by_rule": {"ORT001": 1, "ORT002": 1}}
    leak = doc["findings"][0]
    assert list(leak) == ["rule", "name", "level", "path", "line", "column", "end_line", "end_column",
                          "function", "message", "fingerprint", "trace", "related"]
    assert (leak["rule"], leak["name"], leak["path"], leak["line"], leak["column"]) == ("ORT001", "leak", "m.c", 3, 13)
    assert leak["trace"][0] == {"path": "m.c", "line": 3, "column": 13, "message": "heap block acquired by malloc() into `p`"}
    assert doc["notices"] == [{"path": "bin.c", "line": 1, "level": "warning",
                               "message": "binary file (contains NUL bytes); skipped"}]


def test_github_annotations(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C)
    r = ortlint("--format", "github", "leak.c")
    assert r.code == 1
    assert r.stdout.startswith("::error file=leak.c,line=3,col=13,endLine=3,endColumn=22,title=ORT001 leak::heap block")
    assert "%0Aleak.c:3: heap block acquired by malloc() into `p`" in r.stdout


def test_github_escaping() -> None:
    f = Finding("ORT001", "dir,1/a:b.c", 2, 3, 2, 9, "50% of\nit", "fn", trace=(Step("x.c", 1, 1, "a\r\nb"),))
    out = format_github(Report(findings=[f]))
    assert out == ("::error file=dir%2C1/a%3Ab.c,line=2,col=3,endLine=2,endColumn=9,title=ORT001 leak::"
                   "50%25 of%0Ait%0Ax.c:1: a%0D%0Ab\n")


# ----------------------------------------------------------------------------- rules / explain


def test_rules_table() -> None:
    r = ortlint("rules")
    assert r.code == 0
    for rule in RULES.values():
        assert re.search(rf"^{rule.id}\s+{re.escape(rule.name)}\s+{rule.level}\s+", r.stdout, re.M)
    data = json.loads(ortlint("rules", "--format", "json").stdout)
    assert [d["id"] for d in data] == list(RULES)


@pytest.mark.parametrize("token", ["ORT001", "ort001", "leak"])
def test_explain(token: str) -> None:
    r = ortlint("explain", token)
    assert r.code == 0
    assert r.stdout.startswith("ORT001: leak\n============\n")
    for section in ("What it does", "Why is this bad?", "Example", "Use instead"):
        assert f"\n{section}\n" in r.stdout
    assert "```" not in r.stdout and "    OrtStatus *make_options(" in r.stdout


def test_explain_unknown_rule() -> None:
    r = ortlint("explain", "ORT999")
    assert r.code == 2 and "unknown rule 'ORT999'" in r.stderr


def test_help_mentions_subcommands_and_exit_codes() -> None:
    r = ortlint("--help")
    assert r.code == 0
    for text in ("--format", "--baseline", "ortlint rules", "ortlint explain", "Exit codes"):
        assert text in r.stdout


# ----------------------------------------------------------------------------- cache


def test_cache_is_on_by_default_and_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On by default, in the user cache folder: nothing is written into the analyzed tree."""
    monkeypatch.delenv("ORTLINT_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    shutil.copytree(FIXTURES, tmp_path / "src")
    cold = ortlint("--isolated", "--format", "sarif", "src")
    assert not (tmp_path / ".ortlint_cache").exists() and not (tmp_path / "src" / ".ortlint_cache").exists()
    assert [p.name.startswith(tmp_path.name) for p in (tmp_path / "user-cache" / "ortlint").iterdir()] == [True]
    warm = ortlint("--isolated", "--format", "sarif", "src")
    uncached = ortlint("--isolated", "--no-cache", "--format", "sarif", "src")
    assert cold.stdout == warm.stdout == uncached.stdout
    assert cold.code == warm.code == 1


def test_cache_location_and_switches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    real_run = execution.run
    monkeypatch.setattr(execution, "run", lambda config, progress=None: seen.append(config.cache_dir) or real_run(config))
    monkeypatch.delenv("ORTLINT_NO_CACHE", raising=False)
    write(tmp_path, "proj/ok.c", CLEAN_C)
    write(tmp_path, "proj/pyproject.toml", "[tool.ortlint]\njobs = 1\n")
    monkeypatch.chdir(tmp_path / "proj")
    ortlint("ok.c")
    ortlint("--no-cache", "ok.c")
    ortlint("--cache-dir", "elsewhere", "ok.c")
    monkeypatch.setenv("ORTLINT_NO_CACHE", "1")
    ortlint("ok.c")
    assert seen == [default_cache_dir(tmp_path / "proj"), None, "elsewhere", None]


def test_no_source_files_is_a_warning_not_an_error(tmp_path: Path) -> None:
    write(tmp_path, "notes.txt", "nothing to see\n")
    r = ortlint()
    assert r.code == 0
    assert r.stdout == "No problems found in 0 files.\n"
    assert "warning: no C, C++, Java or Go source files found in ." in r.stderr


def test_force_exclude_applies_excludes_to_named_files(tmp_path: Path) -> None:
    write(tmp_path, "third_party/lib/x.c", LEAK_C)
    write(tmp_path, "src/gen_table.c", LEAK_C)
    write(tmp_path, "src/main.c", LEAK_C)
    named = ["third_party/lib/x.c", "src/gen_table.c", "src/main.c"]
    r = ortlint("--format", "json", "--exclude", "gen_*", *named)
    assert len(json.loads(r.stdout)["findings"]) == 3  # named files are checked by default
    r = ortlint("--format", "json", "--exclude", "gen_*", "--force-exclude", *named)
    assert [f["path"] for f in json.loads(r.stdout)["findings"]] == ["src/main.c"]
    r = ortlint("--force-exclude", "third_party/lib/x.c")
    assert r.code == 0 and r.stderr == ""


def test_compile_commands_empty_turns_discovery_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    real_run = execution.run
    monkeypatch.setattr(execution, "run", lambda config, progress=None: seen.append(config.compile_commands) or real_run(config))
    write(tmp_path, "ok.c", CLEAN_C)
    ortlint("ok.c")
    ortlint("--compile-commands", "", "ok.c")
    write(tmp_path, ".ortlint.toml", 'compile-commands = ""\n')
    ortlint("ok.c")
    assert seen == [None, "", ""]


SCOPE_LEAK = b"""struct Node { int v; };
int f(int x) {
  Node* n = new Node();
  if (x) return 1;
  delete n;
  return 0;
}
"""


def test_scope_leaves_out_new_outside_onnxruntime_code(tmp_path: Path) -> None:
    """C++ `new` findings in a file that uses no policy's API are counted, not shown, by default;
    `--scope all` (or `scope = "all"`) shows them tagged `general` (ortlint/scope.py)."""
    write(tmp_path, "plain.cpp", SCOPE_LEAK)
    write(tmp_path, "uses_ort.cpp", b"#include <onnxruntime_cxx_api.h>\n" + SCOPE_LEAK)
    default = json.loads(ortlint("--isolated", "--format", "json", ".").stdout)
    assert [f["path"] for f in default["findings"]] == ["uses_ort.cpp"]
    assert default["summary"]["outside_scope"] == 1
    text = ortlint("--isolated", ".").stdout
    assert "1 outside ONNX Runtime code not shown (--scope all)" in text
    every = json.loads(ortlint("--isolated", "--format", "json", "--scope", "all", ".").stdout)
    assert [(f["path"], f.get("tags", [])) for f in every["findings"]] == [("plain.cpp", ["general"]), ("uses_ort.cpp", [])]
    assert every["summary"]["outside_scope"] == 0
    write(tmp_path, ".ortlint.toml", b'scope = "all"\n')
    configured = json.loads(ortlint("--format", "json", ".").stdout)
    assert len(configured["findings"]) == 2
    write(tmp_path, ".ortlint.toml", b'scope = "everything"\n')
    bad = ortlint("--format", "json", ".")
    assert bad.code == 2 and "scope" in bad.stderr and "'onnxruntime', 'all'" in bad.stderr

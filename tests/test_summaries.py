"""Interprocedural summaries: inferred from helpers, applied at call sites, shown to users and
exported as a policy file that reproduces the same findings."""
from __future__ import annotations

from pathlib import Path

from ortlint.api import default_policy, lint
from ortlint.policy import load_policy
from ortlint.summary_report import as_policy, explain

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "multi"


def by_name(report):
    return {key[1]: summary for key, summary in report.summaries.items()}


def test_status_checker_summary_has_two_cases() -> None:
    summaries = by_name(lint([str(FIXTURES / "helpers")]))
    check = summaries["check"]
    texts = check.describe()
    assert len(check.cases) == 2
    assert any("st == NULL" in t and "returns 0" in t for t in texts)
    assert any("st != NULL" in t and "releases st with ReleaseStatus()" in t and "returns 1" in t for t in texts)


def test_factory_and_ownership_taking_wrapper() -> None:
    summaries = by_name(lint([str(FIXTURES / "helpers")]))
    assert any(c.ret == ("fresh", "ort.Value") for c in summaries["make_tensor"].cases)
    assert any(e.what == "escape" and e.path == (1,) for c in summaries["adopt"].cases for e in c.effects)


def test_recursive_helper_reaches_a_fixed_point() -> None:
    summaries = by_name(lint([str(FIXTURES / "helpers")]))
    free_list = summaries["free_list"]
    assert any(e.what == "release" and e.path == (0,) for c in free_list.cases for e in c.effects)


def test_explain_mentions_where_the_release_happens() -> None:
    text = explain(lint([str(FIXTURES / "jni_binding")]).summaries)
    assert "checkOrtStatus()" in text and "jni_util.c:" in text


def test_release_inside_a_helper_is_named_in_the_trace(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text(
        '#include "onnxruntime_c_api.h"\n'
        "static void cleanup(const OrtApi *api, OrtSession *s) { api->ReleaseSession(s); }\n"
        "void f(const OrtApi *api, OrtEnv *env) {\n"
        "  OrtSession *s = NULL;\n"
        "  OrtStatus *st = api->CreateSession(env, \"m\", NULL, &s);\n"
        "  if (st) { api->ReleaseStatus(st); return; }\n"
        "  cleanup(api, s);\n"
        "  api->ReleaseSession(s);\n"
        "}\n")
    (finding,) = lint([str(tmp_path)]).findings
    assert finding.rule == "ORT002" and finding.line == 8
    assert any("inside cleanup() at a.c:2" in step.message for step in finding.trace)


def test_exported_policy_reproduces_the_findings(tmp_path: Path) -> None:
    tree = FIXTURES / "jni_binding"
    report = lint([str(tree)])
    exported = tmp_path / "helpers.toml"
    exported.write_text(as_policy(report.summaries, default_policy()), encoding="utf-8")
    policy = load_policy([exported])
    assert policy.lookup("plain", "checkOrtStatus").status_check is not None
    assert policy.lookup("plain", "allocarray").acquires[0].kind == "libc.heap"
    only_session = lint([str(tree / "session.c")], rule_files=[str(exported)])
    assert {(f.line, f.rule) for f in only_session.findings} == \
        {(f.line, f.rule) for f in report.findings if f.path.endswith("session.c")}


def test_cli_explains_and_writes_summaries(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ortlint.cli import main

    out = tmp_path / "summaries.toml"
    runner = CliRunner()
    result = runner.invoke(main, ["--no-cache", "--explain-summaries", "--write-summaries", str(out),
                                  str(FIXTURES / "helpers")])
    assert result.exit_code == 0, result.output
    assert "check()" in result.output and "releases st with ReleaseStatus()" in result.output
    assert "n->next->text" in result.output  # nested paths read like C
    policy = load_policy([out])
    assert policy.lookup("plain", "check").status_check.success_returns == 0
    assert policy.lookup("plain", "push") is None  # returns its argument on one path: kept as a summary

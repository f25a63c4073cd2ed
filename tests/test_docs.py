"""Documentation that cannot go stale: every rule has its page, the examples on the pages do what
they say, and docs/cli.md's policy walk-through and option table match the tool."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ortlint.api import lint
from ortlint.cli import check
from ortlint.docs import rule_description, rule_sections
from ortlint.findings import RULES
from tests.clihelpers import ROOT, ortlint, write

RULE_DOCS = ROOT / "docs" / "rules"
CLI_DOC = ROOT / "docs" / "cli.md"
SECTIONS = ["What it does", "Why is this bad?", "Example", "Use instead", "Options"]
SUFFIX = {"c": ".c", "cpp": ".cpp", "c++": ".cpp", "java": ".java", "go": ".go", "csharp": ".cs"}
FRONT_END = {".c": "c.frontend", ".cpp": "cpp.frontend", ".java": "java.frontend", ".go": "go.frontend",
             ".cs": "csharp.frontend"}


def code_blocks(markdown: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w[\w+]*)\n(.*?)^```", markdown, re.S | re.M)


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rule_has_a_complete_page(rule_id: str) -> None:
    page = RULE_DOCS / f"{rule_id}.md"
    assert page.is_file(), f"{rule_id} has no documentation page: add {page.relative_to(ROOT)}"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# {rule_id}: {RULES[rule_id].name}\n")
    assert list(rule_sections(rule_id)) == SECTIONS
    assert all(rule_sections(rule_id)[s] for s in SECTIONS)
    assert len(rule_description(rule_id)) > 40


def test_no_page_without_a_rule() -> None:
    assert {p.stem for p in RULE_DOCS.glob("*.md")} == set(RULES)


def _findings(tmp_path: Path, lang: str, code: str, name: str) -> set[str]:
    suffix = SUFFIX[lang]
    path = write(tmp_path, name + suffix, code)
    report = lint([str(path)])
    # ORT100 judges suppression comments, which the CLI applies (suppress.py); lint() leaves them
    from ortlint.suppress import apply_suppressions
    apply_suppressions(report)
    return {f.rule for f in report.findings + report.unused_suppressions}


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_examples_do_what_the_page_says(rule_id: str, tmp_path: Path) -> None:
    sections = rule_sections(rule_id)
    ((lang, bad),) = code_blocks(sections["Example"] + "\n")
    ((lang2, good),) = code_blocks(sections["Use instead"] + "\n")[:1]
    assert _findings(tmp_path, lang, bad, "Bad") == {rule_id}, "the Example must show exactly this rule"
    assert _findings(tmp_path, lang2, good, "Good") == set(), "the fix must be clean"


def test_user_policy_walkthrough_in_cli_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/cli.md 'Teaching ortlint your own API': the same files give the documented output."""
    section = CLI_DOC.read_text(encoding="utf-8").split("## Teaching ortlint your own API", 1)[1].split("\n## ", 1)[0]
    blocks = code_blocks(section)
    c_code = next(code for lang, code in blocks if lang == "c")
    policy = next(code for lang, code in blocks if lang == "toml")
    shown = re.search(r"^```\n\$ ortlint --rules mylib.toml score.c\n(.*?)^```", section, re.S | re.M).group(1)
    write(tmp_path, "score.c", c_code)
    write(tmp_path, "mylib.toml", policy)
    monkeypatch.chdir(tmp_path)
    r = ortlint("--isolated", "--rules", "mylib.toml", "score.c")
    assert r.code == 1, r.stderr
    headline = re.compile(r"^\S+:\d+:\d+: ORT\d+ [\w-]+:|^Found |^ +\d* \| ")  # and the source line and caret
    expected = [line.split(": ", 2)[:2] if not line.startswith("Found") else line for line in shown.splitlines() if headline.match(line)]
    actual = [line.split(": ", 2)[:2] if not line.startswith("Found") else line for line in r.stdout.splitlines() if headline.match(line)]
    assert actual == expected
    assert ortlint("--isolated", "score.c").code == 0  # without the policy, nothing is known about my_create


def test_cli_md_documents_every_option() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    for param in check.params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("--"):
                assert f"`{opt}" in text or f", {opt}" in text, f"docs/cli.md does not document {opt}"

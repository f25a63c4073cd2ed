"""Rule documentation pages (docs/rules/<ID>.md), shipped with the package."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path


def docs_dir() -> Path | None:
    here = Path(__file__).resolve().parent
    for candidate in (here / "docs" / "rules", here.parent / "docs" / "rules"):
        if candidate.is_dir():
            return candidate
    return None


@lru_cache(maxsize=None)
def rule_markdown(rule_id: str) -> str:
    folder = docs_dir()
    if folder is None:
        return ""
    page = folder / f"{rule_id}.md"
    try:
        return page.read_text(encoding="utf-8")
    except OSError:
        return ""


def rule_help(rule_id: str) -> tuple[str, str]:
    """(plain text, markdown) help for a rule; plain text drops Markdown markup."""
    markdown = rule_markdown(rule_id)
    text = re.sub(r"^#+\s*", "", markdown, flags=re.M)
    text = re.sub(r"```\w*\n?", "", text)
    text = text.replace("`", "")
    return text.strip(), markdown.strip()


def rule_sections(rule_id: str) -> dict[str, str]:
    """The `## Heading` sections of a rule page, keyed by heading ("What it does", "Example")."""
    sections: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    fence = False
    for line in rule_markdown(rule_id).splitlines():
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("## "):
            if current is not None:
                sections[current] = "\n".join(lines).strip()
            current, lines = line[3:].strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines).strip()
    return sections


def rule_description(rule_id: str) -> str:
    """First paragraph of "What it does", as plain text: SARIF's fullDescription."""
    what = rule_sections(rule_id).get("What it does", "")
    first = what.split("\n\n")[0]
    return " ".join(first.replace("`", "").split())


def render_for_terminal(markdown: str, bold: str = "", reset: str = "") -> str:
    """Markdown page -> terminal text: headings emphasized, code blocks indented, no fences."""
    out: list[str] = []
    fence = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            out.append("    " + line if line else "")
        elif line.startswith("#"):
            title = line.lstrip("#").strip()
            out.append(f"{bold}{title}{reset}")
            if line.startswith("# "):
                out.append("=" * len(title))
        else:
            out.append(line)
    return "\n".join(out).strip() + "\n"

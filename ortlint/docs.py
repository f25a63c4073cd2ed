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

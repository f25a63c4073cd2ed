"""Bare member macros on error lines are blanked before the retry (frontends/common/member_macros)."""
from __future__ import annotations

from pathlib import Path

from ortlint.api import default_policy
from ortlint.frontends.common.member_macros import blank_member_macros
from ortlint.frontends.cpp.frontend import parse_cpp

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_only_bare_invocations_on_error_lines_are_blanked() -> None:
    code = b"struct A {\n  NO_COPY(A)\n  CALL(x);\n  int f() { return LEN(x); }\n};\nNO_MOVE(B)  // trailing\n"
    fixed, ranges = blank_member_macros(code, {1, 2, 3})
    assert len(fixed) == len(code)
    assert b"NO_COPY" not in fixed and b"CALL(x);" in fixed and b"LEN(x)" in fixed
    assert b"NO_MOVE" in fixed  # not on an error line
    assert ranges == [(13, 23, (1, 2), (1, 12))]
    fixed, _ = blank_member_macros(code, {5})
    assert b"NO_MOVE" not in fixed and b"NO_COPY" in fixed


def test_nothing_changes_without_errors() -> None:
    code = b"struct A {\n  NO_COPY(A)\n};\n"
    assert blank_member_macros(code, set()) == (code, [])


def test_the_member_macro_fixtures_parse_without_a_gap() -> None:
    for name in ("member_macro_without_semicolon.cpp", "member_macro_without_semicolon_clean.cpp"):
        path = FIXTURES / "cpp" / name
        unit = parse_cpp(str(path), default_policy(), path.read_bytes())
        assert not [m for _l, m in unit.notes if "could not parse" in m], name

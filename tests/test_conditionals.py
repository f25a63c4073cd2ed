"""Conditional groups that break the parse keep one alternative (frontends/common/conditionals)."""
from __future__ import annotations

from pathlib import Path

from ortlint.api import default_policy
from ortlint.frontends.common.conditionals import groups_of, one_alternative
from ortlint.frontends.cpp.frontend import parse_c_family, parse_cpp

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _lines(text: str) -> set[int]:
    return set(range(len(text.split("\n"))))


def test_groups_are_found_inner_first_with_continuation_lines() -> None:
    text = "#if A \\\n  && B\nx\n#ifdef C\ny\n#endif\n#else\nz\n#endif\n"
    outer, = [g for g in groups_of(text.encode().split(b"\n")) if g.directives[0] == (0, 1)]
    assert outer.directives == [(0, 1), (6, 6), (8, 8)]
    assert groups_of(text.encode().split(b"\n"))[0].directives == [(3, 3), (5, 5)]


def test_a_touched_group_keeps_its_first_alternative_and_every_offset() -> None:
    text = "int a;\n#if X\nint b;\n#else\nint c;\n#endif\n"
    fixed, _ = one_alternative(text.encode(), {1})
    assert len(fixed) == len(text.encode()) and fixed.count(b"\n") == text.count("\n")
    assert b"int b;" in fixed and b"int c;" not in fixed and b"#" not in fixed


def test_groups_away_from_errors_are_left_as_they_are() -> None:
    text = "#if X\nint b;\n#else\nint c;\n#endif\nint d\n"
    assert one_alternative(text.encode(), {5}) == (text.encode(), [])


def test_if_zero_and_error_alternatives_are_never_kept() -> None:
    text = "#if 0\nold();\n#else\nnew_();\n#endif\n#ifndef CFG\n#error need CFG\n#else\nok();\n#endif\n"
    fixed, _ = one_alternative(text.encode(), set())
    assert b"new_();" in fixed and b"old();" not in fixed  # `#if 0` groups always
    fixed, _ = one_alternative(text.encode(), _lines(text))
    assert b"ok();" in fixed and b"error" not in fixed


def test_a_nested_error_does_not_disqualify_the_enclosing_alternative() -> None:
    text = "#ifndef GUARD\n#if BAD\n#error no\n#endif\nint f();\n#endif\n"
    fixed, _ = one_alternative(text.encode(), _lines(text))
    assert b"int f();" in fixed


def test_the_split_constructor_fixture_parses_without_a_gap() -> None:
    for name in ("conditional_split_construct.cpp", "conditional_split_construct_clean.cpp"):
        path = FIXTURES / "cpp" / name
        unit = parse_cpp(str(path), default_policy(), path.read_bytes())
        assert not [m for _l, m in unit.notes if "could not parse" in m], name
        assert any(f.name.endswith("Load") for f in unit.functions)


def test_a_header_with_only_an_operator_is_read_as_cpp() -> None:
    code = b"struct Options {\n  Options& operator=(const Options& other);\n  int device_id{0};\n};\n"
    unit = parse_c_family("options.h", default_policy(), code)
    assert unit.language == "cpp"
    assert not [m for _l, m in unit.notes if "could not parse" in m]


def test_errors_inside_a_recovered_function_count_as_lost() -> None:
    """An error inside a function body loses code too (its note says the resources there are not
    checked), so a group that broke it is reduced like one at file level."""
    import tree_sitter_cpp
    from tree_sitter import Language, Parser

    from ortlint.frontends.common.conditionals import lost_tokens

    code = b"int f(int *p) {\n  int a = 1;\n  __vector unsigned int v = g(p);\n  return a;\n}\nint h() { return 0; }\n"
    tree = Parser(Language(tree_sitter_cpp.language())).parse(code)
    lines, size = lost_tokens(tree.root_node)
    assert size > 0 and lines <= {2}


def test_an_objective_c_header_is_skipped_like_a_dot_m_file() -> None:
    code = b"#import <Foundation/Foundation.h>\n@interface ORTThing : NSObject\n- (nullable instancetype)init;\n@end\n"
    unit = parse_c_family("ort_thing.h", default_policy(), code)
    assert unit.functions == [] and unit.notes == []
    plain = parse_c_family("plain.h", default_policy(), b"int f(void) { return 0; }\n/* @interface in a comment\n@end */\n")
    assert [f.name for f in plain.functions] == ["f"]


def test_a_c_header_with_an_objective_c_part_for_one_platform_is_analyzed() -> None:
    code = (b"#ifndef AUDIO_H\n#define AUDIO_H\nint f(void) { return 0; }\n#if defined(APPLE_MOBILE)\n"
            b"@interface handler : NSObject\n@end\n#endif\n#endif\n")
    unit = parse_c_family("audio.h", default_policy(), code)
    assert [f.name for f in unit.functions] == ["f"]
    guarded = b"#ifndef ORT_THING_H\n#define ORT_THING_H\n@interface ORTThing : NSObject\n@end\n#endif\n"
    assert parse_c_family("ort_thing.h", default_policy(), guarded).notes == []

"""Text passes of the macro handling made cheaper without changing what they return (issue 31):
each is compared with the one regex it replaced, kept here as the reference, on hand-written
texts and on random texts built from the characters they care about.

* `macro_args._paste`: the `##` operator with the white space around it removed
  (`re.sub(r"\\s*##\\s*", "", body)`, which was quadratic in long white-space runs);
* `macro_args._STRINGIFY` and `_parameter_pattern`: the `#x` operator and the parameters'
  whole-word uses (patterns that began with a look-behind or `\\b` were tried at every position);
* `decorations._word_spans`: where any of a file's empty macro names stands as a whole word
  (one alternation compiled per file before);
* `decorations.blank_empty_macros` on a file, end to end.
"""
from __future__ import annotations

import random
import re

import pytest

from ortlint.frontends.common import decorations
from ortlint.frontends.common import macro_args
from ortlint.frontends.common.macro_args import Macro, _paste, substitute_macro

_PASTE = re.compile(r"\s*##\s*")
_STRINGIFY = re.compile(r"(?<!#)#\s*([A-Za-z_]\w*)")


def _parameter_reference(names: tuple[str, ...]) -> re.Pattern[str]:
    names = tuple(n for n in names if macro_args._IDENTIFIER.fullmatch(n))  # (as before: identifiers only)
    if not names:
        return re.compile(r"(?!x)x")
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b")


def _alternation_spans(data: bytes, names: list[str]) -> list[tuple[int, int]]:
    word = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")\b")
    return [m.span() for m in word.finditer(data)]


@pytest.mark.parametrize("body", [
    "", "##", "a##b", "a ## b", "a   ##   b", "###", "####", "a ##\n## b", "  ## ", "x ## ## y",
    "do { f(stderr, ##__VA_ARGS__);" + " " * 60 + "g(); } while (0)",
    "\u00a0##\u2003", "a\t##\tb##c ## d",
])
def test_paste_matches_the_regex(body: str) -> None:
    assert _paste(body) == _PASTE.sub("", body)


def test_paste_matches_the_regex_on_random_texts() -> None:
    rng = random.Random(31)
    alphabet = [" ", "\t", "\n", "#", "##", "a", "(", ")", ",", "\u00a0", "\x0b", "\x1c", "\u2003"]
    for _ in range(20000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert _paste(body) == _PASTE.sub("", body), repr(body)


def test_variadic_macro_expands_as_before() -> None:
    macro = Macro("LOGE", [], "do {  fprintf(stderr, ##__VA_ARGS__);   \\\n  g(); } while (0)", True)
    assert substitute_macro(macro, ['"x %d"', "n"]) == 'do {  fprintf(stderr,"x %d", n);      g(); } while (0)'


def test_word_spans_match_the_alternation_on_random_texts() -> None:
    rng = random.Random(29)
    pieces = [b"API", b"API_X", b"XAPI", b"EXPORT", b"_", b" ", b"\n", b"#define ", b"(", b"1", b"\xc3\xa9"]
    for _ in range(5000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        names = sorted(rng.sample(["API", "EXPORT", "API_X", "_"], rng.randint(1, 3)))
        assert decorations._word_spans(data, names) == _alternation_spans(data, names), (data, names)


def test_blank_empty_macros_blanks_uses_outside_directives() -> None:
    data = b"#define API\n#ifdef API\nAPI void f(API_T x);\n#endif\nint API g;\n"
    out = decorations.blank_empty_macros(data, ["API"])
    assert out == b"#define API\n#ifdef API\n    void f(API_T x);\n#endif\nint     g;\n"


def test_stringify_and_parameter_patterns_match_the_references_on_random_texts() -> None:
    rng = random.Random(7)
    alphabet = ["#", "##", " ", "\t", "a", "ab", "b", "ba", "_", "x1", "(", ")", "\u00e9", "t", "__VA_ARGS__", "\n"]
    pool = ["a", "ab", "b", "ba", "x1", "__VA_ARGS__", "_", "\u00e9t"]
    mark = lambda m: "<" + m.group(1) + ">"  # noqa: E731
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        names = tuple(rng.sample(pool, rng.randint(1, 4)))
        assert macro_args._STRINGIFY.sub(mark, text) == _STRINGIFY.sub(mark, text), repr(text)
        assert macro_args._parameter_pattern(names).sub(mark, text) == _parameter_reference(names).sub(mark, text), \
            (text, names)

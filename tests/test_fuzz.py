"""Property tests: random and mutated sources never make an exception escape.

The front ends are called directly (the runner would turn their exceptions into notes and hide
them), then the whole pipeline runs on the same bytes through the Python API, where an engine
exception would propagate and a front-end one shows up as an "internal error" notice.
Examples are derandomized so CI failures reproduce; hypothesis prints the failing input.
"""
from __future__ import annotations

import importlib
import importlib.util
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ortlint.api import default_policy, lint
from ortlint.frontends.c.frontend import parse_c
from tests.clihelpers import FIXTURES, SHARED

FUZZ = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

C_TOKENS = [
    "{", "}", "(", ")", "[", "]", ";", ",", "*", "&", "->", ".", "=", "==", "!=", "!", "&&", "||", "?", ":",
    "0", "1", "NULL", "x", "p", "q", "st", "api", "env", "void", "int", "char", "OrtStatus", "OrtSession",
    "if", "else", "while", "for", "do", "switch", "case", "default", "break", "continue", "return", "goto",
    "out:", "struct", "static", "const", "sizeof", "\n", "#if 0", "#ifdef X", "#else", "#endif", "#define M(a) a",
    '"s"', "'c'", "/*", "*/", "//", "\\", "malloc", "free", "api->CreateSession(env, path, o, &s)",
    "api->ReleaseSession(s)", "(*env)->GetIntArrayElements(env, a, 0)", "(*env)->ReleaseIntArrayElements(env, a, p, 0)",
    "api->ReleaseStatus(st)", "JNIEXPORT", "JNICALL", "_In_", "try", "catch", "throw", "new", "delete", "::",
    "template", "<", ">", "\x00", "\xff", "é",
]
JAVA_TOKENS = [
    "{", "}", "(", ")", ";", "=", ".", ",", "class", "C", "void", "f", "g", "try", "finally", "catch", "(Exception e)",
    "return", "if", "else", "throw", "new", "OnnxTensor", "t", "OnnxTensor.createTensor(env, x)", "t.close()",
    "session.run(inputs)", "OrtSession.Result", "r", "var", "while", "for", "x", "null", "@Override", "\n", "<", ">",
]


def _seed_sources(suffixes: tuple[str, ...]) -> list[bytes]:
    roots = [FIXTURES, SHARED / "conformance" / "cases"]
    files = sorted(p for root in roots if root.is_dir() for p in root.rglob("*") if p.suffix in suffixes)
    return [p.read_bytes() for p in files[:60]] or [b"void f(void) { char *p = malloc(1); free(p); }\n"]


C_SEEDS = _seed_sources((".c", ".h"))
CPP_SEEDS = _seed_sources((".cpp", ".cc", ".hpp"))
JAVA_SEEDS = _seed_sources((".java",))


def token_soup(tokens: list[str]) -> st.SearchStrategy[bytes]:
    return st.lists(st.sampled_from(tokens), max_size=80).map(lambda ts: " ".join(ts).encode("utf-8", "surrogatepass"))


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes], tokens: list[str]) -> bytes:
    """A real source file with a few edits: cut, duplicated or swapped slices, inserted tokens, bad bytes."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        n = len(data)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 200)))
        op = draw(st.sampled_from(["delete", "duplicate", "insert", "byte", "truncate", "swap"]))
        if op == "delete":
            del data[i:j]
        elif op == "duplicate":
            data[i:i] = data[i:j]
        elif op == "insert":
            data[i:i] = draw(st.sampled_from(tokens)).encode("utf-8", "surrogatepass")
        elif op == "byte" and n:
            data[min(i, n - 1)] = draw(st.integers(0, 255))
        elif op == "truncate":
            del data[i:]
        elif op == "swap" and j > i:
            k = draw(st.integers(0, len(data)))
            chunk = bytes(data[i:j])
            del data[i:j]
            data[min(k, len(data)):min(k, len(data))] = chunk
    return bytes(data)


def run_everything(data: bytes, suffix: str, parse) -> None:
    """Front end directly (exceptions escape), then the whole pipeline (engine exceptions escape)."""
    policy = default_policy()
    parse(f"fuzz{suffix}", policy, data)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"fuzz{suffix}"
        path.write_bytes(data)
        report = lint([str(path)], policy=policy)
    internal = [n.message for n in report.notices if n.message.startswith("internal error")]
    assert not internal, internal


@FUZZ
@given(st.one_of(token_soup(C_TOKENS), mutated(C_SEEDS, C_TOKENS)))
def test_c_front_end_and_engine_never_raise(data: bytes) -> None:
    run_everything(data, ".c", parse_c)


def _optional_parser(module: str, name: str):
    return getattr(importlib.import_module(f"ortlint.frontends.{module}"), name)


@FUZZ
@given(st.one_of(token_soup(C_TOKENS), mutated(CPP_SEEDS or C_SEEDS, C_TOKENS)))
def test_cpp_front_end_and_engine_never_raise(data: bytes) -> None:
    run_everything(data, ".cpp", _optional_parser("cpp.frontend", "parse_cpp"))


@FUZZ
@given(st.one_of(token_soup(JAVA_TOKENS), mutated(JAVA_SEEDS or C_SEEDS, JAVA_TOKENS)))
def test_java_front_end_and_engine_never_raise(data: bytes) -> None:
    run_everything(data, ".java", _optional_parser("java.frontend", "parse_java"))


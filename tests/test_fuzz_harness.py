"""The mutation fuzzer of tools/fuzz.py: a short campaign with a fixed seed, its minimizer, and
every reproducer it ever found (tests/fuzz_cases/), each analyzed without losing the file.

The long campaign (hundreds of thousands of inputs) is a script, not a test:
`python tools/fuzz.py --inputs 100000 --out fuzz-out`.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import fuzz  # noqa: E402

from ortlint.orchestration.settings import Limits  # noqa: E402

CASES = sorted(p for p in (ROOT / "tests" / "fuzz_cases").iterdir() if p.suffix in fuzz.SUFFIXES)


def test_a_short_campaign_loses_nothing(tmp_path: Path) -> None:
    corpus = fuzz.load_corpus(fuzz.default_corpus())
    state = fuzz.campaign(corpus, fuzz.State(seed=20261201), 300, 100, Limits(seconds=30.0), tmp_path,
                          report=lambda _line: None)
    assert state.done == 300
    assert state.failures == {}, state.reproducers


def test_inputs_are_a_function_of_seed_and_index() -> None:
    corpus = fuzz.load_corpus([ROOT / "fixtures"])
    assert fuzz.make_input(corpus, 5, 17) == fuzz.make_input(corpus, 5, 17)
    assert fuzz.make_input(corpus, 5, 17) != fuzz.make_input(corpus, 5, 18)


def test_the_minimizer_keeps_what_makes_the_input_fail() -> None:
    data = b"".join(b"line %d;\n" % i for i in range(200)).replace(b"line 137;", b"BOOM 137;")
    small = fuzz.minimize(".c", data, lambda candidate: b"BOOM" in candidate)
    assert small == b"BOOM"


def test_a_failing_input_is_classified_and_written(tmp_path: Path) -> None:
    state = fuzz.State(seed=1)
    failure = fuzz.Failure("crash", "internal error: ... killed by SIGSEGV")
    name = fuzz.record_failure(tmp_path, state, ".c", b"int f(void) { return 0; }\n", failure, Limits())
    # the input does not crash: minimizing keeps it whole, and it is written for a human to look at
    assert (tmp_path / "failures" / name).read_bytes() == b"int f(void) { return 0; }\n"
    assert fuzz.classify("limit reached: ortlint stopped parsing this file after 5 s of CPU time (the time limit); ...") == "hang"
    assert fuzz.classify("... because its worker got no CPU time for 30 s (it hung); ...") == "hang"
    assert fuzz.classify("... its worker was killed by SIGSEGV; ...") == "crash"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_every_reproducer_is_analyzed_without_loss(case: Path) -> None:
    failures = fuzz.analyze({case.name: case.read_bytes()}, Limits(seconds=30.0))
    assert failures == {}

"""Which arm of a callee an address argument (`&ctx->f`, `&local`) takes (engine/addresses.py)."""
from __future__ import annotations

from ortlint.engine.addresses import never_null, select_cases
from ortlint.engine.summaries import Case, Effect
from ortlint.ir import AddrOf, Deref, Field, Var

ADDR = AddrOf(Field(Deref(Var("ctx")), "hooks"))
BLOCK = Var("p")


def _plan(*cases: tuple) -> list[tuple]:
    """(case, preconditions) pairs as summary_calls builds them, with empty effects/outs/note."""
    return [(case, pre, (), (), None) for case, pre in cases]


def test_address_of_a_field_or_local_is_never_null_but_address_through_a_pointer_may_be() -> None:
    assert never_null(ADDR)
    assert never_null(AddrOf(Var("local")))
    assert not never_null(AddrOf(Deref(Var("p"))))
    assert not never_null(Var("p"))


def test_a_setter_that_refuses_null_takes_the_true_arm() -> None:
    refuse = Case(pre=(((0,), "null"),), ret=("k", -2))
    store = Case(pre=(((0,), "nonnull"),), effects=(Effect((1,), "escape"),), ret=("k", 0))
    out = select_cases(_plan((refuse, ((ADDR, True),)), (store, ((ADDR, False),))))
    assert [c[0] for c in out] == [store]
    assert out[0][1] == ()  # the precondition that holds is not tested on the path


def test_the_malloc_arm_of_a_hooks_wrapper_stands_in_for_the_hook() -> None:
    fallback = Case(pre=(((1,), "null"),), ret=("fresh", "libc.heap"))
    hook = Case(pre=(((1,), "nonnull"),))
    no_hook = Case(pre=(((1,), "nonnull"),), ret=("k", 0))
    out = select_cases(_plan((fallback, ((ADDR, True),)), (hook, ((ADDR, False),)), (no_hook, ((ADDR, False),))))
    assert [c[0] for c in out] == [fallback]


def test_the_free_arm_stands_in_when_a_hook_case_leaves_the_block_alone() -> None:
    free_arm = Case(pre=(((0,), "nonnull"), ((1,), "null")), effects=(Effect((0,), "release", "free"),))
    hook_gone = Case(pre=(((0,), "nonnull"), ((1,), "nonnull")))
    hook = Case(pre=(((0,), "nonnull"), ((1,), "nonnull")), effects=(Effect((0,), "escape"),))
    null_block = Case(pre=(((0,), "null"),))
    plan = _plan((free_arm, ((BLOCK, False), (ADDR, True))), (hook_gone, ((BLOCK, False), (ADDR, False))),
                 (hook, ((BLOCK, False), (ADDR, False))), (null_block, ((BLOCK, True),)))
    out = select_cases(plan)
    assert [c[0] for c in out] == [free_arm, null_block]
    assert out[0][1] == ((BLOCK, False),)


def test_a_release_on_every_arm_keeps_the_true_arm() -> None:
    """`if (v == NULL) { free(p); return -1; } v->p = p;`: the block is taken care of either way."""
    drop = Case(pre=(((0,), "null"),), effects=(Effect((1,), "release", "free"),), ret=("k", -1))
    keep = Case(pre=(((0,), "nonnull"),), effects=(Effect((1,), "escape"),), ret=("k", 0))
    out = select_cases(_plan((drop, ((ADDR, True),)), (keep, ((ADDR, False),))))
    assert [c[0] for c in out] == [keep]


def test_a_callee_with_cases_for_one_arm_only_keeps_them() -> None:
    only = Case(pre=(((0,), "null"),), ret=("k", 1))
    out = select_cases(_plan((only, ((ADDR, True),))))
    assert [c[0] for c in out] == [only]


def test_cases_that_do_not_mention_the_address_apply_when_none_is_for_its_true_arm() -> None:
    fallback = Case(pre=(((1,), "null"),), ret=("fresh", "libc.heap"))
    other = Case(pre=(((0,), "null"),), ret=("k", 0))
    out = select_cases(_plan((fallback, ((ADDR, True),)), (other, ((BLOCK, True),))))
    assert [c[0] for c in out] == [other]

"""Unit tests of the C front end's control-flow graphs on tricky control flow."""
from __future__ import annotations

import pytest

from ortlint import ir
from ortlint.api import default_policy
from ortlint.frontends.c.frontend import parse_c


def lower(code: str) -> ir.Function:
    unit = parse_c("t.c", default_policy(), code.encode())
    assert len(unit.functions) == 1, unit.notes
    return unit.functions[0]


def calls(fn: ir.Function) -> list[ir.Call]:
    return [ev for b in fn.blocks for ev in b.events if isinstance(ev, ir.Call)]


def successors(fn: ir.Function, block: ir.Block) -> list[int]:
    term = block.term
    if isinstance(term, ir.Jump):
        return [term.target]
    if isinstance(term, ir.Branch):
        return [term.then, term.orelse]
    return []


def reachable_calls(fn: ir.Function) -> set[str]:
    seen, stack, names = set(), [fn.entry], set()
    while stack:
        b = fn.blocks[stack.pop()]
        if b.id in seen:
            continue
        seen.add(b.id)
        names |= {ev.callee for ev in b.events if isinstance(ev, ir.Call)}
        stack.extend(successors(fn, b))
    return names


def test_every_block_is_terminated() -> None:
    fn = lower("int f(int a){ if (a) { goto out; } while (a--) { if (a == 3) break; continue; } out: return a; }")
    assert all(b.term is not None for b in fn.blocks)


def test_jni_c_style_drops_the_env_argument() -> None:
    fn = lower("void f(JNIEnv *env, jlongArray a){ jlong *p = (*env)->GetLongArrayElements(env, a, NULL); }")
    (call,) = calls(fn)
    assert (call.callee, call.style, len(call.args)) == ("GetLongArrayElements", "table", 2)
    assert call.dest == ir.Var("p")


def test_function_table_calls_keep_all_arguments() -> None:
    fn = lower("void f(const OrtApi *api){ OrtEnv *e; api->CreateEnv(0, \"x\", &e); }")
    (call,) = calls(fn)
    assert (call.callee, call.style, len(call.args)) == ("CreateEnv", "table", 3)
    assert call.args[2] == ir.AddrOf(ir.Var("e"))


def test_nested_calls_get_temporaries_and_are_killed_after_the_statement() -> None:
    fn = lower("void f(const OrtApi *api, void *o){ api->ReleaseStatus(api->DisableCpuMemArena(o)); }")
    inner, outer = calls(fn)
    assert inner.callee == "DisableCpuMemArena" and isinstance(inner.dest, ir.Var) and inner.dest.name.startswith("$")
    assert outer.args == (inner.dest,) and outer.dest is None
    kills = [ev for b in fn.blocks for ev in b.events if isinstance(ev, ir.Kill)]
    assert kills and inner.dest.name in kills[-1].names


def test_short_circuit_and_evaluates_the_right_call_only_when_needed() -> None:
    fn = lower("int f(int a){ if (a && g()) return 1; return 0; }")
    first = fn.blocks[fn.entry]
    assert isinstance(first.term, ir.Branch) and first.term.cond == ir.Var("a")
    assert "g" not in {ev.callee for ev in first.events if isinstance(ev, ir.Call)}
    then_block = fn.blocks[first.term.then]
    assert any(isinstance(ev, ir.Call) and ev.callee == "g" for ev in then_block.events)


def test_negation_swaps_branch_targets() -> None:
    fn = lower("int f(int *p){ if (!p) return 1; return 0; }")
    term = fn.blocks[fn.entry].term
    assert isinstance(term, ir.Branch) and term.cond == ir.Var("p")
    assert isinstance(fn.blocks[term.orelse].term, ir.Return)


def test_switch_falls_through_to_the_next_case() -> None:
    fn = lower("void f(int k){ switch (k) { case 1: a(); case 2: b(); break; default: c(); } }")
    case_blocks = {ev.callee: b for b in fn.blocks for ev in b.events if isinstance(ev, ir.Call)}
    assert isinstance(case_blocks["a"].term, ir.Jump) and case_blocks["a"].term.target == case_blocks["b"].id


def test_do_while_zero_runs_the_body_once_and_loops_back_only_on_true() -> None:
    fn = lower("void f(void){ do { g(); } while (0); }")
    loops = [b.term for b in fn.blocks if isinstance(b.term, ir.Branch) and b.term.kind == "loop"]
    assert len(loops) == 1 and loops[0].cond == ir.Const(0, "0")


def test_goto_targets_the_label_block() -> None:
    fn = lower("int f(int a){ if (a) goto done; g(); done: h(); return 0; }")
    label_block = next(b for b in fn.blocks if any(isinstance(ev, ir.Call) and ev.callee == "h" for ev in b.events))
    assert any(isinstance(b.term, ir.Jump) and b.term.target == label_block.id for b in fn.blocks)


def test_ternary_with_calls_becomes_branches() -> None:
    fn = lower("void f(int c){ void *p = c ? malloc(1) : NULL; }")
    assert any(isinstance(b.term, ir.Branch) for b in fn.blocks)
    call = next(c for c in calls(fn) if c.callee == "malloc")
    assert call.dest == ir.Var("p")


def test_preprocessor_alternatives_are_branches_and_if_zero_is_skipped() -> None:
    fn = lower("void f(void){\n#ifdef _WIN32\n a();\n#else\n b();\n#endif\n#if 0\n c();\n#endif\n}")
    assert {b.term.kind for b in fn.blocks if isinstance(b.term, ir.Branch)} == {"pp"}
    assert reachable_calls(fn) == {"a", "b"}


def test_casts_and_parentheses_disappear() -> None:
    fn = lower("void f(void *v){ free(((char *)((v)))); }")
    assert calls(fn)[0].args == (ir.Var("v"),)


def test_in_file_macros_are_expanded_with_their_returns() -> None:
    code = ("#define CHECK(x) do { if ((x) != 0) return -1; } while (0)\n"
            "int f(void){ CHECK(g()); return 0; }")
    fn = lower(code)
    returns = [b.term for b in fn.blocks if isinstance(b.term, ir.Return)]
    assert len(returns) >= 2 and "g" in {c.callee for c in calls(fn)}


@pytest.mark.parametrize("signature", [
    "JNIEXPORT jlong JNICALL Java_a_B_c(JNIEnv *env, jclass cls)",
    "ORT_API_CALL int f(_In_ const OrtApi *api, _Outptr_ OrtSession **out, _In_reads_(n) const char *const *k, size_t n) NO_EXCEPTION",
])
def test_decorated_functions_parse_without_errors(signature: str) -> None:
    unit = parse_c("t.c", default_policy(), f"{signature} {{ return 0; }}".encode())
    assert len(unit.functions) == 1 and not unit.notes
    assert not any(ev for b in unit.functions[0].blocks for ev in b.events if isinstance(ev, ir.Havoc))


def test_syntax_errors_become_notes_and_havoc_not_exceptions() -> None:
    unit = parse_c("t.c", default_policy(), b"int f(void){ char *p = malloc(1); FOO( { free(p) ) } return 0; }")
    assert unit.notes or any(isinstance(ev, ir.Havoc) for fn in unit.functions for b in fn.blocks for ev in b.events)


def test_unparsed_regions_are_reported_only_where_nothing_was_analyzed() -> None:
    from ortlint.frontends.c.syntax import _uncovered
    assert _uncovered(10, 40, [(12, 30)]) == [(10, 11), (31, 40)]
    assert _uncovered(10, 40, [(5, 50)]) == []
    split_header = (b"#ifdef _WIN32\nint wmain(int argc, wchar_t **argv) {\n#else\nint main(int argc, char **argv) {\n"
                    b"#endif\n  char *p = malloc(1);\n  return 0;\n}\n")
    unit = parse_c("t.c", default_policy(), split_header)
    assert [f.name for f in unit.functions] == ["main"] and not unit.notes

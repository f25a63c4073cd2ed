"""The two units of work, run in the main process or in a worker: analyzing one function (`analyze_safely`),
with the cycle collector paused while it runs."""
from __future__ import annotations

import contextlib
import gc
import time
from typing import Callable, Iterator

from .. import ir
from ..engine.analyze import FunctionAnalyzer, FunctionResult, Options
from ..engine.summaries import Summary
from ..policy import Policy
from .program import construction_summary


def analyze_safely(fn: ir.Function, policy: Policy, lookup: Callable[[ir.Call], Summary | None],
                   options: Options, constants: dict[str, int], summarize: bool = True) -> FunctionResult:
    """One function's analysis; an internal error becomes a notice for that function only, so
    a bug never hides the findings of the rest of the tree."""
    started = time.process_time()  # CPU, not wall: the slowest functions a run reports do not depend on load

    def fitting(call: ir.Call) -> Summary | None:  # (every route to a summary goes through here)
        return construction_summary(call, lookup(call))

    try:
        result = FunctionAnalyzer(fn, policy, fitting, options, constants).run(summarize)
        result.seconds = time.process_time() - started
        return result
    except RecursionError:
        message = f"{fn.name}() is too deeply nested to analyze; skipped"
    except Exception as exc:  # noqa: BLE001
        message = f"internal error while analyzing {fn.name}(): {type(exc).__name__}: {exc}"
    return FunctionResult([], None, {}, [(fn.loc.line, message)], seconds=time.process_time() - started)


MAX_SCC_ROUNDS = 3  # rounds over a recursive component before its summaries are taken as they are

GC_THRESHOLDS = (100_000, 50, 1000)


@contextlib.contextmanager
def cycle_collection_paused(keep: bool = True) -> Iterator[None]:
    """Parsing builds syntax trees and IR without reference cycles (a few hundred cyclic
    objects per 100 K lines), and the engine's states, traces and analyzers have none either
    (`tests/test_engine_v2.py` checks): collecting while parsing or analyzing only walks the
    same objects again and again (a tenth of the analysis time).

    `keep`: what was made stays (the IR): it is set aside (`gc.freeze`), never scanned again;
    reference counting still frees it when it is dropped. Otherwise (an analysis request,
    whose objects die with it) the young generation is collected once at the end, so a cycle
    made on an unusual path (an exception's traceback) is not kept for the worker's life."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        else:
            gc.collect(0)
        if was_enabled:
            gc.enable()

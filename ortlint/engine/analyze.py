"""The release-pairing engine: one function's control-flow graph against the policy.

`FunctionAnalyzer(fn, policy, summaries).run()` returns the function's findings and summary.
Its methods are split by concern, one module each:

* state.py, join.py: the abstract domain: values, resource states, states; property keys and joins;
* values.py: transfer functions for values, locations, stores, escapes; conditions.py: branch conditions;
* calls.py: transfer functions for calls through the policy (acquire, release, fail);
* summary_calls.py: transfer functions for calls to analyzed functions (summaries);
* loops.py, loop_effects.py: the loops of the CFG; what release loops do to array elements;
* explore.py: the worklist, what is kept apart and joined, the bounds (`Budget`);
* leaks.py: exits, leak collection per acquisition site, traces, findings;
* summarize.py: this function's summary for its callers.

The engine's contract is in docs/architecture.md ("The engine").
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from .. import ir
from ..findings import Finding
from ..ir import Call, Expr
from ..policy import Policy, Release
from .calls import CallTransfer
from .explore import TRIM_FROM, Budget, Exploration, successors
from .liveness import Ahead
from .leaks import LeakCollection, LeakRecord, Site
from .loop_effects import LoopEffects
from .loops import LoopForest
from .state import UNKNOWN, State, Val
from .summaries import Summary
from .summarize import Summarizing
from .summary_calls import SummaryTransfer
from .conditions import ConditionTransfer
from .values import ValueTransfer



@dataclass
class Options:
    unknown_calls: str = "escape"  # "escape" (default, like the Clang analyzer) | "keep"
    budget: Budget = field(default_factory=Budget)



@dataclass
class FunctionResult:
    findings: list[Finding]
    summary: Summary | None
    unknown_callees: dict[str, int]
    notes: list[tuple[int, str]]
    seconds: float = field(default=0.0, compare=False)  # CPU time of the analysis (ORTLINT_STATS, bench/)
    summary_seconds: float = field(default=0.0, compare=False)  # of which building the summary
    widened: int = field(default=0, compare=False)  # states merged by the bound (explore.Budget.keyed_states)



SummaryLookup = Callable[[Call], "Summary | None"]

_KIND_SETS: dict[int, tuple[Policy, frozenset, frozenset]] = {}


def asserted_argument(policy: Policy, language: str, ev: Call) -> Expr | None:
    """The argument an assert-like call tests (policy `assume`, or a status check that aborts
    without releasing: `require.Error(t, err)`, `must.M(err)`): the path goes on only with some
    of its values, so a join ahead of the call keeps them (liveness.Ahead)."""
    spec = policy.lookup_in(language, ev.style, ev.callee)
    if spec is None:
        return None
    check = spec.status_check
    i = spec.assume if spec.assume is not None else \
        check.arg if check is not None and check.on_failure == "abort" and not check.releases else None
    return ev.args[i] if i is not None and i < len(ev.args) else None


def _kind_sets(policy: Policy) -> tuple[frozenset, frozenset]:
    """The kinds that must be released and the JNI local reference kinds: once per policy, not
    once per analyzed function (the entry keeps the policy alive, so its id is not reused)."""
    hit = _KIND_SETS.get(id(policy))
    if hit is None or hit[0] is not policy:
        hit = _KIND_SETS[id(policy)] = (
            policy,
            frozenset(k.id for k in policy.kinds.values() if k.owned and k.must_release),
            frozenset(k.id for k in policy.kinds.values() if k.loop_leak and not k.must_release))
        if len(_KIND_SETS) > 8:  # policies made by tests: keep the latest few
            del _KIND_SETS[next(iter(_KIND_SETS))]
    return hit[1], hit[2]



class FunctionAnalyzer(Exploration, ValueTransfer, ConditionTransfer, CallTransfer, SummaryTransfer, LoopEffects, LeakCollection, Summarizing):
    """Analyzes one `ir.Function` against a policy and the summaries of its callees.

    The methods live in one module per concern (see the module docstring); this class holds the
    state they share, set up in `__init__`, and the entry point `run`."""

    def __init__(self, fn: ir.Function, policy: Policy, summaries: SummaryLookup, options: Options | None = None,
                 constants: dict[str, int] | None = None):
        self.fn = fn
        self.constants = constants or {}
        self.policy = policy
        self.summaries = summaries
        self.options = options or Options()
        self.budget = self.options.budget
        self.blocks = {b.id: b for b in fn.blocks}
        self._written_pointees_memo: frozenset[str] | None = None  # calls.CallTransfer._written_pointees
        self.params = {name: i for i, name in enumerate(fn.params)}
        self.sites: dict[str, Site] = {}
        self.findings: dict[tuple, Finding] = {}
        self.shown: set[tuple] = set()  # (rule, line, col, message) of each finding: one report each
        self.leaks: dict[str, LeakRecord] = {}
        self.exits: list[tuple[State, str, Val | None]] = []
        self.unknown: dict[str, int] = {}
        self.notes: list[tuple[int, str]] = []
        self.incomplete = False
        self._unbound_values: dict[str, tuple | None] = {}  # values._unbound_value
        self._iterated_memo: dict[frozenset, frozenset] = {}  # loop_effects._iterated
        self._tied_memo: dict[tuple, bool] = {}  # loop_effects._bound_tied
        self._loop_release_cache: dict[frozenset, list[tuple[Expr, str, str | None]]] = {}
        self._loop_keep_cache: dict[frozenset, list[tuple[Expr, Expr]]] = {}
        self._loop_store_cache: dict[frozenset, list[tuple[Expr, Expr]]] = {}
        self._loop_load_cache: dict[frozenset, dict[str, tuple[str, Expr]]] = {}
        self._cond_vars: dict[int, tuple[Expr, frozenset[str]]] = {}  # id(condition) -> (it, its variables)
        self._memo_names: set[str] = set()  # variables of every condition ever remembered
        self._status_summaries: dict[str, Summary] = {}
        self._extra: list[tuple[State, int]] = []
        self._event_work = 0
        self._stopped = False
        self._helper_releases: dict[str | None, Release | None] = {}
        # per call site (keyed by the event's id; each entry keeps the event alive): what a
        # callee's summary or policy entry makes of the call's arguments, the same in every state
        self._param_exprs: dict[tuple[int, tuple], tuple[Call, Expr | None]] = {}
        self._release_calls: dict[tuple[int, int], tuple[Call, object, Call]] = {}
        self._release_text_memo: dict[tuple, tuple[Expr, tuple[str, str, str]]] = {}
        self._branch_notes: dict[int, tuple[ir.Branch, str, str]] = {}  # id(branch) -> (it, its notes)
        self._call_plans: dict[int, tuple] = {}  # calls.CallTransfer._call_plan
        self._last_acts: dict[int, bool] = {}  # calls.CallTransfer._acquired_last: call id -> answer
        self._released_kinds: dict[str, bool] = {}  # calls.CallTransfer._releases_kind: kind -> answer
        self._aborting_blocks: dict[int, tuple] = {}  # explore._ends_process: id(block) -> (it, answer)
        self._summary_plans: dict[int, tuple] = {}  # summary_calls.SummaryTransfer._summary_plan
        self._member_writes: dict[tuple, list] = {}  # summary_calls._written_members, per call site
        self._unnamed_writes: set[int] = set()  # parameters whose object it writes at computed places (interior.py)
        self._drop_keys: dict[int, tuple[str]] = {}  # call id -> ("$dropN",)
        self._params_released = False  # some state released a parameter's value (explore._admit looks for them)
        self._work = 0
        self._retained = 0  # entries of the states kept at the blocks (explore._retain)
        self._coarse_mode = False  # past half a safety net: every join coarse (explore._explore)
        self._small = len(self.blocks) < TRIM_FROM  # no `_trim_dead` (explore.TRIM_FROM)
        self._keys: dict[tuple, tuple] = {}  # property key -> its one object (explore._admit: compared by identity)
        self._trim_plans: dict[int, tuple] = {}  # block -> (value-dead locals' mask, field-dead locals): explore._trim_dead
        self._merges: frozenset[int] = frozenset()  # blocks that several edges enter (explore.merge_points)
        self._field_roots: set[str] = set()  # variables some state of this function gave fields (values._note_key)
        self._dead_conds: dict[tuple, tuple] = {}  # (block, conditions) -> those about dead locals (explore._trim_dead)
        self.widened = 0  # states merged by the bound (explore._widen)
        self._succs = successors(self.blocks)
        # the blocks' reverse postorder (the worklist's priorities): made by `_explore`, not here,
        # as an inert function (`_inert`) is never explored and a quarter of them are
        self.order: dict[int, int] = {}
        self._ahead = Ahead(fn, self._succs, partial(asserted_argument, policy, fn.language))  # (no cycle)
        self._prefixes: set[tuple] = set()  # locations that have had sub-locations (values._note_key)
        # resources whose memory (`("@R", ...)` locations) some state of this function has had
        # (values._note_key): `_gc` looks for orphaned memory only when one of them is gone
        self._memory_rids: set[str] = set()
        self._noted: set[tuple] = set()  # the locations `_note_key` has seen
        self._signature_order: dict[frozenset, tuple[tuple[str], ...]] = {}  # explore._signature
        self._tracked_kinds, self._local_ref_kinds = _kind_sets(policy)
        self._block = fn.entry  # the block being run (loop questions are asked about it)
        self._loops: LoopForest | None = None
        self._relating: bool | None = None  # values._relates_arguments
        # entry values whose "is 0" fact only a loop not entered gave (values._assume_order):
        # their precondition is "zero", a count's, which `hand_over_dropped` lets pass
        self._zero_trip_bounds: set[str] = set()
        self._named_reads: tuple | None = None  # values._rewritten_read


    def run(self, summarize: bool = True) -> FunctionResult:
        """`summarize=False`: no caller needs this function's summary (a run without a cache
        analyzing a function nobody calls): the findings are the same, the summary is None."""
        if not summarize and self._inert():
            return FunctionResult([], None, {}, [])
        entry_state = State()
        for i, name in enumerate(self.fn.params):
            rid = f"p{i}"
            entry_state.r[rid] = UNKNOWN
            entry_state.b[(name,)] = ("r", rid)
        self._explore(entry_state)
        if self.incomplete:
            self._statement_checks()
        self._emit_leaks()
        started = time.perf_counter()
        summary = None if self.incomplete or not summarize else self._summary()
        summary_seconds = time.perf_counter() - started
        findings = sorted(self.findings.values(), key=Finding.sort_key)
        return FunctionResult(findings, summary, self.unknown, self.notes, summary_seconds=summary_seconds,
                              widened=self.widened)


    def _inert(self) -> bool:
        """No call the policy or a summary says anything about, no `new`, no call through a
        pointer: nothing can be acquired or released here, so nothing can be found (unknown
        callees are only counted when they receive a tracked resource). A function nobody
        needs the summary of is then not explored at all (a quarter of the functions of the
        real-code corpus)."""
        lookup = self.policy.lookup
        for block in self.fn.blocks:
            for ev in block.events:
                if isinstance(ev, Call) and (ev.style in ("new", "indirect") or lookup(ev.style, ev.callee) is not None
                                             or (ir.program_name(ev) is not None and self.summaries(ev) is not None)):
                    return False
        return True


    @property
    def loops(self) -> LoopForest:
        """The function's loops, computed on first need (most functions never ask)."""
        if self._loops is None:
            self._loops = LoopForest(self.blocks, self.fn.entry, self._succs)
        return self._loops

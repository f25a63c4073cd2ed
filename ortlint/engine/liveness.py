"""What lies ahead of each block: the locals nothing mentions any more, and what `if`s test.

The second-level join (join.join_held) must not lose a fact that decides a resource's fate,
and must not merge what can no longer matter into one report. Both questions are about the
rest of the function from a block's entry, so they are answered once per function, backwards
over the CFG:

* `Ahead.tested`: variables and conditions some `if` reachable from the block tests — the
  correlations a join there must keep (a flag tested once, later, decides as much as one tested
  ten times; one whose tests are all behind decides nothing);
* `Ahead.dead`: locals no event or test reachable from the block mentions (the Clang
  analyzer's dead-binding idea): a resource only such a local holds can only leak, so it keeps
  its own acquisition site in a join.

"Mentions" is deliberately coarse (any occurrence, read or write, in any reachable block): it
needs no alias reasoning, and a local whose address is taken anywhere (or an array or struct
value, whose address is taken implicitly) is never dead.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Iterable

from .. import ir
from ..ir import AddrOf, Call, Deref, Expr, Field, Index, Op, Opaque, Var
from .explore import postorder
from .exprs import conjuncts


class Ahead:
    """The answers for one function, computed on the first question (most functions never
    reach a second-level join and never ask). Sets are bit masks over the function's
    candidate names while propagating: a chain of 30 000 `&&` tests is 30 000 blocks, and
    one Python set per block of everything ahead of it would be quadratic."""

    def __init__(self, fn: ir.Function, succs: Callable[[int], list[int]]):
        self.fn = fn
        self.succs = succs
        self._tested: dict[int, int] | None = None
        self._live: dict[int, int] | None = None
        self._items: list = []  # bit i -> ("v", name) or ("c", condition)
        self._locals: list[str] = []  # bit i -> a local that can die
        self._local_mask = 0
        self._decoded_tests: dict[int, tuple[frozenset, frozenset]] = {}
        self._decoded_dead: dict[int, frozenset[str]] = {}
        self._decoded_paths: dict[int, tuple[frozenset, frozenset]] = {}
        self._flow_cache: tuple[list[int], dict[int, list[int]]] | None = None

    def tested(self, bid: int) -> tuple[frozenset, frozenset]:
        """(variables, conditions) an `if` reachable from the block's entry (its own
        included) tests. Loop tests are left out: they change every iteration, and a join
        that kept their values apart would unroll the loop. Conditions count only when more
        than one `if` tests them: a remembered condition serves nothing else."""
        return self._decoded(bid, self._decoded_tests, "v", "c")

    def tested_paths(self, bid: int) -> tuple[frozenset[tuple[str, ...]], frozenset[str]]:
        """(access paths, whole names) an `if` reachable from the block's entry reads: every
        prefix of each path it tests (`s->enc.flag` gives `(s,)`, `(s, *)`, `(s, *, .enc)` and
        `(s, *, .enc, .flag)`), and the variables it reads in a way no path describes (inside
        an unparsed expression). What an unknown value's fact may still decide (join.fact_matters)."""
        return self._decoded(bid, self._decoded_paths, "p", "w")

    def _decoded(self, bid: int, cache: dict[int, tuple[frozenset, frozenset]], first: str,
                 second: str) -> tuple[frozenset, frozenset]:
        """The items of two kinds tested ahead of the block, decoded once per distinct mask."""
        if self._tested is None:
            self._tested = self._compute_tested()
        mask = self._tested.get(bid, 0)
        hit = cache.get(mask)
        if hit is None:
            items = [self._items[i] for i in _bits(mask)]
            hit = cache[mask] = (frozenset(x[1] for x in items if x[0] == first),
                                 frozenset(x[1] for x in items if x[0] == second))
        return hit

    def dead(self, bid: int) -> frozenset[str]:
        """Locals that nothing from the block's entry on mentions."""
        if self._live is None:
            self._live = self._compute_live()
        mask = self._local_mask & ~self._live.get(bid, 0)
        hit = self._decoded_dead.get(mask)
        if hit is None:
            hit = self._decoded_dead[mask] = frozenset(self._locals[i] for i in _bits(mask))
        return hit

    def _flow(self) -> tuple[list[int], dict[int, list[int]]]:
        """The blocks in postorder and their predecessors, once for both questions."""
        if self._flow_cache is None:
            preds: dict[int, list[int]] = {}
            for b in self.fn.blocks:
                for nxt in self.succs(b.id):
                    preds.setdefault(nxt, []).append(b.id)
            ids = [b.id for b in self.fn.blocks]
            self._flow_cache = (postorder([self.fn.entry, *ids], set(ids), self.succs), preds)
        return self._flow_cache

    def _compute_tested(self) -> dict[int, int]:
        branches = [(b.id, b.term.cond) for b in self.fn.blocks
                    if isinstance(b.term, ir.Branch) and b.term.kind != "loop"]
        sites: dict = {}
        for _bid, cond in branches:
            for part in conjuncts(cond):
                sites[part] = sites.get(part, 0) + 1
        index: dict = {}
        own: dict[int, int] = {}
        for bid, cond in branches:
            names: set[str] = set()
            _names(cond, names)
            paths: set[tuple[str, ...]] = set()
            wholes: set[str] = set()
            _paths(cond, paths, wholes)
            wanted = [("v", n) for n in sorted(names)] + [("c", p) for p in conjuncts(cond) if sites[p] > 1]
            wanted += [("p", path[:i]) for path in sorted(paths) for i in range(1, len(path) + 1)]
            wanted += [("w", n) for n in sorted(wholes)]
            mask = 0
            for item in wanted:
                bit = index.get(item)
                if bit is None:
                    bit = index[item] = len(self._items)
                    self._items.append(item)
                mask |= 1 << bit
            own[bid] = mask
        return _propagate(self._flow(), own, self.succs)

    def _compute_live(self) -> dict[int, int]:
        fn = self.fn
        candidates = set(fn.locals) - set(fn.params)
        candidates -= {name for name, aggregate in fn.locals.items() if aggregate}  # arrays decay to pointers
        for b in fn.blocks:  # address taken somewhere: another name may read it
            candidates -= _addressed(b)
        self._locals = sorted(candidates)
        bit = {name: i for i, name in enumerate(self._locals)}
        self._local_mask = (1 << len(self._locals)) - 1
        own = {}
        for b in fn.blocks:
            mask = 0
            for name in _block_mentions(b):
                i = bit.get(name)
                if i is not None:
                    mask |= 1 << i
            own[b.id] = mask
        return _propagate(self._flow(), own, self.succs)


def _bits(mask: int) -> list[int]:
    """The positions of the set bits (through the binary text: linear in the mask's size)."""
    return [i for i, c in enumerate(reversed(bin(mask)[2:])) if c == "1"]


def _propagate(flow: tuple[list[int], dict[int, list[int]]], own: dict[int, int],
               succs: Callable[[int], list[int]]) -> dict[int, int]:
    """ahead(B) = own(B) | ahead(successors), to a fixpoint: one pass in postorder (a block
    after its successors: a graph without loops settles there), then a worklist of the blocks
    whose successors changed after they were visited. (Sweeping every block until nothing
    changed took a round per block of an exception edge's detour: 17 000 blocks, 18 s, on a
    fuzzed file.)"""
    order, preds = flow
    ahead = dict(own)
    get = ahead.get
    work: deque[int] = deque()
    queued: set[int] = set()
    to_come = set(order)  # the pass reaches these anyway

    def settle(bid: int) -> None:
        """ahead(bid) from its successors; when it grew, queue its predecessors."""
        mine = get(bid, 0)
        new = mine
        for nxt in succs(bid):
            new |= get(nxt, 0)
        if new != mine:
            ahead[bid] = new
            for p in preds.get(bid, ()):
                if p not in queued and p not in to_come:
                    queued.add(p)
                    work.append(p)

    for bid in order:
        to_come.discard(bid)
        settle(bid)
    while work:
        bid = work.popleft()
        queued.discard(bid)
        settle(bid)
    return ahead


def _block_mentions(block: ir.Block) -> set[str]:
    out: set[str] = set()
    for ev in block.events:
        for e in _event_exprs(ev):
            _names(e, out)
    term = block.term
    if isinstance(term, ir.Branch):
        _names(term.cond, out)
    elif isinstance(term, ir.Return) and term.value is not None:
        _names(term.value, out)
    return out


def _event_exprs(ev: ir.Event) -> Iterable[Expr]:
    if isinstance(ev, Call):
        if ev.receiver is not None:
            yield ev.receiver
        yield from ev.args
        if ev.dest is not None:
            yield ev.dest
    elif isinstance(ev, ir.Assign):
        yield ev.dest
        yield ev.value
    elif isinstance(ev, ir.Use):
        yield ev.pointer


def _names(e: Expr, out: set[str]) -> None:
    while True:
        if isinstance(e, Var):
            out.add(e.name)
            return
        if isinstance(e, (Field, Deref, AddrOf)):
            e = e.base
            continue
        if isinstance(e, Index):
            _names(e.index, out)
            e = e.base
            continue
        if isinstance(e, (Op, Opaque)):
            for part in e.operands if isinstance(e, Op) else e.parts:
                _names(part, out)
        return


def _paths(e: Expr, out: set[tuple[str, ...]], wholes: set[str]) -> None:
    """The access paths a condition reads, in the form of the locations the engine names
    (`("s", "*", ".enc", ".flag")`; any index is `"[]"`); the variables of an unparsed part
    go to `wholes`."""
    if isinstance(e, Op):
        for part in e.operands:
            _paths(part, out, wholes)
        return
    if isinstance(e, Opaque):
        for part in e.parts:
            _names(part, wholes)
        return
    ops: list[str] = []
    while True:
        if isinstance(e, Var):
            out.add((e.name, *reversed(ops)))
            return
        if isinstance(e, Field):
            ops.append("." + e.name)
        elif isinstance(e, Deref):
            ops.append("*")
        elif isinstance(e, Index):
            ops.append("[]")
            _paths(e.index, out, wholes)
        elif isinstance(e, AddrOf):
            ops.clear()  # `&x.f` reads no value: what `x` is, at most
        else:
            return
        e = e.base


def _addressed(block: ir.Block) -> set[str]:
    out: set[str] = set()
    for ev in block.events:
        for e in _event_exprs(ev):
            _addr_names(e, out)
    if isinstance(block.term, ir.Branch):
        _addr_names(block.term.cond, out)
    elif isinstance(block.term, ir.Return) and block.term.value is not None:
        _addr_names(block.term.value, out)
    return out


def _addr_names(e: Expr, out: set[str]) -> None:
    if isinstance(e, AddrOf):
        _names(e.base, out)
    elif isinstance(e, (Field, Deref)):
        _addr_names(e.base, out)
    elif isinstance(e, Index):
        _addr_names(e.base, out)
        _addr_names(e.index, out)
    elif isinstance(e, Op):
        for part in e.operands:
            _addr_names(part, out)
    elif isinstance(e, Opaque):
        for part in e.parts:
            _addr_names(part, out)

"""What lies ahead of each block: the locals nothing mentions any more, and what `if`s test.

The second-level join (join.join_held) must not lose a fact that decides a resource's fate,
and must not merge what can no longer matter into one report. Both questions are about the
rest of the function from a block's entry, so they are answered once per function, backwards
over the CFG:

* `Ahead.tested`: variables and conditions some `if` reachable from the block tests before
  anything assigns them again — the correlations a join there must keep (a flag tested once,
  later, decides as much as one tested ten times; one whose tests are all behind, or that is
  assigned before its next test, decides nothing: backward liveness where only branch
  conditions use and only whole-variable assignments kill). Without the kill, a macro's local
  status tested in every expansion kept states apart by what the *previous* loop iteration
  left in it: 2^N property states at a loop head for N checks;
* `Ahead.dead`: locals no event or test reachable from the block mentions (the Clang
  analyzer's dead-binding idea): a resource only such a local holds can only leak, so it keeps
  its own acquisition site in a join.
* `Ahead.value_dead`: locals whose value at the block's entry nothing reads: every path from
  there assigns them (as a whole) before any other mention, or never mentions them (classic
  backward liveness; the engine reads a binding only where an event names the variable). What such a local holds is dropped from states arriving there unless it
  is a resource that must still be released (explore._trim_dead): two paths that differ only
  in a macro's local status, a loop counter's last value or a released string's pointer are
  one state.

"Mentions" is deliberately coarse (any occurrence, read or write, in any reachable block): it
needs no alias reasoning, and a local whose address is taken anywhere (or an array or struct
value, whose address is taken implicitly) is never dead.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Iterable

from .. import ir
from ..ir import AddrOf, Call, Const, Deref, Expr, Field, Index, Op, Opaque, Var
from .explore import postorder
from .counts import self_step
from .exprs import conjuncts


class Ahead:
    """The answers for one function, computed on the first question (most functions never
    reach a second-level join and never ask). Sets are bit masks over the function's
    candidate names while propagating: a chain of 30 000 `&&` tests is 30 000 blocks, and
    one Python set per block of everything ahead of it would be quadratic."""

    def __init__(self, fn: ir.Function, succs: Callable[[int], list[int]],
                 call_test: Callable[[Call], Expr | None] = lambda ev: None):
        self.fn = fn
        self.succs = succs
        self.call_test = call_test  # what a call asserts, as a test (`require.Error(t, err)`: err)
        self._tested: dict[int, int] | None = None
        self._within: dict[int, int] | None = None  # tested after some point inside the block
        self._live: dict[int, int] | None = None
        self._value_live: dict[int, int] | None = None
        self._value_locals: list[str] = []  # bit i -> a local whose value can die (value_dead)
        self._field_live: dict[int, int] = {}  # fields_dead's liveness
        self._decoded_fields_dead: dict[int, frozenset[str]] = {}
        self._value_mask = 0
        self._value_keys: dict[tuple[str], int] | None = None  # (name,) -> its bit in value_dead's masks
        self._items: list = []  # bit i -> ("v", name) or ("c", condition)
        self._locals: list[str] = []  # bit i -> a local that can die
        self._local_mask = 0
        self._decoded_tests: dict[int, tuple[frozenset, frozenset]] = {}
        self._decoded_dead: dict[int, frozenset[str]] = {}
        self._decoded_paths: dict[int, tuple[frozenset, frozenset]] = {}
        self._flow_cache: tuple[list[int], dict[int, list[int]]] | None = None

    def tested(self, bid: int, within: bool = False) -> tuple[frozenset, frozenset]:
        """(variables, conditions) an `if` reachable from the block's entry (its own
        included) tests before an assignment to them. Loop tests are left out: they change
        every iteration, and a join that kept their values apart would unroll the loop.
        Conditions count only when more than one `if` tests them: a remembered condition
        serves nothing else, and it is forgotten when a variable it reads is assigned.
        `within`: from any point inside the block (its own assignments kill nothing: a join
        after `st = call()` must keep what the block's own test of `st` reads)."""
        return self._decoded(bid, self._decoded_tests, "v", "c", within)

    def tested_paths(self, bid: int, within: bool = False) -> tuple[frozenset[tuple[str, ...]], frozenset[str]]:
        """(access paths, whole names) an `if` reachable from the block's entry reads before
        their root variable is assigned: every prefix of each path it tests (`s->enc.flag`
        gives `(s,)`, `(s, *)`, `(s, *, .enc)` and `(s, *, .enc, .flag)`), and the variables it
        reads in a way no path describes (inside an unparsed expression). What an unknown
        value's fact may still decide (join.fact_matters). `within`: as for `tested`."""
        return self._decoded(bid, self._decoded_paths, "p", "w", within)

    def _decoded(self, bid: int, cache: dict[int, tuple[frozenset, frozenset]], first: str,
                 second: str, within: bool = False) -> tuple[frozenset, frozenset]:
        """The items of two kinds tested ahead of the block, decoded once per distinct mask."""
        if self._tested is None:
            self._tested, self._within = self._compute_tested()
        assert self._within is not None
        mask = (self._within if within else self._tested).get(bid, 0)
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

    def value_dead(self, bid: int, loop_reads: Callable[[frozenset], set[str]]) -> int:
        """Locals whose value at the block's entry nothing reads (see the module's docstring),
        as a mask over `value_keys()`: kept as a mask, not decoded into a set per block, as a
        function with thousands of such locals (a macro's `status` renamed in each inlined
        expansion) would hold a set of nearly all of them at each of its thousands of blocks.
        `loop_reads`: what the end of a loop (`ScopeExit` of these blocks) reads (the analyzer's
        loop_effects knows; passed, not kept: no reference cycle)."""
        if self._value_live is None:
            self._value_live = self._compute_value_live(loop_reads)
        return self._value_mask & ~self._value_live.get(bid, 0)

    def value_keys(self) -> dict[tuple[str], int]:
        """The state key `(name,)` of each local `value_dead` may name -> its bit (after the
        first `value_dead`)."""
        if self._value_keys is None:
            self._value_keys = {(name,): 1 << i for i, name in enumerate(self._value_locals)}
        return self._value_keys

    def _compute_value_live(self, loop_reads: Callable[[frozenset], set[str]]) -> dict[int, int]:
        """in(B) = gen(B) | (out(B) & ~kill(B)) | in(handler(B)): gen, the locals an event or the
        terminator reads before the block assigns them; kill, those it assigns as a whole. A local
        whose address is taken is a candidate too: the engine never reads a binding through a
        pointer (`&x` is no value it tracks; an out-parameter `f(&x)` names x, a read here)."""
        fn = self.fn
        self._value_locals = sorted(name for name, aggregate in fn.locals.items()
                                    if not aggregate and name not in fn.params)
        self._value_mask = (1 << len(self._value_locals)) - 1
        bit = {name: i for i, name in enumerate(self._value_locals)}
        loop_uses: dict[frozenset, int] = {}

        def mask_of(names: Iterable[str]) -> int:
            m = 0
            for name in names:
                i = bit.get(name)
                if i is not None:
                    m |= 1 << i
            return m

        gen: dict[int, int] = {}
        kill: dict[int, int] = {}
        field_reads: dict[int, int] = {}
        for b in self.fn.blocks:
            g = k = f = 0
            for ev in b.events:
                cls = type(ev)
                if cls is ir.ScopeExit:
                    u = loop_uses.get(ev.loop_blocks)
                    if u is None:
                        u = loop_uses[ev.loop_blocks] = mask_of(loop_reads(ev.loop_blocks))
                    f |= u
                elif cls is ir.Kill:
                    continue
                else:
                    u = mask_of(_event_reads(ev))
                    f |= mask_of(_event_reads(ev, fields=True)) if u else 0
                g |= u & ~k
                if cls is ir.Assign or cls is Call:
                    dest = ev.dest
                    if type(dest) is Var:
                        i = bit.get(dest.name)
                        if i is not None:
                            k |= 1 << i
            term = b.term
            if isinstance(term, ir.Branch):
                names = set()
                _names(term.cond, names)
                g |= mask_of(names) & ~k
                f |= mask_of(names)
            elif isinstance(term, ir.Return) and term.value is not None:
                names = set()
                _names(term.value, names)
                g |= mask_of(names) & ~k
                if type(term.value) is not Var:  # (returning a local's value reads none of its fields)
                    f |= mask_of(names)
            if f:
                field_reads[b.id] = f
            if g:
                gen[b.id] = g
            if k:
                kill[b.id] = k
        live, _within = _propagate_killed(self._flow(), gen, kill, self.fn.blocks, self.succs, own_first=True)
        self._field_live = _propagate(self._flow(), field_reads, self.succs)
        return live

    def fields_dead(self, bid: int, loop_reads: Callable[[frozenset], set[str]]) -> frozenset[str]:
        """Locals (not arrays or struct values the front end knows as such) whose fields and
        elements (`v.f`, `v.a.b`) nothing from the block's entry on reads: no event there names
        them except to store into such a field (`v.f = x`) or to return the local's own value
        (`return v`: the engine reads no field of it then), and an assignment kills nothing (a
        store to `v` keeps what its fields held). A resource released or given up into such a
        field is dead weight (a std::string member assigned a released JNI string's pointer)."""
        if self._value_live is None:
            self._value_live = self._compute_value_live(loop_reads)
        mask = self._value_mask & ~self._field_live.get(bid, 0)
        hit = self._decoded_fields_dead.get(mask)
        if hit is None:
            hit = self._decoded_fields_dead[mask] = frozenset(self._value_locals[i] for i in _bits(mask))
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

    def _compute_tested(self) -> tuple[dict[int, int], dict[int, int]]:
        """Per block, the items tested ahead of its entry, and of any point inside it."""
        branches = [(b.id, b.term.cond) for b in self.fn.blocks
                    if isinstance(b.term, ir.Branch) and b.term.kind != "loop"]
        branches += self._asserting_calls()
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
            own[bid] = own.get(bid, 0) | mask
        roots: dict[str, int] = {}  # variable -> the items an assignment to it makes meaningless
        for i, (tag, item) in enumerate(self._items):
            for name in _item_roots(tag, item):
                roots[name] = roots.get(name, 0) | (1 << i)
        kill: dict[int, int] = {}
        for b in self.fn.blocks:
            mask = 0
            for name in _assigned(b):
                mask |= roots.get(name, 0)
            if mask:
                kill[b.id] = mask
        return _propagate_killed(self._flow(), own, kill, self.fn.blocks, self.succs)

    def _asserting_calls(self) -> list[tuple[int, Expr]]:
        """Calls that test an argument the way a branch does: the path goes on only with one
        of its values (`assert(p)`, `require.Error(t, err)`, a status check that aborts). A join
        ahead of one must keep that argument's value as for an `if` testing it (taken as a test at
        the block's end, like the block's branch)."""
        out = []
        for b in self.fn.blocks:
            for ev in b.events:
                if type(ev) is Call:
                    cond = self.call_test(ev)
                    if cond is not None:
                        out.append((b.id, cond))
        return out

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


def _propagate_killed(flow: tuple[list[int], dict[int, list[int]]], own: dict[int, int], kill: dict[int, int],
                     blocks: list[ir.Block], succs: Callable[[int], list[int]],
                     own_first: bool = False) -> tuple[dict[int, int], dict[int, int]]:
    """Backward liveness: in(B) = ((own(B) | in(successors)) & ~kill(B)) | in(handler(B)) when
    `own` is read at the block's end (a terminator's test, after the events' assignments), or
    own(B) | (in(successors) & ~kill(B)) | in(handler(B)) when it is read before them
    (`own_first`: upward-exposed reads), to a fixpoint (the same worklist as `_propagate`); and,
    per block, what is read after some point inside it: own(B) | in(every successor). The
    handler's items are not killed: a call before the block's assignments may throw there.
    Monotone (gen and kill are fixed per block), so the worklist ends with the least fixpoint."""
    order, preds = flow
    handler = {b.id: b.handler for b in blocks if b.handler is not None}
    live: dict[int, int] = {}
    get = live.get
    work: deque[int] = deque()
    queued: set[int] = set()
    to_come = set(order)

    def settle(bid: int) -> None:
        mine = own.get(bid, 0)
        out = 0 if own_first else mine
        h = handler.get(bid)
        for nxt in succs(bid):
            if nxt != h:
                out |= get(nxt, 0)
        new = out & ~kill.get(bid, 0)
        if own_first:
            new |= mine
        if h is not None:
            new |= get(h, 0)
        if new != get(bid, 0):
            live[bid] = new
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
    within: dict[int, int] = {}
    for b in blocks:
        mask = own.get(b.id, 0)
        for nxt in succs(b.id):
            mask |= get(nxt, 0)
        if mask:
            within[b.id] = mask
    return live, within


def _event_reads(ev: ir.Event, fields: bool = False) -> set[str]:
    """The variables an event reads: every mention but the whole-variable destination of an
    assignment or call (`x = f(x)` reads x; `x->f = 1` and `x[i] = 1` read x). `fields`: the
    variables whose fields it may read (a destination `v.f.g` reads none of v's)."""
    out: set[str] = set()
    cls = type(ev)
    if cls is Call:
        if ev.receiver is not None:
            _names(ev.receiver, out)
        for a in ev.args:
            if type(a) is Var:
                out.add(a.name)
            elif type(a) is not Const:
                _names(a, out)
        if ev.dest is not None and type(ev.dest) is not Var and not (fields and _field_chain(ev.dest)):
            _names(ev.dest, out)
    elif cls is ir.Assign:
        _names(ev.value, out)
        if type(ev.dest) is not Var and not (fields and _field_chain(ev.dest)):
            _names(ev.dest, out)
    elif cls is ir.Use:
        _names(ev.pointer, out)
    elif cls is ir.Havoc:
        out.update(ev.names)
    return out


def _field_chain(e: Expr) -> bool:
    """`v.f.g`: fields of a local value, no dereference or index on the way."""
    while type(e) is Field:
        e = e.base
    return type(e) is Var


def _item_roots(tag: str, item: object) -> Iterable[str]:
    """The variables whose assignment makes a tested item meaningless until tested again: a
    variable itself, every variable a remembered condition reads (the engine forgets the
    condition then: values._invalidate), the root of an access path."""
    if tag in ("v", "w"):
        return (item,)  # type: ignore[return-value]
    if tag == "p":
        return (item[0],)  # type: ignore[index]
    names: set[str] = set()
    _names(item, names)  # type: ignore[arg-type]
    return names


def _assigned(block: ir.Block) -> set[str]:
    """Variables the block's events assign as a whole (`x = ...`, `x = f(...)`): their values
    on entry are gone at its end. Stores through pointers and into fields kill nothing, and
    neither does a step of a counter (`++n`): its new value is made from the old one
    (engine/counts.py: 0 or a positive count gives a positive count, an unknown value an
    unknown one), so a test of `n` after it decides by what `n` held before. Killed, `n` was
    no longer "tested ahead" above `if (arr[n]) ++n;`, and the second-level join merged "n is
    0" with "n > 0" there, elements held on both: `if (n > 0) hand(arr); else free(arr);`
    then freed the array alone with its elements held."""
    out: set[str] = set()
    for ev in block.events:
        if type(ev) is ir.Assign:
            dest = ev.dest
            if type(dest) is Var and not self_step(dest.name, ev.value):
                out.add(dest.name)
        elif type(ev) is Call and type(ev.dest) is Var:
            out.add(ev.dest.name)
    return out


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
    while True:  # (the IR's classes have no subclasses: `is` tests)
        cls = type(e)
        if cls is Var:
            out.add(e.name)
            return
        if cls is Field or cls is Deref or cls is AddrOf:
            e = e.base
            continue
        if cls is Index:
            _names(e.index, out)
            e = e.base
            continue
        if cls is Op:
            for part in e.operands:
                _names(part, out)
        elif cls is Opaque:
            for part in e.parts:
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

"""Transfer functions for values: evaluation, locations, stores, escapes, garbage, uses.

A location is a tuple (`("x",)`, `("@rid", "*", ".f")`); a value is a resource pointer, a known
integer or a set of excluded integers (see `state.py`). Storing a resource anywhere this function
does not own is an escape; losing the last reference to a held one is a leak (`_gc`). What a
branch condition says about the state (`_assume`) is in conditions.py.
"""
from __future__ import annotations

from .. import ir
from ..ir import AddrOf, Const, Deref, Expr, Field, Index, Op, Opaque, Var
from .exprs import element_of, owner_text, param_path, shown, strip_value, too_deep
from .messages import subject
from .counts import count_after, counted_up, increment_step
from .interior import INTERIOR, container, unnamed_write_param
from .replaced import bind_written_unknown
from .tagged_pointers import tagged_pointer
from .state import (
    BORROWED,
    CONSUMED,
    DANGLING,
    ESCAPED,
    HELD,
    OPAQUE,
    PREV,
    RELEASED,
    UNKNOWN,
    UNKNOWN_ELEMENTS,
    LocKey,
    Res,
    State,
    Val,
    _second,
    is_nonnull_fact,
    is_null_fact,
    replaced,
)

# Constant folding of integer operators (a table built once, not per evaluated expression)
_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "|": lambda a, b: a | b,
            "&": lambda a, b: a & b, "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b),
            "<=": lambda a, b: int(a <= b), ">=": lambda a, b: int(a >= b), "&&": lambda a, b: int(bool(a and b)),
            "||": lambda a, b: int(bool(a or b)), "<<": lambda a, b: a << b if 0 <= b < 64 else None,
            "^": lambda a, b: a ^ b}

_LVALUES = frozenset({Var, Field, Index, Deref})  # (the IR's expression classes have no subclasses)

_UNSEEN = object()  # (a cache miss, where None is a cached answer)
_NULL = ("k", 0)
_NOT_ZERO = ("x", frozenset({0}))  # the value of `Op(ir.NONZERO, ())`


class ValueTransfer:
    """Part of `FunctionAnalyzer` (see analyze.py for the state it shares)."""

    def _eval(self, state: State, e: Expr | None) -> Val | None:
        cls = type(e)  # the IR's expression classes have no subclasses: `is` tests, most frequent first
        if cls is Var:
            name = e.name
            v = state.b.get((name,))
            if v is not None:
                return v
            hit = self._unbound_values.get(name, _UNSEEN)
            if hit is _UNSEEN:
                hit = self._unbound_values[name] = self._unbound_value(name)
            return hit
        if cls is Const:
            return ("k", e.value) if e.value is not None else None
        if cls is Field or cls is Index or cls is Deref:
            loc = self._resolve(state, e, create=False)
            if loc is not None and loc not in state.b and cls is Index:
                return self._contained(state, loc)
            return state.b.get(loc) if loc is not None else None
        if cls is Op:
            return self._eval_op(state, e)
        if cls is Opaque and len(e.parts) == 1 and type(e.parts[0]) is Var:
            return counted_up(state, e)
        return None


    def _unbound_value(self, name: str) -> Val | None:
        """The value of a variable the state does not bind: a named constant (the policy's, or
        one the analyzed tree declares) unless a local or parameter hides it. A function of the
        name alone, so `_eval` asks once per name."""
        if not self._is_known_var(name):
            if name in self.policy.constants:
                return ("k", self.policy.constants[name])
            if name in self.constants:
                return ("k", self.constants[name])
        return None


    def _contained(self, state: State, loc: LocKey) -> Val | None:
        """An element of a resource whose kind `contains` values it owns (a Java Result's
        outputs): one borrowed value per container, created when first read; an element of a
        list of values to close one by one (`closed_by_elements`) gets an identity too."""
        if len(loc) != 2 or loc[1] != "[]" or not loc[0].startswith("@"):
            return None
        owner = state.r.get(loc[0][1:])
        kind = self.policy.kinds.get(owner.kind or "") if owner is not None else None
        if kind is not None and kind.closed_by_elements and owner.st == HELD:
            # a value of a list its holder closes one by one (`values.get(0)`): the elements'
            # identity, so that closing it is seen as closing the list's values
            return ("r", self._new_opaque(state, loc))
        if kind is None or kind.contains not in self.policy.kinds or owner.st != HELD:
            return None
        rid = loc[0][1:] + "/[]"
        state.r[rid] = Res(kind.contains, BORROWED, parent=loc[0][1:])
        state.b[loc] = ("r", rid)
        self._note_key(loc)
        return ("r", rid)


    def _is_known_var(self, name: str) -> bool:
        return name in self.fn.locals or name in self.params or name.startswith("$")


    def _eval_op(self, state: State, e: Op) -> Val | None:
        ops = e.operands
        if not ops:
            return _NOT_ZERO if e.op == ir.NONZERO else None
        if len(ops) == 2:  # (most operators: without a comprehension's frame)
            vals = [self._eval(state, ops[0]), self._eval(state, ops[1])]
        else:
            vals = [self._eval(state, o) for o in ops]
        if e.op == "!" and len(vals) == 1:
            truth = self._truth(state, vals[0])
            return ("k", int(not truth)) if truth is not None else None
        if e.op == "?:" and len(vals) == 3:
            truth = self._truth(state, vals[0])
            if truth is None:
                return vals[1] if vals[1] == vals[2] else None
            return vals[1] if truth else vals[2]
        if len(vals) == 2 and e.op in ("==", "!="):
            decided = self._compare(state, vals[0], vals[1])
            if decided is not None:
                return ("k", int(decided if e.op == "==" else not decided))
            return None
        ints = [v[1] if v is not None and v[0] == "k" else None for v in vals]
        if len(ints) == 2 and None in ints:
            tagged = tagged_pointer(e.op, vals)
            if tagged is not None:  # `(uintptr_t)p | 1`: handed to the tagged structure
                self._escape_val(state, tagged, None)
            return None
        if len(ints) == 2:
            a, b = ints
            fold = _INT_OPS.get(e.op)
            try:
                result = fold(a, b) if fold is not None else None
            except (ArithmeticError, ValueError):
                result = None
            return ("k", result) if result is not None else None
        if len(ints) == 1 and ints[0] is not None and e.op == "-":
            return ("k", -ints[0])
        return None


    def _truth(self, state: State, v: Val | None) -> bool | None:
        if v is None:
            return None
        if v[0] == "k":
            return v[1] != 0
        if v[0] == "x":
            return True if 0 in v[1] else None
        res = state.r.get(v[1])
        if res is None:
            return None
        if res.st == OPAQUE:
            if is_null_fact(res.fact):
                return False
            if is_nonnull_fact(res.fact):
                return True
            return None
        return None if res.maybe_null else True


    def _compare(self, state: State, a: Val | None, b: Val | None) -> bool | None:
        """Are a and b equal? None when unknown."""
        if a is None or b is None:
            return None
        if a == b and (a[0] == "k" or (a[0] == "r" and container(a[1]) is None)):
            return True  # (two pointers into one object, `p + i` and `p + j`, are not known equal)
        for x, y in ((a, b), (b, a)):
            if y[0] == "k":
                if x[0] == "k":
                    return x[1] == y[1]
                if x[0] == "x" and y[1] in x[1]:
                    return False
                if x[0] == "r":
                    truth = self._truth(state, x)
                    if y[1] == 0 and truth is not None:
                        return not truth
        return None


    def _resolve(self, state: State, e: Expr, create: bool) -> LocKey | None:
        """The location an lvalue expression denotes, or None for memory the state cannot name."""
        cls = type(e)  # (no subclasses in the IR: `is` tests)
        if cls is Var:
            return (e.name,)
        if cls is Field:
            base = self._resolve(state, e.base, create)
            return base + ("." + e.name,) if base is not None else None
        if cls is Deref or cls is Index:
            op = "*" if cls is Deref else "[]"
            base_cls = type(e.base)
            if base_cls is AddrOf:
                return self._resolve(state, e.base.base, create)
            if base_cls is Op:
                element = element_of(e.base)
                return self._resolve(state, element, create) if element is not None else None
            if cls is Index and base_cls is Var and self.fn.locals.get(e.base.name):
                return (e.base.name, "[]")
            base = self._resolve(state, e.base, create)
            if base is None:
                return None
            v = state.b.get(base)
            if v is not None and v[0] == "r":
                return ("@" + v[1], op)
            if not create or (v is not None and v[0] == "k" and v[1] == 0) or too_deep(base):
                return None
            rid = self._new_opaque(state, base)
            return ("@" + rid, op)
        return None


    def _note_unnamed_write(self, root: str) -> None:
        """A store through an interior pointer of `root`'s object: the summary says so when the
        object is a parameter's (engine/interior.py)."""
        i = unnamed_write_param(root, len(self.fn.params))
        if i is not None:
            self._unnamed_writes.add(i)


    def _new_opaque(self, state: State, loc: LocKey) -> str:
        """Give an unknown pointer an identity so facts and releases about it stick. Memory
        reached through an array element (`a[i]`, `a[i]->buf`, `a[i].names`) is one identity
        for as many objects as the array has elements: a collection, like the elements
        themselves (releasing `a[i]->buf` on every iteration releases each element's once); so
        is what an interior pointer reads (`p = buf + k++; release(*p);`: engine/interior.py)."""
        memory = loc[0][:1] == "@"
        root = loc[0][1:] if memory else "v:" + loc[0]
        rid = root + ("/" + "/".join(loc[1:]) if len(loc) > 1 else "")
        base, n = rid, 1
        while rid in state.r:
            n += 1
            rid = f"{base}#{n}"
        if rid in self._memory_rids:
            _drop_stale_memory(state, "@" + rid)
        many = "[]" in loc or loc[0].endswith(INTERIOR) or (memory and state.r.get(root, UNKNOWN).coll)
        state.r[rid] = UNKNOWN_ELEMENTS if many else UNKNOWN
        state.b[loc] = ("r", rid)
        self._note_key(loc)
        return rid


    def _retire(self, state: State, rid: str, dest: LocKey | None = None) -> None:
        """The call that made `rid` is about to make a new one (it runs again in a loop).

        Identities are per call site, so without this every place that still holds the previous
        run's resource (an out array it escaped into, a slot whose element was released, `prev`
        in a loop that keeps the last one) would suddenly hold the new one: iterations would
        alias, and releasing the previous one would look like releasing this one. The previous
        one is renamed `rid#prev` (one identity for all earlier runs: if they differ in stage,
        the merged one is CONSUMED and nothing more is claimed about it). Left alone: a held one
        whose only reference is `dest` (the caller reports it overwritten), array elements (one
        abstract resource for many: an array's elements, a collection's slot for this call) and JNI
        local references (made again: ORT007)."""
        old = state.r.get(rid)
        if old is None:
            return
        target = ("r", rid)
        holders = [k for k, v in state.b.items() if v == target]
        if old.st == HELD:
            kind = self.policy.kinds.get(old.kind or "")
            if old.coll or kind is None or not kind.must_release or not [k for k in holders if k != dest] \
                    or any(k[-1].startswith("#") for k in holders):  # kept in a collection's slot for this call
                return
        memory = [k for k in state.b if k[0] == "@" + rid]
        children = [o for o, res in state.r.items() if res.parent == rid or res.keeps == rid]
        if not holders and not memory and not children:
            return
        prev = rid + PREV
        earlier = state.r.get(prev)
        if earlier is not None and earlier != old:
            old = old if earlier.st == old.st else old.with_st(CONSUMED)
            old = replaced(old, coll=old.coll or earlier.coll, bound=old.bound or earlier.bound)
        if earlier is not None:
            self._forget_released_memory(state, prev)
        state.r[prev] = old
        del state.r[rid]
        for k in holders:
            state.b[k] = ("r", prev)
        for k in memory:
            state.b[("@" + prev,) + k[1:]] = state.b.pop(k)
            self._note_key(("@" + prev,) + k[1:])
        for o in children:
            child = state.r[o]
            state.r[o] = replaced(child, parent=prev if child.parent == rid else child.parent,
                                  keeps=prev if child.keeps == rid else child.keeps)
        if rid in self.sites and prev not in self.sites:
            self.sites[prev] = self.sites[rid]


    @staticmethod
    def _forget_released_memory(state: State, prev: str) -> None:
        """Another object joins `prev`, the identity of a call site's earlier runs (a list
        drained in a loop: `p = e->head; e->head = p->next; free(p->data); free(p);`, where
        each `e->head` is a new unknown value): what the earlier objects' fields held and was
        released is no fact about this one's fields, which were never released. Those bindings
        go; a field holding something still alive keeps it (its holder)."""
        root = "@" + prev
        r = state.r
        for k in [k for k, v in state.b.items() if k[0] == root and v[0] == "r"
                  and (res := r.get(v[1])) is not None and res.st in (RELEASED, CONSUMED, DANGLING)]:
            del state.b[k]


    def _owner_key(self, state: State, e: Expr) -> str:
        """How the owner object of a JNI buffer is recognized at its release: its value when the
        state knows it (so `a = data; ...; Release(data, ...)` matches), else its text."""
        text = owner_text(e)
        v = self._eval(state, e)
        if v is None or v[0] != "r":
            return text
        res = state.r.get(v[1])
        if res is not None and res.owner and self._local_ref_kind(res.kind):
            # an element fetched from an array (GetObjectArrayElement): the array and "an
            # element of it" identify it across loops that fetch the element again
            array, _, rid = res.owner.partition("|@")
            return f"{array}[]" + (f"|@{rid}[]" if rid else "")
        return f"{text}|@{v[1]}"


    def _value_res(self, state: State, e: Expr, create: bool) -> tuple[str | None, Res | None]:
        """The resource an argument expression points to (creating an opaque one on demand)."""
        v = self._eval(state, e)
        if v is not None and v[0] == "r":
            return v[1], state.r.get(v[1])
        if v is not None or not create:
            return None, None
        return self._new_value_res(state, e)


    def _new_value_res(self, state: State, e: Expr) -> tuple[str | None, Res | None]:
        """`_value_res` for an argument that evaluated to nothing: an opaque resource for the
        memory it names (when it names any)."""
        loc = self._resolve(state, strip_value(e), create=True)
        if loc is None or too_deep(loc):
            return None, None
        rid = self._new_opaque(state, loc)
        return rid, state.r[rid]


    def _is_local_loc(self, state: State, loc: LocKey) -> bool:
        """Storing a resource here keeps it in this function's hands (not an escape)."""
        root = loc[0]
        first = root[:1]
        if first == "@":
            res = state.r.get(root[1:])
            if res is None or res.st != HELD or res.kind is None:
                return False
            kind = self.policy.kinds.get(res.kind)
            return kind is not None and kind.owned
        if first == "$" or root in self.fn.locals:
            return True
        return root in self.params and len(loc) == 1


    def _store(self, state: State, dest: Expr, value: Val | None, loc: ir.Loc, value_expr: Expr | None = None,
               key: LocKey | None = None) -> None:
        """`key`: the location of `dest` if the caller has resolved it already (a location found
        without creating identities is the one found with)."""
        if key is None:
            key = self._resolve(state, dest, create=True)
        if key is None:
            self._escape_val(state, value, None)
            if value_expr is not None:
                self._escape_contents(state, value_expr)
            return
        if value is None and value_expr is not None and key[0][:1] == "@":
            value = self._param_value_kept(state, key, value_expr)
            if value is None:
                value = self._incremented_count(state, dest, key, value_expr)
        # `_is_local_loc`, its common answer inline (a local or a temporary: most stores)
        first = key[0][:1]
        if first == "@" and key[0].endswith(INTERIOR):  # `*slot = v` with `slot = out + off` (engine/interior.py)
            self._note_unnamed_write(key[0])
        local = first == "$" or (first != "@" and key[0] in self.fn.locals) or self._is_local_loc(state, key)
        if key in self._prefixes or (state.conds and len(key) == 1 and key[0] in self._memo_names):
            self._invalidate(state, key)  # (else it has nothing to drop: most stores)
        old = state.b.get(key)
        many = old is not None and old[0] == "r" and ("[]" in key or first == "@" and self._of_many(state, key))
        if many and (value is None or value[0] != "r"):
            pass  # one slot of many: the other elements still hold what the array held
        elif value is None:
            if type(value_expr) in _LVALUES and bind_written_unknown(state, key, self._retire):  # the caller must see it
                self._note_key(key)
            else:
                state.b.pop(key, None)
        else:
            if many and old != value:
                self._keep_in_collection(state, old[1], key)
            state.b[key] = value
            if len(key) > 1:
                self._note_key(key)
        if value is not None and value[0] == "r":
            res = state.r.get(value[1])
            if res is not None:
                named = not key[0].startswith("$")
                coll = "[]" in key
                if (named and not res.bound) or (coll and not res.coll):
                    res = replaced(res, bound=res.bound or named, coll=res.coll or coll)
                    state.r[value[1]] = res
        if not local:
            self._escape_val(state, value, key)
            if value_expr is not None:
                self._escape_contents(state, value_expr, key)
        if value is None and value_expr is not None and type(value_expr) in _LVALUES:
            self._copy_aggregate(state, value_expr, key, local)


    def _incremented_count(self, state: State, dest: Expr, key: LocKey, value_expr: Expr) -> Val | None:
        """`d->n++` of memory a parameter reaches, its old value known 0 or not 0 (engine/counts.py)."""
        step = increment_step(dest, value_expr)
        if step is None:
            return None
        old = state.b.get(key)
        return count_after(old, self._truth(state, old), step)


    @staticmethod
    def _of_many(state: State, key: LocKey) -> bool:
        """`key` is memory of an object that stands for many (`Res.coll`: `out[i] = e` of an
        `e = new T` made on every iteration): `e->name = buf` names one object's field, and
        the earlier objects' fields still hold what they held (they are the same identity)."""
        res = state.r.get(key[0][1:])
        return res is not None and res.coll


    def _param_value_kept(self, state: State, key: LocKey, value_expr: Expr) -> Val | None:
        """`n = calloc(..); n->next = *list; *list = n;`: a pointer read from a parameter's
        memory into memory this function made. Reading it never named it (a read of an unbound
        location is unknown), so the new node would keep nothing; named here, it escapes with
        the node and the summary says the callee took it (the old head is in the new one)."""
        if type(value_expr) is not Deref and type(value_expr) is not Field:
            return None
        res = state.r.get(key[0][1:])
        if res is None or res.st != HELD or res.kind is None:
            return None
        src = self._resolve(state, value_expr, create=True)
        if src is None or src[0][:2] != "@p" or param_path(src[0][1:]) is None or "[]" in src \
                or src in self._prefixes or too_deep(src):
            return None  # (a struct whose fields this function reads is copied field by field)
        v = state.b.get(src)
        return v if v is not None else ("r", self._new_opaque(state, src))


    def _copy_aggregate(self, state: State, source: Expr, key: LocKey, local: bool) -> None:
        """`a = b;`, `*out = cfg;` of a struct (or array) value: what its fields and elements
        hold is held by the copy too. Kept where the copy is this function's (`a.buf` holds
        what `b.buf` holds), handed on where it is not. Only a location that has had
        sub-locations can hold any (`_note_key`): most assignments copy a scalar."""
        src = self._resolve(state, source, create=False)
        if not local and type(source) is Deref:
            self._hand_on_param_aggregate(state, source, key)
        elif type(source) is Deref and key[0][:1] == "@":
            self._keep_param_aggregate(state, source, key)
        if src is None or src not in self._prefixes or src == key:
            return
        n = len(src)
        inside = [(k, v) for k, v in state.b.items() if len(k) > n and k[:n] == src]
        for k, v in inside:
            if local:
                copy = key + k[n:]
                state.b[copy] = v
                self._note_key(copy)
            elif v[0] == "r":
                self._escape_val(state, v, key)


    def _keep_param_aggregate(self, state: State, source: Expr, key: LocKey) -> None:
        """`b = calloc(..); b->config = *config;`: the block this function made holds a copy
        of the caller's struct, with whatever the caller stored in it (`cfg.user_data = w;
        make(&cfg);`) in fields this function may never read. The copy's location is bound
        to the caller's object, so that handing the block on (`set_backend(ctx, b)`, returning
        it) hands on the caller's contents too, and the summary says so ("takes ownership of
        *config"); a block freed without being handed on keeps nothing. (Fields read are
        also copied one by one: `_copy_aggregate`.)"""
        src = self._resolve(state, source, create=True)
        if src is None or src[0][:2] != "@p" or "[]" in src or too_deep(src) or param_path(src[0][1:]) is None:
            return
        v = state.b.get(src)
        state.b[key] = v if v is not None else ("r", self._new_opaque(state, src))
        self._note_key(key)

    def _hand_on_param_aggregate(self, state: State, source: Expr, key: LocKey | None) -> None:
        """`q->slots[n] = *job;` (or `q->last = *pp;`): what a parameter points to, copied whole
        into memory this function does not own (or passed to a callee that does that). This
        function never read its fields, but the caller's (`job.path = copy; post(q, &job);`)
        are in the copy: named here and handed on, the summary says the callee took `*job`,
        and the caller hands on what `job` holds."""
        src = self._resolve(state, source, create=True)
        if src is None or src[0][:2] != "@p" or "[]" in src or too_deep(src) or param_path(src[0][1:]) is None:
            return
        v = state.b.get(src)
        self._escape_val(state, v if v is not None else ("r", self._new_opaque(state, src)), key)


    def _escape_aggregate(self, state: State, e: Expr, where: LocKey) -> None:
        """A struct or array value handed on whole (returned by value): what its fields and
        elements hold goes with it (`ans.model = strdup(p); return ans;` hands the string to
        the caller, as storing it into a field the caller sees would)."""
        if type(e) not in _LVALUES:
            return
        loc = self._resolve(state, e, create=False)
        if loc is None or loc not in self._prefixes:
            return
        n = len(loc)
        for k, v in [(k, v) for k, v in state.b.items() if len(k) > n and k[:n] == loc and v[0] == "r"]:
            self._escape_val(state, v, where)


    @staticmethod
    def _keep_in_collection(state: State, rid: str, key: LocKey) -> None:
        """`v[0] = a; v[1] = b;`: the array's one abstract element now names b, but a is still
        in the array. Its fate is the array's, which the state can no longer tell: a is given
        to the array (no leak or double release is claimed for it)."""
        res = state.r.get(rid)
        if res is not None and res.st == HELD:
            state.r[rid] = replaced(res, st=ESCAPED, esc=key)


    def _note_key(self, loc: LocKey) -> None:
        """Remember that `loc`'s prefixes have had sub-locations in some state of this function:
        `_invalidate` only scans a state for sub-locations of a prefix seen here (most stores
        into a field have none, and the scan was a tenth of the analysis)."""
        if loc in self._noted:  # (the same few locations, stored to again and again)
            return
        self._noted.add(loc)
        prefixes = self._prefixes
        for i in range(1, len(loc)):
            prefixes.add(loc[:i])
        if loc[0][:1] == "@":
            self._memory_rids.add(loc[0][1:])
        else:
            self._field_roots.add(loc[0])


    def _invalidate(self, state: State, key: LocKey) -> None:
        """A location is overwritten: drop remembered conditions and sub-locations that read it."""
        n = len(key)
        if n > 1 and key in self._prefixes:  # a struct stored through a pointer or into a field: its old fields are gone
            root = key[0]
            for k in [k for k in state.b if k[0] == root and len(k) > n and k[:n] == key]:
                del state.b[k]
        if n == 1:
            name = key[0]
            if state.conds and name in self._memo_names:  # (no remembered condition reads most names)
                dropped = [c for c in state.conds if name in self._vars_of(c[0])]
                if dropped:  # (a new set only then: building one hashes every condition again)
                    state.conds = state.conds - frozenset(dropped)
            if key in self._prefixes and (name in self.fn.locals or name[:1] == "$" or name not in self.fn.params):
                # a whole struct or array assigned (or declared again on the next iteration of
                # a loop): what its fields and elements held is gone from it. So for a name that
                # is no local: a C++ reference bound again on each iteration (`const Rec& r =
                # recs[i];`, declared as a name of memory elsewhere) names another element,
                # and a global or static struct assigned whole has new fields
                for k in [k for k in state.b if k[0] == name and len(k) > 1]:
                    del state.b[k]


    def _forget_released_inside(self, state: State, e: Expr) -> None:
        """`fill(&item)`: a call given the address of `item` may write all of it, so what a
        field held that was already released (`item.buf`, freed on the previous iteration of
        a loop) is no longer known to be there."""
        if type(e) is not AddrOf:
            return
        loc = self._resolve(state, e.base, create=False)
        if loc is None or loc not in self._prefixes:
            return
        n = len(loc)
        for k, v in [(k, v) for k, v in state.b.items() if len(k) > n and k[:n] == loc and v[0] == "r"]:
            res = state.r.get(v[1])
            if res is not None and res.st in (RELEASED, DANGLING):
                del state.b[k]


    def _escape_val(self, state: State, value: Val | None, where: LocKey | None, depth: int = 0,
                    memory: dict[str, list[Val]] | None = None) -> None:
        """`value`'s resource escapes to `where`, and so does whatever its memory holds (a few
        levels down). `memory`: the resource pointers held in memory (`("@R", ...)` keys), by
        root, made once per escape: the bindings do not change while it runs (only resources
        do), and a scan of every binding at each level was a tenth of the analysis of functions
        with large states (ossia's css_xml_render)."""
        if value is None or value[0] != "r" or depth > 6:
            return
        rid = value[1]
        res = state.r.get(rid)
        if res is None:
            return
        if memory is None:
            memory = {}
            for k, v in state.b.items():
                if v[0] == "r" and k[0][:1] == "@":
                    memory.setdefault(k[0], []).append(v)
        if res.st in (HELD, BORROWED, OPAQUE):
            state.r[rid] = replaced(res, st=ESCAPED, esc=where)
            if res.st == BORROWED and res.parent and self._is_java(res.kind):
                # a Result's output handed to another owner: whoever takes the values out of
                # a Result takes over closing them (the Result has nothing else to close)
                self._escape_val(state, ("r", res.parent), where, depth + 1, memory)
        elif res.st == ESCAPED and res.esc is None and where is not None:
            state.r[rid] = replaced(res, esc=where)
        for v in memory.get("@" + rid, ()):
            if v[1] != rid:
                self._escape_val(state, v, where, depth + 1, memory)


    def _is_local_ref(self, state: State, value: Val | None) -> bool:
        """A value that is a live JNI local reference (a kind that piles up in loops)."""
        if value is None or value[0] != "r":
            return False
        res = state.r.get(value[1])
        if res is None or res.st != HELD:
            return False
        kind = self.policy.kinds.get(res.kind or "")
        return kind is not None and kind.loop_leak and not kind.must_release


    def _is_java(self, kind_id: str | None) -> bool:
        kind = self.policy.kinds.get(kind_id or "")
        return kind is not None and kind.language in ("java", "csharp")  # the managed bindings


    def _escape_contents(self, state: State, e: Expr, where: LocKey | None = None) -> None:
        """`&x` or an array `a` handed away: everything stored inside x / a escapes too."""
        cls = type(e)  # (no subclasses in the IR: `is` tests)
        if cls is AddrOf:
            target = e.base
        elif cls is Var and self.fn.locals.get(e.name):
            target = e
        else:
            return
        loc = self._resolve(state, target, create=False)
        if loc is None:
            return
        n = len(loc)
        for k, v in list(state.b.items()):
            if k[:n] == loc and v[0] == "r":
                self._escape_val(state, v, self._inner_where(where, k[n:]))

    @staticmethod
    def _inner_where(where: LocKey | None, inner: tuple) -> LocKey | None:
        """Where an element of a collection stored at `where` ends up: `*out = list` with
        `list[i]` holding a tensor puts the tensor at `(*out)[i]`, not at `*out` (a caller told
        the tensor is `*out` itself would not see a helper that releases the elements of `*out`
        release it). Only the elements of memory a parameter reaches: the summary's out paths."""
        if where is None or inner != ("[]",) or not where[0].startswith("@p"):
            return where
        return where + inner


    def _gc(self, state: State, loc: ir.Loc, lost: bool = True) -> None:
        """Forget resources nothing refers to; a held one losing its last reference is a leak."""
        b, r = state.b, state.r
        self._event_work += len(b)  # the scans below: what bounds one very long block
        memory = self._memory_rids
        if memory and (len(memory) > len(b) or not r.keys() >= memory):  # (else no memory can be orphaned)
            orphans = [k for k in b if k[0][:1] == "@" and k[0][1:] not in r]
            for k in orphans:  # memory of resources already forgotten
                del b[k]
        referenced = set(map(_second, b.values()))  # `referenced_ids(b)`, inline: every assignment and call
        if referenced.issuperset(r):
            return  # the common case: everything is still referenced
        for rid, res in list(r.items()):
            if rid in referenced or rid[0] == "p":
                continue
            if res.st == HELD:
                kind = self.policy.kinds.get(res.kind or "")
                if kind is None or kind.token or (kind.loop_leak and not kind.must_release and not res.coll):
                    continue  # a local reference keeps its slot until deleted, referenced or not
                if lost and kind.owned and kind.must_release and not res.coll:
                    self._leak(state, rid, loc, "lost", "the last reference to it is lost here")
                del state.r[rid]
            else:  # released, escaped, consumed: nothing can refer to it any more
                del state.r[rid]


    def _havoc(self, state: State, names: tuple[str, ...]) -> None:
        wanted = set(names)
        for k, v in list(state.b.items()):
            if k[0] in wanted:
                if v[0] == "r":
                    self._consume_tree(state, v[1])
                    res = state.r.get(v[1])
                    if res is not None and res.st == ESCAPED and res.esc == k and k[0] not in self.fn.params:
                        # escaped into this very member or global (`CreateX(.., &member_)`), which
                        # the unseen code may release: no leak on a constructor's throw either
                        state.r[v[1]] = res.with_st(CONSUMED)
                if len(k) == 1 and v[0] != "r":
                    del state.b[k]
        state.conds = frozenset(c for c in state.conds if not (self._vars_of(c[0]) & wanted))


    def _consume_tree(self, state: State, rid: str, depth: int = 0) -> None:
        res = state.r.get(rid)
        if res is None or depth > 6:
            return
        if res.st in (HELD, BORROWED, RELEASED, DANGLING, OPAQUE):
            state.r[rid] = res.with_st(CONSUMED)
        for k, v in list(state.b.items()):
            if k[0] == "@" + rid and v[0] == "r":
                self._consume_tree(state, v[1], depth + 1)


    def _use(self, state: State, pointer: Expr, loc: ir.Loc, how: str) -> None:
        # a variable the state does not bind holds no resource (`_unbound_value`): no `_eval` call
        v = state.b.get((pointer.name,)) if type(pointer) is Var else self._eval(state, pointer)
        if v is None or v[0] != "r":
            return
        rid = v[1]
        res = state.r.get(rid)
        if res is None or res.coll or res.st not in (RELEASED, DANGLING):
            return
        if res.st == RELEASED and self._kept_alive(state, rid):
            return
        name = shown(strip_value(pointer))
        site = self.sites.get(rid.split("#")[0]) if not name or name[:1] == "$" else None
        what = subject(name, site.callee if site is not None else None)
        if res.st == RELEASED:
            where = self._last_note(state, rid, "released")
            msg = f"{what} is used after it was released{where}"
        else:
            parent = res.parent or ""
            where = self._last_note(state, parent, "released")
            msg = f"{what} is used after its owner was released{where}; it was borrowed from it"
        self._report("ORT006", loc, msg, state, rid, anchor=f"use:{name}")
        state.r[rid] = res.with_st(CONSUMED)


    @staticmethod
    def _kept_alive(state: State, rid: str) -> bool:
        """Another resource that is still alive co-owns `rid`'s object (`Acquire.keeps`): the
        release dropped the caller's reference, and the object lives on while that one does
        (a GenAI model whose generator params were made from it)."""
        for other in state.r.values():
            if other.keeps == rid and (other.st == HELD or other.st == ESCAPED):
                return True
        return False


    def _null_read(self, state: State, pointer: Expr) -> bool:
        """`n = calloc(..);` failing, then `n->next = *list;`: memory read or written through a
        variable or location this path knows is NULL (`s->str = realloc(..)` failing, then
        `s->str[n] = c`). The path ends there; went on, the write
        would be dropped and the value written taken for lost or handed over (a list helper
        whose summary then says the old head is overwritten with NULL).
        C only: in C a call changes a local only through `&x` (forgotten at the call), but a C++
        callee can also assign it through a reference parameter the call does not show
        (`std::unique_ptr<T> s; Create(.., s); Init(*s);`), so a NULL known before is stale."""
        if self.fn.language != "c":
            return False
        if type(pointer) is Var:
            return state.b.get((pointer.name,)) == _NULL
        return type(pointer) in _LVALUES and self._eval(state, pointer) == _NULL


    def _dereferenced(self, state: State, pointer: Expr) -> None:
        """`src->width` read: from here on the unknown pointer `src` is not NULL, so a later
        `if (!src) return NULL;` is a branch no path takes (the read would have crashed first),
        and a copy allocated before it does not leak there. Only a variable's own unknown value:
        what the function acquired is non-NULL already, and memory reached through it keeps its
        lazily made identities. C and C++ (a Java reference read through throws, a path the
        front end gives its own edge)."""
        if type(pointer) is not Var or self.fn.language not in ("c", "cpp"):
            return
        v = state.b.get((pointer.name,))
        if v is None or v[0] != "r":
            return
        res = state.r.get(v[1])
        if res is not None and res.st == OPAQUE and res.fact is None and not res.coll:
            state.r[v[1]] = replaced(res, fact=("x", frozenset({0})))


    def _last_note(self, state: State, rid: str, word: str) -> str:
        node = state.trace
        while node is not None:
            if node.rid == rid and word in node.text:
                return f" at line {node.line}"
            node = node.prev
        return ""


def _drop_stale_memory(state: State, root: str) -> None:
    """A name given afresh to an unknown object (`v:it` for `it`, read again after
    `it = node->data;` stored a value the state cannot name) may still have memory bindings
    of the object that had it before and was forgotten (`_gc` drops the identity at once, its
    memory at its next scan): the new object's fields are unknown, never the old one's
    released fields (`while (l) { it = l->data; unref(it); remove(&l, it); }` read as freeing
    `it->name` twice)."""
    b = state.b
    for k in [k for k in b if k[0] == root]:
        del b[k]

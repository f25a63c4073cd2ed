"""The .NET API surface the policy describes (`[[csharp_api]]`, see policy_csharp.py): classes,
their members as parsed signatures, and overload resolution against what the front end knows
of the arguments.

Resolution keeps the overloads whose parameter count fits and whose parameter types do not
contradict an argument's known type (an unknown argument fits anything). When the survivors
disagree, a call whose value is used cannot be one returning `void`; a call used as a statement
is taken as the `void` one (`session.Run(inputs, outputs);` writes into caller-provided outputs
and creates nothing): when in doubt, nothing is created, so nothing can be reported wrongly.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...policy import Policy
from .types import NUMERIC, PRIMITIVES, base_name, canon, element_type, family, split_args, type_args

_BCL_BASES = {  # exceptions a catch clause may name, and what they derive from
    "ArgumentNullException": "ArgumentException", "ArgumentOutOfRangeException": "ArgumentException",
    "ArgumentException": "SystemException", "InvalidOperationException": "SystemException",
    "ObjectDisposedException": "InvalidOperationException", "NotSupportedException": "SystemException",
    "NotImplementedException": "SystemException", "IOException": "SystemException",
    "FileNotFoundException": "IOException", "DirectoryNotFoundException": "IOException",
    "InvalidDataException": "SystemException", "FormatException": "SystemException",
    "OperationCanceledException": "SystemException", "TaskCanceledException": "OperationCanceledException",
    "NullReferenceException": "SystemException", "IndexOutOfRangeException": "SystemException",
    "InvalidCastException": "SystemException", "OutOfMemoryException": "SystemException",
    "TimeoutException": "SystemException", "KeyNotFoundException": "SystemException",
    "UnauthorizedAccessException": "SystemException", "OverflowException": "ArithmeticException",
    "DivideByZeroException": "ArithmeticException", "ArithmeticException": "SystemException",
    "AggregateException": "Exception", "SystemException": "Exception", "ApplicationException": "Exception",
    "OnnxRuntimeException": "Exception", "Exception": "",
}


@dataclass(frozen=True)
class Param:
    type: str
    optional: bool = False
    params: bool = False  # `params T[]`: any number of trailing arguments
    mode: str = ""  # "ref" | "out" | "in" | "this" | ""


@dataclass(frozen=True)
class Member:
    """A constructor (`name == ".ctor"`), method, or property/field (`params is None`)."""

    owner: str
    name: str
    params: tuple[Param, ...] | None
    returns: str
    static: bool = False
    generics: tuple[str, ...] = ()

    def fits(self, count: int) -> bool:
        if self.params is None:
            return False
        ps = [p for p in self.params if p.mode != "this"]
        required = sum(1 for p in ps if not p.optional and not p.params)
        if ps and ps[-1].params:
            return count >= required
        return required <= count <= len(ps)


def parse_member(owner: str, sig: str) -> Member | None:
    """One signature of a `[[csharp_api]]` table (see policy_csharp.py), or None if malformed."""
    text = sig.strip()
    static = text.startswith("static ")
    if static:
        text = text[7:].strip()
    returns = ""
    paren = text.find("(")
    colon = text.rfind(" : ")
    if colon > 0 and (paren < 0 or colon > text.rfind(")")):
        returns = canon(text[colon + 3:])
        text = text[:colon].strip()
    if paren < 0:
        return Member(owner, text, None, returns, static)
    head, inner = text[:paren].strip(), text[paren + 1:text.rfind(")")]
    generics: tuple[str, ...] = ()
    if head.endswith(">") and "<" in head:
        generics = tuple(g.strip() for g in split_args(head[head.find("<") + 1:-1]))
        head = head[:head.find("<")]
    name = ".ctor" if head == "new" else head
    params = []
    for raw in split_args(inner) if inner.strip() else []:
        optional = raw.endswith("=")
        raw = raw.rstrip("=").strip()
        mode = ""
        for word in ("ref ", "out ", "in ", "params ", "this ", "scoped "):
            if raw.startswith(word):
                mode = word.strip() if word != "scoped " else mode
                raw = raw[len(word):].strip()
        params.append(Param(canon(raw), optional, mode == "params", "" if mode == "params" else mode))
    return Member(owner, name, tuple(params), returns or ("void" if name != ".ctor" else canon(owner)), static, generics)


class ApiIndex:
    """The `[[csharp_api]]` classes of a policy, by simple name, with members parsed once."""

    def __init__(self, policy: Policy):
        self.classes = policy.csharp_api
        self.members: dict[str, dict[str, list[Member]]] = {}
        self.extensions: dict[str, list[Member]] = {}
        for name, cls in self.classes.items():
            table: dict[str, list[Member]] = {}
            for sig in cls.members:
                m = parse_member(name, sig)
                if m is None:
                    continue
                table.setdefault(m.name, []).append(m)
                if m.static and m.params and m.params[0].mode == "this":
                    self.extensions.setdefault(m.name, []).append(m)
            self.members[name] = table
        self._compat: dict[tuple[str, str], bool] = {}
        self.roots = frozenset(n.split(".")[0] for n in self.classes)

    def is_api(self, type_: str) -> bool:
        return base_name(type_).rstrip("[]") in self.classes if type_ else False

    def bases(self, name: str) -> list[str]:
        """`name` and its API base classes, nearest first."""
        out, seen = [], set()
        while name and name not in seen and name in self.classes:
            seen.add(name)
            out.append(name)
            name = next((base_name(canon(b)) for b in self.classes[name].bases if base_name(canon(b)) in self.classes
                         and not base_name(canon(b)).startswith("I")), "")
        return out

    def lookup(self, type_: str, member: str) -> list[Member]:
        """Every overload of `member` on `type_` (its API bases included)."""
        for cls in self.bases(base_name(type_)):
            found = self.members.get(cls, {}).get(member)
            if found:
                return found
        return []

    def property_type(self, type_: str, member: str) -> str:
        found = [m for m in self.lookup(type_, member) if m.params is None]
        return substitute(found[0].returns, type_) if found else ""

    def is_disposable(self, type_: str) -> bool:
        cls = self.classes.get(base_name(type_))
        return bool(cls is not None and cls.disposable)

    def has_void_and_value(self, type_: str, member: str) -> bool:
        found = [m for m in self.lookup(type_, member) if m.params is not None]
        return any(m.returns == "void" for m in found) and any(m.returns != "void" for m in found)

    def resolve(self, type_: str, member: str, args: list[str], used: bool) -> Member | None:
        """The overload of `type_.member` (".ctor" for constructors) that a call with arguments of
        types `args` ("" when unknown) means (see the module doc)."""
        cands = [m for m in self.lookup(type_, member) if m.fits(len(args))]
        return self.choose(cands, args, used)

    def public_overload_fits(self, type_: str, member: str, args: list[str]) -> bool:
        """Can a call with arguments of these types be one of the public overloads? No when each
        one contradicts a known argument type: the binding's own code calling an internal
        overload (`new OrtKeyValuePairs(handle)` wraps a handle it does not own)."""
        cands = [m for m in self.lookup(type_, member) if m.fits(len(args))]
        return not self.lookup(type_, member) or any(
            all(self.compatible(a, p) for a, p in zip(args, param_types(m, len(args)))) for m in cands)

    def choose(self, cands: list[Member], args: list[str], used: bool) -> Member | None:
        if not cands:
            return None
        fitting = [m for m in cands if all(self.compatible(a, p) for a, p in zip(args, param_types(m, len(args))))]
        cands = fitting or cands
        if used:
            cands = [m for m in cands if m.returns != "void"] or cands
        elif any(m.returns == "void" for m in cands):
            cands = [m for m in cands if m.returns == "void"]
        return cands[0]

    def compatible(self, arg: str, param: str) -> bool:
        """Can an argument of (known) type `arg` bind to a parameter of type `param`? Unknown
        types, type parameters and `object` fit everything; collections must agree in family
        (sequence or map) and element type; two API classes must be related by derivation;
        a primitive contradicts anything but another number."""
        key = (arg, param)
        hit = self._compat.get(key)
        if hit is None:
            hit = self._compat[key] = self._compatible(arg, param)
        return hit

    def _compatible(self, arg: str, param: str) -> bool:
        if not arg or not param or arg == param or arg == "null":
            return True
        pa, ar = base_name(param), base_name(arg)
        if pa in ("object", "Object", "dynamic") or _is_type_param(pa):
            return True
        fa, fp = family(arg), family(param)
        if fa or fp:
            if fa and fp:
                return fa == fp and self._elements_compatible(arg, param)
            # a sequence to Memory<T>/Span<T> converts; otherwise one side is not a collection
            return bool(fa == "seq" and pa in ("Memory", "ReadOnlyMemory", "Span", "ReadOnlySpan")) \
                or not (ar in PRIMITIVES or pa in PRIMITIVES or self.is_api(ar) or self.is_api(pa)) and not fa
        if pa == ar:
            return True
        if ar in PRIMITIVES or pa in PRIMITIVES:
            return ar in NUMERIC and pa in NUMERIC
        if self.is_api(ar) and self.is_api(pa):
            return pa in self.bases(ar) or pa in self.interfaces(ar)
        return True  # an application class may derive from anything

    def _elements_compatible(self, arg: str, param: str) -> bool:
        if family(arg) == "map":
            return all(self.compatible(x, y) for x, y in zip(type_args(arg), type_args(param)))
        ea, ep = element_type(arg), element_type(param)
        return self.compatible(ea, ep) if ea and ep else True

    def interfaces(self, name: str) -> set[str]:
        out = set()
        for cls in self.bases(name):
            out.update(base_name(canon(b)) for b in self.classes[cls].bases)
        return out


def param_types(m: Member, count: int) -> list[str]:
    """The parameter type each of `count` arguments binds to ("" for the `params` tail)."""
    ps = [p for p in (m.params or ()) if p.mode != "this"]
    return [ps[i].type if i < len(ps) and not ps[i].params else "" for i in range(count)]


def _is_type_param(name: str) -> bool:
    return (len(name) == 1 and name.isupper()) or (name.startswith("T") and name[1:2].isupper() and "<" not in name
                                                   and len(name) < 12 and name not in ("TimeSpan", "TextReader",
                                                                                       "TextWriter", "Type"))


def substitute(ret: str, receiver: str) -> str:
    """`T` in a member of `Tensor<float>` is float: the one-parameter case, which covers the API."""
    args = type_args(receiver)
    if len(args) == 1 and ret:
        out = []
        for part in _tokens(ret):
            out.append(args[0] if part == "T" else part)
        return "".join(out)
    return ret


def _tokens(text: str) -> list[str]:
    out, word = [], ""
    for ch in text:
        if ch.isalnum() or ch == "_":
            word += ch
        else:
            if word:
                out.append(word)
                word = ""
            out.append(ch)
    if word:
        out.append(word)
    return out


def exception_catches(caught: str, thrown: str, user_bases: dict[str, str]) -> str:
    """Does `catch (caught)` catch an exception of type `thrown`? "yes", "no" or "maybe"
    (a type whose ancestry neither the BCL table nor the project tells)."""
    seen = thrown
    for _ in range(32):
        if seen == caught:
            return "yes"
        nxt = user_bases.get(seen, _BCL_BASES.get(seen))
        if nxt is None:
            return "maybe"
        if not nxt:
            return "no"
        seen = nxt
    return "maybe"

"""A constructor that throws destroys the base subobjects it has already built: `struct Env :
Base<OrtEnv> { Env() { Check(api->CreateEnv(.., &p_)); Check(api->SetX(p_)); } }` leaks nothing
when the second call throws, since `~Base()` releases `p_`. The rule "the destructor does not run
when a constructor throws" holds for the class's own destructor, not for its bases'.

Lowered as a `try` around the constructor's body whose handler runs each base's destructor (its
body in place when the file has it; else the base's members are left unchecked there: see
`destroy_base`) and throws on. A base declared in another
header is found through the header index, which also reads a header in the context of the
header including it (`onnxruntime_cxx_inline.h`, included at the end of `onnxruntime_cxx_api.h`,
defines `Env::Env` but never declares `Env`)."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from ... import ir
from .model import ClassInfo
from .scopes import TryContext


class CppBaseDestructors:
    """Base subobjects destroyed when an exception leaves a constructor."""

    @contextmanager
    def base_destructors_on_throw(self) -> Iterator[None]:
        """Around a constructor's body: an exception leaving it runs the bases' destructors."""
        bases = self.bases_destroyed_on_throw()
        if not bases:
            yield
            return
        pad = self.new_block()
        outer = self.handler
        self.try_stack.append(TryContext(pad.id, len(self.scopes)))
        self.handler = pad.id
        self.split()
        try:
            yield
        finally:
            self.try_stack.pop()
            self.handler = outer
        after = self.cur
        self.start(pad)
        loc = self.loc(self.node)
        for base in bases:
            self.destroy_base(base, loc)
        self.terminate(ir.Halt(loc, "throw"))
        self.cur = after

    def bases_destroyed_on_throw(self) -> list[ClassInfo]:
        """The bases with a destructor, when this function is a constructor that may throw (a
        constructor defined out of its class, in another file than the class, included)."""
        if "::" not in self.name or self.node.type == "lambda_expression":
            return []
        owner, short = self.name.rsplit("::", 1)
        cls = self.cls if self.cls is not None else self.model.find_class(owner)
        if cls is None or short != cls.name or self.is_noexcept():
            return []
        return self._bases_with_destructors(cls)

    def _bases_with_destructors(self, cls: ClassInfo, depth: int = 0) -> list[ClassInfo]:
        """The bases whose destructors run: a direct base that has one, else (its implicit
        destructor) its own bases', down a template chain (`Info : detail::InfoImpl<T>`,
        `InfoImpl<T> : Base<T>`)."""
        out: list[ClassInfo] = []
        for b in self.model.base_classes(cls):
            if b.dtor is not None or b.has_dtor_decl:
                out.append(b)
            elif depth < 4:
                out.extend(x for x in self._bases_with_destructors(b, depth + 1) if x not in out)
        return out

    def destroy_base(self, base: ClassInfo, loc: ir.Loc) -> None:
        """Run `~Base()` on this object: its body in place when this file has it. Else (a class
        of a header) what it does to the base's members is out of sight: a summary of it, made
        where it is defined, describes its parameters, and a destructor has none (it reaches the
        members as `this`'s), so a call of it would say "does nothing". The members are left
        unchecked instead (`Havoc`): whether that destructor releases them is not this file's
        to claim."""
        if base.dtor is not None and self.inline_method(base.dtor, base, self.this_obj, [], loc):
            return
        members = base.field_order or list(base.fields)  # (a header's class: its declared members)
        names = sorted({name for m in members if (name := _root_name(self.member_expr(m)))})
        if names:
            self.emit(ir.Havoc(loc, tuple(names), f"the members of {base.qualname}, in its destructor"))


def _root_name(e: ir.Expr) -> str:
    """The variable an access path starts from (`raw_`; `self.raw_` -> `self`), or ""."""
    while not isinstance(e, ir.Var):
        base = getattr(e, "base", None)
        if base is None:
            return ""
        e = base
    return e.name

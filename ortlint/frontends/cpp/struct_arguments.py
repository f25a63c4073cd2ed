"""A local struct value whose fields the function filled, passed to a call, hands on what its
fields hold: `opts.matcher = new M(); Compose(a, b, opts);`, `q.params = malloc(n);
interp->SetParams(i, q);`. Passing the pointer itself to a callee the tree does not define is an
escape (the library may keep it); storing it in a field of a struct handed over by value or by
`const &` is the same hand-over (a `const` struct is not a `const` pointee: the callee may still
take ownership of what the fields point to, as OpenFst's compose options and TFLite's
quantization parameters do).

The engine escapes what is stored inside an argument that is an aggregate local (its slots), and
not what is stored inside a `const &` argument a prototype declares (`borrows`). So such a local
is marked an aggregate and is not borrowed. Callees of the tree keep their summaries: this only
changes what an unknown callee receives."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Field, Var
from .model import parse_type

# Type names that are no struct of fields the function fills (a `.f` store cannot name them).
_NOT_STRUCTS = frozenset({"auto", "void", "bool", "char", "short", "int", "long", "float", "double",
                          "unsigned", "signed", "size_t", "int8_t", "int16_t", "int32_t", "int64_t",
                          "uint8_t", "uint16_t", "uint32_t", "uint64_t"})


class CppStructArguments:
    """Struct values with filled fields passed to calls: their fields go with them."""

    def emit(self, event: ir.Event) -> None:
        """Every event: a store into `s.f` of a local `s` notes s as a struct with filled fields."""
        dest = getattr(event, "dest", None)
        if type(dest) is Field and type(dest.base) is Var:
            self.filled_structs.add(dest.base.name)
        super().emit(event)  # type: ignore[misc]

    @property
    def filled_structs(self) -> set[str]:
        found = self.__dict__.get("_filled_structs")
        if found is None:
            found = self.__dict__["_filled_structs"] = set()
        return found

    def emit_call(self, node: Node, callee: str, style: str, receiver: ir.Expr | None,
                  args: tuple[ir.Expr, ...], discard: bool, dest: ir.Expr | None, may_throw: bool = False,
                  written: int | None = None) -> ir.Expr:
        handed = self.struct_arguments_with_fields(args)
        for name in handed:
            self.locals[name] = True  # an aggregate: what its slots hold goes where it goes
        result = super().emit_call(node, callee, style, receiver, args, discard, dest,  # type: ignore[misc]
                                   may_throw, written)
        if handed:
            self.unborrow_struct_arguments(args, handed)
        return result

    def struct_arguments_with_fields(self, args: tuple[ir.Expr, ...]) -> set[str]:
        """Locals among `args` (passed by value or by reference: the bare variable) that are
        struct values of which this function stored a field before the call."""
        filled = self.__dict__.get("_filled_structs")
        if not filled:
            return set()
        found: set[str] = set()
        for arg in args:
            if type(arg) is Var and arg.name in filled and arg.name in self.locals and self.is_struct_value(arg.name):
                found.add(arg.name)
        return found

    def is_struct_value(self, name: str) -> bool:
        """A local declared with a named, non-pointer type (not a builtin): a struct or class value."""
        type_text = self.local_type_text(name)
        if type_text is None:
            return False
        t = self.model.resolve_alias(parse_type(type_text))
        return not t.pointers and bool(t.name) and t.name.split("::")[-1] not in _NOT_STRUCTS

    def local_type_text(self, name: str) -> str | None:
        for frame in reversed(self.frames):
            found = frame.types.get(name)
            if found is not None:
                return found
        return None

    def unborrow_struct_arguments(self, args: tuple[ir.Expr, ...], handed: set[str]) -> None:
        """The call just emitted no longer borrows those arguments (`const S &` keeps the struct
        unchanged, not what its fields point to)."""
        events = self.cur.events if self.cur is not None else []
        call = events[-1] if events else None
        if type(call) is not ir.Call or not call.borrows:
            return
        call.borrows = tuple(i for i in call.borrows
                             if not (i < len(args) and type(args[i]) is Var and args[i].name in handed))

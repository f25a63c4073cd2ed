"""Function parameter packs (`template <typename... Args> Ptr MakePtr(Args&&... args)`): one
parameter of the source stands for every argument from its position on. The IR maps call
arguments to parameters by position, so a pack is lowered as PACK_SLOTS parameters (the pack's
name, then `args$1`, `args$2`, ...), and an expansion of it (`std::forward<Args>(args)...`,
`args...`) as an aggregate temporary holding one value per slot: what the expansion is given to
(a constructor by `std::make_unique<T>(...)`, another call) gets every argument the caller
passed there, as C++ hands them on."""
from __future__ import annotations

import re

from tree_sitter import Node

from ... import ir
from ...ir import Field, Var

PACK_SLOTS = 8  # arguments a pack stands for (calls with more pass the rest to nothing)
_WORD = re.compile(r"[A-Za-z_]\w*")


def pack_slot_names(name: str) -> list[str]:
    """The parameters a pack named `name` is lowered as."""
    return [name] + [f"{name}${i}" for i in range(1, PACK_SLOTS)]


def is_pack_param(param: Node) -> bool:
    """`Args&&... args` / `Args... args` (not C's bare `...`, which has no name)."""
    return param.type == "variadic_parameter_declaration"


class CppPacks:
    """Function parameter packs: lowered as PACK_SLOTS parameters; an expansion gives every slot."""

    def add_pack_slots(self, name: str, names: list[str], type_text: str) -> None:
        """Append the slots after the pack's own name (already in `names`), typed as the pack."""
        slots = pack_slot_names(name)
        self.packs[name] = slots
        for slot in slots[1:]:
            names.append(slot)
            self.frames[-1].types[slot] = type_text

    def expr_parameter_pack_expansion(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`f(std::forward<Args>(args)...)`: the pattern once per slot, into an aggregate
        temporary (its members go where it goes)."""
        pattern = node.named_children[0] if node.named_children else None
        names = self.pack_names_in(pattern) if pattern is not None else []
        if not names or self.pack_depth > 0:  # a nested expansion: once (else PACK_SLOTS ** depth lowerings)
            return self.expr_fallback(node)
        temp = self.temp()
        self.locals[temp.name] = True  # an aggregate: handed on with what it holds
        loc = self.loc(node)
        saved = self.rename
        self.pack_depth += 1
        try:
            for i in range(PACK_SLOTS):
                self.rename = {**saved, **{n: Var(self.packs[n][i]) for n in names}}
                self.emit(ir.Assign(loc, Field(temp, str(i)), self.lower_expr(pattern)))
        finally:
            self.rename = saved
            self.pack_depth -= 1
        return temp

    def pack_names_in(self, pattern: Node) -> list[str]:
        """The function's packs the pattern names (a quick look at its words)."""
        if not self.packs:
            return []
        words = set(_WORD.findall(self.text(pattern)))
        return sorted(n for n in self.packs if n in words and n not in self.locals)

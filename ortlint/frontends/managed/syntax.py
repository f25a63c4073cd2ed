"""Syntax-tree helpers both managed front ends use: field ids of a grammar, a pre-order walk."""
from __future__ import annotations

from tree_sitter import Language

from ..common.trees import walk  # noqa: F401  (re-exported: the front end's modules import it from here)


def field_id(language: Language, grammar: str, name: str) -> int:
    """The grammar's id of a field: `child_by_field_id` skips the name lookup that
    `child_by_field_name` does on each of the ~million field accesses of a large tree."""
    fid = language.field_id_for_name(name)
    if fid is None:
        raise ValueError(f"{grammar} has no field {name!r}")
    return fid



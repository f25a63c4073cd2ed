"""The languages ortlint reads: which file suffixes belong to each and which front end parses them.

A front end is a package of `ortlint.frontends` with an entry point `parse(path, policy, data) ->
ir.SourceUnit`; adding a language is adding its package and one `Language` here. Entry points are
named as text and imported on first use, so discovering files never loads a parser.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Language:
    name: str
    suffixes: tuple[str, ...]
    parse: str  # "package.module:function" under ortlint.frontends: (path, policy, data) -> SourceUnit
    precise: str | None = None  # the libclang front end, used when a compile database lists the file
    linkage: str = "native"  # languages of one linkage call each other's functions by name


LANGUAGES: tuple[Language, ...] = (
    # C files and headers: C++ written in them (namespaces, classes, try, std::) goes to the C++ front end
    Language("c", (".c", ".h"), "cpp.frontend:parse_c_family", precise="clang.frontend:parse_with_clang"),
    Language("cpp", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx"), "cpp.frontend:parse_cpp",
             precise="clang.frontend:parse_with_clang"),
    Language("java", (".java",), "java.frontend:parse_java", linkage="java"),
    Language("go", (".go",), "go.frontend:parse_go", linkage="go"),
    Language("csharp", (".cs",), "csharp.frontend:parse_csharp", linkage="csharp"),
)

BY_NAME = {language.name: language for language in LANGUAGES}
LANGUAGE_BY_SUFFIX = {suffix: language.name for language in LANGUAGES for suffix in language.suffixes}
_LINKAGE_BY_SUFFIX = {suffix: language.linkage for language in LANGUAGES for suffix in language.suffixes}


def linkages_reached(path: str) -> tuple[str, ...]:
    """Whose functions a call written in `path` can name: C and C++ call each other; Java and C#
    reach native code only through bridges (JNI `native` methods, P/Invoke `extern`) that their
    front ends leave opaque, so a C# call of `Synthesize` never means a C++ function of that name
    in the same tree. A .go file also holds its cgo preamble, C code that calls the package's C
    files. A suffix mapped by configuration (`.inl`, `.cu`) is native code."""
    return _REACHED[linkage_of(path)]


def linkage_of(path: str) -> str:
    """The linkage the functions defined in `path` belong to (see `linkages_reached`)."""
    name = path.rsplit("/", 1)[-1]
    suffix = name[name.rfind("."):].lower() if "." in name else ""
    return _LINKAGE_BY_SUFFIX.get(suffix, "native")


_REACHED = {"native": ("native",), "java": ("java",), "csharp": ("csharp",), "go": ("go", "native")}


def entry_point(spec: str) -> Callable:
    """The function a `Language` names (imported now)."""
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)


def parser_for(language: str) -> Callable | None:
    """The tree-sitter front end of `language`, or None for a language ortlint does not read."""
    found = BY_NAME.get(language)
    return entry_point(found.parse) if found is not None else None


def precise_parser_for(language: str) -> Callable | None:
    """The libclang front end of `language` (None when it has none or libclang is missing)."""
    found = BY_NAME.get(language)
    if found is None or found.precise is None:
        return None
    try:
        return entry_point(found.precise)
    except ImportError:
        return None

"""Precise mode: libclang reads each translation unit with its real compile flags.

Design: libclang is the *semantic authority* and tree-sitter stays the *syntax* the lowering
walks, so both modes produce the same IR from the same lowering code and differ only where
libclang knows more:

* `#if` / `#ifdef` are resolved for the configuration in `compile_commands.json`: the regions
  libclang skipped are blanked out (offsets kept) before tree-sitter parses the file, so only
  the code that is compiled is analyzed;
* macros are expanded with their real definitions, including those from the project's headers
  (a `RETURN_IF_ERROR(expr)` hiding a `return` is seen; tree-sitter alone only knows macros
  defined in the file itself);
* call targets and declared types come from the AST (`ClangOracle`): `p->Run(...)` is an
  `OrtApi` entry only when `p` really is an `OrtApi*`; `auto` and typedefs from headers have
  their real types, so RAII wrappers declared elsewhere are recognized.

libclang is imported lazily (start-up time). Whenever it cannot be loaded, a file is not in the
compile database, or the translation unit has fatal errors, `parse_with_clang` raises
`ClangFallback`, whose message the runner reports before analyzing that file with tree-sitter.
"""
from __future__ import annotations

import atexit
import ctypes
import glob
import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from typing import Any

from ... import ir
from ...fileio import DATA_BYTES, read_bounded
from ...policy import Policy
from ...programs import trusted_program
from ..c.frontend import CFrontEnd
from ..c.lowering import FunctionLowering
from ..common.macro_args import Macro
from ..common import header_index
from ..common.source import SourceText, read_source
from ..cpp.model import TABLE_TYPES, clean_name, parse_type
from .compile_db import DB_NAME, find_compile_commands, resolve_compile_commands  # noqa: F401 (re-exported)
from .compile_db import unsafe_flags

_CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx")
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx")
_DROP_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ", "-Xclang", "--serialize-diagnostics"}
_DROP = {"-c", "-MD", "-MMD", "-M", "-MM", "-MP", "-MG", "--", "-S", "-E", "-pipe"}
_CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b.*?(?<!\\)$",
                          re.M | re.S)


class ClangFallback(Exception):
    """This file is analyzed with tree-sitter instead; the message says why (shown to the user)."""


# ----------------------------------------------------------------------------- compile database


# find_compile_commands / resolve_compile_commands live in compile_db.py: the runner calls them
# on every run with C/C++ files, and importing this module (ctypes, cpp_model, ...) costs start-up.


@dataclass
class CompileEntry:
    directory: str
    file: str
    args: list[str]


class CompileDatabase:
    """The entries of a compile_commands.json, by the real path of their source file."""

    _cache: dict[str, "CompileDatabase"] = {}

    def __init__(self, path: str):
        self.path = path
        self.entries: dict[str, CompileEntry] = {}
        try:  # the tree's own file: a regular file, bounded (a FIFO or /dev/zero must not stall a worker)
            raw = json.loads(read_bounded(path, DATA_BYTES))
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            raise ClangFallback(f"cannot read compile database {path}: {reason}; analyzed with tree-sitter instead") from None
        except RecursionError:
            raise ClangFallback(f"cannot read compile database {path}: nested too deeply; analyzed with tree-sitter "
                                "instead") from None
        if not isinstance(raw, list):
            raise ClangFallback(f"compile database {path} is not a JSON list; analyzed with tree-sitter instead")
        for item in raw:
            entry = _entry(item, os.path.dirname(os.path.abspath(path)))
            if entry is not None:
                self.entries.setdefault(os.path.realpath(entry.file), entry)

    @classmethod
    def load(cls, path: str) -> "CompileDatabase":
        key = os.path.realpath(path)
        db = cls._cache.get(key)
        if db is None:
            db = cls(path)
            cls._cache[key] = db
        return db

    def entry_for(self, path: str) -> CompileEntry | None:
        return self.entries.get(os.path.realpath(path))


def _entry(item: Any, db_dir: str) -> CompileEntry | None:
    """One compile_commands.json entry, with `arguments` or a shell `command`."""
    if not isinstance(item, dict) or "file" not in item:
        return None
    directory = str(item.get("directory") or db_dir)
    if "arguments" in item and isinstance(item["arguments"], list):
        args = [str(a) for a in item["arguments"]]
    else:
        try:
            args = shlex.split(str(item.get("command", "")))
        except ValueError:
            return None
    file = os.path.normpath(os.path.join(directory, str(item["file"])))
    return CompileEntry(directory, file, args)


def clang_args(entry: CompileEntry) -> list[str]:
    return clang_command(entry)[0]


def clang_command(entry: CompileEntry) -> tuple[list[str], list[str]]:
    """The entry's flags without the compiler, the output and the input file itself, and
    without the flags that write or load files (`compile_db.unsafe_flags`, returned second, for
    a note)."""
    out: list[str] = []
    args = entry.args[1:] if entry.args else []
    skip = False
    source = os.path.realpath(entry.file)
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in _DROP_WITH_VALUE:
            skip = True
            continue
        if arg in _DROP or arg.startswith(("-o", "-MF", "-MT", "-MQ")) and len(arg) > 3 and arg[:3] in ("-MF", "-MT", "-MQ"):
            continue
        if not arg.startswith("-") and os.path.realpath(os.path.join(entry.directory, arg)) == source:
            continue
        out.append(arg)
    out, dropped = unsafe_flags(out)
    driver = os.path.basename(entry.args[0]) if entry.args else ""
    if "++" in driver and "-x" not in out and not entry.file.endswith(_CPP_SUFFIXES):
        out[:0] = ["-x", "c++"]
    return ["-working-directory", entry.directory, *out, *builtin_include_args()], dropped


# ----------------------------------------------------------------------------- libclang


_STATE: dict[str, Any] = {}


def _cindex():
    """Import and initialize libclang once; ClangFallback with the reason when it cannot."""
    if "error" in _STATE:
        raise ClangFallback(_STATE["error"])
    if "ci" in _STATE:
        return _STATE["ci"]
    try:
        import clang.cindex as ci  # noqa: PLC0415 - lazy: start-up time matters
        library = os.environ.get("ORTLINT_LIBCLANG")
        if library and not ci.Config.loaded:
            ci.Config.set_library_file(library)
        _STATE["index"] = ci.Index.create()
        # drop it before interpreter shutdown tears down the bindings (else Index.__del__ complains)
        atexit.register(_STATE.pop, "index", None)
        atexit.register(_STATE.pop, "index", None)  # before the bindings' own teardown
    except Exception as exc:  # ImportError, LibclangError, OSError
        _STATE["error"] = (f"libclang cannot be loaded ({type(exc).__name__}: {exc}); C/C++ files are analyzed "
                           f"with tree-sitter instead (install the `libclang` package or set ORTLINT_LIBCLANG)")
        raise ClangFallback(_STATE["error"]) from None
    _STATE["ci"] = ci
    return ci


def builtin_include_args() -> list[str]:
    """The `libclang` wheel ships no compiler headers (stddef.h, stdarg.h): borrow the system
    compiler's, searched after every other include folder. ORTLINT_CLANG_INCLUDE overrides."""
    if "builtin" not in _STATE:
        _STATE["builtin"] = _find_builtin_include()
    found = _STATE["builtin"]
    return ["-idirafter", found] if found else []


def _find_builtin_include() -> str | None:
    """A folder with the compiler's own headers, unless libclang already has them. The compiler
    asked is found by `programs.trusted_program` (an absolute path outside the analyzed tree and
    the current folder: a `./clang` committed to the tree, on a PATH with an empty entry, ran
    here) and runs in the root folder."""
    forced = os.environ.get("ORTLINT_CLANG_INCLUDE")
    if forced:
        return forced
    if _libclang_has_builtins():
        return None
    for name in ("clang", "cc", "gcc"):
        compiler = trusted_program(name)
        if compiler is None:
            continue
        try:
            out = subprocess.run([compiler, "-print-file-name=include"], capture_output=True, text=True, timeout=10,
                                 cwd=os.path.abspath(os.sep), stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            continue
        folder = out.stdout.strip()
        if folder and os.path.isfile(os.path.join(folder, "stddef.h")):
            return folder
    for pattern in ("/usr/lib/clang/*/include", "/usr/lib/llvm-*/lib/clang/*/include", "/usr/lib/gcc/*/*/include"):
        for folder in sorted(glob.glob(pattern), reverse=True):
            if os.path.isfile(os.path.join(folder, "stddef.h")):
                return folder
    return None


def _libclang_has_builtins() -> bool:
    ci = _cindex()
    tu = _STATE["index"].parse("probe.c", args=["-x", "c"], unsaved_files=[("probe.c", "#include <stddef.h>\n")])
    return not any(d.severity >= ci.Diagnostic.Fatal for d in tu.diagnostics)


def parse_translation_unit(path: str, args: list[str]):
    """Parse with libclang; ClangFallback when it cannot, or when the unit has a fatal error."""
    ci = _cindex()
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    try:
        tu = _STATE["index"].parse(os.path.abspath(path), args=args, options=options)
    except ci.TranslationUnitLoadError as exc:
        raise ClangFallback(f"libclang could not load this file ({exc}); analyzed with tree-sitter instead") from None
    fatal = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Fatal]
    if fatal:
        raise ClangFallback(f"libclang could not compile this file ({_diag_text(fatal[0])}); "
                            f"analyzed with tree-sitter instead")
    return tu


def _diag_text(diag) -> str:
    loc = diag.location
    where = f"{os.path.basename(loc.file.name)}:{loc.line}: " if loc.file is not None else ""
    return f"{where}{diag.spelling}"


# ----------------------------------------------------------------------------- the oracle


@dataclass
class ClangOracle:
    """Facts from the AST, keyed by (line, column) of a name in the main file."""

    macros: dict[str, Macro] = field(default_factory=dict)
    objects: dict[str, str] = field(default_factory=dict)  # object-like macros used: name -> body
    calls: dict[tuple[int, int], tuple[str, str | None]] = field(default_factory=dict)
    decls: dict[tuple[int, int], str] = field(default_factory=dict)
    refs: dict[tuple[int, int], str] = field(default_factory=dict)
    skipped: list[tuple[int, int]] = field(default_factory=list)  # byte ranges not compiled
    errors: list[str] = field(default_factory=list)

    def member_call(self, line: int, col: int) -> tuple[str, str | None] | None:
        return self.calls.get((line, col))

    def decl_type(self, line: int, col: int) -> str | None:
        return self.decls.get((line, col))

    def ref_type(self, line: int, col: int) -> str | None:
        return self.refs.get((line, col))


def build_oracle(tu, main: str, policy: Policy) -> ClangOracle:
    """Walk the main file's part of the AST once: macros used, call targets, declaration and reference types."""
    ci = _cindex()
    kinds = ci.CursorKind
    oracle = ClangOracle()
    oracle.skipped = skipped_ranges(tu, main)
    oracle.errors = [_diag_text(d) for d in tu.diagnostics
                     if d.severity >= ci.Diagnostic.Error and d.location.file is not None and d.location.file.name == main]
    stack = []
    in_main = _main_file_test(ci)
    definitions: dict[str, Any] = {}
    used: list[Any] = []
    for cursor in tu.cursor.get_children():
        if cursor.kind == kinds.MACRO_DEFINITION:
            definitions[cursor.spelling] = cursor
        if not in_main(cursor.location):
            continue
        if cursor.kind == kinds.MACRO_INSTANTIATION:
            used.append(cursor.referenced)
        elif cursor.kind not in (kinds.MACRO_DEFINITION, kinds.INCLUSION_DIRECTIVE):
            stack.append(cursor)
    _add_macros(oracle, used, definitions, policy)
    while stack:
        cursor = stack.pop()
        _record(oracle, cursor, kinds)
        stack.extend(cursor.get_children())
    return oracle


def _main_file_test(ci):
    """clang_Location_isFromMainFile (not wrapped by the bindings): far cheaper than comparing
    file names for the thousands of declarations the standard headers bring."""
    if "main_test" not in _STATE:
        fn = ci.conf.lib.clang_Location_isFromMainFile
        fn.argtypes = [ci.SourceLocation]
        fn.restype = ctypes.c_int
        _STATE["main_test"] = lambda loc: bool(fn(loc))
    return _STATE["main_test"]


def _record(oracle: ClangOracle, cursor, kinds) -> None:
    """Record the facts one AST node gives, by the position of its name."""
    kind = cursor.kind
    loc = cursor.location
    if kind == kinds.MEMBER_REF_EXPR:
        info = _member_target(cursor, kinds)
        if info is not None:
            oracle.calls[(loc.line, loc.column)] = info
    elif kind in (kinds.VAR_DECL, kinds.PARM_DECL, kinds.FIELD_DECL):
        oracle.decls[(loc.line, loc.column)] = type_spelling(cursor.type)
    elif kind == kinds.DECL_REF_EXPR:
        ref = cursor.referenced
        if ref is not None and ref.kind in (kinds.VAR_DECL, kinds.PARM_DECL, kinds.FIELD_DECL):
            oracle.refs[(loc.line, loc.column)] = type_spelling(ref.type)


def _member_target(member, kinds) -> tuple[str, str | None] | None:
    """`api->F` on an OrtApi / JNIEnv table: ('table', None); a C++ method: ('method', receiver
    type); a function pointer stored in another struct: ('field', struct name)."""
    ref = member.referenced
    if ref is None:
        return None
    parent = ref.semantic_parent
    owner = clean_name(parent.spelling) if parent is not None else ""
    if owner in TABLE_TYPES:
        return "table", None
    if ref.kind == kinds.FIELD_DECL:
        if ref.type.get_canonical().kind.name in ("POINTER",) and "(" in ref.type.get_canonical().spelling:
            return "field", owner
        return None
    if ref.kind not in (kinds.CXX_METHOD, kinds.CONVERSION_FUNCTION, kinds.FUNCTION_TEMPLATE):
        return None
    base = next(iter(member.get_children()), None)
    if base is None:
        return "method", owner or None
    t = base.type.get_canonical()
    if t.kind.name == "POINTER":
        t = t.get_pointee()
    spelling = type_spelling(t)
    if parse_type(spelling).name in TABLE_TYPES:
        return "table", None
    return "method", spelling


def type_spelling(t) -> str:
    """The canonical spelling, with library noise removed (`std::string`, no `__cxx11`)."""
    text = t.get_canonical().spelling
    text = re.sub(r"std::(?:__cxx11::|__1::)?basic_string<char(?:, std::char_traits<char>, std::allocator<char>\s*)?>",
                  "std::string", text)
    return text.replace("std::__cxx11::", "std::").replace("std::__1::", "std::")


def _add_macros(oracle: ClangOracle, used: list, definitions: dict[str, Any], policy: Policy) -> None:
    """The macros the file uses, and the macros their bodies use, when function-like and not
    from a system header (assert & co. keep their policy meaning)."""
    work = [d for d in used if d is not None]
    seen: set[str] = set()
    while work and len(seen) < 500:
        definition = work.pop()
        name = definition.spelling
        if name in seen:
            continue
        seen.add(name)
        if definition.location.file is None or definition.location.is_in_system_header:
            continue
        spec = policy.lookup("plain", name)
        if spec is not None and spec.status_check is None:
            continue
        tokens = list(definition.get_tokens())
        macro = macro_from_tokens(tokens)
        if macro is not None:
            where = os.path.abspath(definition.location.file.name)
            if header_index.current().in_tree(where):  # the tree's own macro: its defects are its own
                macro.defined_at = f"{definition.location.file.name}:{definition.location.line}"
            oracle.macros[name] = macro
        elif tokens:
            oracle.objects[name] = " ".join(t.spelling for t in tokens[1:])  # (definition_macros reads them)
        work.extend(definitions[t.spelling] for t in tokens[1:] if t.spelling in definitions and t.spelling not in seen)


def macro_from_tokens(tokens) -> Macro | None:
    """A function-like macro from its definition's tokens (object-like macros: None)."""
    if len(tokens) < 3 or tokens[1].spelling != "(" or \
            tokens[1].extent.start.offset != tokens[0].extent.end.offset:
        return None  # object-like: only function-like macros in call position are expanded
    params: list[str] = []
    i = 2
    while i < len(tokens) and tokens[i].spelling != ")":
        if tokens[i].spelling != ",":
            params.append(tokens[i].spelling)
        i += 1
    variadic = bool(params) and params[-1] == "..."
    if variadic:
        params = params[:-1]
    body = " ".join(t.spelling for t in tokens[i + 1:])
    return Macro(tokens[0].spelling, params, body, variadic)


def _range_list_type(ci):
    """ctypes mirror of CXSourceRangeList (not wrapped by the Python bindings)."""
    if "range_list" not in _STATE:
        class SourceRangeList(ctypes.Structure):
            _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(ci.SourceRange))]
        lib = ci.conf.lib
        lib.clang_getSkippedRanges.restype = ctypes.POINTER(SourceRangeList)
        lib.clang_getSkippedRanges.argtypes = [ci.TranslationUnit, ci.File]
        lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(SourceRangeList)]
        _STATE["range_list"] = SourceRangeList
    return _STATE["range_list"]


def skipped_ranges(tu, main: str) -> list[tuple[int, int]]:
    """Byte ranges of the main file that the preprocessor skipped (inactive #if branches)."""
    ci = _cindex()
    _range_list_type(ci)
    lib = ci.conf.lib
    found = lib.clang_getSkippedRanges(tu, ci.File.from_name(tu, main))
    if not found:
        return []
    try:
        return [(found.contents.ranges[i].start.offset, found.contents.ranges[i].end.offset)
                for i in range(found.contents.count)]
    finally:
        lib.clang_disposeSourceRangeList(found)


def blank_inactive(data: bytes, skipped: list[tuple[int, int]]) -> bytes:
    """Replace skipped regions and the remaining conditional directives by spaces (newlines and
    offsets kept), so that tree-sitter sees exactly the compiled code."""
    buf = bytearray(data)
    for start, end in skipped:
        end = min(len(buf), end)
        for i in range(max(0, start), end):
            if buf[i] not in (10, 13):
                buf[i] = 32
    for m in _CONDITIONAL.finditer(bytes(buf)):
        for i in range(m.start(), m.end()):
            if buf[i] not in (10, 13):
                buf[i] = 32
    return bytes(buf)


# ----------------------------------------------------------------------------- front ends with the oracle


class ClangCLowering(FunctionLowering):
    """The C lowering, with call targets from libclang: a function pointer in a struct that is
    not a function table is an indirect call, not an `OrtApi` entry."""

    def normalize_callee(self, fn, arg_nodes):
        """A `table` call through a struct that is not a function table is an indirect call."""
        name, style, receiver, drop = super().normalize_callee(fn, arg_nodes)
        oracle = getattr(self.unit, "oracle", None)
        if oracle is None or self.macro_depth or fn is None or style != "table":
            return name, style, receiver, drop
        field_node = self.unparen(fn).child_by_field_name("field")
        found = oracle.member_call(field_node.start_point[0] + 1, field_node.start_point[1] + 1) if field_node else None
        if found is not None and found[0] == "field":
            qualified = f"{found[1]}::{name}"
            if self.unit.policy.lookup("method", qualified) is not None:
                # a field the policy knows (`[[call]] field_of`): named like the C++ front end
                # names it, every C argument kept (the self argument included)
                return qualified, "method", self.unparen(fn).child_by_field_name("argument"), False
            return qualified, "indirect", receiver, drop
        return name, style, receiver, drop


class ClangCFrontEnd(CFrontEnd):
    lowering_class = ClangCLowering

    def __init__(self, source: SourceText, policy: Policy, oracle: ClangOracle):
        super().__init__(source, policy)
        self.oracle = oracle

    def collect_macros(self, root) -> None:
        super().collect_macros(root)
        self.macros.update(self.oracle.macros)


def parse_with_clang(path: str, policy: Policy, compile_commands: str) -> ir.SourceUnit | None:
    """Analyze one file in precise mode. None: not a translation unit of the database (a
    header), to be analyzed with tree-sitter silently; ClangFallback: say why, then fall back."""
    db = CompileDatabase.load(compile_commands)
    entry = db.entry_for(path)
    if entry is None:
        if path.endswith(_HEADER_SUFFIXES):
            return None
        raise ClangFallback(f"not listed in {os.path.basename(compile_commands)}; analyzed with tree-sitter instead")
    source = read_source(path, policy)
    if source.problem:
        return ir.SourceUnit(path, "cpp", [], [(ir.Loc(1, 1, 1, 1), source.problem)], 0)
    args, dropped = clang_command(entry)
    tu = parse_translation_unit(path, args)
    main = tu.spelling
    oracle = build_oracle(tu, main, policy)
    source = SourceText(source.path, blank_inactive(source.data, oracle.skipped), source.original)
    unit = _lower(path, source, policy, oracle)
    unit.dependencies = _included_files(tu, main)
    if oracle.errors:
        unit.notes.append((ir.Loc(1, 1, 1, 1), f"libclang reported {len(oracle.errors)} error(s) "
                           f"(first: {oracle.errors[0]}); types and macros may be incomplete"))
    if dropped:
        unit.notes.append((ir.Loc(1, 1, 1, 1), "compile database flags that write or load files were not passed to "
                           f"libclang: {' '.join(dropped)}"))
    return unit


def _included_files(tu: object, main: str) -> list[str]:
    """Every header the translation unit read: a cached result is valid only while they are
    unchanged (the file's own content is checked by the cache already)."""
    try:
        names = {os.path.abspath(inc.include.name) for inc in tu.get_includes()}  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - no dependency list just means less caching
        return []
    names.discard(os.path.abspath(main))
    return sorted(names)


def _lower(path: str, source: SourceText, policy: Policy, oracle: ClangOracle) -> ir.SourceUnit:
    if path.lower().endswith(_CPP_SUFFIXES):
        from ..cpp.frontend import CppFrontEnd  # noqa: PLC0415
        return CppFrontEnd(source, policy, oracle).run()
    return ClangCFrontEnd(source, policy, oracle).run()

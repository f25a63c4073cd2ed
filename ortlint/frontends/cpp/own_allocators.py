"""The program's own OrtAllocator implementations, and the calls that are handed one.

A C++ program may implement `OrtAllocator` itself (`struct StandardAllocator : OrtAllocator`
whose constructor sets `Free = [](OrtAllocator*, void* p) { delete (std::byte*)p; }`) and pass
a global instance to the C API (`GetBoundOutputNames(b, &standard_allocator, ...)`). The blocks
the API allocates from it are then released by that allocator's Free, so releasing them with the
same operator (`std::unique_ptr<char>` deleting them) is the matching release, not a foreign free.
This pass reads the lowered functions (the constructor's assignment of a lambda to `Free`, and
the lambda's body) and the file's global variable types, and marks each call given such an
allocator with the release its Free makes (`ir.Call.own_free`); the engine does the rest.
"""

from __future__ import annotations

from ... import ir

RELEASES = ("delete", "delete[]", "free")  # what a Free written in C++ may release its block with
FREE_FIELDS = ("Free", "OrtAllocator::Free")


def mark_own_allocator_calls(functions: list[ir.Function], globals_: dict[str, str]) -> None:
    """Set `own_free` on every call passed `&g` where the global g's class is an own allocator."""
    frees = own_allocator_frees(functions)
    if not frees:
        return
    allocators = {name: frees[_class_name(text)] for name, text in globals_.items() if _class_name(text) in frees}
    if not allocators:
        return
    for fn in functions:
        for block in fn.blocks:
            for ev in block.events:
                if isinstance(ev, ir.Call):
                    release = _allocator_release(ev, allocators)
                    if release:
                        ev.own_free = release


def own_allocator_frees(functions: list[ir.Function]) -> dict[str, str]:
    """Class name (last component) -> the release call its constructor's `Free` lambda makes."""
    by_name = {fn.name: fn for fn in functions}
    out: dict[str, str] = {}
    for fn in functions:
        parts = fn.name.split("::")
        if len(parts) < 2 or parts[-1] != parts[-2]:
            continue  # only constructors `C::C` fill in the table
        for block in fn.blocks:
            for ev in block.events:
                if isinstance(ev, ir.Assign) and _is_free_field(ev.dest) and _is_lambda(ev.value):
                    release = _lambda_release(fn.name, ev.loc, by_name)
                    if release:
                        out[parts[-2]] = release
    return out


def _is_free_field(dest: ir.Expr) -> bool:
    if isinstance(dest, ir.Var):
        return dest.name in FREE_FIELDS or dest.name.endswith("::Free")
    return isinstance(dest, ir.Field) and dest.name == "Free"


def _is_lambda(value: ir.Expr) -> bool:
    return isinstance(value, ir.Opaque) and value.text == "lambda"


def _lambda_release(ctor: str, at: ir.Loc, by_name: dict[str, ir.Function]) -> str:
    """The release the lambda assigned at `at` makes on its block parameter (the second), or ""."""
    for line in range(at.line, at.end_line + 1):
        fn = by_name.get(f"{ctor}::<lambda@{line}>")
        if fn is not None and len(fn.params) == 2:
            return _releases_param(fn, fn.params[1])
    return ""


def _releases_param(fn: ir.Function, param: str) -> str:
    found = ""
    for block in fn.blocks:
        for ev in block.events:
            if isinstance(ev, ir.Call) and ev.callee in RELEASES and len(ev.args) == 1:
                if ev.args[0] != ir.Var(param) or (found and found != ev.callee):
                    return ""  # releases something else too, or with two families: not a plain Free
                found = ev.callee
    return found


def _class_name(type_text: str) -> str:
    """`inline StandardAllocator`, `Ort::StandardAllocator` -> `StandardAllocator` (values, not pointers)."""
    words = [w for w in type_text.replace("&", " & ").split() if w not in ("inline", "static", "extern", "thread_local")]
    if len(words) != 1 or "*" in words[0] or "<" in words[0]:
        return ""
    return words[0].split("::")[-1]


def _allocator_release(ev: ir.Call, allocators: dict[str, str]) -> str:
    for arg in ev.args:
        if isinstance(arg, ir.AddrOf) and isinstance(arg.base, ir.Var) and arg.base.name in allocators:
            return allocators[arg.base.name]
    return ""

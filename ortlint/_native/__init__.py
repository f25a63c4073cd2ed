"""Compiled copies of the hot modules (engine and front ends), built by Cython at install time.

They are the same Python source compiled to C, not a second implementation: nothing to keep in
step, and the results are the same (tests/test_native.py runs the fixtures both ways). They take
a run's CPU time down by about a third, which is what a linter in CI needs on large trees.

A compiled module is only used when it was built from exactly the source file that is there
now: its file name carries a digest of the source it came from. An edited module therefore
falls back to plain Python on its own, and a stale build can never hide a change. Nothing is
required either: without a C compiler the install skips the build and everything runs as plain
Python. `ORTLINT_PURE_PYTHON=1` turns the compiled modules off (to compare, or to debug).
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

# the modules worth compiling: where the profile of a run spends its time
MODULES = (
    "ortlint.ir",
    "ortlint.engine.analyze",
    "ortlint.engine.state",
    "ortlint.engine.summaries",
    "ortlint.frontends.lowering",
    "ortlint.frontends.source",
    "ortlint.frontends.c_treesitter",
    "ortlint.frontends.cpp_model",
    "ortlint.frontends.cpp_treesitter",
    "ortlint.frontends.java_treesitter",
    "ortlint.frontends.java_syntax",
    "ortlint.frontends.java_types",
    "ortlint.policy",
    "ortlint.discover",
    "ortlint.runner",
    "ortlint.parallel",
    "ortlint.suppress",
    "ortlint.findings",
    "ortlint.report.fastjson",
    "ortlint.report.json_report",
)

NATIVE_DIR = os.path.dirname(os.path.abspath(__file__))
# the package folder, for modules that find files next to their source: a compiled module's
# own __file__ is its binary in this folder
PACKAGE_DIR = Path(NATIVE_DIR).parent.resolve()
_PROJECT_DIR = os.path.dirname(os.path.dirname(NATIVE_DIR))
DISABLE_VARIABLE = "ORTLINT_PURE_PYTHON"


def source_file(module: str, root: str = _PROJECT_DIR) -> str:
    return os.path.join(root, *module.split(".")) + ".py"


def native_stem(module: str, source: bytes) -> str:
    """The compiled module's file name without suffix: the module and its source's digest
    (`ortlint_engine_analyze_3f2a...`). setup.py and the finder both name files with this."""
    return f"{module.replace('.', '_')}_{hashlib.sha256(source).hexdigest()[:16]}"


class NativeFinder:
    """Finds a module's compiled copy when one was built from its current source."""

    def __init__(self) -> None:
        self.loaded: list[str] = []

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name not in MODULES:
            return None
        binary = compiled_file(name)
        if binary is None:
            return None
        self.loaded.append(name)
        loader = importlib.machinery.ExtensionFileLoader(name, binary)
        return importlib.util.spec_from_file_location(name, binary, loader=loader)


def compiled_file(module: str, project_dir: str = _PROJECT_DIR, native_dir: str = NATIVE_DIR) -> str | None:
    """The compiled file built from the module's current source, if there is one."""
    try:
        with open(source_file(module, project_dir), "rb") as handle:
            stem = native_stem(module, handle.read())
    except OSError:
        return None
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = os.path.join(native_dir, stem + suffix)
        if os.path.exists(candidate):
            return candidate
    return None


_FINDER = NativeFinder()


def install() -> None:
    """Put the finder in front of the regular import system (once; not when turned off)."""
    if os.environ.get(DISABLE_VARIABLE) or _FINDER in sys.meta_path:
        return
    sys.meta_path.insert(0, _FINDER)


def loaded_modules() -> list[str]:
    """Modules imported from their compiled copies in this process (for `--version`, bench/)."""
    return [name for name in _FINDER.loaded if name in sys.modules]


def native_status() -> str:
    """`compiled: 9 of 9 modules`, `plain Python: ORTLINT_PURE_PYTHON is set`, ..."""
    if os.environ.get(DISABLE_VARIABLE):
        return f"plain Python: {DISABLE_VARIABLE} is set"
    built = sum(1 for module in MODULES if compiled_file(module) is not None)
    return f"compiled: {built} of {len(MODULES)} modules" if built else "plain Python: no compiled modules built"

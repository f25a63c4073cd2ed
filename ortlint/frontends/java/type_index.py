"""What Java classes declare, within one file and across a project: fields (inherited ones
too), method arities and return types, `throws` clauses, constructors and superclasses.

The Java front end types receivers with it, so `model.session.run(in)` is `OrtSession.run`
when `session` is a field of `model`'s class declared in another file (or inherited from a
superclass there), and a call to a method of another file gets the name its summary has.

The project index is what `javac -sourcepath` would see: every `.java` file under the source
root of the analyzed file (the directory its `package` declaration says is the root; for a
file of the default package, its own folder). Each process builds it once per root, from the
files' declarations only (no method bodies).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from ...fileio import read_prefix
from ..managed.project_files import MAX_INDEX_BYTES, project_files

MAX_CLASS_NESTING = 100  # classes inside classes; deeper ones are skipped with a note
MAX_SUPERCLASSES = 32  # steps up a superclass chain (a cycle in broken code ends too)


@dataclass
class ClassInfo:
    """What one class declares: enough to type `this.x`, `o.x` and resolve `m()`, `o.m()`."""

    path: str  # "Outer.Inner" (no package); anonymous classes: "Outer.run$anon@12"
    fields: dict[str, str] = field(default_factory=dict)
    methods: dict[str, list[int]] = field(default_factory=dict)  # name -> arities
    returns: dict[str, str] = field(default_factory=dict)  # name -> declared return type
    throwing: dict[str, tuple[str, ...]] = field(default_factory=dict)  # method (or "<init>") -> its `throws` types
    outer: "ClassInfo | None" = None
    depth: int = 0  # classes around it (bounded by MAX_CLASS_NESTING)
    package: str = ""
    file: str = ""
    super_name: str = ""  # the superclass, canonical as the declaring file resolves it
    super_package: str = ""  # its package when the declaring file says (import, or its own package)
    superclass: "ClassInfo | None" = None  # resolved once every class is known
    constructors: list[int] = field(default_factory=list)  # arities
    # "name/arity" of methods whose body only throws and that a subclass or an implementation
    # may override (`default T witness() { throw new UnsupportedOperationException(); }`)
    placeholders: set[str] = field(default_factory=set)
    varargs: dict[str, int] = field(default_factory=dict)  # method (or "<init>") -> index of its `T...` parameter

    def __post_init__(self) -> None:
        if self.outer is not None:
            self.depth = self.outer.depth + 1

    def lineage(self) -> list["ClassInfo"]:
        """This class and its superclasses (as far as the analyzed code declares them)."""
        out: list[ClassInfo] = []
        cls: ClassInfo | None = self
        while cls is not None and len(out) < MAX_SUPERCLASSES and cls not in out:
            out.append(cls)
            cls = cls.superclass
        return out

    def own_field(self, name: str) -> str | None:
        for cls in self.lineage():
            if name in cls.fields:
                return cls.fields[name]
        return None

    def own_method(self, name: str) -> "ClassInfo | None":
        """The class of the lineage that declares `name` (nearest first)."""
        for cls in self.lineage():
            if name in cls.methods:
                return cls
        return None

    def field_type(self, name: str) -> str | None:
        cls: ClassInfo | None = self
        while cls is not None:
            found = cls.own_field(name)
            if found is not None:
                return found
            cls = cls.outer
        return None

    def method_owner(self, name: str) -> "ClassInfo | None":
        cls: ClassInfo | None = self
        while cls is not None:
            found = cls.own_method(name)
            if found is not None:
                return found
            cls = cls.outer
        return None

    def is_placeholder(self, method: str, arity: int) -> bool:
        """Does a call of `method` dispatch to code we cannot see? The declared body only
        throws and may be overridden: its summary (no normal return) is not what runs."""
        return bool(self.placeholders) and f"{method}/{arity}" in self.placeholders

    def spread(self, method: str, arity: int) -> int | None:
        """The index of the varargs parameter that a call of `method` with `arity` arguments
        fills (its trailing arguments are one array), or None: no varargs declaration, or a
        fixed-arity overload that Java prefers."""
        k = self.varargs.get(method)
        if k is None or arity < k:
            return None
        arities = self.constructors if method == "<init>" else self.methods.get(method, [])
        if arities.count(arity) > (1 if arity == k + 1 else 0):
            return None
        return k

    def function_name(self, method: str, arity: int) -> str:
        """Overloads get their arity appended so calls find the right summary."""
        arities = self.methods.get(method, [])
        if len(arities) > 1:
            return f"{self.path}.{method}/{arity}"
        return f"{self.path}.{method}"


@dataclass
class ProjectTypes:
    """The classes declared under one source root, by path (`Outer.Inner`) and package."""

    root: str
    by_path: dict[str, list[ClassInfo]] = field(default_factory=dict)

    def add(self, info: ClassInfo) -> None:
        self.by_path.setdefault(info.path, []).append(info)

    def find(self, path: str, packages: list[str], unique: bool = False) -> ClassInfo | None:
        """The class `path` of the first of `packages` that has one: the packages whose classes
        a simple name can mean in Java (imported, its own, wildcard-imported). With `unique`
        (a name the file does not import by name), else the project's only class of that name."""
        found = self.by_path.get(path)
        if not found:
            return None
        for pkg in packages:
            for info in found:
                if info.package == pkg:
                    return info
        return found[0] if unique and len(found) == 1 else None

    def link(self) -> None:
        """Resolve every indexed class's superclass within the index."""
        for infos in self.by_path.values():
            for info in infos:
                if info.super_name and info.superclass is None:
                    info.superclass = self.find(info.super_name, [info.super_package, info.package])


_PROJECTS: dict[str, ProjectTypes | None] = {}  # source root -> its index (per process)


def source_root(path: str, package: str) -> str:
    """The directory that holds the package tree: `src/main/java` for
    `src/main/java/a/b/C.java` in package `a.b`; None-like "" when the path disagrees."""
    folder = os.path.dirname(os.path.abspath(path))
    for part in reversed(package.split(".") if package else []):
        if os.path.basename(folder) != part:
            return ""
        folder = os.path.dirname(folder)
    return folder


def project_types(path: str, package: str, collect: Callable[[str, bytes], list[ClassInfo]]) -> ProjectTypes | None:
    """The index of the source root of `path` (built on first use by calling `collect` on each
    file's bytes), or None when there is no usable root (or it is too large to index)."""
    root = source_root(path, package)
    if not root:
        return None
    key = root if package else root + os.sep + "<default package>"
    if key in _PROJECTS:
        return _PROJECTS[key]
    # a file of the default package sees its own folder only: classes in subfolders belong
    # to named packages, and its folder may be anything (a home directory, /tmp)
    files = project_files(root, ".java", _visible_folder if package else None)
    if files is None:
        _PROJECTS[key] = None
        return None
    index = ProjectTypes(root)
    for full in files:
        try:
            data = read_prefix(full, MAX_INDEX_BYTES + 1)  # a regular file: a FIFO must not block
        except OSError:
            continue
        for info in collect(full, data):
            index.add(info)
    index.link()
    _PROJECTS[key] = index
    return index


def _visible_folder(name: str) -> bool:
    return not name.startswith(".")

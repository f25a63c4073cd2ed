"""What a C# file's lowering asks about the analyzed code (a mixin of `CSharpFrontEnd`): classes
by name (this file's first, then the project's index, built on first use), base-class chains,
members, methods and extension methods that a call means, whether a class disposes a member,
and exception classes. Answers are remembered per file: typing asks again for every
identifier. Every class found in another file is recorded, so the cache re-analyzes this file
when that one changes."""
from __future__ import annotations

import os


from .api import ApiIndex
from .project import ClassDecl, MethodDecl, ProjectIndex, project_index, solution_type_names

_UNSEEN = object()


class ProjectView:
    """Part of `CSharpFrontEnd`: the analyzed code's declarations as this file sees them."""

    path: str
    src: bytes
    api: ApiIndex
    local: ProjectIndex
    namespaces: tuple[str, ...]
    used_files: set[str]
    _classes: dict[str, object]
    _chains: dict[int, tuple[ClassDecl, list[ClassDecl]]]
    _members: dict[tuple[int, str], object]
    _exception_bases: dict[str, str] | None

    def api_sets(self) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(self.api.classes), frozenset(m for table in self.api.members.values() for m in table)

    @property
    def index(self) -> ProjectIndex:
        """The project's index (built on first use; this file's alone when it is not on disk)."""
        if self._project is None:
            found = project_index(self.path, *self.api_sets()) if self.index_project and os.path.isfile(self.path) \
                else None
            self._project = found if found is not None else self.local
        return self._project

    _project: ProjectIndex | None = None
    index_project = True

    def find_class(self, name: str) -> ClassDecl | None:
        """A class of the analyzed code: this file's first, then the project's (remembered per name:
        typing asks again for every identifier)."""
        if not name:
            return None
        decl = self._classes.get(name, _UNSEEN)
        if decl is _UNSEEN:
            decl = self.local.find(name, self.namespaces)
            if decl is None and name[:1].isupper():
                decl = self.index.find(name, self.namespaces)
            self._classes[name] = decl
        if decl is not None:
            self.used(decl)
        return decl  # type: ignore[return-value]

    def used(self, decl: ClassDecl) -> None:
        for f in decl.files:
            if f != self.path:
                self.used_files.add(f)

    def chain(self, decl: ClassDecl) -> list[ClassDecl]:
        """`decl` and its base classes of the analyzed code, nearest first."""
        found = self._chains.get(id(decl))
        if found is None or found[0] is not decl:
            found = self._chains[id(decl)] = (decl, self._chain(decl))
        return found[1]

    def _chain(self, decl: ClassDecl) -> list[ClassDecl]:
        out, seen = [], set()
        cur: ClassDecl | None = decl
        while cur is not None and id(cur) not in seen and len(out) < 32:
            seen.add(id(cur))
            out.append(cur)
            nxt = None
            for b in cur.bases:
                found = self.find_class(b.split("<")[0])
                if found is not None and found.kind != "interface":
                    nxt = found
                    break
            cur = nxt
        return out

    def member(self, decl: ClassDecl, name: str) -> tuple[str, bool, ClassDecl] | None:
        """(type, static, declaring class) of a field or property of `decl` or a project base."""
        key = (id(decl), name)
        hit = self._members.get(key, _UNSEEN)
        if hit is _UNSEEN:
            hit = None
            for c in self.chain(decl):
                found = c.members.get(name)
                if found is not None:
                    hit = (found[0], found[1], c)
                    break
            self._members[key] = hit
        if hit is not None:
            self.used(hit[2])  # type: ignore[index]
        return hit  # type: ignore[return-value]

    def owns(self, decl: ClassDecl, name: str) -> bool:
        """Does the class dispose member `name` somewhere (README item 13)? Asked only when a
        store into one of its members is lowered: the project is consulted then."""
        project = self.index
        twin = project.find(decl.path, (decl.namespace,)) if project is not self.local else None
        if twin is None or twin.path != decl.path:
            project, twin = self.local, decl
        elif self.path in twin.files:
            project.trees.setdefault(self.path, (self.src, self.local.trees[self.path][1]))
        for c in project.base_chain(twin, self.namespaces) + project.derived(twin):
            self.used(c)  # their bodies decide: the cache re-analyzes this file when one changes
        return project.owns(twin, name, self.namespaces)

    def find_method(self, decl: ClassDecl, method: str, types: list[str], skip_self: bool = False,
                    generics: int | None = None) -> tuple[ClassDecl, MethodDecl] | None:
        """The method a call means: the nearest class of the chain that has one whose parameter
        count fits, then the one whose parameter types the arguments fit (and whose number of
        type parameters is the call's `<...>`, when it has one)."""
        for c in self.chain(decl)[1 if skip_self else 0:]:
            cands = [m for m in c.methods.get(method, []) if m.fits(len(types))]
            if cands:
                self.used(c)
                if generics is not None:
                    cands = [m for m in cands if m.generics == generics] or cands
                typed = [m for m in cands if all(self.api.compatible(a, p.type) for a, p in zip(types, m.params))]
                return c, (typed or cands)[0]
        return None

    def find_extension(self, method: str, recv_type: str, types: list[str]) -> tuple[ClassDecl, MethodDecl] | None:
        for owner, m in self.local.extensions.get(method, []) + self.index.extensions.get(method, []):
            if m.fits(len(types)) and self.api.compatible(recv_type, m.params[0].type):
                self.used(owner)
                return owner, m
        return None

    def exception_bases(self) -> dict[str, str]:
        """Exception classes of the analyzed code and their bases (`class MyError : Exception`)."""
        if self._exception_bases is None:
            out = {}
            for decls in self.index.by_name.values():
                for d in decls:
                    if d.bases and d.kind == "class":
                        out[d.name] = d.bases[0].split("<")[0]
            self._exception_bases = out
        return self._exception_bases

    def in_solution(self, name: str) -> bool:
        """Is `name` a class of another project of the analyzed code (see solution_type_names)?"""
        if not name or not os.path.isfile(self.path):
            return False
        if self._solution is None:
            self._solution = solution_type_names(self.path)
        return name in self._solution

    _solution: frozenset[str] | None = None

    def is_namespace_path(self, text: str) -> bool:
        return bool(text) and (text.split(".")[0] in ("System", "Microsoft", "global::System", "UnityEngine")
                               or any(ns == text or ns.startswith(text + ".") for ns in self.namespaces))

"""Type names as one Java file sees them: imports, nested and inherited classes, generic arguments."""
from __future__ import annotations

import functools
import re

from tree_sitter import Node

from .syntax import F_DIMENSIONS, F_ELEMENT, CommentedNodes

ORT_PACKAGE = "ai.onnxruntime"


_ORT_PREFIXES = ("Ort", "Onnx")  # class-name convention of ai.onnxruntime (OrtSession, OnnxTensor)


MAX_TYPE_NESTING = 64  # type arguments inside type arguments; deeper ones are kept as written


_PRIMITIVES = frozenset({"int", "long", "short", "byte", "char", "float", "double", "boolean", "void"})


_IMPORT = re.compile(r"import\s+(static\s+)?([\w.$]+)(\s*\.\s*\*)?$")


_DOTTED_NAME = re.compile(r"[\w$]+(\.[\w$]+)+")


# methods every ORT class inherits from java.lang (Object, Throwable, Enum), none of which
# declares a checked exception; the generated tables list only what the binding declares
_JDK_INHERITED = frozenset({"toString", "hashCode", "equals", "getClass", "getMessage", "getLocalizedMessage",
                            "getCause", "printStackTrace", "getStackTrace", "addSuppressed", "getSuppressed",
                            "initCause", "fillInStackTrace", "name", "ordinal", "compareTo", "values", "valueOf"})


def base_type(t: str) -> str:
    """`Map<String, OnnxTensor>` -> `Map`: callee names never carry type arguments."""
    i = t.find("<")
    return t if i < 0 else t[:i]


def element_type(t: str) -> str:
    """The element type of an array or of a generic collection (its last type argument)."""
    if t.endswith("[]"):
        return t[:-2]
    if "<" in t and t.endswith(">"):
        args = _split_type_args(t[t.index("<") + 1:-1])
        return args[-1] if args else ""
    return ""


def _split_type_args(text: str) -> list[str]:
    """`String,Map<K,V>` -> [`String`, `Map<K,V>`] (commas inside <> do not split)."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return out


class TypeNames:
    """Resolves type names written in one file to the canonical form the policy uses: the
    class path without its package (`ai.onnxruntime.OrtSession.Result` -> `OrtSession.Result`,
    `Result` imported from `ai.onnxruntime.OrtSession` -> `OrtSession.Result`)."""

    def __init__(self, src: bytes, syntax: CommentedNodes, api_classes: frozenset[str] = frozenset()):
        self.src = src
        self.api_classes = api_classes  # outermost classes of the ORT API the policy describes
        self.named = syntax.named
        self.package = ""
        self.imports: dict[str, str] = {}  # simple name -> canonical name
        self.origin: dict[str, str] = {}  # canonical root class -> package
        self.wildcards: list[str] = []
        # `import static a.b.C.m;` -> m: (a.b, C); `import static a.b.C.*;` -> (a.b, C) in static_wildcards
        self.static_members: dict[str, tuple[str, str]] = {}
        self.static_wildcards: list[tuple[str, str]] = []
        self.local_classes: dict[str, str] = {}  # simple name of a class declared here -> path
        self.type_params: set[str] = set()  # names of type variables declared anywhere in the file
        self.resolved: dict[str, str] = {}  # resolve() results, for the local classes known so far
        self.version = 0  # changes whenever what resolve() answers may change
        self.ort_known: dict[str, bool] = {}  # is_ort() results, valid for `ort_stamp`
        self.ort_stamp = (0, 0)
        self.canon_depth = 0

    def text(self, node: Node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def read_header(self, root: Node, type_parameters: list[Node]) -> None:
        for param in type_parameters:
            name = next((c for c in self.named(param) if c.type in ("type_identifier", "identifier")), None)
            if name is not None:
                self.type_params.add(self.text(name))
        for child in self.named(root):
            if child.type == "package_declaration":
                names = [c for c in self.named(child) if c.type in ("scoped_identifier", "identifier")]
                if names:
                    self.package = _no_space(self.text(names[0]))
            elif child.type == "import_declaration":
                self._read_import(child)

    def _read_import(self, node: Node) -> None:
        """`import a.b.C;` maps C; `import a.b.*;` is remembered for the ORT-name fallback."""
        text = " ".join(self.text(node).split()).rstrip(";")
        m = _IMPORT.match(text)
        if not m:
            return
        name, static, star = m.group(2), bool(m.group(1)), bool(m.group(3))
        if star:
            if not static:
                self.wildcards.append(name)
            else:
                self.static_wildcards.append(_split_package(name))
            return
        if static:
            owner, _, member = name.rpartition(".")
            if owner:
                self.static_members[member] = _split_package(owner)
            return
        pkg, path = _split_package(name)
        if path:
            self.imports[path.split(".")[-1]] = path
            self.origin.setdefault(path.split(".")[0], pkg)

    def add_local_class(self, simple: str, path: str) -> None:
        """A class declared in this file: it shadows imports from here on."""
        if simple not in self.local_classes:
            self.local_classes[simple] = path
            self.resolved.clear()
            self.version += 1

    def resolve(self, written: str) -> str:
        """Canonical name of a type written as `written` (no type arguments); memoized, as
        the same few names are resolved over and over (valid until a local class is added)."""
        canonical = self.resolved.get(written)
        if canonical is None:
            canonical = self.resolved[written] = self._resolve(written)
        return canonical

    def _resolve(self, written: str) -> str:
        written = _no_space(written)
        if not written:
            return ""
        pkg, path = _split_package(written)
        if pkg:
            self.origin.setdefault(path.split(".")[0], pkg)
            return path
        head, _, rest = path.partition(".")
        if head in self.local_classes:
            head = self.local_classes[head]
        elif head in self.imports:
            head = self.imports[head]
        return head + ("." + rest if rest else "")

    def is_ort(self, canonical: str) -> bool:
        """Is this a class of the ONNX Runtime Java API (whose calls throw OrtException)?
        Memoized while what it depends on stays the same: `origin` only ever gains keys, so
        its size tells whether it changed; `version` tells whether the local classes did."""
        stamp = (len(self.origin), self.version)
        if stamp != self.ort_stamp:
            self.ort_known.clear()
            self.ort_stamp = stamp
        known = self.ort_known.get(canonical)
        if known is None:
            known = self.ort_known[canonical] = self._is_ort(canonical)
        return known

    def _is_ort(self, canonical: str) -> bool:
        root = base_type(canonical).split(".")[0]
        if not root:
            return False
        pkg = self.origin.get(root)
        if pkg is not None:
            return pkg == ORT_PACKAGE or pkg.startswith(ORT_PACKAGE + ".")
        if root in self.local_classes or self.package == ORT_PACKAGE or self.package.startswith(ORT_PACKAGE + "."):
            # declared here, or a class of the package `ai.onnxruntime` that this file uses
            # without importing: ORT API only if the policy names it (a test tree's own helper
            # classes in that package are not)
            return root in self.api_classes and (root not in self.local_classes or self.package == ORT_PACKAGE)
        if root in self.api_classes:  # a type the policy gives a call (`result.get(0)` is an OnnxValue)
            return True
        # not imported by name: ORT's naming convention decides, unless the file imports ORT
        # classes by name (then an unimported `OrtSymbolBlock` is the project's own class)
        if not root.startswith(_ORT_PREFIXES):
            return False
        ort_wildcard = any(w == ORT_PACKAGE or w.startswith(ORT_PACKAGE + ".") for w in self.wildcards)
        ort_named = any(p == ORT_PACKAGE or p.startswith(ORT_PACKAGE + ".") for p in self.origin.values())
        return ort_wildcard or not ort_named

    def canon(self, node: Node | None) -> str:
        """Canonical type of a type node, keeping type arguments (`Map<String,OnnxTensor>`).
        Types nested deeper than MAX_TYPE_NESTING stay as written (a bound on the recursion
        that does not depend on Python's recursion limit, which the compiled build lacks)."""
        if node is None:
            return ""
        if self.canon_depth >= MAX_TYPE_NESTING:
            return _no_space(self.text(node))
        self.canon_depth += 1
        try:
            return self._canon(node)
        finally:
            self.canon_depth -= 1

    def _canon(self, node: Node) -> str:
        t = node.type
        if t in ("type_identifier", "identifier", "scoped_type_identifier", "scoped_identifier"):
            return self.resolve(self.text(node))
        if t == "generic_type":
            kids = self.named(node)
            base = self.canon(kids[0]) if kids else ""
            args = [self.canon(a) for a in self.named(kids[-1])] if len(kids) > 1 and kids[-1].type == "type_arguments" else []
            return f"{base}<{','.join(args)}>" if args else base
        if t == "array_type":
            dims = node.child_by_field_id(F_DIMENSIONS)
            count = self.text(dims).count("[") if dims is not None else 1
            return self.canon(node.child_by_field_id(F_ELEMENT)) + "[]" * count
        if t in ("integral_type", "floating_point_type", "boolean_type", "void_type"):
            return self.text(node)
        if t == "annotated_type":
            kids = [c for c in self.named(node) if c.type not in ("marker_annotation", "annotation")]
            return self.canon(kids[-1]) if kids else ""
        if t == "wildcard":
            kids = [c for c in self.named(node) if c.type not in ("marker_annotation", "annotation")]
            return self.canon(kids[-1]) if kids else "Object"
        return _no_space(self.text(node))


def _no_space(text: str) -> str:
    """Whitespace removed, as `re.sub(r"\\s+", "", text)` did, at a fraction of the cost
    (`str.split` and the regex agree on what whitespace is)."""
    return "".join(text.split())


@functools.lru_cache(maxsize=4096)  # pure; called for every type name resolved
def _split_package(name: str) -> tuple[str, str]:
    """`ai.onnxruntime.OrtSession.Result` -> (`ai.onnxruntime`, `OrtSession.Result`): Java
    packages are lower case by convention, classes are not."""
    parts = name.split(".")
    i = 0
    while i < len(parts) - 1 and parts[i][:1].islower():
        i += 1
    return ".".join(parts[:i]), ".".join(parts[i:])

"""Data-only serialization for the cache: JSON whose values are tagged, decoded against a fixed
list of classes.

The cache used to be pickles, and unpickling runs whatever the file says: a `.ortlint_cache/`
committed to a repository ran its author's code in CI. Here a file can only describe values:
JSON scalars and lists as they are, and one-key objects for the rest,

    {"t": [...]} a tuple, {"s": [...]} a set, {"f": [...]} a frozenset,
    {"d": [k1, v1, k2, v2, ...]} a dict (any keys),
    {"Finding": [field, field, ...]} an instance of a class the codec was given,

and an instance is made by calling its class with its fields, each checked against the type its
class declares (shallowly: a `tuple[Step, ...]` field must hold a tuple). Anything else (an
object with two keys, an unknown tag, a wrong field count or type, nesting deeper than
what the JSON decoder cannot nest) is a `CodecError`, which the cache reports and treats as a miss.
"""
from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any, Callable, Iterable

class CodecError(ValueError):
    """The text does not describe a value of the codec's classes."""


@dataclasses.dataclass(frozen=True)
class _ClassSpec:
    tag: str
    cls: type
    fields: tuple[str, ...]
    checks: tuple[tuple[str, Any], ...]  # (field, isinstance target) for fields with a known type


class Codec:
    """Encodes values of the builtin containers and of `classes` (dataclasses constructed from
    their fields in order, or named tuples) into JSON, and back."""

    def __init__(self, classes: Iterable[type]):
        self._specs: dict[type, _ClassSpec] = {}
        self._decoders: dict[str, Callable[[list], Any]] = {
            "t": tuple, "s": set, "f": frozenset, "d": _pairs,
        }
        for cls in classes:
            spec = _spec(cls)
            if spec.tag in self._decoders:
                raise ValueError(f"two classes are tagged {spec.tag!r}")
            self._specs[cls] = spec
            self._decoders[spec.tag] = _constructor(spec)

    # -- encoding ----------------------------------------------------------------------------

    def dumps(self, value: Any) -> str:
        """Compact JSON text; ASCII only, so the bytes are the same whatever the locale."""
        return json.dumps(self.encode(value), separators=(",", ":"), allow_nan=False)

    def encode(self, value: Any) -> Any:
        t = type(value)
        if t is str or t is int or t is bool or value is None or t is float:
            return value
        if t is list:
            return [self.encode(v) for v in value]
        if t is tuple:
            return {"t": [self.encode(v) for v in value]}
        if t is dict:
            flat: list = []
            for k, v in value.items():
                flat.append(self.encode(k))
                flat.append(self.encode(v))
            return {"d": flat}
        if t is set or t is frozenset:
            return {"s" if t is set else "f": [self.encode(v) for v in _stable(value)]}
        spec = self._specs.get(t)
        if spec is None:
            raise CodecError(f"cannot store a value of type {t.__name__}")
        return {spec.tag: [self.encode(getattr(value, name)) for name in spec.fields]}

    # -- decoding ----------------------------------------------------------------------------

    def loads(self, text: str | bytes) -> Any:
        """The value `text` describes; CodecError when it describes anything else."""
        try:
            return json.loads(text, object_pairs_hook=self._hook, parse_constant=_no_constant)
        except CodecError:
            raise
        except RecursionError:  # the C decoder counts its levels: deep nesting is an error, not a crash
            raise CodecError("nested too deeply") from None
        except (ValueError, TypeError, AttributeError) as exc:
            raise CodecError(f"{type(exc).__name__}: {exc}") from None

    def _hook(self, pairs: list[tuple[str, Any]]) -> Any:
        """Every JSON object, innermost first (its (key, value) pairs: no dict is built)."""
        if len(pairs) == 1:
            tag, items = pairs[0]
            decode = self._decoders.get(tag)
            if decode is not None and type(items) is list:
                return decode(items)
            if decode is None:
                raise CodecError(f"unknown tag {tag[:40]!r}")
            raise CodecError(f"{tag[:40]!r} does not hold a list")
        raise CodecError(f"an object with {len(pairs)} keys")


def _no_constant(name: str) -> Any:
    raise CodecError(f"{name} is not stored")


def _pairs(flat: list) -> dict:
    if len(flat) % 2:
        raise CodecError("a dict with an odd number of items")
    it = iter(flat)
    return dict(zip(it, it))


def _stable(items: Any) -> list:
    """Set elements in a reproducible order when they can be ordered (the same record gives the
    same bytes in every process); otherwise as they come."""
    try:
        return sorted(items)
    except TypeError:
        return list(items)


# ----------------------------------------------------------------------------- classes


def _spec(cls: type) -> _ClassSpec:
    if dataclasses.is_dataclass(cls):
        names = tuple(f.name for f in dataclasses.fields(cls) if f.init and not f.metadata.get("cache"))
    elif issubclass(cls, tuple) and hasattr(cls, "_fields"):
        names = tuple(cls._fields)
    else:
        raise TypeError(f"{cls.__name__}: only dataclasses and named tuples can be stored")
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: its fields go unchecked
        hints = {}
    checks = tuple((name, target) for name in names
                   if (target := _runtime_type(hints.get(name, Any))) is not object)
    return _ClassSpec(cls.__name__, cls, names, checks)


def _runtime_type(hint: Any) -> Any:
    """What `isinstance` can test of an annotation: `tuple[Step, ...]` -> tuple,
    `Summary | None` -> (Summary, NoneType), `float` -> (float, int); `Any` -> object."""
    if hint is Any or isinstance(hint, typing.TypeVar):
        return object
    if hint is None or hint is type(None):
        return type(None)
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        targets: list = []
        for arg in typing.get_args(hint):
            t = _runtime_type(arg)
            if t is object:
                return object
            targets.extend(t if isinstance(t, tuple) else (t,))
        return tuple(targets)
    if origin is not None:
        return origin if isinstance(origin, type) else object
    if hint is float:
        return (float, int)
    return hint if isinstance(hint, type) else object


def _constructor(spec: _ClassSpec) -> Callable[[list], Any]:
    cls, count, checks, tag = spec.cls, len(spec.fields), spec.checks, spec.tag
    index = {name: i for i, name in enumerate(spec.fields)}
    positions = tuple((index[name], target, name) for name, target in checks)

    def construct(values: list) -> Any:
        if len(values) != count:
            raise CodecError(f"{tag} with {len(values)} fields (expected {count})")
        for i, target, name in positions:
            if not isinstance(values[i], target):
                raise CodecError(f"{tag}.{name} holds a {type(values[i]).__name__}")
        try:
            return cls(*values)
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{tag}: {exc}") from None

    return construct

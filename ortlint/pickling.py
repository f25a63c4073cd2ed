"""Faster pickling for the dataclasses that cross process boundaries (main process <-> workers).

Pickle is for that pipe only, between processes of one run: the cache on disk is data-only JSON
(`datacodec`), because loading a pickle runs whatever the file says."""
from __future__ import annotations

import dataclasses
import operator


def pickle_by_fields(cls):
    """Class decorator for a slots dataclass: pickle it as a call of its constructor.

    The default for slots dataclasses (`__getstate__`/`__setstate__` walking `fields()` for
    every object) made loading findings and summaries from worker processes 3x slower, and moving IR between processes 2.5x slower. Every field must be a
    positional constructor argument (checked here, so a new keyword-only field fails loudly
    instead of being dropped). Fields marked `metadata={"cache": True}` are left out: a
    cache (like the IR's kept hashes) is recomputed on the other side, never carried."""
    names = cls.__match_args__
    stored = [f for f in dataclasses.fields(cls) if not f.metadata.get("cache")]  # (caches are recomputed)
    if len(names) != len(stored):  # a keyword-only or init=False field would be lost
        raise TypeError(f"pickle_by_fields: {cls.__name__} has fields its constructor does not take in order")
    if len(names) == 1:
        name = names[0]

        def reduce(self):  # noqa: ANN001, ANN202
            return (cls, (getattr(self, name),))
    else:
        get = operator.attrgetter(*names)

        def reduce(self):  # noqa: ANN001, ANN202
            return (cls, get(self))
    cls.__reduce__ = reduce
    return cls

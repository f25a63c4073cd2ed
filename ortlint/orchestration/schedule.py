"""Callee-first order as a dataflow: which components of the call graph may be analyzed now.

A function needs the summaries of the functions it calls, so the components of the call graph
(a recursive cycle is one component) are analyzed callees first. Walking the graph level by
level made every worker wait, at each of ~20 levels, for the costliest function of the level;
here a component is ready as soon as every component it calls is done, and the ready ones are
taken costliest chain first (the "bottom level" of list scheduling: its own estimated cost plus
the costliest chain of callers waiting on it), so the long chains start early.
"""
from __future__ import annotations

from typing import Hashable, Sequence

Key = Hashable


class Readiness:
    """The components of a call graph, how many callee components each still waits for, and
    which components wait on each."""

    def __init__(self, graph: dict, components: Sequence[Sequence[Key]]):
        self.components = components
        component_of = {key: i for i, members in enumerate(components) for key in members}
        self.users: list[list[int]] = [[] for _ in components]
        self.waiting: list[int] = [0] * len(components)
        self.finished: list[bool] = [False] * len(components)
        for i, members in enumerate(components):
            callees = {component_of[t] for key in members for t in graph.get(key, ()) if t in component_of} - {i}
            self.waiting[i] = len(callees)
            for j in sorted(callees):
                self.users[j].append(i)

    def initial(self) -> list[int]:
        """The components that call no other component."""
        return [i for i, count in enumerate(self.waiting) if count == 0]

    def done(self, i: int) -> list[int]:
        """Component `i` is analyzed: the components that became ready by it."""
        self.finished[i] = True
        ready = []
        for user in self.users[i]:
            self.waiting[user] -= 1
            if self.waiting[user] == 0:
                ready.append(user)
        return ready

    def stuck(self) -> list[int]:
        """Components still waiting for a callee (none once every result has come)."""
        return [i for i, count in enumerate(self.waiting) if count > 0]

    def release_stuck(self) -> list[int]:
        """The components still waiting, now taken as ready (a last resort: a result that
        never came must not keep its callers from being analyzed)."""
        stuck = self.stuck()
        for i in stuck:
            self.waiting[i] = 0
        return stuck

    def chain_costs(self, cost: Sequence[float]) -> dict[int, float]:
        """Each unfinished component's cost (`cost[i]`) plus the costliest chain of callers
        above it (the components are in callee-first order, so callers come later and are
        computed first here; a finished component's callers are finished too)."""
        out: dict[int, float] = {}
        finished, users = self.finished, self.users
        for i in reversed(range(len(self.components))):
            if not finished[i]:
                above = users[i]
                out[i] = cost[i] + (max([out[u] for u in above]) if above else 0.0)
        return out


class ChainRanks:
    """Each function's priority: the chain cost (`Readiness.chain_costs`) of its component,
    looked up through the component instead of copied to every member. The ranks are revised
    several times a second while the workers wait for the main process's answers; a dict over
    every function (3 000 on the real-code corpus) took it 6 ms each time."""

    __slots__ = ("chain", "component_of")

    def __init__(self, chain: dict[int, float], component_of: dict[Key, int]):
        self.chain = chain
        self.component_of = component_of

    def get(self, key: Key, default: float = 0.0) -> float:
        i = self.component_of.get(key)
        return self.chain.get(i, default) if i is not None else default

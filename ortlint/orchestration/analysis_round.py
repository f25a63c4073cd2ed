"""One round of `WorkerPool.analyze`: the main process's side of streaming analysis jobs to the
workers that hold their IR.

Kept apart from the pool (which starts, watches and replaces workers) because this is the
scheduling policy: per-worker queues ordered by priority, chunks sized by what a worker has
left, work moved from a loaded worker to an idle one, priorities revised as costs are learnt,
and what to do with a request that a lost worker leaves behind. The pool's mechanics (`_stream`,
`_balance`, `_steal`, `_export`, ...) are used as they are."""
from __future__ import annotations

import bisect
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..engine.analyze import FunctionResult

if TYPE_CHECKING:
    from .parallel import FunctionKey, Loss, WorkerPool

Job = tuple  # (key, summaries[, ..., members of a recursive component])
NOT_STARTED = -2  # `on_lost` index of a request the lost worker never started: all of it goes back


class AnalysisRound:
    """The state of one `analyze` call: what each worker has queued (highest priority first),
    the estimated cost of each job and of what each worker has left, the IR moved to a worker
    and waiting for its next request, and the results (when no `on_results` takes them)."""

    def __init__(self, pool: "WorkerPool", constants: dict[str, int],
                 on_results: Callable[[dict], None] | None, idle: Callable[[], bool] | None,
                 more: Callable[[], list] | None, priority: Callable[[], Mapping["FunctionKey", float]] | None):
        self.pool = pool
        self.constants = constants
        self.on_results, self.idle, self.more, self.priority = on_results, idle, more, priority
        self.batches: dict[int, list] = {}  # per worker, highest priority first
        self.out: dict[FunctionKey, FunctionResult | None] = {}
        self.cost: dict[FunctionKey, float] = {}
        self.left: dict[int, float] = {}  # estimated cost of the jobs not yet sent, per worker
        self.rank: Mapping[FunctionKey, float] = priority() if priority is not None else self.cost
        self.ranked_at = time.monotonic()  # when `rank` was last asked for
        self.rank_wait = pool.REPRIORITIZE_SECONDS  # and the wait till the next
        self.sent_constants: set[int] = set()
        self.singles: set[int] = set()  # workers whose next chunks go one job at a time (after a lost request)
        self.pending: dict[int, list] = {}  # IR moved to a worker, sent with its next request
        self.moved: set[FunctionKey] = set()  # a job moves once at most (no back and forth)

    def run(self, jobs: list[Job]) -> dict["FunctionKey", FunctionResult | None]:
        pool = self.pool
        pool.adopted = {}
        self.add(jobs)
        pool._balance(self.batches, self.cost)
        for w in list(self.batches):
            self.order(w)
        pool._stream(self.next_chunk, self.message, self.on_reply, self.on_lost,
                     self.idle_step if self.idle is not None else None, self.refill)
        pool.adopted = {}
        return self.out

    def first(self, job: Job) -> float:
        """First the costliest chains (or jobs); the cheap ones last, to even out the end."""
        return -self.rank.get(job[0], 0.0)

    def order(self, w: int) -> None:
        self.batches[w].sort(key=self.first)
        self.left[w] = sum(self.cost[job[0]] for job in self.batches[w])

    def add(self, new_jobs: list[Job]) -> None:
        pool = self.pool
        while new_jobs:
            for job in new_jobs:
                keys = [m[0] for m in job[3]] if len(job) > 3 and job[3] else [job[0]]
                if any(key[0] in pool.lost_files for key in keys):  # its IR is gone with a worker: nothing to analyze
                    (self.on_results or self.out.update)({key: FunctionResult([], None, {}, [
                        (key[2], pool.orphan_note(key))]) for key in keys})
                    continue
                w = pool.owner[job[0][0]]
                self.cost[job[0]] = pool._estimate(job[0])
                bisect.insort(self.batches.setdefault(w, []), job, key=self.first)
                self.left[w] = self.left.get(w, 0.0) + self.cost[job[0]]
            new_jobs = self.more() if self.more is not None else []  # what the lost ones' results made ready

    def next_chunk(self, w: int) -> list | None:
        """A quarter of what the worker has left, at least CHUNK_SECONDS of estimated work:
        large chunks early (few round trips), small ones late (something to move to a
        worker that runs out)."""
        pool, queue = self.pool, self.batches.get(w)
        if not queue:
            return None
        chunk = [queue.pop(0)]
        spent = self.cost.get(chunk[0][0], 0.0)
        target = min(max(pool.CHUNK_SECONDS, self.left.get(w, 0.0) / 4), pool.MAX_CHUNK_SECONDS)
        while queue and w not in self.singles and spent < target and len(chunk) < pool.MAX_CHUNK:
            chunk.append(queue.pop(0))
            spent += self.cost.get(chunk[-1][0], 0.0)
        self.left[w] = max(0.0, self.left.get(w, 0.0) - spent)
        return chunk

    def refill(self, w: int, starving: list[int]) -> list[int]:
        """`w` just answered (so it is idle for a moment): when it has much more work
        queued than the least loaded worker, the cheaper part of the difference moves
        there (estimates go wrong: one function of a file may cost ten times its
        neighbours, and a file's functions all start where it was parsed). The IR goes
        out with that worker's next request, so the move waits for nobody."""
        pool, left = self.pool, self.left
        others = [v for v in range(len(pool.conns)) if v != w]
        if w in self.singles or not others:
            return []
        v = min(others, key=lambda x: (left.get(x, 0.0), x not in starving, x))
        gap = left.get(w, 0.0) - left.get(v, 0.0)
        if gap < 2 * pool.MIN_MOVE or (left.get(w, 0.0) < 2 * left.get(v, 0.0) and v not in starving):
            return []
        picked = pool._steal(self.batches.get(w, []), self.cost, gap, self.moved)
        items = pool._export(w, [job[0] for job in picked]) if picked else None
        if not items:
            self.sent_constants.discard(w)  # it may have been replaced
            return []
        gone = {job[0] for job in picked}
        self.moved.update(gone)
        self.batches[w] = [job for job in self.batches[w] if job[0] not in gone]
        for job in picked:
            bisect.insort(self.batches.setdefault(v, []), job, key=self.first)
        amount = sum(self.cost[key] for key in gone)
        left[w] -= amount
        left[v] = left.get(v, 0.0) + amount
        self.pending.setdefault(v, []).extend(items)
        pool.adopted.setdefault(v, []).extend(items)  # for its replacement, should it be lost
        return [v] if v in starving else []

    def message(self, w: int, chunk: list) -> tuple:
        first = w not in self.sent_constants
        self.sent_constants.add(w)
        return ("analyze", chunk, self.constants if first else None, self.pending.pop(w, None))

    def on_reply(self, w: int, _chunk: Any, payload: Any) -> None:
        pool = self.pool
        if isinstance(payload, tuple):  # (results, CPU time of each, IR bytes it holds) from a worker
            payload, costs, held = payload
            pool._held(w, held)
            pool._observe(costs)
            for key, seconds in costs.items():
                pool._record_cpu("analysis", seconds, f"{key[0]}:{key[2]}: {key[1]}()")
        if self.on_results is not None:
            self.on_results(payload)
        else:
            self.out.update(payload)
        if self.more is not None:
            self.add(self.more())
        if self.priority is not None and time.monotonic() - self.ranked_at > self.rank_wait:
            self.revise()

    def revise(self) -> None:
        """Ask the priorities again and re-sort the queues. A revision is linear in the
        queued jobs (on a 16 000-file tree, a second or more): the next one waits until the
        revisions have cost at most REPRIORITIZE_SHARE of the time, else the main process
        revised after every reply and the workers waited for it."""
        assert self.priority is not None
        started = time.process_time()
        self.rank = self.priority()
        for w in self.batches:
            self.order(w)
        took = time.process_time() - started
        self.ranked_at = time.monotonic()
        self.rank_wait = max(self.pool.REPRIORITIZE_SECONDS, took / self.pool.REPRIORITIZE_SHARE)

    def idle_step(self) -> bool:
        assert self.idle is not None
        busy = self.idle()
        if self.more is not None:
            self.add(self.more())
        return busy

    def on_lost(self, w: int, chunk: list, index: int, loss: "Loss") -> None:
        self.sent_constants.discard(w)  # the replacement has none yet
        culprit, again = self.pool._split(chunk, index)
        if culprit is not None:
            keys = [m[0] for m in culprit[3]] if len(culprit) > 3 and culprit[3] else [culprit[0]]
            self.on_reply(w, chunk, {key: FunctionResult([], None, {}, [(key[2], loss.analysis_note(key[1]))])
                                     for key in keys})
        elif index != NOT_STARTED:
            self.singles.add(w)
        self.batches.setdefault(w, [])[:0] = again
        self.left[w] = self.left.get(w, 0.0) + sum(self.cost.get(job[0], 0.0) for job in again)

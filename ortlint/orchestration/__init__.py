"""Orchestration: one run from files to a sorted report; no analysis and no formatting of its own.

    runner.py     `run`: discover, parse, analyze, assemble (the entry point of cli/ and api.py)
    settings.py   `RunConfig` (what a run is asked to do) and `Limits` (what an item may cost)
    progress.py   `Progress`: what the run has done so far, for a display (changes no result)
    parsing.py    `parse_file` through the front-end registry; the parser that keeps each file's IR
    program.py    the program model: functions, name resolution, call graph, components
    analysis.py   `Analysis`: summaries callees first, here or in the workers
    tasks.py      the units of work (analyze one function) and the collector pause they run under
    parallel.py   the worker processes: parse and analyze there, a crash or overrun loses one item
    analysis_round.py  one `WorkerPool.analyze` call: queues, chunk sizes, work moved between workers
    schedule.py   which component goes next to which worker
    memory.py     freed heap pages handed back to the system (a worker after parsing)
    irstore.py    the IR a worker holds until analysis, pickled (a fifth of the live objects)
    caching.py    what the run keeps in and takes from the cache
    cache.py      the cache itself (per-file records, whole-run replay)
    policy_cache.py  the loaded policy kept between runs (start-up: no TOML parsed on a hit)
"""

"""What one run is asked to do (`RunConfig`) and the limits of its worker processes (`Limits`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..discover import WalkRules
from ..engine.analyze import Options
from ..policy import Policy
from ..testcode import DEFAULT_TEST_PATTERNS


@dataclass(frozen=True)
class Limits:
    """What one item (parsing a file, analyzing a function) may cost in a worker; a `--jobs 1`
    run has the same limits (one worker). What decides the results is counted in work (parse
    steps, the engine's `Budget`), so a busy machine gets the results of an idle one; these
    limits are the safety nets behind those counts, far above what real code needs (the
    costliest item of 25 public repositories, ONNX Runtime's tree included, took 8.7 s)."""

    seconds: float = 60.0  # CPU time of one item (not wall time: a busy machine gives a worker less of a core)
    memory_mb: int = 1024  # growth of a worker's address space during one request
    # Wall time a busy worker may go without any CPU time before it counts as hung (a failure,
    # not a limit); None: the CPU limit, at least MIN_HANG_SECONDS.
    hang_seconds: float | None = None

    MIN_HANG_SECONDS = 30.0

    def hang(self) -> float:
        return self.hang_seconds if self.hang_seconds is not None else max(self.seconds, self.MIN_HANG_SECONDS)


@dataclass
class RunConfig:
    paths: list[str]
    policy: Policy
    options: Options = field(default_factory=Options)
    excludes: tuple[str, ...] = ()
    use_default_excludes: bool = True
    jobs: int = 1  # worker processes (0 = all cores)
    compile_commands: str | None = None  # compile_commands.json: parse C/C++ with libclang
    cache_dir: str | None = None  # per-file cache of parsed IR and summaries (None = off)
    extensions: dict[str, str] | None = None  # extra suffix -> language mappings
    suppressions: bool = False  # drop findings silenced by `ortlint: ignore[...]` comments (the CLI does)
    isolate: bool = True  # parse and analyze in worker processes, so a crash or a hang loses one file only
    limits: Limits = field(default_factory=Limits)  # per file / per function, in those workers
    include_dirs: tuple[str, ...] = ()  # where `#include "..."` headers are looked for (header_index)
    test_patterns: tuple[str, ...] = DEFAULT_TEST_PATTERNS  # findings in such files are tagged "test" (testcode.py)
    follow_symlinks: bool = False  # follow links that leave the analyzed folders (discover.py)
    respect_ignore: bool = True  # skip what .gitignore, .ignore and .git/info/exclude ignore (discover.py)
    force_exclude: bool = False  # files named in `paths` are excluded and ignored like walked ones
    walk_rules: Callable[[str], WalkRules] | None = None  # per folder, from the nearest configuration file
    project_root: str | None = None  # where ignore files start and headers are indexed outside a git checkout
    # Text to analyze instead of what is on disk, by path (normalized as discovery writes it): an
    # editor's unsaved buffer, or standard input analyzed as if it were that file (--stdin-filename).
    # A path listed here is analyzed even when no such file exists yet.
    overlays: dict[str, bytes] = field(default_factory=dict)

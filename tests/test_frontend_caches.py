"""What the front ends remember to be cheaper is forgotten when it could be stale: include
resolution lasts one run (a header added since is found by the next run)."""
from __future__ import annotations

from pathlib import Path

from ortlint.frontends.common import header_index as hi


def test_include_resolution_is_remembered_for_one_run_only(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    main = src / "m.c"
    main.write_text('#include "late.h"\n')
    hi.configure((), (str(tmp_path),))
    try:
        index = hi.current()
        assert index.resolve("late.h", str(src)) is None
        (src / "late.h").write_text("#define LATE(x) x\n")
        assert index.resolve("late.h", str(src)) is None  # the same run: remembered
        hi.configure((), (str(tmp_path),))  # the next run, same settings
        assert hi.current().resolve("late.h", str(src)) == str(src / "late.h")
        assert "LATE" in hi.current().visible(str(main), main.read_bytes()).macros
    finally:
        hi.configure((), ())

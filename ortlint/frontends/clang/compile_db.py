"""Finding the compile database (precise mode), and the flags of its commands that must not
reach libclang; kept apart from `clang_frontend` so that the check runs on every C/C++ run
without importing libclang's bindings or the C++ model."""
from __future__ import annotations

from pathlib import Path

DB_NAME = "compile_commands.json"


def find_compile_commands(paths: list[str]) -> str | None:
    """Auto-discovery: `compile_commands.json` in an analyzed folder or its `build/`, or in a
    parent folder up to the project root (the first folder with a `.git`)."""
    for raw in paths:
        try:
            start = Path(raw).resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): nothing to find
            continue
        folder = start if start.is_dir() else start.parent
        candidates = [folder]
        probe = folder
        while not (probe / ".git").exists() and probe.parent != probe and len(candidates) < 12:
            probe = probe.parent
            candidates.append(probe)
        if not (probe / ".git").exists():
            candidates = [folder]
        for cand in candidates:
            for db in (cand / DB_NAME, cand / "build" / DB_NAME):
                if db.is_file():
                    return str(db)
    return None


def resolve_compile_commands(value: str | None, paths: list[str]) -> str | None:
    """`--compile-commands` may name the file or its folder; unset means auto-discovery; an
    empty string turns precise mode off."""
    if value == "":
        return None
    if value is None:
        return find_compile_commands(paths)
    p = Path(value)
    if p.is_dir():
        for db in (p / DB_NAME, p / "build" / DB_NAME):
            if db.is_file():
                return str(db)
    return value


# ----------------------------------------------------------------------------- flags that write or load
#
# A compile database is the analyzed tree's (it is committed, or generated from the tree's build
# files), and libclang acts on some flags even when it only parses: `-MJ FILE` and
# `-Wp,-MD,FILE` write files, `--config FILE` reads more flags, `-fplugin=` and
# `-Xclang -load` load code, `-fmodules` builds module caches on disk. Such flags are dropped
# before libclang sees the command (with a note naming them); none of them changes what the
# source means. Response files (`@FILE`) are dropped too: libclang never expanded them (an entry
# with `@flags.rsp` was parsed without those flags before), and one outside the tree could
# name anything.

_SEPARATE_VALUE = {  # the flag's value is the next argument
    "-MF", "-MT", "-MQ", "-MJ", "-o", "-Xclang", "-Xpreprocessor", "-Xassembler", "-Xlinker", "-Xanalyzer",
    "-Xarch_device", "-Xarch_host", "-Xcuda-fatbinary", "-Xcuda-ptxas", "-Xopenmp-target", "-Xoffload-linker",
    "-mllvm", "-load", "-plugin", "-add-plugin", "-plugin-arg", "--serialize-diagnostics", "-dependency-file",
    "-dependency-dot", "-module-dependency-dir", "-header-include-file", "-include-pch", "-ivfsoverlay",
    "-fmodule-file", "-fmodule-map-file", "-B", "--config", "--config-system-dir", "--config-user-dir", "-specs",
    "-stats-file", "--gcc-toolchain", "--gcc-install-dir", "-fprofile-use", "-fprofile-instr-use",
}
_PREFIXES = (  # joined forms (`-MJfile`, `-fplugin=lib.so`, `-Wp,-MD,file`, `-Xarch_x86_64`) and flag families
    "-M", "-o", "-X", "-Wp,", "-Wa,", "-Wl,", "-mllvm", "-fplugin", "-fpass-plugin", "-ftime-trace", "-ftime-report",
    "-fmodules", "-fmodule-file", "-fmodule-map-file", "-fimplicit-module", "-fcxx-modules", "-fprebuilt-module",
    "-fbuild-session", "-fcrash-diagnostics", "-fproc-stat-report", "-save-temps", "--save-temps",
    "-fsave-optimization-record", "-foptimization-record", "-fprofile-", "-fcs-profile", "-fcoverage",
    "-fsanitize-blacklist", "-fsanitize-ignorelist", "-fsanitize-coverage-allowlist",
    "-fsanitize-coverage-ignorelist", "-fxray-", "-fthinlto-index", "-fbasic-block-sections=list",
    "-frewrite-map-file", "-ftest-module-file-extension", "-include-pch", "-ivfsoverlay", "-emit-",
    "--config", "-B", "-specs", "-cc1", "-load", "-plugin", "-dependency-", "-header-include", "-stats-file",
    "--serialize-diagnostics", "--gcc-toolchain", "--gcc-install-dir", "-fdump-", "-dump",
)


def unsafe_flags(args: list[str]) -> tuple[list[str], list[str]]:
    """(args without the flags that write or load files, those flags as written). `args` are the
    compiler's arguments (without the compiler, and without the output flags `clang_args` drops
    silently, as it always did: `-o`, `-MD -MF`, `-Xclang`, ...)."""
    kept: list[str] = []
    dropped: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("@") or arg.startswith(_PREFIXES):
            if arg in _SEPARATE_VALUE and i + 1 < len(args):
                dropped.append(f"{arg} {args[i + 1]}")
                i += 2
                continue
            dropped.append(arg)
        else:
            kept.append(arg)
        i += 1
    return kept, dropped

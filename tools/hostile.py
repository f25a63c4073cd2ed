#!/usr/bin/env python3
"""The hostile-tree campaign (issue 35): nothing in the analyzed tree may run code, write files,
forge output or stall a run.

    python tools/hostile.py                      # every case, against this checkout
    python tools/hostile.py --fast               # the cases the test suite runs (no slow ones)
    python tools/hostile.py -k fifo -v           # cases whose name contains "fifo", with details
    python tools/hostile.py --ortlint-root DIR   # against another checkout (e.g. an older commit)
    python tools/hostile.py --list               # the cases and what each expects

CI runs ortlint on pull requests from forks, with a token that can write security alerts: every
file of the checked-out tree is the attacker's. Each case builds such a tree in a temporary
folder (`tree/`, the current folder of the run, with `good.c`, whose leak at line 3 is the
neighbour finding that must survive), runs `python -m ortlint` on it as a separate process with a
wall-clock bound, and checks:

* no payload ran: every program, pickle, plug-in or flag planted in the tree writes into `mark/`
  (outside the tree) when it runs, and `mark/` must stay empty;
* no traceback, and the exit code the case expects: 0/1 for a hostile *tree* (findings or not),
  2 for a bad *configuration* (with a message naming the file and the key);
* no stall: the run ends within the case's bound;
* the neighbour's finding (`good.c:3`, ORT001) is still reported;
* for cases marked `no_writes`, nothing in the tree changed except the report file;
* the case's own check (the output's shape, a message, a notice).

Every case prints `ok` or what went wrong; the exit code is the number of failing cases (capped
at 100). The test suite runs the fast form (`tests/test_hostile.py`).
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent

LEAK_C = """#include <stdlib.h>
void leaky(int n) {
  char *p = malloc(n);
  if (n > 3)
    return;
  free(p);
}
"""
LEAK_GO = """package app

import ort "github.com/yalue/onnxruntime_go"

func leak() error {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return err
	}
	_ = opts.SetIntraOpNumThreads(1)
	return nil
}
"""
LEAK_JAVA = """import ai.onnxruntime.*;

public class Leak {
  static Object leaks(OrtEnvironment env) throws OrtException {
    OnnxTensor t = OnnxTensor.createTensor(env, new float[]{1f});
    return null;
  }
}
"""
GOOD = ("good.c", 3, "ORT001")


# ----------------------------------------------------------------------------- the sandbox


@dataclass
class Outcome:
    code: int | None  # None: stalled (killed at the bound)
    stdout: bytes
    stderr: bytes
    seconds: float
    report: bytes | None  # the --output file, when the case wrote one

    @property
    def text(self) -> str:
        return (self.stdout + self.stderr).decode("utf-8", "replace")

    def json(self) -> dict | None:
        try:
            return json.loads((self.report or self.stdout).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None


@dataclass
class Sandbox:
    """One case's folders: `tree` (the analyzed tree, the current folder), `mark` (payloads
    write here), `outside` (targets of symlinks that leave the tree), `home` (HOME and the user
    cache folder of the run)."""

    base: Path
    python: str
    pythonpath: str
    env: dict[str, str] = field(default_factory=dict)
    shared: Path | None = None  # built once per campaign (the plug-in library)

    def __post_init__(self) -> None:
        for name in ("tree", "mark", "outside", "home"):
            (self.base / name).mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
            "XDG_CACHE_HOME": str(self.home / ".cache"), "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
            "PYTHONPATH": self.pythonpath, "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1",
        }
        for key in ("ORTLINT_LIBCLANG", "LD_LIBRARY_PATH"):
            if key in os.environ:
                self.env[key] = os.environ[key]

    tree = property(lambda self: self.base / "tree")
    mark = property(lambda self: self.base / "mark")
    outside = property(lambda self: self.base / "outside")
    home = property(lambda self: self.base / "home")

    def write(self, name: str, text: str | bytes, folder: Path | None = None) -> Path:
        path = (folder or self.tree) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def payload(self, name: str, folder: Path | None = None) -> Path:
        """An executable that leaves `mark/<name>` behind when it runs (any name: clang, git, ...)."""
        path = self.write(name, f"#!/bin/sh\necho \"$0 $*\" >> '{self.mark}/{os.path.basename(name)}'\n", folder)
        path.chmod(0o755)
        return path

    def pickle_payload(self) -> bytes:
        return pickle.dumps(_Boom(str(self.mark / "pickle")))

    def fifo(self, name: str, folder: Path | None = None) -> Path:
        path = (folder or self.tree) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        return path

    def sparse(self, name: str, size: int) -> Path:
        path = self.write(name, b"")
        os.truncate(path, size)
        return path

    def compile_db(self, flags: list[str], files: tuple[str, ...] = ("good.c",), compiler: str = "cc",
                   **extra: object) -> None:
        entries = [dict({"directory": str(self.tree), "file": f, "arguments": [compiler, *flags, "-c", f]}, **extra)
                   for f in files]
        self.write("compile_commands.json", json.dumps(entries, indent=1))

    def git(self, *args: str) -> None:
        subprocess.run(["git", "-c", "core.fsmonitor=false", "-c", "user.name=h", "-c", "user.email=h@h",
                        "-c", "init.defaultBranch=main", *args], cwd=self.tree, check=True, capture_output=True,
                       env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(self.home)})

    def repo(self) -> None:
        """The tree as a git repository with one commit; then good.c's branch changes (line 4), so
        that its leak is on a changed line, and the index is stale."""
        (self.tree / "good.c").write_text(LEAK_C.replace("n > 3", "n > 4"), encoding="utf-8")
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "base")
        time.sleep(0.01)
        (self.tree / "good.c").write_text(LEAK_C, encoding="utf-8")

    def git_config(self, text: str) -> None:
        with open(self.tree / ".git" / "config", "a", encoding="utf-8") as fh:
            fh.write(textwrap.dedent(text))

    def plugin(self) -> Path | None:
        """A shared library that leaves `mark/plugin` behind when it is loaded (None without a C compiler)."""
        if self.shared is None:
            return None
        lib = self.shared / "evil.so"
        if not lib.exists():
            src = self.shared / "evil.c"
            src.write_text('#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void boom(void) {\n'
                           '  const char *m = getenv("HOSTILE_MARK"); char p[4096];\n'
                           '  snprintf(p, sizeof p, "%s/plugin", m ? m : "/tmp"); FILE *f = fopen(p, "w"); if (f) fclose(f);\n}\n')
            cc = shutil.which("cc") or shutil.which("gcc")
            if cc is None or subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)],
                                            capture_output=True).returncode != 0:
                return None
        self.env["HOSTILE_MARK"] = str(self.mark)
        return lib


class _Boom:
    """A pickle that runs a command when loaded."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):  # noqa: ANN204
        return (os.system, (f"touch '{self.marker}'",))


def _snapshot(folder: Path, skip: set[str]) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, folder)
            if rel in skip:
                continue
            try:
                st = os.lstat(full)
            except OSError:
                continue
            out[rel] = (st.st_size, st.st_mtime_ns)
    return out


# ----------------------------------------------------------------------------- cases


@dataclass
class Case:
    name: str
    group: str  # exec | write | output | crash | stall | config | limits
    what: str  # what the tree does, and what must happen
    build: Callable[[Sandbox], None]
    args: tuple[str, ...] = ()  # before the paths; "." is added unless `paths` is given
    paths: tuple[str, ...] = (".",)
    exit: tuple[int, ...] = (1,)
    neighbour: bool = True  # good.c's finding must be reported
    fmt: str = "json"  # json: the report goes to out.json and is read back
    check: Callable[[Sandbox, Outcome], list[str]] | None = None
    bound: float = 60.0  # wall seconds before the run counts as stalled
    no_writes: bool = False  # nothing in the tree may change but the report
    slow: bool = False  # left out of the fast form (the test suite)
    cache: bool = False  # run with the cache (default location) instead of --no-cache
    config_error: tuple[str, ...] = ()  # for exit 2: words the message must contain (the file, the key)
    pending: str = ""  # not fixed yet: why (the test suite expects it to fail until then)

    def command(self) -> list[str]:
        args = list(self.args)
        if not self.cache and "--cache-dir" not in args:
            args.append("--no-cache")
        if self.fmt in ("json", "sarif"):
            args += ["--format", self.fmt, "--output", f"out.{self.fmt}"]
        elif self.fmt != "text":
            args += ["--format", self.fmt]
        return args + list(self.paths)


CASES: list[Case] = []


def case(name: str, group: str, what: str, **kw: object) -> Callable[[Callable[[Sandbox], None]], Callable]:
    def register(build: Callable[[Sandbox], None]) -> Callable:
        CASES.append(Case(name, group, what, build, **kw))  # type: ignore[arg-type]
        return build
    return register


def _nothing(_s: Sandbox) -> None:
    pass


def _has(*words: str) -> Callable[[Sandbox, Outcome], list[str]]:
    def check(_s: Sandbox, out: Outcome) -> list[str]:
        return [f"output does not mention {w!r}" for w in words if w not in out.text and w not in _report_text(out)]
    return check


def _report_text(out: Outcome) -> str:
    return (out.report or b"").decode("utf-8", "replace")


def _findings(out: Outcome) -> list[tuple[str, int, str]]:
    doc = out.json()
    if not doc or not isinstance(doc.get("findings"), list):
        return []
    return [(os.path.basename(f["path"]), f["line"], f["rule"]) for f in doc["findings"]]


# -- code execution: pickles ---------------------------------------------------------------


def _plant_pickles(s: Sandbox, folder: str) -> None:
    """Pickles wherever the ortlint under test would look for cache entries in `folder` (asked
    of that ortlint itself), plus the old layout's names."""
    probe = textwrap.dedent(f"""
        import json, sys
        from ortlint import __version__
        from ortlint.api import default_policy
        from ortlint.engine.analyze import Options
        try:
            from ortlint.orchestration.caching import policy_namespace
            from ortlint.orchestration import cache as c
        except ImportError:  # the layout before issue 28
            from ortlint.runner import policy_namespace
            from ortlint import cache as c
        ns = policy_namespace(default_policy(), Options())
        data = open("good.c", "rb").read()
        store = c.Cache({folder!r}, ns)
        key = store.key("good.c", c.content_hash(data))
        paths = [str(store._entry_path(key)), str(store.dir / "last-run.pickle")]
        for name in ("run_path", "_run_path"):
            if hasattr(store, name):
                paths.append(str(getattr(store, name)()))
        paths.append(str(store.dir / (key[:2] + "/" + key + ".pickle")))
        print(json.dumps(paths))
    """)
    done = subprocess.run([s.python, "-c", probe], cwd=s.tree, capture_output=True, text=True,
                          env={**s.env, "PYTHONPATH": s.pythonpath})
    paths = json.loads(done.stdout) if done.returncode == 0 else []
    blob = s.pickle_payload()
    for p in paths:
        target = s.tree / p
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)


@case("pickle-in-default-cache", "exec", "a committed .ortlint_cache/ full of pickles; the default cache is used",
      cache=True)
def _(s: Sandbox) -> None:
    _plant_pickles(s, ".ortlint_cache")


@case("pickle-cache-dir-from-config", "exec", "pyproject.toml points cache-dir at the committed pickles", cache=True)
def _(s: Sandbox) -> None:
    _plant_pickles(s, ".ortlint_cache")
    s.write("pyproject.toml", '[tool.ortlint]\ncache-dir = ".ortlint_cache"\n')


@case("pickle-cache-dir-option", "exec", "--cache-dir names the committed pickles' folder",
      args=("--cache-dir", ".ortlint_cache"), cache=True)
def _(s: Sandbox) -> None:
    _plant_pickles(s, ".ortlint_cache")


@case("garbage-cache-entries", "exec", "every file of the cache folder is garbage, a pickle or deep JSON: rejected",
      args=("--cache-dir", "c"), cache=True)
def _(s: Sandbox) -> None:
    _plant_pickles(s, "c")
    for path in list((s.tree / "c").rglob("*")):
        if path.is_dir():
            for i, blob in enumerate((b"{", b"[" * 100000, b'{"ortlint-cache": 1}\n{}', s.pickle_payload())):
                (path / f"junk{i}.json").write_bytes(blob)


@case("cache-entry-is-a-fifo", "stall", "a FIFO where a cache entry is looked up", args=("--cache-dir", "c"),
      cache=True, bound=30)
def _(s: Sandbox) -> None:
    _plant_pickles(s, "c")
    for path in list((s.tree / "c").rglob("*")):
        if path.is_file():
            path.unlink()
            os.mkfifo(path)


# -- code execution: programs on PATH --------------------------------------------------------


def _compilers(s: Sandbox, folder: Path | None = None) -> None:
    for name in ("clang", "cc", "gcc", "c++", "clang++", "git"):
        s.payload(name, folder)


@case("clang-on-path-empty-entry", "exec", "./clang, ./cc, ./gcc in the tree; PATH starts with an empty entry")
def _(s: Sandbox) -> None:
    _compilers(s)
    s.compile_db(["-DX=1"])
    s.env["PATH"] = ":" + s.env["PATH"]


@case("clang-on-path-dot", "exec", "./clang in the tree; PATH starts with '.'")
def _(s: Sandbox) -> None:
    _compilers(s)
    s.compile_db(["-DX=1"])
    s.env["PATH"] = ".:" + s.env["PATH"]


@case("clang-on-path-relative-entry", "exec", "bin/clang in the tree; PATH has the relative entry 'bin'")
def _(s: Sandbox) -> None:
    _compilers(s, s.tree / "bin")
    s.compile_db(["-DX=1"])
    s.env["PATH"] = "bin:" + s.env["PATH"]


@case("clang-on-path-node-modules", "exec", "node_modules/.bin/clang first on PATH (absolute, inside the tree)")
def _(s: Sandbox) -> None:
    _compilers(s, s.tree / "node_modules" / ".bin")
    s.compile_db(["-DX=1"])
    s.env["PATH"] = str(s.tree / "node_modules" / ".bin") + ":" + s.env["PATH"]


@case("clang-on-path-symlink-into-tree", "exec", "a PATH folder outside the tree whose clang links into the tree")
def _(s: Sandbox) -> None:
    s.payload("tools/evil.sh")
    (s.outside / "bin").mkdir()
    for name in ("clang", "cc", "gcc"):
        os.symlink(s.tree / "tools" / "evil.sh", s.outside / "bin" / name)
    s.compile_db(["-DX=1"])
    s.env["PATH"] = str(s.outside / "bin") + ":" + s.env["PATH"]


@case("git-on-path-empty-entry", "exec", "./git in the tree, PATH with an empty entry, --diff HEAD",
      args=("--diff", "HEAD"), exit=(0, 1))
def _(s: Sandbox) -> None:
    s.repo()
    s.payload("git")
    s.env["PATH"] = ":" + s.env["PATH"]


@case("git-on-path-dot", "exec", "./git in the tree, PATH starts with '.', --diff HEAD", args=("--diff", "HEAD"),
      exit=(0, 1))
def _(s: Sandbox) -> None:
    s.repo()
    s.payload("git")
    s.env["PATH"] = ".:" + s.env["PATH"]


# -- code execution: git configuration -------------------------------------------------------


def _git_case(name: str, what: str, config: str, attributes: str = "", home: bool = False) -> None:
    def build(s: Sandbox) -> None:
        s.payload("evil.sh")
        if attributes:
            s.write(".gitattributes", attributes)
        s.repo()
        text = config.replace("EVIL", str(s.tree / "evil.sh"))
        if home:
            s.write(".gitconfig", textwrap.dedent(text), s.home)
        else:
            s.git_config(text)
    CASES.append(Case(name, "exec", what, build, args=("--diff", "HEAD"), exit=(0, 1), neighbour=True,
                      no_writes=True))


_git_case("git-fsmonitor", "the repository's core.fsmonitor runs a script on every status-like git call",
          "[core]\n\tfsmonitor = EVIL\n")
_git_case("git-fsmonitor-global", "a hostile ~/.gitconfig (HOME is the workspace) sets core.fsmonitor",
          "[core]\n\tfsmonitor = EVIL\n", home=True)
_git_case("git-diff-external", "diff.external names a script", "[diff]\n\texternal = EVIL\n")
_git_case("git-textconv", ".gitattributes gives *.c a diff driver whose textconv is a script",
          "[diff \"evil\"]\n\ttextconv = EVIL\n", "*.c diff=evil\n")
_git_case("git-diff-driver-command", ".gitattributes gives *.c a diff driver whose command is a script",
          "[diff \"evil\"]\n\tcommand = EVIL\n", "*.c diff=evil\n")
_git_case("git-filter-clean", ".gitattributes gives *.c a clean filter (git runs it on a changed file)",
          "[filter \"evil\"]\n\tclean = EVIL\n\tsmudge = EVIL\n", "*.c filter=evil\n")
_git_case("git-filter-process", ".gitattributes gives *.c a long-running filter process",
          "[filter \"evil\"]\n\tprocess = EVIL\n\trequired = true\n", "*.c filter=evil\n")
_git_case("git-pager-and-hooks", "core.pager, core.hooksPath and an alias point at a script",
          "[core]\n\tpager = EVIL\n\thooksPath = hooks\n[alias]\n\tdiff = !EVIL\n")


@case("git-include-path", "exec", "the repository config includes another file that sets core.fsmonitor",
      args=("--diff", "HEAD"),
      exit=(0, 1), no_writes=True)
def _(s: Sandbox) -> None:
    s.payload("evil.sh")
    s.repo()
    s.write(".git/hostile.gitconfig", f"[core]\n\tfsmonitor = {s.tree / 'evil.sh'}\n")
    s.git_config("[include]\n\tpath = hostile.gitconfig\n")


@case("git-index-not-written", "write", "--diff on a tree with a stale index: git must not rewrite .git/index",
      args=("--diff", "HEAD"), exit=(0, 1), no_writes=True)
def _(s: Sandbox) -> None:
    s.repo()


# -- files written or loaded through the compile database ------------------------------------


def _db_case(name: str, what: str, flags: Callable[[Sandbox], list[str]] | list[str], group: str = "write",
             **kw: object) -> None:
    def build(s: Sandbox) -> None:
        s.compile_db(flags(s) if callable(flags) else [f.replace("MARK", str(s.mark)) for f in flags])
    CASES.append(Case(name, group, what, build, no_writes=True, **kw))  # type: ignore[arg-type]


_db_case("db-MJ", "-MJ FILE writes a compilation database fragment", ["-MJ", "MARK/mj.json"])
_db_case("db-MJ-joined", "-MJFILE, joined", ["-MJMARK/mj.json"])
_db_case("db-ftime-trace", "-ftime-trace writes a trace next to the output", ["-ftime-trace"])
_db_case("db-ftime-trace-path", "-ftime-trace=FILE", ["-ftime-trace=MARK/trace.json", "-ftime-trace-granularity=0"])
_db_case("db-modules-cache", "-fmodules with -fmodules-cache-path=DIR builds modules there",
         ["-fmodules", "-fimplicit-module-maps", "-fmodules-cache-path=MARK/modules"])
_db_case("db-modules-default-cache", "-fmodules alone writes the user's module cache",
         ["-fmodules", "-fimplicit-module-maps"])
_db_case("db-dependency-file-wp", "-Wp,-MD,FILE writes a dependency file through the preprocessor",
         ["-Wp,-MD,MARK/deps.d"])
_db_case("db-dependency-file-xclang", "-Xclang -dependency-file -Xclang FILE",
         ["-Xclang", "-dependency-file", "-Xclang", "MARK/deps.d", "-Xclang", "-MT", "-Xclang", "x"])
_db_case("db-MD-MF", "-MD -MF FILE (dropped before; must stay dropped)", ["-MD", "-MF", "MARK/x.d"])
_db_case("db-output", "-o FILE (dropped before; must stay dropped)", ["-o", "MARK/x.o"])
_db_case("db-serialize-diagnostics", "--serialize-diagnostics FILE", ["--serialize-diagnostics", "MARK/x.dia"])
_db_case("db-save-temps", "-save-temps=obj writes preprocessed files", ["-save-temps=obj"])
_db_case("db-mllvm-output", "-mllvm options that write files", ["-mllvm", "-info-output-file=MARK/info.txt",
                                                                 "-mllvm", "-stats"])
_db_case("db-emit-ast", "-emit-ast writes an AST file", ["-emit-ast"])
_db_case("db-crash-dir", "-fcrash-diagnostics-dir=DIR", ["-fcrash-diagnostics-dir=MARK/crash"])
_db_case("db-proc-stat-report", "-fproc-stat-report=FILE", ["-fproc-stat-report=MARK/stat.csv"])


def _plugin_flags(shape: Callable[[str], list[str]]) -> Callable[[Sandbox], list[str]]:
    def flags(s: Sandbox) -> list[str]:
        lib = s.plugin()
        return shape(str(lib or (s.outside / "missing.so")))
    return flags


_db_case("db-fplugin", "-fplugin=LIB (held on 07c128e)", _plugin_flags(lambda lib: [f"-fplugin={lib}"]), "exec")
_db_case("db-fpass-plugin", "-fpass-plugin=LIB (held)", _plugin_flags(lambda lib: [f"-fpass-plugin={lib}"]), "exec")
_db_case("db-xclang-load", "-Xclang -load -Xclang LIB (held)",
         _plugin_flags(lambda lib: ["-Xclang", "-load", "-Xclang", lib]), "exec")
_db_case("db-xclang-plugin", "-Xclang -load LIB -Xclang -add-plugin (held)",
         _plugin_flags(lambda lib: ["-Xclang", "-load", "-Xclang", lib, "-Xclang", "-add-plugin", "-Xclang", "x"]),
         "exec")


def _rsp_outside(s: Sandbox) -> list[str]:
    lib = s.plugin() or (s.outside / "missing.so")
    s.write("flags.rsp", f"-Xclang -load -Xclang {lib} -MJ {s.mark}/rsp.json\n", s.outside)
    return [f"@{s.outside / 'flags.rsp'}"]


def _rsp_inside(s: Sandbox) -> list[str]:
    lib = s.plugin() or (s.outside / "missing.so")
    s.write("build/flags.rsp", f"-DFROM_RSP=1 -MJ {s.mark}/rsp.json -fplugin={lib}\n")
    return ["@build/flags.rsp"]


def _clang_config(s: Sandbox) -> list[str]:
    lib = s.plugin() or (s.outside / "missing.so")
    s.write("evil.cfg", f"-fplugin={lib}\n-MJ {s.mark}/cfg.json\n")
    return [f"--config={s.tree / 'evil.cfg'}"]


_db_case("db-response-file-outside", "@FILE outside the tree naming a plug-in and -MJ", _rsp_outside, "exec")
_db_case("db-response-file-inside", "@FILE inside the tree naming -MJ and a plug-in", _rsp_inside, "exec")
_db_case("db-clang-config", "--config=FILE naming a plug-in and -MJ (held)", _clang_config, "exec")


@case("db-shell-syntax", "exec", "a `command` with $(...), backticks and ; (held: never run by a shell)", no_writes=True)
def _(s: Sandbox) -> None:
    m = s.mark
    s.write("compile_commands.json", json.dumps([{"directory": str(s.tree), "file": "good.c",
                                                   "command": f"cc $(touch {m}/a) `touch {m}/b` -c good.c; touch {m}/c"}]))


@case("db-script-compiler", "exec", "the compiler of every entry is a script in the tree (held)", no_writes=True)
def _(s: Sandbox) -> None:
    s.payload("evil-cc")
    s.compile_db(["-DX=1"], compiler=str(s.tree / "evil-cc"))


@case("db-deep-json", "crash", "a compile database nested 100 000 levels deep", exit=(1,))
def _(s: Sandbox) -> None:
    s.write("compile_commands.json", "[" * 100000 + "]" * 100000)


@case("db-is-a-fifo", "stall", "compile-commands in pyproject.toml names a FIFO", bound=40, exit=(1, 2))
def _(s: Sandbox) -> None:
    s.fifo("cc.json")
    s.write("pyproject.toml", '[tool.ortlint]\ncompile-commands = "cc.json"\ntime-limit = 5\n')


@case("db-is-dev-zero", "crash", "compile-commands in pyproject.toml names a link to /dev/zero", bound=40,
      exit=(1, 2))
def _(s: Sandbox) -> None:
    os.symlink("/dev/zero", s.tree / "cc.json")
    s.write("pyproject.toml", '[tool.ortlint]\ncompile-commands = "cc.json"\ntime-limit = 5\n')


@case("db-huge-sparse", "crash", "a 4 GB (sparse) compile_commands.json", bound=40, exit=(1, 2))
def _(s: Sandbox) -> None:
    s.sparse("compile_commands.json", 4 << 30)


# -- forged output ---------------------------------------------------------------------------

FORGED = "fake.c:1:1: ORT001 leak: forged"


def _no_forged_line(_s: Sandbox, out: Outcome) -> list[str]:
    lines = out.stdout.decode("utf-8", "replace").splitlines()
    bad = [line for line in lines if line.startswith("fake.c:1:1:") or line.startswith("::error file=fake.c")]
    return [f"forged line in the output: {bad[0]!r}"] if bad else []


def _no_controls(_s: Sandbox, out: Outcome) -> list[str]:
    text = out.stdout.decode("utf-8", "replace")
    bad = sorted({c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0
                  or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"})
    return [f"raw control characters in the output: {[hex(ord(c)) for c in bad]}"] if bad else []


def _evil_leak(s: Sandbox, name: str | bytes) -> None:
    folder = os.fsencode(s.tree)
    raw = name if isinstance(name, bytes) else name.encode()
    with open(os.path.join(folder, raw), "wb") as fh:
        fh.write(LEAK_C.encode())


@case("newline-in-file-name-text", "output", "a file named 'x.c\\nfake.c:1:1: ORT001 leak: forged.c'", fmt="text",
      check=lambda s, o: _no_forged_line(s, o) + _no_controls(s, o))
def _(s: Sandbox) -> None:
    _evil_leak(s, "x.c\n" + FORGED + ".c")


@case("newline-in-file-name-github", "output", "the same file name, GitHub annotations", fmt="github",
      check=lambda s, o: _no_forged_line(s, o))
def _(s: Sandbox) -> None:
    _evil_leak(s, "x.c\n::error file=fake.c,line=1::forged.c")


@case("carriage-return-in-file-name", "output", "a file name with \\r that overwrites its own line", fmt="text",
      check=_no_controls)
def _(s: Sandbox) -> None:
    _evil_leak(s, "x.c\r" + FORGED + ".c")


@case("escape-in-file-name", "output", "a file name with a terminal escape sequence", fmt="text", check=_no_controls)
def _(s: Sandbox) -> None:
    _evil_leak(s, "x\x1b]0;pwned\x07\x1b[2J.c")


@case("escape-in-source", "output", "raw ESC/BEL bytes in a string literal the trace quotes", fmt="text",
      check=_no_controls)
def _(s: Sandbox) -> None:
    s.write("esc.c", "#include <stdlib.h>\n#include <string.h>\nvoid esc(const char *s) {\n  char *p = malloc(4);\n"
                     "  if (strcmp(s, \"\x1b]0;pwned\x07\x1b[2J\x9b31m\") == 0)\n    return;\n  free(p);\n}\n")


@case("bidi-in-source", "output", "right-to-left override characters in a quoted condition", fmt="text",
      check=_no_controls)
def _(s: Sandbox) -> None:
    s.write("bidi.c", "#include <stdlib.h>\n#include <string.h>\nvoid bidi(const char *s) {\n  char *p = malloc(4);\n"
                      "  if (strcmp(s, \"\u202eevil\u2066\") == 0)\n    return;\n  free(p);\n}\n")


@case("c1-control-in-file-name", "output", "a file name with U+009B (CSI for some terminals)", fmt="text",
      check=_no_controls)
def _(s: Sandbox) -> None:
    _evil_leak(s, "x\u009b2J.c")


def _lossless(expected: bytes) -> Callable[[Sandbox, Outcome], list[str]]:
    def check(s: Sandbox, out: Outcome) -> list[str]:
        doc = out.json()
        if doc is None:
            return ["the report is not valid UTF-8 JSON"]
        names = [os.fsencode(f["path"]) for f in doc.get("findings", [])]
        return [] if any(n.endswith(expected) for n in names) else [f"no finding whose path is {expected!r}: {names}"]
    return check


def _sarif_uri(expected: str) -> Callable[[Sandbox, Outcome], list[str]]:
    def check(s: Sandbox, out: Outcome) -> list[str]:
        doc = out.json()
        if doc is None:
            return ["the SARIF log is not valid UTF-8 JSON"]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]]
        return [] if expected in uris else [f"no result at URI {expected!r}: {uris}"]
    return check


@case("non-utf8-file-name-json", "output", "a file name that is not UTF-8 (b'caf\\xe9.c'), JSON report",
      check=_lossless(b"caf\xe9.c"))
def _(s: Sandbox) -> None:
    _evil_leak(s, b"caf\xe9.c")


@case("non-utf8-file-name-sarif", "output", "the same file name, SARIF: a percent-encoded URI", fmt="sarif",
      check=_sarif_uri("caf%E9.c"))
def _(s: Sandbox) -> None:
    _evil_leak(s, b"caf\xe9.c")


@case("non-utf8-file-name-text", "output", "the same file name, text on a UTF-8 terminal", fmt="text",
      check=_no_controls)
def _(s: Sandbox) -> None:
    _evil_leak(s, b"caf\xe9.c")


@case("non-utf8-file-name-github", "output", "the same file name, GitHub annotations", fmt="github")
def _(s: Sandbox) -> None:
    _evil_leak(s, b"caf\xe9.c")


@case("non-utf8-file-name-baseline", "output", "the same file name, --write-baseline", exit=(0,),
      args=("--write-baseline", "base.json"), fmt="text", neighbour=False)
def _(s: Sandbox) -> None:
    _evil_leak(s, b"caf\xe9.c")


@case("special-characters-in-sarif-uri", "output", "'a b#c?d%e.c': every reserved character percent-encoded",
      fmt="sarif", check=_sarif_uri("a%20b%23c%3Fd%25e.c"))
def _(s: Sandbox) -> None:
    _evil_leak(s, "a b#c?d%e.c")


@case("newline-in-file-name-json", "output", "a newline in a file name, JSON (held)",
      check=_lossless(b"x.c\nfake.c"))
def _(s: Sandbox) -> None:
    _evil_leak(s, "x.c\nfake.c")


# -- tracebacks ------------------------------------------------------------------------------


def _config_case(name: str, what: str, toml: str, error: tuple[str, ...] = ("pyproject.toml",), group: str = "config",
                 files: Callable[[Sandbox], None] = _nothing, **kw: object) -> None:
    def build(s: Sandbox) -> None:
        files(s)
        s.write("pyproject.toml", "[tool.ortlint]\n" + toml)
    kw.setdefault("exit", (2,))
    CASES.append(Case(name, group, what, build, neighbour=kw["exit"] != (2,), config_error=error, **kw))  # type: ignore


_config_case("deep-toml-config", "[tool.ortlint] with a value nested 100 000 arrays deep",
             "exclude = " + "[" * 100000 + "]" * 100000 + "\n", ("pyproject.toml", "deep"), "crash")
_config_case("deep-toml-inline-tables", "[tool.ortlint] with inline tables nested 20 000 deep",
             "extensions = " + "{a = " * 20000 + "1" + "}" * 20000 + "\n", ("pyproject.toml", "deep"), "crash")
_config_case("deep-toml-rules-file", "a rules file nested 100 000 arrays deep", 'rules = ["deep.toml"]\n',
             ("deep.toml", "deep"), "crash",
             files=lambda s: s.write("deep.toml", "x = " + "[" * 100000 + "]" * 100000 + "\n"))
_config_case("rules-file-dev-zero", "rules = a link to /dev/zero", 'rules = ["zero.toml"]\n',
             ("zero.toml", "not a regular file"), "crash", files=lambda s: os.symlink("/dev/zero", s.tree / "zero.toml"),
             bound=30)
_config_case("rules-file-fifo", "rules = a FIFO", 'rules = ["fifo.toml"]\n', ("fifo.toml", "not a regular file"),
             "stall", files=lambda s: s.fifo("fifo.toml"), bound=30)
_config_case("rules-file-huge", "rules = a 4 GB (sparse) file", 'rules = ["huge.toml"]\n', ("huge.toml", "large"),
             "crash", files=lambda s: s.sparse("huge.toml", 4 << 30), bound=30)
_config_case("baseline-dev-zero", "baseline = a link to /dev/zero", 'baseline = "zero.json"\n',
             ("zero.json", "not a regular file"), "crash", files=lambda s: os.symlink("/dev/zero", s.tree / "zero.json"),
             bound=30)
_config_case("baseline-fifo", "baseline = a FIFO", 'baseline = "fifo.json"\n', ("fifo.json", "not a regular file"),
             "stall", files=lambda s: s.fifo("fifo.json"), bound=30)
_config_case("baseline-huge", "baseline = a 4 GB (sparse) file", 'baseline = "huge.json"\n', ("huge.json", "large"),
             "crash", files=lambda s: s.sparse("huge.json", 4 << 30), bound=30)
_config_case("baseline-deep-json", "baseline = JSON nested 100 000 deep", 'baseline = "deep.json"\n',
             ("deep.json",), "crash", files=lambda s: s.write("deep.json", "[" * 100000 + "]" * 100000))


@case("config-not-utf8", "crash", "a pyproject.toml that is not UTF-8 (held)", exit=(2,), neighbour=False,
      config_error=("pyproject.toml", "UTF-8"))
def _(s: Sandbox) -> None:
    s.write("pyproject.toml", b"[tool.ortlint]\n# caf\xe9\n")


@case("pyproject-is-huge", "crash", "a 4 GB (sparse) pyproject.toml: not read whole", bound=30, exit=(1, 2))
def _(s: Sandbox) -> None:
    s.sparse("pyproject.toml", 4 << 30)


@case("pyproject-is-fifo", "stall", "pyproject.toml is a FIFO (held: ignored)", bound=30)
def _(s: Sandbox) -> None:
    s.fifo("pyproject.toml")


@case("ortlint-toml-is-dev-zero", "crash", ".ortlint.toml is a link to /dev/zero (held: ignored)", bound=30)
def _(s: Sandbox) -> None:
    os.symlink("/dev/zero", s.tree / ".ortlint.toml")


for _key in ("rules", "paths", "include-dirs", "exclude"):
    _config_case(f"nul-in-{_key}", f"{_key} = a string with a NUL character", f'{_key} = ["a\\u0000b"]\n',
                 ("pyproject.toml", _key))
for _key in ("cache-dir", "baseline", "compile-commands"):
    _config_case(f"nul-in-{_key}", f"{_key} = a string with a NUL character", f'{_key} = "a\\u0000b"\n',
                 ("pyproject.toml", _key))


# -- stalls and lost files -------------------------------------------------------------------


def _stall_case(name: str, what: str, build: Callable[[Sandbox], None], extra: tuple = (), **kw: object) -> None:
    def check(s: Sandbox, out: Outcome) -> list[str]:
        found = _findings(out)
        return [f"a neighbour's finding {f} is lost" for f in extra if f not in found]
    kw.setdefault("bound", 30)
    CASES.append(Case(name, "stall", what, build, args=("--time-limit", "10"), check=check, **kw))  # type: ignore


_stall_case("fifo-c", "a FIFO named x.c", lambda s: s.fifo("x.c"))
_stall_case("fifo-h", "a FIFO named x.h", lambda s: s.fifo("x.h"))
_stall_case("fifo-go", "a FIFO named y.go next to a Go file with a leak",
            lambda s: (s.write("leak.go", LEAK_GO), s.fifo("y.go")), (("leak.go", 6, "ORT020"),))
_stall_case("fifo-java", "a FIFO named Y.java next to a Java file with a leak",
            lambda s: (s.write("Leak.java", LEAK_JAVA), s.fifo("Y.java")), (("Leak.java", 5, "ORT010"),))
_stall_case("fifo-header", "a FIFO included as a header by a file with a leak",
            lambda s: (s.fifo("fifo.h"), s.write("inc.c", '#include "fifo.h"\n' + LEAK_C)), (("inc.c", 4, "ORT001"),))
_stall_case("fifo-header-in-include-dirs", "a FIFO header found through include-dirs",
            lambda s: (s.fifo("inc/fifo.h"), s.write("inc2.c", '#include "fifo.h"\n' + LEAK_C),
                       s.write("pyproject.toml", '[tool.ortlint]\ninclude-dirs = ["inc"]\n')), (("inc2.c", 4, "ORT001"),))
_stall_case("dev-zero-header", "a header that is a link to /dev/zero",
            lambda s: (os.symlink("/dev/zero", s.tree / "zero.h"), s.write("inc.c", '#include "zero.h"\n' + LEAK_C)),
            (("inc.c", 4, "ORT001"),))
_stall_case("dev-zero-source", "x.c is a link to /dev/zero", lambda s: os.symlink("/dev/zero", s.tree / "x.c"))
_stall_case("dev-urandom-go", "x.go is a link to /dev/urandom next to a Go leak",
            lambda s: (s.write("leak.go", LEAK_GO), os.symlink("/dev/urandom", s.tree / "x.go")),
            (("leak.go", 6, "ORT020"),))
_stall_case("dev-zero-java", "X.java is a link to /dev/zero next to a Java leak",
            lambda s: (s.write("Leak.java", LEAK_JAVA), os.symlink("/dev/zero", s.tree / "X.java")),
            (("Leak.java", 5, "ORT010"),))
_stall_case("symlink-to-root", "a link to / inside the tree", lambda s: os.symlink("/", s.tree / "root"))
_stall_case("symlink-to-proc", "a link to /proc inside the tree", lambda s: os.symlink("/proc", s.tree / "proc"))
_stall_case("symlink-to-dev", "a link to /dev inside the tree", lambda s: os.symlink("/dev", s.tree / "dev"))
_stall_case("symlink-loop", "links that loop (a -> ., b/up -> ..)",
            lambda s: (os.symlink(".", s.tree / "a"), (s.tree / "b").mkdir(), os.symlink("..", s.tree / "b" / "up")))


def _fan_out(s: Sandbox) -> None:
    (s.tree / "d").mkdir()
    for i in range(12):
        os.symlink("..", s.tree / "d" / f"l{i}")


_stall_case("symlink-fan-out", "a folder with 12 links to its parent (12^n paths without loop cutting)", _fan_out)


def _outside_leak(s: Sandbox) -> None:
    s.write("secret/leak.c", LEAK_C, s.outside)
    os.symlink(s.outside / "secret", s.tree / "linked")


def _not_followed(_s: Sandbox, out: Outcome) -> list[str]:
    paths = [f[0] for f in _findings(out)]
    return ["a file behind a link leaving the tree was analyzed"] if "leak.c" in paths else []


def _followed(_s: Sandbox, out: Outcome) -> list[str]:
    return [] if ("leak.c", 3, "ORT001") in _findings(out) else ["--follow-symlinks did not follow the link"]


CASES.append(Case("symlink-leaving-tree", "stall", "a link to a folder outside the tree: not followed",
                  _outside_leak, check=_not_followed))
CASES.append(Case("symlink-leaving-tree-followed", "stall", "the same link with --follow-symlinks: followed",
                  _outside_leak, args=("--follow-symlinks",), check=_followed))
CASES.append(Case("symlinked-file-leaving-tree", "stall", "a link to a source file outside the tree: not followed",
                  lambda s: (s.write("leak.c", LEAK_C, s.outside), os.symlink(s.outside / "leak.c", s.tree / "l.c")),
                  check=lambda s, o: ["a file behind a link leaving the tree was analyzed"]
                  if ("l.c", 3, "ORT001") in _findings(o) else []))


@case("socket-c", "stall", "a UNIX socket named s.c", bound=30)
def _(s: Sandbox) -> None:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(s.tree / "s.c"))
    finally:
        sock.close()


@case("fifo-given-explicitly", "stall", "a FIFO named on the command line", paths=("good.c", "x.c"), bound=30)
def _(s: Sandbox) -> None:
    s.fifo("x.c")


# -- configuration ---------------------------------------------------------------------------

_config_case("time-limit-nan", "time-limit = nan (turned the watchdog off)", "time-limit = nan\n",
             ("pyproject.toml", "time-limit"))
_config_case("time-limit-inf", "time-limit = inf", "time-limit = inf\n", ("pyproject.toml", "time-limit"))
_config_case("time-limit-huge", "time-limit = 1e300", "time-limit = 1e300\n", ("pyproject.toml", "time-limit"))
_config_case("memory-limit-huge", "memory-limit = 9223372036854775807", "memory-limit = 9223372036854775807\n",
             ("pyproject.toml", "memory-limit"))
_config_case("jobs-huge", "jobs = 9223372036854775807", "jobs = 9223372036854775807\n", ("pyproject.toml", "jobs"))
_config_case("extension-empty", 'extensions = { "" = "c" }', 'extensions = { "" = "c" }\n',
             ("pyproject.toml", "extensions"))
_config_case("extension-dot", 'extensions = { "." = "c" }', 'extensions = { "." = "c" }\n',
             ("pyproject.toml", "extensions"))
_config_case("extension-separator", 'extensions = { "./x" = "c" }', 'extensions = { "./x" = "c" }\n',
             ("pyproject.toml", "extensions"))
_config_case("extension-wildcard", 'extensions = { ".*" = "c" }', 'extensions = { ".*" = "c" }\n',
             ("pyproject.toml", "extensions"))
_config_case("jobs-negative", "jobs = -1 (held)", "jobs = -1\n", ("pyproject.toml", "jobs"))
_config_case("select-unknown", "select = ['NOPE'] (held)", 'select = ["NOPE"]\n', ("pyproject.toml", "select"))
_config_case("unknown-key", "a misspelt key (held)", "selct = []\n", ("pyproject.toml", "selct"))
_config_case("exclude-not-strings", "exclude = [1] (held)", "exclude = [1]\n", ("pyproject.toml", "exclude"))
_config_case("time-limit-bool", "time-limit = true (held)", "time-limit = true\n", ("pyproject.toml", "time-limit"))
_config_case("memory-limit-small", "memory-limit = 1 (held)", "memory-limit = 1\n", ("pyproject.toml", "memory-limit"))


def _cli_config(name: str, what: str, args: tuple[str, ...], words: tuple[str, ...]) -> None:
    CASES.append(Case(name, "config", what, _nothing, args=args, exit=(2,), neighbour=False, config_error=words))


_cli_config("cli-time-limit-nan", "--time-limit nan", ("--time-limit", "nan"), ("--time-limit",))
_cli_config("cli-time-limit-inf", "--time-limit inf", ("--time-limit", "inf"), ("--time-limit",))
_cli_config("cli-memory-limit-huge", "--memory-limit 9223372036854775807", ("--memory-limit", "9223372036854775807"),
            ("--memory-limit",))
_cli_config("cli-extension-dot", "--extension .=c", ("--extension", ".=c"), ("--extension",))


def _workers_capped(s: Sandbox, out: Outcome) -> list[str]:
    try:
        stats = json.loads((s.base / "stats.json").read_text())
    except (OSError, ValueError):
        return ["no ORTLINT_STATS file"]
    cap = min(os.cpu_count() or 1, 21)
    return [] if stats.get("workers", 0) <= cap else [f"{stats.get('workers')} workers for 21 files on {cap} cores"]


@case("jobs-64-for-21-files", "config", "jobs = 64 in a committed pyproject.toml: capped at the cores and files",
      check=_workers_capped, exit=(1,))
def _(s: Sandbox) -> None:
    body = "".join(f"int filler{i}(int x) {{ return x + {i}; }}\n" for i in range(400))
    for i in range(20):
        s.write(f"f{i}.c", body.replace("filler", f"f{i}_"))
    s.write("pyproject.toml", "[tool.ortlint]\njobs = 64\n")
    s.env["ORTLINT_STATS"] = str(s.base / "stats.json")


# -- memory and size ------------------------------------------------------------------------


def _peak_below(mb: int) -> Callable[[Sandbox, Outcome], list[str]]:
    def check(s: Sandbox, out: Outcome) -> list[str]:
        peak = getattr(out, "peak_mb", None)
        return [] if peak is None or peak <= mb else [f"a process of the run reached {peak} MB (limit {mb} MB)"]
    return check


def _switch_c(cases: int) -> str:
    body = "".join(f"  case {i}:\n" for i in range(cases))
    return ("#include <stdlib.h>\nvoid sw(int x) {\n  char *p = malloc(4);\n  switch (x) {\n" + body
            + "    break;\n  }\n  free(p);\n}\n")


def _switch_go(cases: int) -> str:
    body = "".join(f"\tcase {i}:\n\t\tn++\n" for i in range(cases))
    return ("package app\n\nimport ort \"github.com/yalue/onnxruntime_go\"\n\nfunc sw(x int) int {\n"
            "\topts, err := ort.NewSessionOptions()\n\tif err != nil {\n\t\treturn 0\n\t}\n\tn := 0\n"
            "\tswitch x {\n" + body + "\t}\n\topts.Destroy()\n\treturn n\n}\n")


@case("memory-limit-per-worker", "limits", "two functions that each blow the memory limit: no worker keeps growing",
      args=("--memory-limit", "300", "--jobs", "1", "--time-limit", "60"), exit=(1, 2), slow=True, bound=300,
      check=_peak_below(300 + 250))
def _(s: Sandbox) -> None:
    s.write("sw1.c", _switch_c(6000))
    s.write("sw2.c", _switch_c(6000).replace("sw(", "sw2("))


@case("switch-6000-c-cases", "limits", "6 000 empty C cases while a buffer is held: linear memory", slow=True,
      args=("--time-limit", "120"), bound=300, check=_peak_below(1024))
def _(s: Sandbox) -> None:
    s.write("sw.c", _switch_c(6000))


@case("switch-8000-go-cases", "limits", "8 000 Go cases while a session option is held: linear memory", slow=True,
      args=("--time-limit", "120"), bound=300, check=_peak_below(1024))
def _(s: Sandbox) -> None:
    s.write("sw.go", _switch_go(8000))


@case("go-5mb-defers", "limits", "a 5 MB generated Go file with many defers is analyzed, not lost", slow=True,
      args=("--time-limit", "60"), bound=300, check=lambda s, o: [] if ("gen.go", 6, "ORT020") in _findings(o)
      else ["gen.go's leak is not reported"])
def _(s: Sandbox) -> None:
    funcs = []
    i = 0
    size = 0
    head = LEAK_GO.replace("func leak()", "func leak0()")
    while size < 5 << 20:
        f = (f"func gen{i}(a []int) int {{\n\tn := 0\n"
             + "".join(f"\tdefer func() {{ n += a[{j}] }}()\n" for j in range(40)) + "\treturn n\n}\n\n")
        funcs.append(f)
        size += len(f)
        i += 1
    s.write("gen.go", head + "\n" + "".join(funcs))


@case("nested-iife-8000", "limits", "8 000 nested immediately-invoked C++ lambdas: not quadratic", slow=True,
      args=("--time-limit", "60"), bound=300, check=_peak_below(1024))
def _(s: Sandbox) -> None:
    depth = 8000
    s.write("iife.cpp", "int f(int x) {\n  return " + "[&]() { return " * depth + "x" + "; }()" * depth + ";\n}\n")


@case("huge-sparse-source", "crash", "a 4 GB (sparse) source file (held: skipped as too large)", bound=60)
def _(s: Sandbox) -> None:
    s.sparse("huge.c", 4 << 30)


# -- everything at once --------------------------------------------------------------------


def _combined(s: Sandbox) -> None:
    """A planted pickle, ./clang on PATH, a hostile git configuration and a hostile compile database."""
    _plant_pickles(s, ".ortlint_cache")
    _compilers(s)
    s.payload("evil.sh")
    s.write(".gitattributes", "*.c diff=evil filter=evil\n")
    lib = s.plugin() or (s.outside / "missing.so")
    s.write("flags.rsp", f"-fplugin={lib} -MJ {s.mark}/rsp.json\n", s.outside)
    s.compile_db(["-MJ", f"{s.mark}/mj.json", "-ftime-trace", f"-fmodules-cache-path={s.mark}/mc", "-fmodules",
                  f"-fplugin={lib}", "-Xclang", "-load", "-Xclang", str(lib), f"@{s.outside / 'flags.rsp'}",
                  f"-Wp,-MD,{s.mark}/d.d"])
    s.repo()
    evil = s.tree / "evil.sh"
    s.git_config(f"[core]\n\tfsmonitor = {evil}\n\tpager = {evil}\n[diff]\n\texternal = {evil}\n"
                 f"[diff \"evil\"]\n\ttextconv = {evil}\n\tcommand = {evil}\n"
                 f"[filter \"evil\"]\n\tclean = {evil}\n\tsmudge = {evil}\n\tprocess = {evil}\n")
    s.write(".gitconfig", f"[core]\n\tfsmonitor = {evil}\n", s.home)
    s.env["PATH"] = ":.:" + s.env["PATH"]


CASES.append(Case("combined", "exec", "pickle + ./clang on PATH + hostile git config + hostile compile database, "
                  "--diff HEAD, SARIF and the compile database: nothing runs, nothing is written but the output",
                  _combined, args=("--diff", "HEAD", "--compile-commands", "compile_commands.json"), fmt="sarif",
                  exit=(0, 1), cache=True, no_writes=True))


# ----------------------------------------------------------------------------- running


def run_case(c: Case, python: str, pythonpath: str, shared: Path | None = None, verbose: bool = False) -> list[str]:
    """Build the case's tree, run ortlint on it, return what went wrong (empty: the case holds)."""
    with tempfile.TemporaryDirectory(prefix=f"hostile-{c.name}-") as tmp:
        s = Sandbox(Path(tmp), python, pythonpath, shared=shared)
        s.write("good.c", LEAK_C)
        c.build(s)
        skip = {f"out.{c.fmt}"}
        before = _snapshot(s.tree, skip) if c.no_writes else {}
        out = _run(s, c)
        problems = _judge(s, c, out, before, skip)
        if verbose:
            print(f"--- {c.name}: exit {out.code}, {out.seconds:.1f} s\n{out.text[-3000:]}")
        _unblock(s)
        return problems


def _run(s: Sandbox, c: Case) -> Outcome:
    started = time.monotonic()
    usage = s.base / "rusage"
    proc = subprocess.Popen([s.python, "-c", _WRAPPER, str(usage), s.python, "-m", "ortlint", *c.command()],
                            cwd=s.tree, env=s.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=c.bound)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        stdout, stderr = proc.communicate()
        code = None
    seconds = time.monotonic() - started
    report = None
    if c.fmt in ("json", "sarif"):
        try:
            report = (s.tree / f"out.{c.fmt}").read_bytes()
        except OSError:
            report = None
    out = Outcome(code, stdout, stderr, seconds, report)
    try:
        out.peak_mb = int(usage.read_text()) // 1024  # type: ignore[attr-defined]
    except (OSError, ValueError):
        out.peak_mb = None  # type: ignore[attr-defined]
    return out


# Runs ortlint and records the peak resident size (KB on Linux) of the largest process of its
# tree, from the kernel's record of waited-for descendants.
_WRAPPER = ("import resource, subprocess, sys\ncode = subprocess.call(sys.argv[2:])\n"
            "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
            "sys.exit(code if code >= 0 else 128 - code)\n")


def _judge(s: Sandbox, c: Case, out: Outcome, before: dict, skip: set[str]) -> list[str]:
    problems = []
    if out.code is None:
        return [f"stalled: still running after {c.bound:g} s"]
    if "Traceback (most recent call last)" in out.text:
        problems.append("traceback: " + out.text.strip().splitlines()[-1][:200])
    if out.code not in c.exit:
        last = out.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        problems.append(f"exit {out.code}, expected {' or '.join(map(str, c.exit))} ({last[0][:200]})")
    marks = sorted(p.name for p in s.mark.iterdir())
    if marks:
        problems.append(f"a payload ran: mark/ holds {marks}")
    if c.neighbour and out.code in (0, 1):
        if c.fmt in ("json",):
            if GOOD not in _findings(out):
                problems.append("the neighbour's finding (good.c:3 ORT001) is lost")
        elif "good.c:3:13: ORT001" not in out.stdout.decode("utf-8", "replace") and c.fmt == "text":
            problems.append("the neighbour's finding (good.c:3 ORT001) is lost")
        elif c.fmt == "sarif" and out.json() is None:
            problems.append("the SARIF log is not valid JSON")
    if c.config_error and out.code == 2:
        message = out.stderr.decode("utf-8", "replace")
        missing = [w for w in c.config_error if w.lower() not in message.lower()]
        if missing:
            problems.append(f"the error message does not name {missing}: {message.strip()[:200]!r}")
    if c.no_writes:
        after = _snapshot(s.tree, skip)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        if changed:
            problems.append(f"files written or changed in the tree: {changed[:6]}")
    if c.check is not None and out.code in (0, 1, 2):
        problems.extend(c.check(s, out))
    return problems


def _unblock(s: Sandbox) -> None:
    """Remove FIFOs before the temporary folder goes (nothing may block the clean-up)."""
    for dirpath, _dirs, files in os.walk(s.base):
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                if stat.S_ISFIFO(os.lstat(path).st_mode):
                    os.unlink(path)
            except OSError:
                pass


def selected(names: list[str] | None = None, fast: bool = False) -> list[Case]:
    return [c for c in CASES if (not fast or not c.slow) and (not names or any(n in c.name for n in names))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-k", dest="names", action="append", help="only cases whose name contains this (repeatable)")
    ap.add_argument("--fast", action="store_true", help="leave out the slow cases (the test suite's form)")
    ap.add_argument("--ortlint-root", default=str(ROOT), help="the checkout whose ortlint is run (PYTHONPATH)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--json", help="write every case's result to this file")
    args = ap.parse_args(argv)
    cases = selected(args.names, args.fast)
    if args.list:
        for c in cases:
            print(f"{c.name:36} {c.group:7} exit {'/'.join(map(str, c.exit)):4} {'slow ' if c.slow else ''}{c.what}")
        return 0
    results = {}
    with tempfile.TemporaryDirectory(prefix="hostile-shared-") as shared:
        for c in cases:
            started = time.monotonic()
            problems = run_case(c, sys.executable, args.ortlint_root, Path(shared), args.verbose)
            results[c.name] = problems
            status = "ok" if not problems else "NOT RIGHT: " + "; ".join(problems)
            if c.pending:
                status += f"  [pending: {c.pending}]"
            print(f"{c.name:36} {time.monotonic() - started:5.1f}s  {status}", flush=True)
    bad = [n for n, p in results.items() if p]
    print(f"\n{len(cases)} hostile cases, {len(cases) - len(bad)} right, {len(bad)} not right")
    by_group: dict[str, list[int]] = {}
    for c in cases:
        by_group.setdefault(c.group, [0, 0])[0 if not results[c.name] else 1] += 1
    print("by group: " + ", ".join(f"{g} {ok}/{ok + nok}" for g, (ok, nok) in sorted(by_group.items())))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, sort_keys=True))
    return min(len(bad), 100)


if __name__ == "__main__":
    sys.exit(main())

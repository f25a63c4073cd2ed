"""The compiled modules (ortlint/_native) are the same code compiled: the same results, and a
build of an older source is never used."""
from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ortlint import _native

ROOT = Path(__file__).resolve().parent.parent


def test_a_build_is_used_only_for_the_source_it_was_built_from(tmp_path: Path) -> None:
    module = "ortlint.engine.example"
    source = tmp_path / "ortlint" / "engine" / "example.py"
    source.parent.mkdir(parents=True)
    source.write_text("X = 1\n")
    native_dir = tmp_path / "native"
    native_dir.mkdir()
    built = native_dir / (_native.native_stem(module, b"X = 1\n") + importlib.machinery.EXTENSION_SUFFIXES[0])
    built.write_bytes(b"")
    assert _native.compiled_file(module, str(tmp_path), str(native_dir)) == str(built)
    source.write_text("X = 2\n")  # edited after the build: the build is stale
    assert _native.compiled_file(module, str(tmp_path), str(native_dir)) is None


def test_every_compiled_module_exists_as_source() -> None:
    for module in _native.MODULES:
        assert Path(_native.source_file(module, str(ROOT))).is_file(), module


def _ortlint(*args: str, pure: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != _native.DISABLE_VARIABLE}
    if pure:
        env[_native.DISABLE_VARIABLE] = "1"
    return subprocess.run([sys.executable, "-m", "ortlint", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def _lint_json(pure: bool) -> str:
    result = _ortlint("--no-cache", "--isolated", "--format", "json", "-v", "--jobs", "1", "fixtures", pure=pure)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def test_compiled_and_plain_python_report_the_same() -> None:
    if _native.native_status().startswith("plain Python"):
        pytest.skip("no compiled modules built (no C compiler at install, or ORTLINT_PURE_PYTHON set)")
    assert "compiled:" in _ortlint("--version", pure=False).stdout
    assert "plain Python" in _ortlint("--version", pure=True).stdout
    compiled = _lint_json(pure=False)
    plain = _lint_json(pure=True)
    assert compiled == plain
    assert '"ORT001"' in compiled

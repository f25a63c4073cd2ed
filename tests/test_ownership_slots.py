"""Ownership that outlives one call: policy tables for guards and callbacks, and the
whole-program view of owning slots across files (engine/slots.py, engine/callbacks.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ortlint.api import lint
from ortlint.policy import PolicyError, load_policy

INCLUDE = Path(__file__).resolve().parent.parent / "fixtures" / "include"

HEADER = '#include "onnxruntime_c_api.h"\n'
STORE = HEADER + """
class Engine {
 public:
  void Load(const OrtApi *api, const OrtEnv *env, const char *p, const OrtSessionOptions *o) {
    api_ = api;
    OrtStatus *st = api->CreateSession(env, p, o, &session_);
    if (st != nullptr) api->ReleaseStatus(st);
  }
  ~Engine();
  const OrtApi *api_;
  OrtSession *session_ = nullptr;
};
"""
RELEASE = HEADER + """
#include "engine.h"
Engine::~Engine() { api_->ReleaseSession(session_); }
"""


def _policy_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "extra.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_guard_table_is_validated(tmp_path: Path) -> None:
    bad = _policy_file(tmp_path, '[[guard]]\ntype = "My::Status"\nok_when = ["IsOK"]\n')
    with pytest.raises(PolicyError, match="ok_when"):
        load_policy([bad])


def test_callback_table_is_validated(tmp_path: Path) -> None:
    bad = _policy_file(tmp_path, '[[callback]]\nstruct = "OrtAllocator"\nfields = ["Info"]\nresult = "leased"\n')
    with pytest.raises(PolicyError, match="result"):
        load_policy([bad])


def test_user_guard_and_callback_tables_load(tmp_path: Path) -> None:
    good = _policy_file(tmp_path, '[[guard]]\ntype = "My::Status"\nok_when_null = ["ok"]\nbool_is_ok = true\n\n'
                                  '[[callback]]\nstruct = "MyAlloc"\nfields = ["Describe"]\nresult = "borrowed"\n')
    policy = load_policy([good])
    assert policy.guards["My::Status"].test_of("ok") == "=="
    assert policy.guards["Ort::Status"].test_of("IsOK") == "=="
    assert [s.struct for s in policy.callbacks["Describe"]] == ["MyAlloc"]


def _engine_tree(tmp_path: Path, with_release: bool) -> Path:
    (tmp_path / "onnxruntime_c_api.h").write_text((INCLUDE / "onnxruntime_c_api.h").read_text(encoding="utf-8"))
    (tmp_path / "engine.h").write_text(STORE, encoding="utf-8")
    (tmp_path / "engine.cc").write_text(RELEASE if with_release else HEADER + '#include "engine.h"\n'
                                        "Engine::~Engine() {}\n", encoding="utf-8")
    return tmp_path


def test_member_released_in_another_file_is_not_reported(tmp_path: Path) -> None:
    report = lint([str(_engine_tree(tmp_path, with_release=True))])
    assert not [f for f in report.findings if f.rule == "ORT001"]


def test_member_no_file_releases_is_reported_once_with_the_destructor_named(tmp_path: Path) -> None:
    report = lint([str(_engine_tree(tmp_path, with_release=False))])
    leaks = [f for f in report.findings if f.rule == "ORT001"]
    assert len(leaks) == 1
    assert Path(leaks[0].path).name == "engine.h" and "~Engine() does not" in leaks[0].message

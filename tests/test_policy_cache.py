"""The policy kept between runs (orchestration/policy_cache.py): a hit is the policy the files
load to, any change of the rules or of ortlint's sources misses, a bad entry is a miss."""
from __future__ import annotations

from pathlib import Path

import pytest

from ortlint.orchestration import cache as cache_module
from ortlint.orchestration import policy_cache
from ortlint.policy import PolicyError, load_policy

RULES = '[[kind]]\nid = "my.Thing"\nlabel = "Thing"\n\n[[call]]\nname = "thing_open"\nacquire = { kind = "my.Thing", into = "return" }\n\n' \
        '[[call]]\nname = "thing_close"\nrelease = { kind = "my.Thing", arg = 0 }\n'


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "policy-cache"
    monkeypatch.setenv("ORTLINT_POLICY_CACHE", str(where))
    return where


def _rules(tmp_path: Path, text: str = RULES) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


def test_a_hit_is_the_policy_the_files_load_to(tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = _rules(tmp_path)
    first = policy_cache.load_policy_cached([rules])
    assert len(_entries(folder)) == 1
    monkeypatch.setattr(policy_cache, "load_policy", lambda *a, **k: pytest.fail("a hit must not load the files"))
    second = policy_cache.load_policy_cached([rules])
    assert second == first == load_policy([rules])
    assert second.lookup("plain", "thing_open") is not None


def test_a_changed_rules_file_misses(tmp_path: Path, folder: Path) -> None:
    rules = _rules(tmp_path)
    policy_cache.load_policy_cached([rules])
    rules.write_text(RULES.replace("thing_close", "thing_free"), encoding="utf-8")
    again = policy_cache.load_policy_cached([rules])
    assert again.lookup("plain", "thing_free") is not None and again.lookup("plain", "thing_close") is None
    assert len(_entries(folder)) == 2


def test_changed_sources_of_ortlint_miss(tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = _rules(tmp_path)
    policy_cache.load_policy_cached([rules])
    monkeypatch.setattr(cache_module, "code_digest", lambda: "othercode000")
    loads: list[object] = []
    real = policy_cache.load_policy
    monkeypatch.setattr(policy_cache, "load_policy", lambda *a, **k: loads.append(a) or real(*a, **k))
    policy_cache.load_policy_cached([rules])
    assert len(loads) == 1 and len(_entries(folder)) == 2


@pytest.mark.parametrize("damage", [
    lambda data: data[: len(data) // 2],                                    # cut short
    lambda data: data.replace(b"thing_open", b"thing_opeN"),               # body does not match its hash
    lambda data: b"not a header\n" + data.partition(b"\n")[2],            # no header
    lambda data: b"",                                                       # empty
    lambda data: b"\x80\x81\xff" * 100,                                     # not text
])
def test_a_corrupt_entry_is_a_miss_and_is_rewritten(tmp_path: Path, folder: Path, damage) -> None:
    rules = _rules(tmp_path)
    expected = policy_cache.load_policy_cached([rules])
    (entry,) = _entries(folder)
    entry.write_bytes(damage(entry.read_bytes()))
    assert policy_cache.load_policy_cached([rules]) == expected
    assert policy_cache.read_entry(entry) == expected  # written again


def test_an_entry_of_valid_hash_but_foreign_content_is_a_miss(tmp_path: Path, folder: Path) -> None:
    rules = _rules(tmp_path)
    expected = policy_cache.load_policy_cached([rules])
    (entry,) = _entries(folder)
    body = b'{"Finding": []}'
    entry.write_bytes(b'{"ortlint-policy": 1, "blake2b": "%s"}\n' % policy_cache._digest(body).encode() + body)
    assert policy_cache.read_entry(entry) is None
    assert policy_cache.load_policy_cached([rules]) == expected


def test_a_bad_policy_file_is_reported_as_before_and_never_stored(tmp_path: Path, folder: Path) -> None:
    rules = _rules(tmp_path, '[[kind]]\nid = "my.Thing"\nbogus = 1\n')
    with pytest.raises(PolicyError) as plain:
        load_policy([rules])
    with pytest.raises(PolicyError) as cached:
        policy_cache.load_policy_cached([rules])
    assert str(cached.value) == str(plain.value)
    with pytest.raises(PolicyError):
        policy_cache.load_policy_cached([tmp_path / "absent.toml"])
    assert _entries(folder) == []


def test_an_unwritable_folder_only_costs_the_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("ORTLINT_POLICY_CACHE", str(blocker / "below"))
    rules = _rules(tmp_path)
    assert policy_cache.load_policy_cached([rules]) == load_policy([rules])


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORTLINT_POLICY_CACHE", "0")
    monkeypatch.setattr(cache_module, "user_cache_root", lambda: str(tmp_path / "home-cache"))
    rules = _rules(tmp_path)
    assert policy_cache.load_policy_cached([rules]) == load_policy([rules])
    assert not (tmp_path / "home-cache").exists()


def test_the_default_folder_is_the_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORTLINT_POLICY_CACHE", raising=False)
    monkeypatch.setattr(cache_module, "user_cache_root", lambda: str(tmp_path / "home-cache"))
    assert policy_cache.cache_folder() == tmp_path / "home-cache" / "ortlint" / "policy"


def test_the_shipped_policy_round_trips(folder: Path) -> None:
    loaded = policy_cache.load_policy_cached()
    (entry,) = _entries(folder)
    assert policy_cache.read_entry(entry) == loaded == load_policy()


def test_old_entries_are_pruned(tmp_path: Path, folder: Path) -> None:
    for i in range(policy_cache.KEEP + 3):
        policy_cache.load_policy_cached([_rules(tmp_path, RULES + f"# version {i}\n")])
    assert len(_entries(folder)) == policy_cache.KEEP


def test_a_file_edited_while_it_loads_is_not_stored(tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = _rules(tmp_path)
    real = policy_cache.load_policy

    def load_then_edit(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        policy = real(*args, **kwargs)
        rules.write_text(RULES + "# edited\n", encoding="utf-8")
        return policy
    monkeypatch.setattr(policy_cache, "load_policy", load_then_edit)
    policy_cache.load_policy_cached([rules])
    assert _entries(folder) == []

"""The release-map policy: validation errors name file, line and key; the shipped files cover the
reference tables completely."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ortlint.api import default_policy
from ortlint.policy import PolicyError, load_policy

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "mine.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_user_policy_adds_wrappers(tmp_path: Path) -> None:
    p = write(tmp_path, '[[kind]]\nid = "my.Thing"\nlabel = "thing"\n\n[[call]]\nname = "my_create"\n'
                        'acquire = { kind = "my.Thing", into = "return" }\n\n[[call]]\nname = "my_destroy"\n'
                        'release = { arg = 0, kinds = ["my.Thing"] }\n')
    policy = load_policy([p])
    assert policy.lookup("plain", "my_create").acquires[0].kind == "my.Thing"
    assert policy.lookup("plain", "my_destroy").release.kinds == {"my.Thing"}


@pytest.mark.parametrize("text, needle", [
    ('[[call]]\nname = "f"\nacquire = { kind = "nope", into = "return" }\n', "unknown kind 'nope'"),
    ('[[call]]\nname = "f"\nstyle = "weird"\n', "style"),
    ('[[call]]\nname = "f"\nreleas = { arg = 0 }\n', "unknown key"),
    ('[[call]]\nname = "f"\nreturns = "code"\n', "success"),
    ('[[call]]\nname = "f"\nnonzero = "yes"\n', "nonzero: must be true or false"),
    ('[[kind]]\nlabel = "x"\n', "kind[0].id: missing"),
    ('[[call]]\nname = "f"\nacquire = { kind = "libc.heap", into = "sideways" }\n', "into"),
    ("this is = = not toml\n", "invalid TOML"),
    ('[preprocess]\nrename = { TRY = "try_block" }\n', "TRY: 'try_block' is longer than the macro name"),
    ('[preprocess]\nrename = { "not a name" = "x" }\n', "is not a macro name"),
    ('[[call]]\nname = "f"\nstatus_check = { arg = 1, passes = "v" }\n', "passes: must be an argument index"),
    ('[[call]]\nname = "f"\nstatus_check = { arg = 1, passes = 0, success_returns = 0 }\n', "cannot be combined"),
    ('[preprocess]\nrename = "try"\n', "preprocess.rename"),
    ('[table_arity]\nRun = "eight"\n', "table_arity.Run: must be an argument count"),
    ('[table_arity]\nRun = [8, "nine"]\n', "table_arity.Run: must be an argument count"),
    ('[[macro]]\nnames = ["A"]\nacts = "declare"\n', "macro[0].acts: must be one of abort, abort-on-false, abort-on-true, abort-unless-equal, abort-unless-not-equal, declare-or-return"),
    ('[[macro]]\nnames = ["A"]\nacts = "declare-or-return"\narg = 15\n', "must be followed by its expression"),
    ('[[self_owning]]\nbases = ["W"]\n', "self_owning[0].handed_over_by: must be a non-empty list"),
    ('[[self_owning]]\nbases = ["W"]\nhanded_over_by = ["Queue"]\ndeletes = true\n', "self_owning[0].deletes: unknown key"),
    ('[[self_owning]]\nhanded_over_by = ["Queue"]\n', "self_owning[0].base: a non-empty class name"),
    ('[policy]\nname = "x"\nuses = ["(unclosed"]\n', "policy.uses[0]: not a regular expression"),
    ('[policy]\nname = "x"\nuses = ["(?i)late-global-flag|x"]\n', "policy.uses[0]: not a regular expression"),
    ('[policy]\nuses = "Ort"\n', "policy.uses: must be a list of non-empty strings"),
    ('[policy]\nname = "x"\nscope = "all"\n', "policy.scope: unknown key (expected one of: description, name, scoped, uses)"),
    ('[[kind]]\nid = "x"\ngeneral = "yes"\n', "kind[0].general: must be true or false"),
    ('[[kind]]\nid = "x"\nkept_unless_released_here = 1\n', "kind[0].kept_unless_released_here: must be true or false"),
    ('[policy]\nname = "x"\nscoped = "yes"\n', "policy.scoped: must be true or false"),
])


def test_malformed_policy_names_file_line_and_key(tmp_path: Path, text: str, needle: str) -> None:
    p = write(tmp_path, "# a comment line\n" + text)
    with pytest.raises(PolicyError) as err:
        load_policy([p])
    message = str(err.value)
    assert str(p) in message and needle in message
    if "TOML" not in needle:
        assert f"{p}:" in message and message.split(f"{p}:")[1].split(":")[0].isdigit()


def test_missing_policy_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy([tmp_path / "absent.toml"])


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference tables not present")


def test_every_ort_acquisition_and_release_of_the_reference_is_covered() -> None:
    policy = default_policy()
    for table in ("ort_api_functions.tsv", "ort_training_api_functions.tsv"):
        with (REFERENCE / table).open(newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                name = row["name"]
                spec = policy.lookup("table", name) or policy.is_neutral("table", name)
                assert spec, f"{name} from {table} is not in rules/onnxruntime.toml"
                if row["returns"] == "status" and name != "CreateStatus":  # returns the new status itself
                    assert policy.lookup("table", name).returns == "status", name
                if name.startswith("Release") and "_Frees_ptr" in row["params"]:
                    assert policy.lookup("table", name).release is not None, name
                if "caller-owns" in row["ownership_hint"] and row["out_params"] and not name.startswith("GetHardware"):
                    s = policy.lookup("table", name)
                    assert s.acquires, f"{name}: caller-owned out-parameter not acquired"


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference tables not present")


def test_every_jni_pair_of_the_reference_is_covered() -> None:
    policy = default_policy()
    with (REFERENCE / "jni_pairs.tsv").open(newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            acquire = policy.lookup("table", row["acquire"])
            release = policy.lookup("table", row["release"])
            assert acquire is not None and acquire.acquires, row["acquire"]
            assert release is not None and release.release is not None, row["release"]
            assert release.release.kinds & {a.kind for a in acquire.acquires}, (row["acquire"], row["release"])


def test_borrowed_results_are_not_owned() -> None:
    policy = default_policy()
    for name in ("CastTypeInfoToTensorInfo", "GetTensorMutableData", "GetAllocatorWithDefaultOptions", "GetErrorMessage"):
        kinds = [policy.kinds[a.kind] for a in policy.lookup("table", name).acquires]
        assert kinds and not any(k.owned for k in kinds), name


def test_renamed_macros_keep_every_offset(tmp_path: Path) -> None:
    from ortlint.frontends.common.source import blank_decorations
    p = write(tmp_path, '[preprocess]\nrename = { MY_TRY = "try", MY_CATCH = "catch" }\n')
    code = b"MY_TRY { f(); } MY_CATCH(...) { g(); } MY_TRYING();\n"
    out = blank_decorations(code, load_policy([p]))
    assert out == b"try    { f(); } catch   (...) { g(); } MY_TRYING();\n" and len(out) == len(code)


def test_status_check_passes_returns_the_argument(tmp_path: Path) -> None:
    """`status_check = { arg = 1, passes = 0 }` (Go's must.M1(v, err)): the summary returns
    argument 0 when argument 1 is nil, and the failure case ends as the policy says."""
    from ortlint.engine.summaries import summary_from_status_check
    p = write(tmp_path, '[[call]]\nname = "must1"\nstatus_check = { arg = 1, on_failure = "abort", '
                        'releases = false, passes = 0 }\n')
    summary = summary_from_status_check(load_policy([p]).lookup("plain", "must1"))
    ok, bad = summary.cases
    assert ok.pre == (((1,), "null"),) and ok.ret == ("param", (0,)) and ok.exit == "return"
    assert bad.exit == "abort" and not bad.effects

def test_table_arity_counts_add_up_across_files(tmp_path: Path) -> None:
    """A name several structs' fields (or the OrtApi and a field) share has every count."""
    p = write(tmp_path, '[table_arity]\nCreateAllocator = [4, 5]\nSolo = 2\n')
    policy = load_policy([p])
    assert policy.table_arity["CreateAllocator"] == frozenset({3, 4, 5})  # the OrtApi's 3 too
    assert policy.table_arity["Solo"] == frozenset({2})


def test_status_error_code_is_never_ok() -> None:
    """An OrtStatus* exists only for a failure: GetErrorCode() of it is never ORT_OK (0)."""
    spec = default_policy().lookup("table", "GetErrorCode")
    assert spec is not None and spec.nonzero


def test_a_release_not_to_suggest_is_named_only_when_nothing_else_releases_the_kind(tmp_path: Path) -> None:
    """`Ort::detail::OrtRelease` releases every Ort handle, but messages keep naming the API's
    own Release function; a kind only such a helper releases still gets it named."""
    policy = load_policy()
    assert policy.lookup("plain", "Ort::detail::OrtRelease").release is not None
    assert policy.releasers_of("ort.Value") == ["ReleaseValue"]
    p = tmp_path / "helpers.toml"
    p.write_text('[[kind]]\nid = "my.Thing"\nlabel = "Thing"\n\n'
                 '[[call]]\nname = "DropAny"\nsuggest = false\nrelease = { arg = 0, kinds = ["my.Thing"] }\n')
    assert load_policy([p]).releasers_of("my.Thing") == ["DropAny"]
    p.write_text('[[call]]\nname = "DropAny"\nsuggest = "no"\nrelease = { arg = 0, kinds = ["ort.Value"] }\n')
    with pytest.raises(PolicyError, match="suggest"):
        load_policy([p])


def test_self_owning_bases_are_policy_data(tmp_path: Path) -> None:
    """`[[self_owning]]`: library bases whose objects delete themselves (handed over by the
    methods listed) or are owned from their construction (rules/cpp.toml lists Napi's workers)."""
    p = write(tmp_path, '[[self_owning]]\nbases = ["Lib::Task"]\nhanded_over_by = ["Run", "Post"]\n\n'
                        '[[self_owning]]\nbase = "Lib::Node"\non_construction = true\n')
    policy = load_policy([p])
    assert policy.self_owning["Lib::Task"].handed_over_by == {"Run", "Post"}
    assert not policy.self_owning["Lib::Task"].on_construction
    assert policy.self_owning["Lib::Node"].on_construction and not policy.self_owning["Lib::Node"].handed_over_by
    assert policy.self_owning["Napi::AsyncWorker"].handed_over_by == {"Queue"}


def test_self_owning_parent_argument_is_policy_data(tmp_path: Path) -> None:
    """`parent_argument = true` (Qt's QObject classes in rules/cpp.toml): owned when built with a
    parent; a table with it needs no `handed_over_by`, and the flag must be a boolean."""
    p = write(tmp_path, '[[self_owning]]\nbases = ["Ui::Item"]\nparent_argument = true\n')
    policy = load_policy([p])
    spec = policy.self_owning["Ui::Item"]
    assert spec.parent_argument and not spec.on_construction and not spec.handed_over_by
    assert policy.self_owning["QDialog"].parent_argument and not policy.self_owning["QDialog"].on_construction
    assert not policy.self_owning["Napi::AsyncWorker"].parent_argument
    bad = write(tmp_path, '[[self_owning]]\nbases = ["Ui::Item"]\nparent_argument = "yes"\n')
    with pytest.raises(PolicyError, match="parent_argument: must be true or false"):
        load_policy([bad])


def test_an_acquisition_only_when_an_argument_is_null_is_policy_data(tmp_path: Path) -> None:
    """`realpath(p, NULL)` allocates, `realpath(p, buf)` returns buf: `only_if_null` names the
    argument; anything but an argument index is refused with the key in the message."""
    spec = load_policy().lookup("plain", "realpath")
    assert spec is not None and [a.only_if_null for a in spec.acquires] == [1]
    p = tmp_path / "bad.toml"
    p.write_text('[[call]]\nname = "Resolve"\nacquire = { kind = "libc.heap", into = "return", only_if_null = "buf" }\n')
    with pytest.raises(PolicyError, match="only_if_null"):
        load_policy([p])


def test_no_acquisition_when_the_count_written_is_zero_is_policy_data(tmp_path: Path) -> None:
    """`GetBoundOutputNames` writes NULL and allocates nothing when the count it writes is 0:
    `none_if_count_zero` names that count out-argument; it must be an index other than the
    acquired out-argument's, and only an acquisition through an out-argument can have it."""
    spec = load_policy().lookup("table", "GetBoundOutputNames")
    assert spec is not None and [a.none_if_count_zero for a in spec.acquires] == [4, 4]
    for bad in ('into = "*2", none_if_count_zero = "n"', 'into = "*2", none_if_count_zero = 2',
                'into = "return", none_if_count_zero = 1'):
        p = tmp_path / "bad.toml"
        p.write_text(f'[[call]]\nname = "ListThings"\nacquire = {{ kind = "libc.heap", {bad} }}\n')
        with pytest.raises(PolicyError, match="none_if_count_zero"):
            load_policy([p])


def test_co_ownership_of_an_argument_is_policy_data(tmp_path: Path) -> None:
    """GenAI generator params and generators co-own the model they are made from: `keeps`
    names that argument; it must be an argument index other than the acquired out-argument."""
    for name in ("OgaCreateGeneratorParams", "OgaCreateGenerator"):
        assert [a.keeps for a in load_policy().lookup("plain", name).acquires] == [0]
    assert [a.keeps for a in load_policy().lookup("plain", "OgaCreateTokenizer").acquires] == [None]
    for bad in ('into = "*1", keeps = "model"', 'into = "*1", keeps = 1', 'into = "*1", keeps = true'):
        p = tmp_path / "bad.toml"
        p.write_text(f'[[call]]\nname = "MakeChild"\nacquire = {{ kind = "libc.heap", {bad} }}\n')
        with pytest.raises(PolicyError, match="keeps"):
            load_policy([p])


def test_allocator_blocks_are_policy_data(tmp_path: Path) -> None:
    """Memory an OrtAllocator hands out is marked `allocator_block`: from the program's own
    allocator whose Free is `delete`, it is that family's; the flag must be a boolean."""
    assert load_policy().kinds["ort.AllocatorMemory"].allocator_block
    assert not load_policy().kinds["cpp.new"].allocator_block
    p = tmp_path / "bad.toml"
    p.write_text('[[kind]]\nid = "x.Block"\nlabel = "block"\nallocator_block = "yes"\n')
    with pytest.raises(PolicyError, match="allocator_block"):
        load_policy([p])


def test_general_kinds_and_api_marks_are_policy_data(tmp_path: Path) -> None:
    """`general = true` kinds are scoped to files matching some policy's `uses` (ortlint/scope.py)."""
    p = write(tmp_path, '[policy]\nname = "mylib"\nuses = ["\\\\bmylib_[a-z]"]\n'
                        '[[kind]]\nid = "mylib.arena"\nlabel = "arena block"\ngeneral = true\n')
    policy = load_policy([p])
    assert policy.kinds["mylib.arena"].general and policy.kinds["cpp.new"].general
    assert not policy.kinds["libc.heap"].general and policy.kinds["ort.Status"].general  # onnxruntime.toml: scoped
    assert not policy.kinds["jni.BooleanArrayElements"].general  # jni.toml names its API but is not scoped
    assert "\\bmylib_[a-z]" in policy.uses and "\\bJNIEnv\\b" in policy.uses


def test_kept_unless_released_here_is_policy_data() -> None:
    """`kept_unless_released_here = true` (engine/lock_functions.py): the JNI attachment is such a
    kind, a monitor is not (a function that enters one and goes on working must exit it)."""
    policy = load_policy()
    assert policy.kinds["jni.AttachedThread"].kept_unless_released_here
    assert not policy.kinds["jni.Monitor"].kept_unless_released_here

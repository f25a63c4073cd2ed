"""The plugin-EP policy (rules/onnxruntime-ep.toml) covers the header-derived reference table
rules/reference/ort_ep_api.tsv completely; the generators reproduce what is committed; the schema
keys it needs (`field_of`, `untyped`, `status_kind`, `status_check.release_with`) are validated."""
from __future__ import annotations

import csv
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ortlint.api import default_policy
from ortlint.policy import PolicyError, load_policy

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "rules" / "reference" / "ort_ep_api.tsv"
SHARED = ROOT.parent / "shared" / "reference"


def rows(side: str) -> list[dict[str, str]]:
    with TABLE.open(newline="") as fh:
        return [r for r in csv.DictReader(fh, delimiter="\t") if r["side"] == side]


def test_the_reference_table_lists_the_ep_abi() -> None:
    api = {r["name"] for r in rows("api")}
    assert {"CreateEpDevice", "ReleaseEpDevice", "CreateKernelRegistry", "KernelDefBuilder_Build"} <= api
    fields = {(r["struct"], r["name"]) for r in rows("implementer")}
    for struct, name in (("OrtEpFactory", "GetSupportedDevices"), ("OrtEpFactory", "CreateEp"), ("OrtEp", "Compile"),
                         ("OrtCustomOp", "KernelComputeV2"), ("OrtCustomOp", "CreateKernelV2"),
                         ("OrtKernelImpl", "Compute"), ("OrtDataTransferImpl", "CopyTensors"),
                         ("OrtSyncStreamImpl", "CreateNotification"), ("OrtNodeComputeInfo", "CreateState")):
        assert (struct, name) in fields
    assert "OrtSessionOptionsAppendExecutionProvider_CUDA" in {r["name"] for r in rows("export")}
    assert "CreateEpApiFactoriesFn" in {r["name"] for r in rows("typedef")}


def test_every_ep_api_entry_is_covered() -> None:
    policy = default_policy()
    for row in rows("api"):
        name = row["name"]
        spec = policy.lookup("table", name)
        assert spec is not None or policy.is_neutral("table", name), f"OrtEpApi::{name} is not in the policy"
        if row["returns"] == "status":
            assert spec is not None and spec.returns == "status", name
        if name.startswith("Release") and "_Frees_ptr" in row["params"]:
            assert spec is not None and spec.release is not None, name
        if row["ownership_hint"] == "caller-owns" and row["release_hint"]:
            release = policy.lookup("table", row["release_hint"])
            assert spec is not None and spec.acquires, f"{name}: caller-owned out-parameter not acquired"
            if release is not None and release.release is not None:
                assert {a.kind for a in spec.acquires} & release.release.kinds, (name, row["release_hint"])


def test_every_status_returning_field_of_an_implementer_struct_is_covered() -> None:
    policy = default_policy()
    for row in rows("implementer"):
        qualified = f"{row['struct']}::{row['name']}"
        spec = policy.lookup("method", qualified)
        if row["returns"] == "status":
            assert spec is not None and spec.returns == "status", qualified
            assert spec.field_of == (row["struct"],), qualified
        elif not row["name"].startswith("Release") and row["name"] != "KernelDestroy":
            assert spec is not None or policy.is_neutral("method", qualified), qualified


def test_legacy_provider_exports_return_a_status() -> None:
    policy = default_policy()
    for row in rows("export"):
        spec = policy.lookup("plain", row["name"])
        assert spec is not None and spec.returns == "status", row["name"]


def test_factory_pairs_are_matched_by_the_factory() -> None:
    policy = default_policy()
    create = policy.lookup("method", "OrtEpFactory::CreateEp")
    release = policy.lookup("method", "OrtEpFactory::ReleaseEp")
    assert create.acquires[0].into == "*6" and release.release.arg == 1
    assert create.acquires[0].kind in release.release.kinds


def test_untyped_fields_match_unknown_and_derived_receivers_without_argument_indexes() -> None:
    policy = default_policy()
    plain_c = policy.lookup("table", "KernelComputeV2")  # C: `op->KernelComputeV2(k, ctx)`
    derived = policy.lookup("method", "MyFactory::CreateEp")  # `struct MyFactory : OrtEpFactory`
    assert plain_c.returns == "status" and derived.returns == "status"
    assert derived.acquires == () and derived.release is None  # the self argument may be gone
    # an OrtApi entry of the same name wins over an untyped field
    assert Path(policy.lookup("table", "CreateAllocator").origin.rsplit(":", 1)[0]).name == "onnxruntime.toml"
    # too common a name to be matched without the receiver's type
    assert policy.lookup("table", "Compute") is None and policy.lookup("method", "Foo::Compute") is None


def test_generated_ep_policy_is_up_to_date(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_ep_policy.py"), str(TABLE), str(SHARED)],
                         capture_output=True, text=True, check=True).stdout
    committed = (ROOT / "rules" / "onnxruntime-ep.toml").read_text(encoding="utf-8")
    assert out == committed, "rules/onnxruntime-ep.toml differs from what tools/gen_ep_policy.py generates"


HEADER = """
struct OrtEpApi {
  /** \\param[out] thing Must be released with OrtEpApi::ReleaseThing. */
  ORT_API2_STATUS(CreateThing, _In_ int size, _Outptr_ OrtThing** thing);
  ORT_CLASS_RELEASE(Thing);
  ORT_API_T(const char*, Thing_GetName, _In_ const OrtThing* thing);
};
struct OrtEpFactory {
  OrtStatus*(ORT_API_CALL* MakeWidget)(_In_ OrtEpFactory* this_ptr, _Outptr_ OrtWidget** widget);
  void(ORT_API_CALL* ReleaseWidget)(_In_ OrtEpFactory* this_ptr, OrtWidget* widget);
};
typedef OrtStatus* (*MakeFactoriesFn)(_In_ const char* name, _Out_ size_t* count);
ORT_API_STATUS(OrtSessionOptionsAppendExecutionProvider_Toy, _In_ OrtSessionOptions* options, int device_id);
"""


def test_reference_generator_reads_every_declaration_form(tmp_path: Path) -> None:
    header = tmp_path / "toy_ep_c_api.h"
    header.write_text(HEADER, encoding="utf-8")
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_ep_reference.py"), str(header)],
                         capture_output=True, text=True, check=True).stdout
    table = {(r["struct"], r["name"]): r for r in csv.DictReader(out.splitlines(), delimiter="\t")}
    create = table[("OrtEpApi", "CreateThing")]
    assert create["returns"] == "status" and create["out_params"] == "1:OrtThing** thing:_Outptr_"
    assert create["release_hint"] == "ReleaseThing" and create["ownership_hint"] == "caller-owns"
    assert table[("OrtEpApi", "ReleaseThing")]["params"] == "_Frees_ptr_opt_ OrtThing* input"
    assert table[("OrtEpApi", "Thing_GetName")]["returns"] == "const char*"
    assert table[("OrtEpFactory", "MakeWidget")]["side"] == "implementer"
    assert table[("typedef", "MakeFactoriesFn")]["returns"] == "status"
    assert table[("export", "OrtSessionOptionsAppendExecutionProvider_Toy")]["params"].endswith("int device_id")


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "mine.toml"
    p.write_text("# a comment line\n" + textwrap.dedent(text), encoding="utf-8")
    return p


@pytest.mark.parametrize("text, needle", [
    ('[[call]]\nname = "F"\nfield_of = "OrtEp"\n', "call[0].field_of: must be a non-empty list"),
    ('[[call]]\nname = "F"\nfield_of = []\n', "call[0].field_of: must be a non-empty list"),
    ('[[call]]\nname = "F"\nfield_of = ["Ort Ep"]\n', "call[0].field_of"),
    ('[[call]]\nname = "F"\nfield_of = ["OrtEp"]\nstyle = "table"\n', "call[0].style: a field_of call"),
    ('[[call]]\nname = "F"\nuntyped = true\n', "call[0].untyped: only meaningful with field_of"),
    ('[[call]]\nname = "F"\nfield_of = ["OrtEp"]\nuntyped = "yes"\n', "call[0].untyped: must be true or false"),
    ('[[call]]\nname = "F"\nstatus_kind = "ort.Status"\n', "call[0].status_kind: only meaningful with returns"),
    ('[[call]]\nname = "F"\nreturns = "status"\nstatus_kind = "my.Nothing"\n', "unknown kind 'my.Nothing'"),
    ('[[kind]]\nid = "my.View"\nowned = false\n\n[[call]]\nname = "F"\nreturns = "status"\nstatus_kind = "my.View"\n',
     "call[0].status_kind: kind 'my.View' is borrowed"),
    ('[[call]]\nname = "F"\nstatus_check = { arg = 0, release_with = 3 }\n', "call[0].status_check.release_with"),
    ('[[call]]\nname = "F"\nstyle = ["table", "sideways"]\n', "call[0].style: must be one of"),
    ('[[call]]\nname = "F"\nfield_of = ["OrtEp"]\nstyle = ["method", "table"]\n', "call[0].style: a field_of call"),
])
def test_new_schema_keys_are_validated_with_file_line_and_key(tmp_path: Path, text: str, needle: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(PolicyError) as err:
        load_policy([p])
    message = str(err.value)
    assert needle in message, message
    assert message.startswith(f"{p}:") and message.split(f"{p}:")[1].split(":")[0].isdigit(), message


def test_user_policy_can_describe_its_own_abi_struct(tmp_path: Path) -> None:
    p = write(tmp_path, """
        [[kind]]
        id = "my.Widget"
        label = "widget"

        [[call]]
        name = "MakeWidget"
        field_of = ["MyVtable"]
        returns = "status"
        untyped = true
        acquire = { kind = "my.Widget", into = "*1" }

        [[call]]
        name = "DropWidget"
        field_of = ["MyVtable"]
        release = { arg = 1, kinds = ["my.Widget"] }
        """)
    policy = load_policy([p], include_defaults=False)
    typed = policy.lookup("method", "MyVtable::MakeWidget")
    assert typed.acquires[0].kind == "my.Widget" and typed.style == "method"
    assert policy.lookup("table", "MakeWidget").acquires == ()  # untyped: only what it returns
    assert policy.lookup("method", "MyVtable::DropWidget").release.arg == 1
    assert policy.lookup("table", "DropWidget") is None  # not untyped


GO_SNAPSHOT = Path("/work/.mirror/yalue+onnxruntime_go/repo")
ORT_SNAPSHOT = Path("/work/.mirror/Craigacp+onnxruntime/repo")


@pytest.mark.skipif(not (GO_SNAPSHOT.is_dir() and ORT_SNAPSHOT.is_dir()), reason="header snapshots not on this machine")
def test_committed_reference_table_is_what_the_real_headers_give(tmp_path: Path) -> None:
    def show(repo: Path, commit: str, path: str) -> Path:
        out = tmp_path / Path(path).name
        out.write_bytes(subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True,
                                       check=True).stdout)
        return out

    go, ort = "8ce7fa5882bb3ac038bacdd53bfe02da3691899f", "a1217d51ef7ac3e3a3ae977045c3c6f0fe9732d8"
    headers = [show(GO_SNAPSHOT, go, "onnxruntime_ep_c_api.h"), show(GO_SNAPSHOT, go, "onnxruntime_c_api.h")]
    listing = subprocess.run(["git", "-C", str(ORT_SNAPSHOT), "ls-tree", "-r", "--name-only", ort,
                              "include/onnxruntime/core/providers"], capture_output=True, text=True, check=True).stdout
    headers += sorted((show(ORT_SNAPSHOT, ort, p) for p in listing.split() if p.endswith("_provider_factory.h")),
                      key=lambda p: p.name)
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_ep_reference.py"), *map(str, headers)],
                         capture_output=True, text=True, check=True).stdout
    assert out == TABLE.read_text(encoding="utf-8")


def test_ep_api_entries_match_table_calls_and_members_of_unknown_holders() -> None:
    policy = default_policy()
    for style in ("table", "method"):
        assert policy.lookup(style, "CreateEpDevice").acquires[0].kind == "ort.EpDevice", style
    # an EP's own plain helper of the same name is not the OrtEpApi entry
    assert policy.lookup("plain", "CreateKernelRegistry") is None

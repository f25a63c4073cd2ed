"""The GenAI policy (rules/onnxruntime-genai.toml) covers the table derived from ort_genai_c.h
(rules/reference/ort_genai_c.tsv): every Create/Destroy pair, owned and borrowed strings,
OgaResult* as a status released by OgaDestroyResult. The generator's rules are checked on a small
header of our own, and against the real header when its snapshot is on this machine."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from ortlint.api import default_policy

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "rules" / "reference" / "ort_genai_c.tsv"
SNAPSHOT = Path("/work/.mirror/microsoft+onnxruntime-genai/repo")
GEN = ROOT / "tools" / "gen_genai_policy.py"


def table() -> list[dict[str, str]]:
    with TABLE.open(newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_every_genai_function_is_covered() -> None:
    policy = default_policy()
    rows = table()
    assert len(rows) > 150
    for row in rows:
        name = row["name"]
        spec = policy.lookup("plain", name)
        assert spec is not None or policy.is_neutral("plain", name), f"{name} is not in rules/onnxruntime-genai.toml"
        if row["returns"] == "result":
            assert spec.returns == "status" and spec.status_kind == "oga.Result", name
        if name.startswith("OgaDestroy"):
            assert spec.release is not None and spec.release.arg == 0, name
        if row["ownership_hint"] == "caller-owns":
            release = policy.lookup("plain", row["release_hint"])
            assert spec.acquires and release.release.kinds & {a.kind for a in spec.acquires}, (name, row["release_hint"])
        if row["ownership_hint"] == "borrowed":
            assert spec.acquires and not any(policy.kinds[a.kind].owned for a in spec.acquires), name


def test_every_create_has_its_destroy() -> None:
    policy = default_policy()
    destroys = {r["name"][len("OgaDestroy"):] for r in table() if r["name"].startswith("OgaDestroy")}
    for short in destroys - {"Result", "String"}:
        kind = f"oga.{short}"
        assert kind in policy.kinds and policy.releasers_of(kind) == [f"OgaDestroy{short}"], kind
        acquirers = [s for s in policy.calls.values() if any(a.kind == kind for a in s.acquires)]
        assert acquirers, f"nothing acquires {kind}"
    assert policy.releasers_of("oga.Result") == ["OgaDestroyResult"]
    assert policy.releasers_of("ort.Status") == ["ReleaseStatus"]  # the two status kinds stay apart


def test_strings_and_buffers() -> None:
    policy = default_policy()
    owned = {"OgaTokenizerDecode", "OgaTokenizerApplyChatTemplate", "OgaModelGetType", "OgaStreamingProcessorGetOption"}
    borrowed = {"OgaTokenizerStreamDecode", "OgaStringArrayGetString", "OgaGenerator_GetNextTokens", "OgaTensorGetData"}
    for name in owned:
        assert [a.kind for a in policy.lookup("plain", name).acquires] == ["oga.String"], name
    for name in borrowed:
        assert all(not policy.kinds[a.kind].owned for a in policy.lookup("plain", name).acquires), name
    # input arrays are not results: `OgaTokenizerEncodeBatch(tokenizer, strings, count, &out)`
    assert [a.into for a in policy.lookup("plain", "OgaTokenizerEncodeBatch").acquires] == ["*3"]
    # the tensor borrows its buffer: nothing handed to it is taken over
    create = policy.lookup("plain", "OgaCreateTensorFromBuffer")
    assert not create.escapes and not create.escapes_all and create.release is None


TOY = """
typedef struct OgaResult OgaResult;
typedef struct OgaWidget OgaWidget;
/** \\param[out] out must be destroyed with OgaDestroyWidget */
OGA_EXPORT OgaResult* OGA_API_CALL OgaCreateWidget(const char* name, OgaWidget** out);
OGA_EXPORT void OGA_API_CALL OgaDestroyWidget(OgaWidget* widget);
OGA_EXPORT void OGA_API_CALL OgaDestroyResult(OgaResult* result);
OGA_EXPORT void OGA_API_CALL OgaDestroyString(const char*);
/** out is valid until the next call */
OGA_EXPORT OgaResult* OGA_API_CALL OgaWidgetPeek(const OgaWidget* widget, const char** out);
/** out must be freed with OgaDestroyString */
OGA_EXPORT OgaResult* OGA_API_CALL OgaWidgetName(const OgaWidget* widget, const char** out);
OGA_EXPORT OgaResult* OGA_API_CALL OgaWidgetFeed(OgaWidget* widget, const char** lines, size_t count);
OGA_EXPORT size_t OGA_API_CALL OgaWidgetCount(const OgaWidget* widget);
"""


def test_generator_rules_on_a_header_of_our_own(tmp_path: Path) -> None:
    header = tmp_path / "toy_genai_c.h"
    header.write_text(TOY, encoding="utf-8")
    tsv = tmp_path / "toy.tsv"
    toml = subprocess.run([sys.executable, str(GEN), str(header), "--table", str(tsv)],
                          capture_output=True, text=True, check=True).stdout
    policy_file = tmp_path / "toy.toml"
    policy_file.write_text(toml, encoding="utf-8")
    from ortlint.policy import load_policy
    policy = load_policy([policy_file], include_defaults=False)
    create = policy.lookup("plain", "OgaCreateWidget")
    assert create.returns == "status" and create.status_kind == "oga.Result"
    assert [(a.kind, a.into) for a in create.acquires] == [("oga.Widget", "*1")]
    assert policy.lookup("plain", "OgaDestroyWidget").release.kinds == {"oga.Widget"}
    assert [a.kind for a in policy.lookup("plain", "OgaWidgetName").acquires] == ["oga.String"]
    assert [a.kind for a in policy.lookup("plain", "OgaWidgetPeek").acquires] == ["oga.borrowed.String"]
    assert policy.lookup("plain", "OgaWidgetFeed").acquires == ()  # `lines` is an input array
    assert policy.is_neutral("plain", "OgaWidgetCount")


@pytest.mark.skipif(not SNAPSHOT.is_dir(), reason="the onnxruntime-genai snapshot is not on this machine")
def test_committed_genai_policy_is_what_the_real_header_generates(tmp_path: Path) -> None:
    commit = "a0c04eb1313b886c963e415bbd974748cb89a4eb"  # rules/reference/README.md
    paths = []
    for name in ("ort_genai_c.h", "ort_genai.h"):
        p = tmp_path / name
        p.write_bytes(subprocess.run(["git", "-C", str(SNAPSHOT), "show", f"{commit}:src/{name}"],
                                     capture_output=True, check=True).stdout)
        paths.append(str(p))
    tsv = tmp_path / "genai.tsv"
    toml = subprocess.run([sys.executable, str(GEN), *paths, "--table", str(tsv)], capture_output=True, text=True,
                          check=True).stdout
    assert toml == (ROOT / "rules" / "onnxruntime-genai.toml").read_text(encoding="utf-8")
    assert tsv.read_text(encoding="utf-8") == TABLE.read_text(encoding="utf-8")

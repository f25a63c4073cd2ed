"""Bad input: every case gives a clear message, the run goes on, and no other result is lost.

Each test puts one bad input next to a file with a known leak (`good.c`, ORT001 at line 3) and
checks both the message about the bad input and that the good file's finding is still there.
Big inputs are generated here, in temporary folders, never committed.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.clihelpers import LEAK_C, ortlint, running_as_root, write

GOOD_FINDING = "good.c:3:13: ORT001 leak:"
EXTRA_LEAK = "void extra_leak(void) {\n  char *q = malloc(1);\n}\n"


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "good.c", LEAK_C)
    return tmp_path


def check(*args: str) -> tuple[int, str, dict]:
    """Run twice: text for the messages users read, JSON for precise assertions."""
    text = ortlint("--isolated", *args)
    doc = json.loads(ortlint("--isolated", "--format", "json", *args).stdout)
    return text.code, text.stdout + text.stderr, doc


def notices_for(doc: dict, name: str) -> list[dict]:
    return [n for n in doc["notices"] if Path(n["path"]).name == name]


def findings_in(doc: dict, name: str) -> list[tuple[int, str]]:
    return [(f["line"], f["rule"]) for f in doc["findings"] if Path(f["path"]).name == name]


def test_binary_file_with_a_c_extension(tree: Path) -> None:
    write(tree, "blob.c", bytes(range(256)) * 64)
    code, out, doc = check(".")
    assert code == 1 and GOOD_FINDING in out
    assert "blob.c: warning: binary file (contains NUL bytes); skipped" in out.replace(":1:", ":")
    assert [n["level"] for n in notices_for(doc, "blob.c")] == ["warning"]


def test_invalid_utf8_is_still_analyzed(tree: Path) -> None:
    write(tree, "latin1.c", b"/* caf\xe9 \xff\xfe */\n#include <stdlib.h>\nvoid f(void) {\n  char *s = malloc(2); /* \xe9 */\n}\n")
    code, out, doc = check(".")
    assert code == 1 and GOOD_FINDING in out
    assert findings_in(doc, "latin1.c") == [(4, "ORT001")]


def test_empty_file(tree: Path) -> None:
    write(tree, "empty.c", b"")
    code, out, doc = check(".")
    assert code == 1 and GOOD_FINDING in out
    assert doc["summary"]["files"] == 2 and notices_for(doc, "empty.c") == []


def test_five_megabyte_generated_file(tree: Path) -> None:
    """A generated 5 MB source (an embedded model as a byte array, as `xxd -i` writes it)."""
    row = "  " + ", ".join(f"0x{i:02x}" for i in range(16)) + ",\n"
    body = row * (5 * 1024 * 1024 // len(row) + 1)
    write(tree, "model_data.c", "#include <stdlib.h>\nstatic const unsigned char model[] = {\n" + body + "};\n" + EXTRA_LEAK)
    assert (tree / "model_data.c").stat().st_size > 5 * 1024 * 1024
    started = time.perf_counter()
    result = ortlint("--isolated", "--format", "json", ".")
    elapsed = time.perf_counter() - started
    doc = json.loads(result.stdout)
    assert result.code == 1
    assert findings_in(doc, "good.c") == [(3, "ORT001")]
    lines = body.count("\n") + 3
    assert findings_in(doc, "model_data.c") == [(lines + 2, "ORT001")]
    assert elapsed < 30, f"5 MB took {elapsed:.1f}s"


def test_function_nested_500_levels_deep(tree: Path) -> None:
    depth = 500
    deep = "#include <stdlib.h>\nvoid deep(int x) {\n  char *p = malloc(1);\n" + "  if (x) {\n" * depth
    deep += "  free(p);\n" + "  }\n" * depth + "}\n" + EXTRA_LEAK
    write(tree, "deep.c", deep)
    code, out, doc = check(".")
    assert code == 1 and GOOD_FINDING in out
    assert findings_in(doc, "deep.c") == [(2 * depth + 7, "ORT001")]  # the next function is still checked
    messages = [n["message"] for n in notices_for(doc, "deep.c")]
    assert any("deep()" in m and "nested too deeply" in m for m in messages), messages


def _nested_finally(name: str, depth: int) -> str:
    """A method of `depth` try/finally nested in each other's finally, each try with a return:
    every exit of a try runs its own copy of the finally (the copies grow as 3^depth)."""
    body = "a();"
    for i in range(depth):
        body = f"try {{ if (x > {i}) return; a(); }} finally {{ {body} }}"
    return f"  static void {name}(int x) {{\n    {body}\n  }}\n"


def test_finally_blocks_nested_sixteen_deep_skip_their_method_only(tree: Path) -> None:
    leak = ("  static Object leaks(OrtEnvironment env) throws OrtException {\n"
            "    OnnxTensor t = OnnxTensor.createTensor(env, new float[]{1f});\n"
            "    return null;\n  }\n")
    write(tree, "Nested.java", "import ai.onnxruntime.*;\npublic class Nested {\n  static void a() {}\n"
          + _nested_finally("shallow", 3) + _nested_finally("deep", 16) + leak + "}\n")
    code, out, doc = check(".")
    assert code == 1 and GOOD_FINDING in out
    assert findings_in(doc, "Nested.java") == [(11, "ORT010")]  # the method after it is still checked
    messages = [n["message"] for n in notices_for(doc, "Nested.java")]
    assert len(messages) == 1 and "Nested.deep()" in messages[0] and "finally" in messages[0], messages


def test_twenty_calls_in_one_block_that_may_each_release_are_merged_at_the_state_bound(tree: Path) -> None:
    """Each `clear(dst)` releases the unknown value a struct copy put in `dst->colors`, or finds
    it NULL: the property states of one block double at each call (no join point between).
    Past `Budget.keyed_states` they are merged coarsely: no note, nothing lost elsewhere."""
    text = ("#include <stdlib.h>\ntypedef struct palette { unsigned char *colors; } palette;\n"
            "static void clear(palette *p) {\n  if (p->colors != NULL) free(p->colors);\n  p->colors = NULL;\n}\n"
            "void copy_over(palette *dst, const palette *src) {\n"
            + "  clear(dst);\n  *dst = *src;\n" * 20 + "}\n" + EXTRA_LEAK)
    write(tree, "copies.c", text)
    code, out, doc = check(".")
    assert code == 1 and GOOD_FINDING in out
    assert findings_in(doc, "copies.c") == [(50, "ORT001")]  # the function after it is still checked
    assert [n["message"] for n in notices_for(doc, "copies.c")] == []


def test_expression_nested_5000_levels_deep(tree: Path) -> None:
    write(tree, "paren.c", "int h(int x) { return " + "(" * 5000 + "x" + ")" * 5000 + "; }\n#include <stdlib.h>\n" + EXTRA_LEAK)
    code, out, doc = check(".")
    assert code == 1 and GOOD_FINDING in out
    assert findings_in(doc, "paren.c") == [(4, "ORT001")]


def test_unbalanced_braces(tree: Path) -> None:
    write(tree, "open.c", "#include <stdlib.h>\nvoid f(int n) {\n  char *p = malloc(n);\n  if (n) {\n    return;\n")
    write(tree, "close.c", "}\n}\n#include <stdlib.h>\n" + EXTRA_LEAK)
    code, out, doc = check(".")
    assert code == 1 and GOOD_FINDING in out
    assert findings_in(doc, "close.c") == [(5, "ORT001")]
    assert doc["summary"]["files"] == 3


def test_unbalanced_braces_are_mentioned(tree: Path) -> None:
    write(tree, "open.c", "#include <stdlib.h>\nvoid f(int n) {\n  char *p = malloc(n);\n  if (n) {\n    return;\n\n"
                          "void g(void) {\n  char *q = malloc(2);\n}\n")
    _, _, doc = check(".")
    assert findings_in(doc, "open.c") == [(8, "ORT001")]  # g() is still checked
    # f() itself is cut short: it must be reported, or said to be not analyzed
    assert (3, "ORT001") in findings_in(doc, "open.c") or [n for n in notices_for(doc, "open.c") if n["level"] == "warning"]


def test_path_that_does_not_exist(tree: Path) -> None:
    code, out, doc = check("good.c", "no/such/file.c")
    assert code == 2
    assert GOOD_FINDING in out
    assert "no/such/file.c: error: no such file or directory" in out


def test_unreadable_file(tree: Path) -> None:
    path = write(tree, "secret.c", LEAK_C)
    path.chmod(0)
    try:
        if running_as_root() or os.access(path, os.R_OK):
            pytest.skip("running as root: permissions do not stop us from reading the file")
        code, out, doc = check(".")
        assert code == 1 and GOOD_FINDING in out
        assert [n["level"] for n in notices_for(doc, "secret.c")] == ["warning"]
        assert "cannot read file" in notices_for(doc, "secret.c")[0]["message"]
    finally:
        path.chmod(0o644)


def test_unreadable_folder(tree: Path) -> None:
    folder = tree / "locked"
    write(folder, "x.c", LEAK_C)
    folder.chmod(0)
    try:
        if running_as_root() or os.access(folder, os.R_OK):
            pytest.skip("running as root: permissions do not stop us from reading the folder")
        code, out, doc = check(".")
        assert GOOD_FINDING in out
        assert any("cannot read folder" in n["message"] for n in doc["notices"])
    finally:
        folder.chmod(0o755)


def test_symlink_loop_and_broken_symlink(tree: Path) -> None:
    (tree / "sub").mkdir()
    os.symlink("..", tree / "sub" / "up")  # sub/up/sub/up/... forever
    os.symlink("a.c", tree / "self.c")
    os.symlink("self.c", tree / "a.c")  # self.c -> a.c -> self.c
    os.symlink("missing.c", tree / "dangling.c")
    code, out, doc = check(".")
    assert code == 1
    assert findings_in(doc, "good.c") == [(3, "ORT001")]  # once, not once per loop turn
    assert len(doc["findings"]) == 1
    assert {Path(n["path"]).name for n in doc["notices"]} >= {"self.c", "a.c", "dangling.c"}


def test_symlink_loop_given_explicitly(tree: Path) -> None:
    os.symlink("loop.c", tree / "loop.c")
    code, out, doc = check("good.c", "loop.c")
    assert GOOD_FINDING in out
    assert notices_for(doc, "loop.c")
    assert code == 1


def test_malformed_policy_file_names_file_line_and_key(tree: Path) -> None:
    write(tree, "mine.toml", '[[kind]]\nid = "mine.H"\nlabel = "H"\n\n[[call]]\nname = "h_free"\n'
                             'release = { arg = 0, kinds = ["mine.Nope"] }\n')
    r = ortlint("--isolated", "--rules", "mine.toml", ".")
    assert r.code == 2 and r.stdout == ""
    assert "mine.toml:7: call[0].release.kinds: unknown kind 'mine.Nope'" in r.stderr


def test_policy_file_with_invalid_toml(tree: Path) -> None:
    write(tree, "mine.toml", '[[call]\nname = "x"\n')
    r = ortlint("--isolated", "--rules", "mine.toml", ".")
    assert r.code == 2
    assert "mine.toml: invalid TOML" in r.stderr and "line 1" in r.stderr


def test_policy_file_with_unknown_key(tree: Path) -> None:
    write(tree, "mine.toml", '[[kind]]\nid = "mine.H"\nlabel = "H"\n\n[[call]]\nname = "h_open"\nacuire = { kind = "mine.H" }\n')
    r = ortlint("--isolated", "--rules", "mine.toml", ".")
    assert r.code == 2 and "mine.toml:7: call[0].acuire: unknown key" in r.stderr


def test_unknown_option(tree: Path) -> None:
    r = ortlint("--no-such-option", ".")
    assert r.code == 2 and "No such option" in r.stderr and r.stdout == ""


def test_folder_with_a_source_suffix_and_other_odd_names(tree: Path) -> None:
    (tree / "weird.c").mkdir()
    write(tree, "weird.c/inner.c", LEAK_C)
    write(tree, "space name.c", LEAK_C)
    write(tree, "-dash.c", LEAK_C)
    write(tree, "crlf.c", LEAK_C.replace("\n", "\r\n").encode())
    code, out, doc = check(".")
    names = sorted(Path(f["path"]).name for f in doc["findings"])
    assert names == ["-dash.c", "crlf.c", "good.c", "inner.c", "space name.c"]
    assert all(f["line"] == 3 for f in doc["findings"])


def test_every_bad_input_at_once(tree: Path) -> None:
    """One run over all of them: nothing crashes, every good result survives."""
    write(tree, "blob.c", bytes(range(256)) * 16)
    write(tree, "latin1.c", b"#include <stdlib.h>\nvoid f(void) {\n  char *s = malloc(2); /* \xe9\xff */\n}\n")
    write(tree, "empty.c", b"")
    write(tree, "open.c", "void f(int n) {\n  if (n) {\n")
    write(tree, "deep.c", "void d(int x) {\n" + "if (x) {\n" * 600 + "}\n" * 600 + "}\n")
    write(tree, "good.h", "#include <stdlib.h>\nstatic inline void h(void) {\n  char *p = malloc(1);\n}\n")
    write(tree, "Bad.java", "class Bad { void f( { int x = ; } \x00")
    write(tree, "bad.cpp", "template <typename T> class { void f() { auto p = new T(; } };\n")
    os.symlink(".", tree / "loop")
    code, out, doc = check(".", "missing.c")
    assert code == 2
    assert findings_in(doc, "good.c") == [(3, "ORT001")]
    assert findings_in(doc, "latin1.c") == [(3, "ORT001")]
    assert findings_in(doc, "good.h") == [(3, "ORT001")]
    assert not any(n["message"].startswith("internal error") for n in doc["notices"]), doc["notices"]

"""Time from save to diagnostics in `ortlint server` (issue 33): a generated 700-line JNI file is
opened in a fresh workspace, then saved N times; each time is from the didSave notification to
the publishDiagnostics that answers it. Prints the median (and all times) per server mode.

    python tools/lsp_latency.py [--saves 10] [--lines 700]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.lspclient import LspClient  # noqa: E402

FUNCTION = """
JNIEXPORT jlong JNICALL Java_bench_Native_sum{n}(JNIEnv *env, jclass cls, jlongArray arr, jint limit) {{
  (void)cls;
  jlong *p = (*env)->GetLongArrayElements(env, arr, NULL);
  if (p == NULL)
    return 0;
  jsize n = (*env)->GetArrayLength(env, arr);
  jlong s = 0;
  for (jsize i = 0; i < n; i++) {{
    if (p[i] > limit{leak})
      return -1;
    s += p[i];
  }}
  jstring name = (*env)->NewStringUTF(env, "sum");
  const char *chars = (*env)->GetStringUTFChars(env, name, NULL);
  if (chars != NULL)
    (*env)->ReleaseStringUTFChars(env, name, chars);
  (*env)->ReleaseLongArrayElements(env, arr, p, JNI_ABORT);
  return s;
}}
"""


def jni_source(lines: int) -> str:
    out = "#include <jni.h>\n"
    n = 0
    while out.count("\n") < lines:
        # every fourth function leaks its elements on the early return (a finding to publish)
        body = FUNCTION.format(n=n, leak="" if n % 4 else " * 2")
        if n % 4 == 0:
            body = body.replace("      return -1;", "      return -1;  /* leaks p */", 1)
        else:
            body = body.replace("      return -1;", "      { (*env)->ReleaseLongArrayElements(env, arr, p, JNI_ABORT); return -1; }", 1)
        out += body
        n += 1
    return out


def measure(options: dict, saves: int, lines: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text("[tool.ortlint]\n")
        path = root / "jni" / "bench_native.c"
        path.parent.mkdir()
        text = jni_source(lines)
        path.write_text(text)
        client = LspClient(root, env={"XDG_CACHE_HOME": str(root / ".cache")})
        try:
            client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {},
                                          "initializationOptions": options})
            client.notify("initialized", {})
            uri = path.as_uri()
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "c", "version": 1,
                                                                    "text": text}})
            found = client.wait_diagnostics(uri)
            times = []
            for i in range(saves):
                edited = text + f"/* save {i} */\n"
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": i + 2},
                                                         "contentChanges": [{"text": edited}]})
                path.write_text(edited)
                start = time.perf_counter()
                client.notify("textDocument/didSave", {"textDocument": {"uri": uri}, "text": edited})
                diagnostics = client.wait_diagnostics(uri)
                times.append(time.perf_counter() - start)
                assert len(diagnostics) == len(found)
        finally:
            client.close()
    print(f"{lines}-line JNI file ({text.count(chr(10))} lines, {len(found)} diagnostics), "
          f"options {options}: median {statistics.median(times) * 1000:.0f} ms over {saves} saves "
          f"({', '.join(f'{t * 1000:.0f}' for t in times)} ms)")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=10)
    parser.add_argument("--lines", type=int, default=700)
    args = parser.parse_args()
    measure({}, args.saves, args.lines)
    measure({"inProcess": True}, args.saves, args.lines)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The 2^N reproducer of issue 31: analysis CPU per N, which must grow at most linearly in N.

    .venv/bin/python bench/blowup.py                      # N = 8, 16, 32, median of 3
    .venv/bin/python bench/blowup.py --sizes 8,16,32,64 --repeat 5 --keep /tmp/blowup

The source (self-written, `source(n)`) is the shape of Triton's ONNX Runtime backend: a free
function calls a method of a class of the file (inlined), which calls methods down to a
per-output reader with N `RETURN_IF_ORT_ERROR` checks inside a loop over the outputs. Each
failing check releases its status and returns an error the caller cannot prove non-NULL, so
the failing path goes round the loop with the released status left in the macro's local. An
engine that keeps states apart by what an `if` ahead tests, without asking whether the next
iteration assigns it first, keeps 2^N states at the loop head (main at 329aba1: N = 8 took
0.54 s, N = 10 stopped at the state bound with a note).

For each N it prints the blocks of the inlined function, the analysis CPU time of that
function (in this process, `time.process_time`, median of --repeat), the states merged by the
bound and the notes, then the growth from the smallest N to the largest against linear. This
prints figures; it asserts nothing (tests/test_bench.py checks the generator, untimed).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

ENTRY = "Execute"  # the free function everything is inlined into

_HEAD = """\
#include <onnxruntime_c_api.h>
#include <stddef.h>

typedef struct AppError AppError;
AppError* AppErrorNew(int code, const char* msg);
extern const OrtApi* ort_api;

#define RETURN_IF_ORT_ERROR(S)                              \\
  do {                                                      \\
    OrtStatus* status__ = (S);                              \\
    if (status__ != nullptr) {                              \\
      OrtErrorCode code = ort_api->GetErrorCode(status__);  \\
      ort_api->ReleaseStatus(status__);                     \\
      return AppErrorNew(code, "onnx runtime error");       \\
    }                                                       \\
  } while (false)

#define RETURN_IF_ERROR(X)   \\
  do {                       \\
    AppError* err__ = (X);   \\
    if (err__ != nullptr) {  \\
      return err__;          \\
    }                        \\
  } while (false)

class Instance {
 public:
  AppError* Execute(size_t count);
  ~Instance() { if (session_ != nullptr) ort_api->ReleaseSession(session_); }

 private:
  AppError* Process(size_t count);
  AppError* ReadOutputs(size_t count);
  AppError* ReadOutput(OrtValue* value);
  OrtValue** outputs_;
  OrtSession* session_;
};
"""

_TAIL = """
AppError* Instance::ReadOutputs(size_t count) {
  for (size_t i = 0; i < count; i++) {
    RETURN_IF_ERROR(ReadOutput(outputs_[i]));
  }
  return nullptr;
}

AppError* Instance::Process(size_t count) {
  RETURN_IF_ERROR(ReadOutputs(count));
  return nullptr;
}

AppError* Instance::Execute(size_t count) {
  RETURN_IF_ERROR(Process(count));
  return nullptr;
}

AppError* Execute(Instance* instance, size_t count) {
  AppError* err = instance->Execute(count);
  return err;
}
"""


def source(n: int) -> str:
    """The reproducer with `n` checks in the per-output reader."""
    decls = "\n".join(f"  size_t dims{i};" for i in range(n))
    checks = "\n".join(f"  RETURN_IF_ORT_ERROR(ort_api->GetStringTensorDataLength(value, &dims{i}));" for i in range(n))
    reader = ("\nAppError* Instance::ReadOutput(OrtValue* value) {\n  void* data;\n"
              "  RETURN_IF_ORT_ERROR(ort_api->GetTensorMutableData(value, &data));\n"
              f"{decls}\n{checks}\n  return nullptr;\n}}\n")
    return _HEAD + reader + _TAIL


def measure(path: Path, repeat: int) -> dict:
    """Parse once; analyze the whole file `repeat` times (callees first, as a run does) and time
    the entry function's analysis each time."""
    from ortlint.api import default_policy
    from ortlint.discover import SourceFile
    from ortlint.engine.analyze import FunctionAnalyzer, Options
    from ortlint.orchestration.analysis import Analysis
    from ortlint.orchestration.parsing import parse_file
    from ortlint.orchestration.program import Program
    policy = default_policy()
    unit = parse_file(SourceFile(str(path), "cpp"), policy)
    entry = next(fn for fn in unit.functions if fn.name == ENTRY)
    times: list[float] = []
    results: list = []
    original = FunctionAnalyzer.run

    def timed(self: FunctionAnalyzer, summarize: bool = True):  # noqa: ANN202
        started = time.process_time()
        result = original(self, summarize)
        if self.fn is entry:
            times.append(time.process_time() - started)
            results.append(result)
        return result

    FunctionAnalyzer.run = timed  # type: ignore[method-assign]
    try:
        for _ in range(repeat):
            analysis = Analysis(Program([unit]), policy, Options())
            analysis.summarize_all = True  # (the entry is called by nobody: analyze it all the same)
            analysis.run()
    finally:
        FunctionAnalyzer.run = original  # type: ignore[method-assign]
    last = results[-1]
    return {"blocks": len(entry.blocks), "seconds": statistics.median(times), "min": min(times),
            "widened": getattr(last, "widened", 0), "notes": [m for _line, m in last.notes]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8,16,32", help="values of N (comma list)")
    ap.add_argument("--repeat", type=int, default=3, help="analyses per N (the median is shown)")
    ap.add_argument("--keep", help="write the sources into this folder and keep them")
    ap.add_argument("--root", default=str(HERE.parent),
                    help="the checkout whose ortlint is measured (default: this one), to compare versions")
    args = ap.parse_args(argv)
    sys.path.insert(0, args.root)
    sizes = [int(s) for s in args.sizes.split(",")]
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ortlint-blowup-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    import ortlint
    print(f"ortlint from {Path(ortlint.__file__).parent.parent}")
    print(f"{'N':>4} {'blocks':>7} {'CPU s':>8} {'min s':>8} {'ms/block':>9} {'merged':>7}  notes")
    for n in sizes:
        path = folder / f"blowup_{n}.cpp"
        path.write_text(source(n), encoding="utf-8")
        r = measure(path, args.repeat)
        rows.append((n, r))
        print(f"{n:>4} {r['blocks']:>7} {r['seconds']:>8.3f} {r['min']:>8.3f} {1000 * r['seconds'] / r['blocks']:>9.3f} "
              f"{r['widened']:>7}  {'; '.join(r['notes']) or '-'}")
    if len(rows) > 1:
        (n0, r0), (n1, r1) = rows[0], rows[-1]
        grow = r1["seconds"] / r0["seconds"] if r0["seconds"] else float("inf")
        print(f"growth   N {n0} -> {n1} ({n1 / n0:.1f}x): CPU x{grow:.1f} "
              f"({'at most linear' if grow <= n1 / n0 else 'FASTER THAN LINEAR'}; an exponential engine: x2^{n1 - n0})")
    if not args.keep:
        for p in folder.glob("blowup_*.cpp"):
            p.unlink()
        folder.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())

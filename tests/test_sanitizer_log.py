"""The AddressSanitizer / LeakSanitizer log parser, on hand-written logs of every format it reads."""
from __future__ import annotations

from ortlint.sanitizer.log import (DOUBLE_FREE, LEAK, USE_AFTER_FREE, Frame, merge_repeats, parse_frame,
                                   parse_log)

LEAKS = """\
starting model test
=================================================================
==4242==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 1024 byte(s) in 1 object(s) allocated from:
    #0 0x7f2908cb89cf in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f2900001234 (/opt/ort/lib/libonnxruntime.so.1.17+0x8f1234)
    #2 0x562ba1d9616a in load_model /home/ci/build/src/model.c:42:17
    #3 0x562ba1d96200 in main /home/ci/build/src/main.c:9
    #4 0x7f2908a45249 in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58

Indirect leak of 64 byte(s) in 2 object(s) allocated from:
    #0 0x7f2908cb89cf in malloc (/lib/x86_64-linux-gnu/libasan.so.8+0xbfb00) (BuildId: 1d2f3e)
    #1 0x7f2900001300 (/opt/ort/lib/libonnxruntime.so.1.17+0x8f1300)
    #2 0x562ba1d9616a in load_model /home/ci/build/src/model.c:42:17

SUMMARY: AddressSanitizer: 1088 byte(s) leaked in 3 allocation(s).
"""

DOUBLE = """\
==77==ERROR: AddressSanitizer: attempting double-free on 0x602000000070 in thread T0:
    #0 0x7f3ab2ab76a8 in __interceptor_free ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:52
    #1 0x55851805cd3f in release_session /src/fake/fake_ort.c:64
    #2 0x55851805c442 in run /src/app/double_free.c:21

0x602000000070 is located 0 bytes inside of 8-byte region [0x602000000070,0x602000000078)
freed by thread T0 here:
    #0 0x7f3ab2ab76a8 in __interceptor_free ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:52
    #1 0x55851805c3ea in run /src/app/double_free.c:19

previously allocated by thread T0 here:
    #0 0x7f3ab2ab89cf in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x55851805c330 in run /src/app/double_free.c:12

SUMMARY: AddressSanitizer: double-free ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:52 in __interceptor_free
==77==ABORTING
"""

UAF = """\
==78==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000050 at pc 0x55b6 bp 0x7ffe sp 0x7ffd
READ of size 8 at 0x602000000050 thread T0
    #0 0x55b6c7dbcd55 in session_get_input_count /src/fake/fake_ort.c:48
    #1 0x55b6c7dbc47d in inspect /src/app/use_after_free.c:20:10
    #2 0x55b6c7dbc160 in _start (/tmp/san/use_after_free+0x1160)

0x602000000050 is located 0 bytes inside of 16-byte region [0x602000000050,0x602000000060)
freed by thread T0 here:
    #0 0x7f324f8b76a8 in __interceptor_free ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:52
    #1 0x55b6c7dbc3ea in inspect /src/app/use_after_free.c:17

previously allocated by thread T0 here:
    #0 0x7f324f8b89cf in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x55b6c7dbc340 in inspect /src/app/use_after_free.c:12

SUMMARY: AddressSanitizer: heap-use-after-free /src/fake/fake_ort.c:48 in session_get_input_count
Shadow bytes around the buggy address:
  0x0c047fff7fb0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
==78==ABORTING
"""


def test_symbolized_frame_with_column() -> None:
    assert parse_frame("    #2 0x562ba1d9616a in load_model /home/ci/build/src/model.c:42:17") == \
        Frame(2, "load_model", "/home/ci/build/src/model.c", 42, 17)


def test_symbolized_frame_without_column_and_cpp_signature() -> None:
    frame = parse_frame("#3 0x55 in Ort::Session::Session(Ort::Env&, char const*) /src/s.cc:7")
    assert frame == Frame(3, "Ort::Session::Session(Ort::Env&, char const*)", "/src/s.cc", 7)


def test_unsymbolized_frames() -> None:
    assert parse_frame("    #1 0x7f2900001234 (/opt/ort/lib/libonnxruntime.so.1.17+0x8f1234)") == \
        Frame(1, "", module="/opt/ort/lib/libonnxruntime.so.1.17", offset="0x8f1234")
    frame = parse_frame("#0 0x7f29 in malloc (/lib/x86_64-linux-gnu/libasan.so.8+0xbfb00) (BuildId: 1d2f3e)")
    assert frame == Frame(0, "malloc", module="/lib/x86_64-linux-gnu/libasan.so.8", offset="0xbfb00")


def test_not_a_frame() -> None:
    assert parse_frame("issue #12 is fixed") is None
    assert parse_frame("") is None


def test_direct_and_indirect_leaks() -> None:
    log = parse_log(LEAKS)
    assert [(r.kind, r.indirect, r.bytes, r.objects) for r in log.reports] == \
        [(LEAK, False, 1024, 1), (LEAK, True, 64, 2)]
    direct = log.reports[0]
    assert [f.index for f in direct.stack] == [0, 1, 2, 3, 4]
    assert direct.stack[2] == Frame(2, "load_model", "/home/ci/build/src/model.c", 42, 17)
    assert direct.stack[1].module.endswith("libonnxruntime.so.1.17")
    assert not log.problems and log.saw_sanitizer


def test_double_free_has_its_three_stacks() -> None:
    (r,) = parse_log(DOUBLE).reports
    assert r.kind == DOUBLE_FREE and r.bytes == 8 and r.objects == 1
    assert [f.line for f in r.stack] == [52, 64, 21]
    assert [f.line for f in r.freed] == [52, 19]
    assert [f.line for f in r.allocated] == [69, 12]
    assert not r.truncated


def test_use_after_free_has_access_and_stacks() -> None:
    (r,) = parse_log(UAF).reports
    assert r.kind == USE_AFTER_FREE and r.bytes == 16 and r.access == "READ of size 8"
    assert r.stack[1] == Frame(1, "inspect", "/src/app/use_after_free.c", 20, 10)
    assert r.stack[2].module == "/tmp/san/use_after_free"
    assert [f.line for f in r.freed] == [52, 17] and [f.line for f in r.allocated] == [69, 12]


def test_several_reports_interleaved_with_output_and_timestamps() -> None:
    stamped = "\n".join(f"2026-12-01T10:00:00.0000000Z {line}" for line in LEAKS.splitlines())
    text = "test 1 ok\n" + DOUBLE + "program says: hello\n#define X 1\n" + stamped + "\ntest 3\n" + UAF
    log = parse_log(text)
    assert [r.kind for r in log.reports] == [DOUBLE_FREE, LEAK, LEAK, USE_AFTER_FREE]
    assert [len(r.stack) for r in log.reports] == [3, 5, 3, 3]
    assert not log.problems


def test_program_output_inside_a_stack_is_skipped() -> None:
    text = LEAKS.replace("    #3 0x562ba1d96200", "worker 2: done\n    #3 0x562ba1d96200")
    assert [f.index for f in parse_log(text).reports[0].stack] == [0, 1, 2, 3, 4]


def test_repeated_reports_are_merged_with_totals() -> None:
    log = parse_log(LEAKS + LEAKS.replace("1024 byte(s) in 1", "2048 byte(s) in 2").replace("0x562ba1d9616a", "0x5600000000aa"))
    merged = merge_repeats(log.reports)
    assert [(r.bytes, r.objects, n) for r, n in merged] == [(3072, 3, 2), (128, 4, 2)]
    assert log.reports[0].bytes == 1024, "merging must not change the parsed reports"


def test_distinct_sites_are_not_merged() -> None:
    other = LEAKS.replace("model.c:42:17", "model.c:50:3")
    assert len(merge_repeats(parse_log(LEAKS + other).reports)) == 4


def test_truncated_leak_block() -> None:
    log = parse_log("==1==ERROR: LeakSanitizer: detected memory leaks\n\nDirect leak of 10 byte(s) in 1 object(s) allocated from:\n")
    (r,) = log.reports
    assert r.truncated and r.bytes == 10 and not r.stack
    assert log.problems and "truncated" in log.problems[0][1] and log.problems[0][0] == 3


def test_truncated_use_after_free_without_its_other_stacks() -> None:
    cut = UAF.split("0x602000000050 is located")[0]
    log = parse_log(cut)
    (r,) = log.reports
    assert r.truncated and len(r.stack) == 3 and not r.freed
    assert "freed-by" in log.problems[0][1]


def test_garbage_gives_no_report_and_no_error() -> None:
    for text in ("", "\x00\x01\x02 binary \ufffd\ufffd", "random text\n#0 #1 0x\n==12==", "Direct leak of many bytes"):
        log = parse_log(text)
        assert log.reports == [] and not log.saw_sanitizer


def test_other_asan_errors_are_listed_as_ignored() -> None:
    log = parse_log("==9==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x1 at pc 0x2\n"
                    "    #0 0x3 in f /src/a.c:3\n\nSUMMARY: AddressSanitizer: heap-buffer-overflow /src/a.c:3 in f\n")
    assert log.reports == [] and log.ignored == [(1, "heap-buffer-overflow")] and log.saw_sanitizer


def test_leak_announcement_without_blocks_is_a_truncated_report() -> None:
    log = parse_log("tests ok\n==3==ERROR: LeakSanitizer: detected memory leaks\n\n")
    (r,) = log.reports
    assert r.kind == LEAK and r.truncated and r.line == 2 and r.bytes == 0
    assert "ends before the first leak block" in log.problems[0][1]
    assert parse_log(LEAKS).problems == []


def test_paths_with_spaces_and_windows_paths() -> None:
    assert parse_frame("#2 0x55 in load /home/me/my models/src/a.c:12:3") == \
        Frame(2, "load", "/home/me/my models/src/a.c", 12, 3)
    assert parse_frame("#2 0x55 in load C:\\\\work\\\\src\\\\a.c:12") == Frame(2, "load", "C:\\\\work\\\\src\\\\a.c", 12)
    assert parse_frame("#1 0x55 in run ../../src/b.c:7") == Frame(1, "run", "../../src/b.c", 7)
    assert parse_frame("#1 0x55 in run src/b.c:7") == Frame(1, "run", "src/b.c", 7)

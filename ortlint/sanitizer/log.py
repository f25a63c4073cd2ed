"""Reading AddressSanitizer / LeakSanitizer output into plain data.

The log is what a test run printed: sanitizer reports mixed with the program's own output, CI
time stamps in front of lines, several processes one after the other. The parser therefore
looks for the sanitizer's own markers anywhere in a line and ignores everything else; it never
raises on bad input. A log that ends inside a report keeps what was read and says so in
`SanitizerLog.problems`.

Recognized reports (the kinds ortlint can explain; other ASan errors are listed in `ignored`):

    Direct leak of 24 byte(s) in 1 object(s) allocated from:        (and "Indirect leak of")
    ==1==ERROR: AddressSanitizer: attempting double-free on 0x... in thread T0:
    ==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x... at pc ...

with frames `#k 0xADDR in FUNC FILE:LINE[:COL]` or unsymbolized `#k 0xADDR (module+0xOFF)`, and for
the two ASan errors the "freed by thread ... here:" and "previously allocated by thread ... here:"
stacks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

LEAK = "leak"
DOUBLE_FREE = "double-free"
USE_AFTER_FREE = "use-after-free"

_LEAK_RE = re.compile(r"(Direct|Indirect) leak of (\d+) byte\(s\) in (\d+) object\(s\) allocated from:")
_ERROR_RE = re.compile(r"==\d+==ERROR: (AddressSanitizer|LeakSanitizer): (\S+)")
_FRAME_RE = re.compile(r"#(\d+) +0x[0-9a-fA-F]+\b")
_MODULE_RE = re.compile(r"^(?:(.*?) +)?\(([^()]*?)\+(0x[0-9a-fA-F]+)\)$")
_LOCATION_RE = re.compile(r"^(.*?):(\d+)(?::(\d+))?$")
_SPACED_PATH_RE = re.compile(r"^(\S.*?) ((?:[A-Za-z]:[\\/]|\.{0,2}/)\S.*:\d+(?::\d+)?)$")
_BUILD_ID_RE = re.compile(r" +\(BuildId: [0-9a-fA-F]+\)$")
_REGION_RE = re.compile(r"is located (\d+) bytes? (?:inside|to the (?:left|right)) of (\d+)-byte region")
_FREED_RE = re.compile(r"freed by thread \S+(?: .*)? here:")
_ALLOCATED_RE = re.compile(r"(?:previously )?allocated by thread \S+(?: .*)? here:")
_ACCESS_RE = re.compile(r"\b(READ|WRITE) of size (\d+) at 0x[0-9a-fA-F]+")
_SUMMARY_RE = re.compile(r"SUMMARY: (AddressSanitizer|LeakSanitizer)")

_ERROR_KINDS = {"attempting": DOUBLE_FREE, "heap-use-after-free": USE_AFTER_FREE}


@dataclass(frozen=True)
class Frame:
    """One stack frame; `path`/`line` are None when the frame is unsymbolized or has no line."""

    index: int
    function: str
    path: str | None = None
    line: int | None = None
    col: int | None = None
    module: str | None = None  # `(libonnxruntime.so+0x1234)` frames
    offset: str | None = None

    def describe(self) -> str:
        where = f"{self.path}:{self.line}" if self.path and self.line else \
            f"{self.module}+{self.offset}" if self.module else (self.path or "?")
        return f"{self.function or '??'} {where}"


@dataclass
class SanitizerReport:
    """One runtime error. For a leak `stack` is the allocation stack; for a double free or use
    after free it is the stack of the failing free / access, with `freed` and `allocated`."""

    kind: str
    line: int  # where it starts in the log (1-based)
    bytes: int = 0
    objects: int = 0
    indirect: bool = False
    stack: list[Frame] = field(default_factory=list)
    freed: list[Frame] = field(default_factory=list)
    allocated: list[Frame] = field(default_factory=list)
    access: str = ""  # "READ of size 8" for a use after free
    truncated: bool = False

    def headline(self) -> str:
        if self.kind == LEAK:
            return f"{'Indirect' if self.indirect else 'Direct'} leak of {self.bytes} byte(s) in {self.objects} object(s)"
        what = "double free" if self.kind == DOUBLE_FREE else "heap use after free"
        size = f" of a block of {self.bytes} byte(s)" if self.bytes else ""
        access = f" ({self.access})" if self.access else ""
        return f"{what}{size}{access}"


@dataclass
class SanitizerLog:
    reports: list[SanitizerReport] = field(default_factory=list)
    ignored: list[tuple[int, str]] = field(default_factory=list)  # (log line, other ASan error kind)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (log line, what is wrong with the log)
    saw_sanitizer: bool = False  # any sanitizer marker at all (to tell "clean run" from "not a sanitizer log")


def parse_frame(text: str) -> Frame | None:
    """`#3 0x55d0 in load_model /src/model.c:42:7` -> Frame; None when the line holds no frame."""
    m = _FRAME_RE.search(text)
    if not m:
        return None
    index = int(m.group(1))
    rest = _BUILD_ID_RE.sub("", text[m.end():].strip())
    if not rest.startswith("in "):  # `#1 0x55d0 (/app/a.out+0x11c9)`: no "in FUNC"
        module = _MODULE_RE.match(rest)
        return Frame(index, "", module=module.group(2), offset=module.group(3)) if module else Frame(index, "")
    rest = rest[3:].strip()
    module = _MODULE_RE.match(rest)
    if module:
        return Frame(index, module.group(1) or "", module=module.group(2), offset=module.group(3))
    spaced = _SPACED_PATH_RE.match(rest)  # `in f /home/my dir/a.c:3`: a path may hold spaces
    function, _, location = (spaced.group(1), " ", spaced.group(2)) if spaced else rest.rpartition(" ")
    if not function:  # `in FUNC` alone, without a location
        return Frame(index, location)
    loc = _LOCATION_RE.match(location)
    if loc:
        return Frame(index, function, loc.group(1), int(loc.group(2)), int(loc.group(3)) if loc.group(3) else None)
    return Frame(index, function, location)


class _LogReader:
    """A line-by-line state machine: the report being read and the stack being filled."""

    def __init__(self) -> None:
        self.log = SanitizerLog()
        self.current: SanitizerReport | None = None
        self.stack: list[Frame] | None = None
        self.leaks_announced = 0  # log line of "detected memory leaks" not yet followed by a leak block

    def finish(self) -> None:
        """Close the report being read (a header without frames is kept, marked truncated)."""
        if self.current is not None:
            if not self.current.stack:
                self.current.truncated = True
                self.log.problems.append((self.current.line, f"the {self.current.kind} report starting here has "
                                                             f"no stack frames (truncated log?)"))
            self.log.reports.append(self.current)
        elif self.leaks_announced:
            self.log.reports.append(SanitizerReport(LEAK, self.leaks_announced, truncated=True))
            self.log.problems.append((self.leaks_announced, "LeakSanitizer detected leaks here, but the log ends "
                                                            "before the first leak block (truncated log?)"))
        self.current, self.stack, self.leaks_announced = None, None, 0

    def start(self, report: SanitizerReport) -> None:
        self.finish()
        self.log.saw_sanitizer = True
        self.current, self.stack = report, report.stack

    def feed(self, number: int, line: str) -> None:
        frame = parse_frame(line) if "#" in line else None
        if frame is not None:
            if self.stack is not None and (not self.stack or frame.index > self.stack[-1].index):
                self.stack.append(frame)
            return  # a frame outside a report, or out of order (program output): not ours
        current = self.current
        if m := _LEAK_RE.search(line):
            self.leaks_announced = 0
            self.start(SanitizerReport(LEAK, number, int(m.group(2)), int(m.group(3)),
                                       indirect=m.group(1) == "Indirect"))
        elif m := _ERROR_RE.search(line):
            kind = _ERROR_KINDS.get(m.group(2))
            if kind is not None:
                self.start(SanitizerReport(kind, number, objects=1))
                return
            self.finish()
            self.log.saw_sanitizer = True
            if m.group(2) == "detected":  # "detected memory leaks": the leak blocks follow
                self.leaks_announced = number
            else:
                self.log.ignored.append((number, m.group(2)))
        elif current is not None and current.kind != LEAK and _FREED_RE.search(line):
            self.stack = current.freed
        elif current is not None and current.kind != LEAK and _ALLOCATED_RE.search(line):
            self.stack = current.allocated
        elif current is not None and (m := _REGION_RE.search(line)):
            current.bytes = int(m.group(2))
        elif current is not None and (m := _ACCESS_RE.search(line)):
            current.access = f"{m.group(1)} of size {m.group(2)}"
        elif _SUMMARY_RE.search(line):
            self.log.saw_sanitizer = True
            self.finish()

    def result(self) -> SanitizerLog:
        self.finish()
        for report in self.log.reports:
            if report.kind != LEAK and not report.truncated and (not report.freed or not report.allocated):
                report.truncated = True
                missing = "freed-by" if not report.freed else "allocated-by"
                self.log.problems.append((report.line, f"the {report.kind} report starting here lacks its "
                                                       f"{missing} stack (truncated log?)"))
        return self.log


def parse_log(text: str) -> SanitizerLog:
    """Every recognized report in `text`, in log order (no merging; see `merge_repeats`)."""
    reader = _LogReader()
    for number, raw in enumerate(text.splitlines(), 1):
        reader.feed(number, raw.rstrip())
    return reader.result()


def stack_key(frames: list[Frame]) -> tuple:
    """What identifies a code path in a stack: functions and lines (not addresses, which ASLR moves)."""
    return tuple((f.function, f.path, f.line, f.module, f.offset) for f in frames)


def merge_repeats(reports: list[SanitizerReport]) -> list[tuple[SanitizerReport, int]]:
    """Reports of one site (same kind and stacks) become one, with summed bytes and objects;
    returns each with how many times it was reported, in order of first appearance."""
    merged: dict[tuple, tuple[SanitizerReport, int]] = {}
    for r in reports:
        key = (r.kind, r.indirect, stack_key(r.stack), stack_key(r.freed), stack_key(r.allocated))
        if key in merged:
            first, count = merged[key]
            first.bytes += r.bytes if r.kind == LEAK else 0
            first.objects += r.objects
            merged[key] = (first, count + 1)
        else:
            copy = SanitizerReport(r.kind, r.line, r.bytes, r.objects, r.indirect, list(r.stack), list(r.freed),
                                   list(r.allocated), r.access, r.truncated)
            merged[key] = (copy, 1)
    return list(merged.values())

"""Reading source files robustly and neutralizing decoration macros before parsing."""
from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from ...chunked_input import ChunkedInput
from ...fileio import read_prefix
from ...findings import LIMIT
from ...policy import Policy

MAX_BYTES = 16 * 1024 * 1024
# What tree-sitter may spend parsing one file, counted in its own work: it calls its progress
# callback once per 100 parse operations (shifts, reduces, recovery steps), some 50 000 times per
# second of CPU. Its error recovery can be superlinear on broken input; past the limit the file
# gets a "could not parse" warning instead of stalling the run. A count, not a clock: the same
# file stops at the same point on an idle and on a busy machine (a wall-clock limit of 20 s
# dropped files on a loaded machine only). Real code needs at most 23 calls per KB (14 525 files
# of 8 public repositories): the limit below leaves at least 6x that.
PARSE_STEPS_BASE = 100_000  # about 2 s of CPU
PARSE_STEPS_PER_KB = 50  # about 1 s of CPU per MB
# What tree-sitter may grow the process by while parsing one file (MB; 0: no cap). The workers set
# it below their memory limit, so that error recovery that allocates without end is cancelled
# (a "could not parse" notice) before an allocation fails inside the native parser.
PARSE_MEMORY_MB = 0
_CHUNK = 1 << 12  # tree-sitter re-reads from arbitrary offsets while it recovers from errors


class ParseTimeout(Exception):
    """tree-sitter did not finish within its step limit (`parse_steps`), or needed more memory
    than it may (`memory`: a front end may then parse the file a piece at a time)."""

    memory = False


_SPACES = bytes(b if b == ord("\n") else ord(" ") for b in range(256))  # every byte but newline -> space


@dataclass
class SourceText:
    path: str
    data: bytes  # what the parser sees: decorations blanked, same length as the file
    original: bytes
    problem: str | None = None  # why the file cannot be analyzed at all

    @property
    def lines(self) -> int:
        return self.original.count(b"\n") + (1 if self.original and not self.original.endswith(b"\n") else 0)


def read_source(path: str, policy: Policy, data: bytes | None = None, blank: bool = True) -> SourceText:
    """Read a file as bytes; never raise. Binary or huge files come back with a `problem`.
    `blank=False`: no decoration blanking (Java parses the original bytes)."""
    if data is None:
        try:
            data = read_prefix(path, MAX_BYTES + 1)  # a regular file: a FIFO must not block
        except OSError as exc:
            return SourceText(path, b"", b"", problem=f"cannot read file: {exc.strerror or exc}")
    if len(data) > MAX_BYTES:
        return SourceText(path, b"", data[:0], problem=f"file is larger than {MAX_BYTES // (1024 * 1024)} MB; skipped")
    if b"\0" in data[:8192]:
        return SourceText(path, b"", data, problem="binary file (contains NUL bytes); skipped")
    return SourceText(path, blank_decorations(data, policy) if blank else data, data)


def blank_decorations(data: bytes, policy: Policy) -> bytes:
    """Replace known decoration macros (JNIEXPORT, _In_, ORT_API_CALL, ...) by spaces of the same
    length, so that tree-sitter sees plain C while every byte offset stays where it was."""
    pattern = _bytes_pattern(policy)
    if pattern is None:
        return data

    def spaces(m: re.Match[bytes]) -> bytes:
        return m.group(0).translate(_SPACES)

    return _rename(pattern.sub(spaces, data), policy)


def _rename(data: bytes, policy: Policy) -> bytes:
    """`[preprocess] rename`: `ORT_TRY` -> `try    `, same length (see policy.py)."""
    renames = getattr(policy, "rename_words", None)
    if not renames or not any(name.encode() in data for name in renames):
        return data
    table = {name.encode(): code.encode().ljust(len(name)) for name, code in renames.items()}
    words = re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in sorted(table, key=len, reverse=True)) + rb")\b")
    return words.sub(lambda m: table[m.group(0)], data)


def _bytes_pattern(policy: Policy) -> re.Pattern[bytes] | None:
    cached = getattr(policy, "_blank_bytes", None)
    if cached is None:
        cached = _quick_blank_pattern(policy)
        if cached is None:
            text = policy.blank_regex()
            cached = re.compile(text.pattern.encode()) if text is not None else re.compile(rb"(?!x)x")
        policy._blank_bytes = cached  # type: ignore[attr-defined]
    return cached


_CALL_ARGUMENTS = r"\s*\([^()]*(?:\([^()]*\)[^()]*)*\)"  # as in Policy.blank_regex
_BOUNDARY_THEN_WORD_CHAR = re.compile(r"\\b([A-Za-z_])(?![*+?{])")


def _quick_blank_pattern(policy: Policy) -> re.Pattern[bytes] | None:
    """`Policy.blank_regex()` written so that Python's re can jump to the bytes that may start
    a match (a third of the time on real files). Every alternative of that regex is `\\b`, a
    word character `c`, the rest: here they are grouped by `c`, in their order, as
    `c(?<![A-Za-z0-9_]c)(?:rest1|rest2|...)`, the look-behind saying what `\\b` says before a
    word character (no word character before it). Alternatives starting with different
    characters never match at the same place, and `\\b(?:A|B)T` tries `AT` then `BT`, so the
    first match is the same. None when a decoration does not start with a word character (or a
    pattern not with `\\b` and one): the policy's regex is used as it is."""
    words = getattr(policy, "blank_words", None)
    calls = getattr(policy, "blank_calls", None)
    patterns = getattr(policy, "blank_patterns", None)
    if words is None or calls is None or patterns is None:
        return None
    by_first: dict[str, list[str]] = {}
    for name in sorted(calls, key=len, reverse=True):
        if not _word_start(name):
            return None
        by_first.setdefault(name[0], []).append(re.escape(name[1:]) + _CALL_ARGUMENTS)
    for name in sorted(words, key=len, reverse=True):
        if not _word_start(name):
            return None
        by_first.setdefault(name[0], []).append(re.escape(name[1:]) + r"\b")
    for pattern in patterns:
        m = _BOUNDARY_THEN_WORD_CHAR.match(pattern)
        if m is None:
            return None
        by_first.setdefault(m.group(1), []).append(pattern[m.end():])
    if not by_first:
        return None
    return re.compile("|".join(f"{c}(?<![A-Za-z0-9_]{c})(?:{'|'.join(rests)})" for c, rests in by_first.items()).encode())


def _word_start(name: str) -> bool:
    return bool(name) and (name[0] == "_" or name[0].isascii() and name[0].isalpha())


def parse_steps(size: int) -> int:
    """The progress callbacks tree-sitter may make parsing `size` bytes (see PARSE_STEPS_BASE)."""
    return PARSE_STEPS_BASE + PARSE_STEPS_PER_KB * (size >> 10)


class StepCounter:
    """tree-sitter's progress callback: counts its calls (parse work, see PARSE_STEPS_BASE) and
    cancels the parse past `limit` calls or past the parse memory cap. `reason()` says why it
    cancelled, as a ParseTimeout (None: it did not)."""

    __slots__ = ("limit", "calls", "memory_cap", "over_memory")

    def __init__(self, limit: int):
        self.limit = limit
        self.calls = 0
        self.memory_cap = parse_memory_cap()
        self.over_memory = False

    def __call__(self, *_state: object) -> bool:
        count = self.calls = self.calls + 1
        if count & 63 == 0 and over_memory_cap(self.memory_cap):
            self.over_memory = True
            return True
        return count > self.limit

    def reason(self) -> ParseTimeout | None:
        if self.over_memory:
            return memory_cap_reached()
        if self.calls > self.limit:
            return ParseTimeout(f"{LIMIT}tree-sitter stopped parsing this file after {self.limit * 100:,} parse steps "
                                "(error recovery on malformed code); could not parse this file, it is not analyzed")
        return None


def parse_limited(parser: object, data: bytes, steps: int | None = None, old_tree: object = None) -> object:
    """`parser.parse(data)`, cancelled after `steps` progress callbacks (default:
    `parse_steps(len(data))`) or past the parse memory cap: raises ParseTimeout. tree-sitter
    calls its progress callback only when it reads through a callback, so the bytes are handed
    over in chunks (same tree, same offsets)."""
    counter = StepCounter(parse_steps(len(data)) if steps is None else steps)
    source = ChunkedInput(data, _CHUNK)  # (py-tree-sitter keeps the chunks: released below)
    try:
        if old_tree is not None:  # an edited tree of the same text: parsed again incrementally
            return parser.parse(source.read, old_tree, progress_callback=counter)  # type: ignore[attr-defined]
        return parser.parse(source.read, progress_callback=counter)  # type: ignore[attr-defined]
    except ValueError as exc:  # py-tree-sitter reports a cancelled parse as "Parsing failed"
        reason = counter.reason()
        if reason is not None:
            raise reason from exc
        raise
    except (MemoryError, SystemError) as exc:  # the worker's memory limit, hit inside the parse or its callbacks
        error = ParseTimeout(f"{LIMIT}tree-sitter ran out of memory parsing this file (the memory limit); could not "
                             "parse this file, it is not analyzed")
        error.memory = True
        raise error from exc
    finally:
        source.release()


def chunked_input(data: bytes) -> ChunkedInput:
    """A read callback over `data` for any front end's parse; call `release()` once the parse
    returned (py-tree-sitter keeps every chunk it was given: see chunked_input)."""
    return ChunkedInput(data, _CHUNK)


def parse_memory_cap() -> int:
    """The resident size past which a parse that starts now is cancelled (PARSE_MEMORY_MB above
    the current size; 0: no cap). Every front end's parse asks it (`over_memory_cap`) from
    tree-sitter's progress callback."""
    return _resident_bytes() + (PARSE_MEMORY_MB << 20) if PARSE_MEMORY_MB else 0


def over_memory_cap(cap: int) -> bool:
    return bool(cap) and _resident_bytes() > cap


def memory_cap_reached() -> ParseTimeout:
    error = ParseTimeout(f"{LIMIT}tree-sitter needed more than {PARSE_MEMORY_MB} MB to parse this file; could "
                         "not parse this file, it is not analyzed")
    error.memory = True
    return error


def _resident_bytes() -> int:
    """This process's resident memory (Linux; 0 elsewhere, which turns the memory cap off)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


# ----------------------------------------------------------------------------- lines that start with a pattern


def line_start_matches(pattern: re.Pattern[bytes], data: bytes, pos: int = 0) -> Iterator[re.Match[bytes]]:
    """The matches of `pattern` that begin a line after optional blanks, in order: what
    `re.compile(rb"^[ \\t]*" + pattern.pattern, re.M).finditer(data, pos)` finds, with the same
    groups and ends (only `start()` differs: here it is the pattern's first byte).

    A `^`-anchored multi-line pattern is tried at every position of the text (Python's re has no
    faster way to find it), which made each of these whole-file passes cost a tree-sitter parse
    of a tenth of the file. `pattern` must begin with a byte that is neither a blank nor a newline
    (`#`, a name), so the search jumps from candidate to candidate; a candidate with anything
    but blanks before it on its line (or a line start before `pos`) is skipped, and the search
    goes on at the next line: every later candidate on the same line has that candidate's first
    byte (not a blank) before it, so it is skipped too. (Going on one byte after it, as the
    anchored pattern would, found and skipped each such candidate in turn: `foo(bar(x))` in
    the middle of a line gave one search per letter for a pattern like `NAME(`.)"""
    search = pattern.search
    find = data.find
    while True:
        m = search(data, pos)
        if m is None:
            return
        start = first_blank = m.start()
        while first_blank > pos and data[first_blank - 1] in _BLANKS:
            first_blank -= 1
        if first_blank == 0 or data[first_blank - 1] == _NEWLINE:  # (first_blank >= pos)
            yield m
            pos = m.end()
        else:
            newline = find(b"\n", start)
            if newline < 0:
                return
            pos = newline + 1


def line_start_search(pattern: re.Pattern[bytes], data: bytes) -> re.Match[bytes] | None:
    """The first of `line_start_matches`, or None."""
    return next(line_start_matches(pattern, data), None)


_BLANKS = (ord(" "), ord("\t"))
_NEWLINE = ord("\n")


# ----------------------------------------------------------------------------- statement macros

# at the start of a line (line_start_matches)
_DEFINE = re.compile(rb"#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)\n]*)\)[ \t]*((?:[^\n\\]|\\\r?\n|\\)*)")
_STATEMENT_START = re.compile(r"^\s*(?:do\b|if\b|for\b|while\b|switch\b|return\b|goto\b|throw\b|\{)")
_NOT_A_STATEMENT_AFTER = b";,)]?:.=+-*/%&|^<>!{"


def scan_function_macros(data: bytes, lines: bool = False) -> list[tuple]:
    """Every `#define NAME(params) body` of the text, wherever it is (a `#define` inside a
    function body too, which the syntax tree walk of file-level declarations does not see):
    (name, params, body, variadic), and with `lines` the 1-based line of the `#define`."""
    out: list[tuple] = []
    for m in line_start_matches(_DEFINE, data):
        params = [p.strip() for p in m.group(2).decode("utf-8", "replace").split(",") if p.strip()]
        variadic = bool(params) and params[-1] == "..."
        found = (m.group(1).decode(), params[:-1] if variadic else params, m.group(3).decode("utf-8", "replace"), variadic)
        out.append(found + (data.count(b"\n", 0, m.start()) + 1,) if lines else found)
    return out


def is_statement_body(body: str) -> bool:
    """A macro body that is a statement (`do {...} while (0)`, `if (...) ...`, `{...}`), so an
    invocation of it is a whole statement that may be written without `;`."""
    text = body.replace("\\\n", " ").strip()
    return bool(_STATEMENT_START.match(text)) or text.endswith(";") or text.endswith("}")


_BODY_NOISE = re.compile(r"/\*.*?(?:\*/|$)|//[^\n]*|\\\r?\n", re.S)  # comments, line continuations


def is_complete_statement_body(body: str) -> bool:
    """A macro body that ends its own statement: its last token is `}` (`if (c) {...}`, `{...}`,
    a `switch`) or `;`. Whatever follows an invocation of it starts the next statement, even
    `*out = ...` or `++n` (which after `CHECK(x)` of a `do {...} while (0)` body, ending with
    `)` and needing the invocation's `;`, could continue an expression). `body` has its
    decorations blanked already (`{...} ORT_NOEXCEPT_END` ends with `}`)."""
    return _BODY_NOISE.sub(" ", body).rstrip().endswith((";", "}"))


def statement_macro_sets(data: bytes, visible: object, policy: Policy) -> tuple[set[str], set[str]]:
    """(names, complete). `names`: the statement-like function-like macros a file can see that
    it uses at the start of a line: its own `#define`s (anywhere, a function body included), its
    headers' (`visible.macros`) and the policy's `[[macro]]` shapes. `complete`: those of them,
    used anywhere in the file, whose body (decorations blanked) is a complete statement
    (is_complete_statement_body), for terminate_statement_macros."""
    bodies: dict[str, str] = {}
    for m in line_start_matches(_DEFINE, data):
        if is_statement_body(body := m.group(3).decode("utf-8", "replace")):
            bodies[m.group(1).decode()] = body
    for name, found in getattr(visible, "macros", {}).items():
        if found.params is not None and name not in bodies and is_statement_body(found.body):
            bodies[name] = found.body
    for name, shape in getattr(policy, "macro_shapes", {}).items():
        if shape.statement and name not in bodies:
            bodies[name] = shape.body
    # `in` first: most names do not occur at all, and a substring test is cheaper still
    used = {n: body for n, body in bodies.items() if n.encode() in data}
    names = {n for n in used if line_start_search(_invocation_of(n), data) is not None}
    complete = {n for n, body in used.items() if _complete_after_blanking(body, policy)}
    return names, complete


def _complete_after_blanking(body: str, policy: Policy) -> bool:
    """`is_complete_statement_body` of `body` with its decorations blanked. The files of a tree
    see the same header macros: the answer is kept per policy (like its blanking regex)."""
    cache = getattr(policy, "_complete_bodies", None)
    if cache is None:
        cache = policy._complete_bodies = {}  # type: ignore[attr-defined]
    found = cache.get(body)
    if found is None:
        found = cache[body] = is_complete_statement_body(
            blank_decorations(body.encode(), policy).decode("utf-8", "replace"))
    return found


@functools.lru_cache(maxsize=4096)
def _invocation_of(name: str) -> re.Pattern[bytes]:
    """`NAME (`, group 1 the name (at the start of a line: line_start_matches)."""
    return re.compile(rb"(" + re.escape(name.encode()) + rb")[ \t]*\(")


def line_start_invocations(data: bytes, names: Iterable[str]) -> list[re.Match[bytes]]:
    """`NAME (` at the start of a line for any of `names`, in order (group 1: the name); what
    `^[ \\t]*(NAME1|NAME2|...)[ \\t]*\\(` (re.M) finds. One search per name, not one for all
    names: Python's re finds a literal quickly, an alternation of them only by trying every
    position. A name is followed by `(` or a blank, so a line matches at most one name."""
    found: list[re.Match[bytes]] = []
    for name in names:
        if name.encode() in data:
            found.extend(line_start_matches(_invocation_of(name), data))
    found.sort(key=_match_start)
    return found


def _match_start(m: re.Match[bytes]) -> int:
    return m.start()


def terminate_statement_macros(data: bytes, names: set[str], complete: AbstractSet[str] = frozenset()) -> bytes:
    """Give a `;` to statement macros invoked without one (`CHECK(st)` ending a line, then the
    next statement), which tree-sitter would otherwise glue to the next statement (as a
    declaration of type CHECK, or a multiplication). The `;` replaces the first blank after the
    invocation (the next line's indentation), so every byte offset, line and column stays.

    A macro of `complete` (its body ends its statement: is_complete_statement_body) is
    terminated before any token that can start a statement, `*out = ...`, `&`, `++`, `--` and
    `{` included (`HAND_OVER(f, n)\\n  *kept = malloc(n);` was a declaration of a local `kept`),
    and when the next statement follows on the same line (`HAND_OVER(a, n) HAND_OVER(b, n)`),
    the blank right after its `)` becomes the `;` (see _split_line)."""
    if not names:
        return data
    out = bytearray(data)
    for m in line_start_invocations(data, names):
        start = m.start(1)
        if not _starts_statement(data, start):
            continue
        end = _closing_paren(data, m.end() - 1)
        if end is None:
            continue
        is_complete = m.group(1).decode() in complete and not _continues_line(data, start)
        if is_complete:
            last = _split_line(data, out, start, end, complete)
            if last is None:
                continue
            start, end = last
        nxt = _next_token(data, end)
        if nxt is None or data.startswith(b"else", nxt):
            continue
        if data[nxt] in _NOT_A_STATEMENT_AFTER and not (is_complete and _starts_next_statement(data, nxt)):
            continue
        blank = _first_blank_after(data, end)
        if blank is not None and blank < nxt and data[blank:blank + 1] in (b" ", b"\t"):
            out[blank] = ord(";")
        elif (data[nxt] == ord("#") or is_complete and _next_statement(data, nxt)) and start > 0 \
                and out[start - 1] in b" \t" and b"\n" not in data[start:end]:
            # no blank before the next line (a `#if` line, or a complete macro's next statement,
            # at column 0): the invocation, on one line, moves one column left into its own
            # indentation and the `;` takes its last byte (only that line's columns change, by one)
            out[start - 1:end - 1] = data[start:end]
            out[end - 1] = ord(";")
    return bytes(out)


def _split_line(data: bytes, out: bytearray, start: int, end: int, complete: AbstractSet[str]) -> tuple[int, int] | None:
    """A complete statement macro's invocation (`start`, `end`: its name, past its `)`) followed
    on its line by the next statement: the blank right after the `)` becomes the `;` in `out`
    (same length; a `)` then a newline is left to the caller, which uses the next line's
    indentation). When that statement is another complete invocation, the same goes on with
    it. Returns the last invocation on the line when a newline follows it (the caller
    terminates it as any other), None when the line is done."""
    while True:
        nxt = _next_token(data, end)
        if nxt is None or data[end] not in b" \t" or b"\n" in data[end:nxt]:
            return start, end
        if not _next_statement(data, nxt):
            return None  # `\` (a `#define`'s line goes on), `}`, an operator: left as it is
        out[end] = ord(";")
        call = _CALL.match(data, nxt)
        close = _closing_paren(data, call.end() - 1) if call and call.group(1).decode() in complete else None
        if close is None:
            return None
        start, end = nxt, close


_CALL = re.compile(rb"([A-Za-z_]\w*)[ \t]*\(")
_NAME_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_(")  # and `(`: `(void)x;`


def _continues_line(data: bytes, start: int) -> bool:
    """Does the line of `start` continue the previous one (`\\` before its newline: a
    `#define`'s body, which is not code to terminate)?"""
    i = data.rfind(b"\n", 0, start) - 1
    if i >= 0 and data[i] == ord("\r"):
        i -= 1
    return i >= 0 and data[i] == ord("\\")


def _next_statement(data: bytes, at: int) -> bool:
    """Does the token at `at` start a statement after a complete one: a name but `else`, `(`,
    or one of _starts_next_statement?"""
    return data[at] in _NAME_START and not data.startswith(b"else", at) or _starts_next_statement(data, at)


def _starts_next_statement(data: bytes, at: int) -> bool:
    """Can the token at `at`, one of _NOT_A_STATEMENT_AFTER, start a statement after a complete
    one? A dereference or address (`*p = ...`, not `*=`), `++` / `--`, or a block."""
    two = data[at:at + 2]
    return two in (b"++", b"--") or data[at] == ord("{") or data[at] in b"*&" and two not in (b"*=", b"&=", b"&&")


def _starts_statement(data: bytes, start: int) -> bool:
    """Is the token before `start` the end of a statement or of a statement's head?"""
    i = _before_blanks_and_line_comments(data, start)
    if i < 0:
        return False
    if data[i] in b";{}:":
        return True
    line_start = data.rfind(b"\n", 0, i) + 1
    if data[line_start:i + 1].lstrip().startswith(b"#"):
        return True  # after a preprocessor line (`#if X`, `#endif`)
    if data[i] == ord(")"):
        return True  # `if (c)` / `for (...)` heads; a call continued on a new line would need an operator first
    return data[max(0, i - 3):i + 1] == b"else" or data[i] == ord("/") and data[i - 1] in b"*/"


def _before_blanks_and_line_comments(data: bytes, start: int) -> int:
    """The offset of the last byte before `start` that is neither a blank nor in a `//` comment
    (`f(x);  // note` then a new line: the `;`); -1 when there is none."""
    i = start - 1
    while True:
        while i >= 0 and data[i] in b" \t\r\n":
            i -= 1
        if i < 0:
            return i
        line_start = data.rfind(b"\n", 0, i) + 1
        comment = data.find(b"//", line_start, i + 1)
        if comment < 0 or data[line_start:comment].lstrip().startswith(b"#") or data.count(b'"', line_start, comment) % 2:
            return i
        i = comment - 1


_PAREN_SCAN = re.compile(rb"[\"'();{]")  # what _closing_paren looks at (the rest is skipped in C)


def _closing_paren(data: bytes, open_at: int, limit: int = 1 << 16) -> int | None:
    """Offset just past the `)` matching the `(` at `open_at` (strings and chars skipped)."""
    depth, i, end = 0, open_at, min(len(data), open_at + limit)
    search = _PAREN_SCAN.search
    while i < end:
        m = search(data, i, end)
        if m is None:
            return None
        i = m.start()
        c = data[i]
        if c in b"\"'":
            close = data.find(bytes([c]), i + 1)
            while close > 0 and data[close - 1] == ord("\\") and data[close - 2] != ord("\\"):
                close = data.find(bytes([c]), close + 1)
            if close < 0:
                return None
            i = close
        elif c == ord("("):
            depth += 1
        elif c == ord(")"):
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == ord(";") or c == ord("{") and depth <= 1:
            return None
        i += 1
    return None


def _first_blank_after(data: bytes, pos: int) -> int | None:
    """The first space or tab after `pos` in the whitespace that follows it (the invocation must
    end its line: anything but a comment before the newline means it is not a lone statement)."""
    i, seen_newline = pos, False
    while i < len(data):
        c = data[i]
        if c in b" \t":
            if seen_newline:
                return i
        elif c in b"\r\n":
            seen_newline = True
        elif data.startswith(b"//", i) and not seen_newline:
            i = data.find(b"\n", i)
            if i < 0:
                return None
            continue
        else:
            return None
        i += 1
    return None


def _next_token(data: bytes, pos: int) -> int | None:
    i = pos
    while i < len(data):
        if data[i] in b" \t\r\n":
            i += 1
        elif data.startswith(b"//", i):
            i = data.find(b"\n", i)
            if i < 0:
                return None
        elif data.startswith(b"/*", i):
            i = data.find(b"*/", i + 2)
            if i < 0:
                return None
            i += 2
        else:
            return i
    return None


# `new T*[n]`: tree-sitter-cpp reads `(new T) * [n]` (a lambda capture in error). The `*`s become
# blanks (`new T [n]`, same length): still an array `new[]` to release with `delete[]`.
# (`n(?<![A-Za-z0-9_]n)ew` is `\bnew` with a literal first: the regex jumps from `n` to `n`)
_NEW_POINTER_ARRAY = re.compile(rb"n(?<![A-Za-z0-9_]n)ew[ \t]+(?:const[ \t]+)?[A-Za-z_][\w:]*(?:[ \t]*<[^<>;{}()\n]*>)?[ \t]*(\*+)[ \t]*\[")


def blank_pointer_new_arrays(data: bytes) -> bytes:
    if b"new" not in data:
        return data
    return _blanked(data, [m.span(1) for m in _NEW_POINTER_ARRAY.finditer(data)])


def _blanked(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    """`data` with the bytes of `spans` made blanks (newlines kept: lines and offsets stay)."""
    if not spans:
        return data
    out = bytearray(data)
    for a, b in spans:
        out[a:b] = data[a:b].translate(_SPACES)
    return bytes(out)


# `delete[] (T*) p` and `delete[](p)`: tree-sitter-cpp reads `[](...)` as a lambda and loses the
# statement. A cast in front of the operand becomes blanks (`delete[]        p`), parentheses
# around it too (`delete[] p `): the same length, still an array delete.
_DELETE_ARRAY_PAREN = re.compile(rb"d(?<![A-Za-z0-9_]d)elete[ \t]*\[[ \t]*\][ \t]*\(")


def blank_array_delete_parens(data: bytes) -> bytes:
    if b"delete" not in data:
        return data
    spans = []
    for m in _DELETE_ARRAY_PAREN.finditer(data):
        open_at = m.end() - 1
        close = _closing_paren(data, open_at, 4096)
        if close is None:
            continue
        after = _BLANK_RUN.match(data, close).end()
        is_cast = after < len(data) and data[after] not in b";,)"  # `delete[] (p);` is no cast
        spans.extend([(open_at, close)] if is_cast else [(open_at, open_at + 1), (close - 1, close)])
    return _blanked(data, spans)


# ----------------------------------------------------------------------------- `#if` inside parentheses

# What the `#if` passes skip or act on: strings, characters, comments and conditional directive
# lines. A directive counts only at the start of a line (`_regions` checks); the parentheses and
# braces between these regions are counted in bulk (`bytes.count`), not one token at a time.
_REGIONS = re.compile(
    rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?(?:\*/|\Z)|//[^\n]*'
    rb'|#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(?:[^\n\\]|\\\r?\n|\\)*', re.S)
_CONDITIONAL = re.compile(rb"#[ \t]*if")  # at the start of a line (line_start_matches)
_ONLY_PARENS = bytes(b for b in range(256) if b not in b"()")  # bytes.translate: delete the rest


def has_conditional(data: bytes) -> bool:
    """Does the text have an `#if`, `#ifdef` or `#ifndef` line?"""
    return line_start_search(_CONDITIONAL, data) is not None


def _regions(data: bytes) -> list[tuple[int, int, bytes | None]]:
    """(start, end, directive) of every string, character literal, comment and conditional
    directive line (`directive` b"if", b"ifdef", ..., b"endif"; None for the others), in order.

    These are the tokens of the one-regex scan the passes used to make, except the single
    parentheses and braces: `[ \\t]*#...` anchored at a line start made that regex try every
    position, and each of some 60 000 parentheses was a Python iteration. A directive starts
    where its line does (blanks included); a `#if` that does not start its line (or whose line
    began inside the previous region) is no region, and the search goes on after its `#`.
    When every `#if` found starts its line (nearly always), that is what `finditer` found.

    The passes run one after another on the same text (blank_preprocessor_alternatives, then
    blank_else_continuations, which mostly change nothing): the last text's regions are kept
    (the list is never changed by its users)."""
    if _last_regions[0] is data:
        return _last_regions[1]
    regions = _scan_regions(data)
    _last_regions[:] = [data, regions]
    return regions


_last_regions: list = [None, []]  # [text, its _regions]


def _scan_regions(data: bytes) -> list[tuple[int, int, bytes | None]]:
    """`_regions`, computed."""
    out: list[tuple[int, int, bytes | None]] = []
    end = 0
    for m in _REGIONS.finditer(data):
        directive = m.group(1)
        if directive is None:
            out.append((m.start(), m.end(), None))
        else:
            line = _line_start_before(data, m.start(), end)
            if line < 0:
                return list(_regions_searched(data))
            out.append((line, m.end(), directive))
        end = m.end()
    return out


def _line_start_before(data: bytes, start: int, pos: int) -> int:
    """Where the line of `start` begins when only blanks come before `start` on it, at or after
    `pos`; -1 otherwise."""
    line = start
    while line > pos and data[line - 1] in _BLANKS:
        line -= 1
    return line if line == 0 or data[line - 1] == _NEWLINE else -1


def _regions_searched(data: bytes) -> Iterator[tuple[int, int, bytes | None]]:
    """`_regions` when a `#if` does not start its line: the search goes on after its `#`."""
    pos = 0
    search = _REGIONS.search
    while True:
        m = search(data, pos)
        if m is None:
            return
        start = m.start()
        directive = m.group(1)
        if directive is not None:
            start = _line_start_before(data, start, pos)
            if start < 0:
                pos = m.start() + 1
                continue
        yield start, m.end(), directive
        pos = m.end()


def _paren_depth(gap: bytes, depth: int) -> int:
    """`depth` after the parentheses of `gap`, never below 0 (a `)` at depth 0 is ignored)."""
    parens = gap.translate(None, _ONLY_PARENS)
    if not parens:
        return depth
    closes = parens.count(b")")
    if closes <= depth:  # cannot reach 0 on the way: no clamping
        return depth + len(parens) - 2 * closes
    for c in parens:
        depth = depth + 1 if c == 40 else depth - 1 if depth else 0  # 40: `(`
    return depth


def blank_conditionals_in_parens(data: bytes) -> bytes:
    """`f(a,\\n#ifdef X\\n b\\n#else\\n c\\n#endif\\n);`: tree-sitter cannot parse a preprocessor
    conditional inside parentheses (an argument list, a condition). Its directive lines and every
    branch but the first (the second when the first is `#if 0`) become blanks, same length, so
    the call parses and every offset stays. Parentheses are counted in every branch, each from
    the depth at its `#if`, and after `#endif` the kept branch's count goes on: alternatives
    that each open a parenthesis do not unbalance the count, and a conditional inside an
    `#else` branch (the function compiled the other way) is blanked like one in a first branch."""
    if not has_conditional(data):
        return data
    return _blank_conditionals_in_parens(data, _regions(data))


def _blank_conditionals_in_parens(data: bytes, regions: Iterable[tuple[int, int, bytes | None]]) -> bytes:
    out: bytearray | None = None
    depth = 0
    # open conditionals: depth at `#if`, branch index, kept branch, spans to blank, where the
    # current branch began, depth at the end of the kept branch
    stack: list[dict] = []
    last = 0
    for start, end, directive in regions:
        if start > last:
            depth = _paren_depth(data[last:start], depth)
        last = end
        if directive is None:
            continue
        if directive in (b"if", b"ifdef", b"ifndef"):
            tok = data[start:end]
            cond = tok.split(None, 1)[1].strip() if len(tok.split(None, 1)) > 1 else b""
            zero = directive == b"if" and cond in (b"0", b"(0)")
            stack.append({"depth": depth, "branch": 0, "keep": 1 if zero else 0,
                          "cuts": [(start, end)], "branch_start": end, "after": None})
        elif stack and directive in (b"elif", b"else"):
            top = stack[-1]
            if top["branch"] == top["keep"]:
                top["after"] = depth
            else:
                top["cuts"].append((top["branch_start"], start))
            top["branch"] += 1
            top["cuts"].append((start, end))
            top["branch_start"] = end
            depth = top["depth"]  # each alternative starts where the `#if` was (counted in every branch)
        elif stack and directive == b"endif":
            top = stack.pop()
            if top["branch"] == top["keep"]:
                top["after"] = depth
            else:
                top["cuts"].append((top["branch_start"], start))
            top["cuts"].append((start, end))
            if top["depth"] > 0:
                if out is None:
                    out = bytearray(data)
                for a, b in top["cuts"]:
                    out[a:b] = data[a:b].translate(_SPACES)
            depth = top["after"] if top["after"] is not None else top["depth"]  # the kept branch goes on
    return bytes(out) if out is not None else data


def blank_unbalanced_alternatives(data: bytes) -> bytes:
    """`#if V\\n if (a) {\\n#else\\n if (b) {\\n#endif\\n ... }`: each branch opens a brace that one
    `}` after `#endif` closes. A compiler sees one branch; tree-sitter sees both, and the extra
    `{` swallows the rest of the file (the functions after it are silently lost). When the
    branches of a conditional each leave the braces unbalanced, the same way, the directives and
    every branch but the one compiled with nothing defined become blanks (same length: offsets,
    lines and columns stay)."""
    if not has_conditional(data):
        return data
    return _blank_unbalanced_alternatives(data, _regions(data))


def _blank_unbalanced_alternatives(data: bytes, regions: Iterable[tuple[int, int, bytes | None]]) -> bytes:
    out: bytearray | None = None
    stack: list[dict] = []  # open conditionals: brace balance per branch, spans of branches
    last = 0
    for start, end, directive in regions:
        if stack and start > last:
            gap = data[last:start]
            stack[-1]["balance"][-1] += gap.count(b"{") - gap.count(b"}")
        last = end
        if directive is None:
            continue
        if directive in (b"if", b"ifdef", b"ifndef"):
            tok = data[start:end]
            cond = tok.split(None, 1)[1].strip() if len(tok.split(None, 1)) > 1 else b""
            stack.append({"balance": [0], "directives": [(start, end)], "branches": [],
                          "branch_start": end, "ifdef": directive == b"ifdef",
                          "zero": directive == b"if" and cond in (b"0", b"(0)")})
        elif stack and directive in (b"elif", b"else"):
            top = stack[-1]
            top["branches"].append((top["branch_start"], start))
            top["directives"].append((start, end))
            top["balance"].append(0)
            top["branch_start"] = end
        elif stack and directive == b"endif":
            top = stack.pop()
            top["branches"].append((top["branch_start"], start))
            top["directives"].append((start, end))
            balances = top["balance"]
            if len(balances) > 1 and balances[0] != 0 and all(b == balances[0] for b in balances):
                # the branch a compiler sees with nothing defined: `#ifdef X` its last
                # (`#else`), `#if 0` its second, any other its first
                keep = len(balances) - 1 if top["ifdef"] else (1 if top["zero"] else 0)
                if out is None:
                    out = bytearray(data)
                cuts = top["directives"] + [span for i, span in enumerate(top["branches"]) if i != keep]
                for a, b in cuts:
                    out[a:b] = data[a:b].translate(_SPACES)
            if stack:  # the conditional as a whole counts once in the one around it
                stack[-1]["balance"][-1] += balances[0]
    return bytes(out) if out is not None else data


_BLANK_RUN = re.compile(rb"[ \t\r\n]*")
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def blank_else_continuations(data: bytes) -> bytes:
    """`if (a) {...}\n#ifdef X\nelse if (b) {...}\n#endif\nelse {...}` (or `#if X\nif (a) {...}
    else\n#endif\n{...}`): the branches of one `if` chain on both sides of a one-branch conditional. Tree-sitter takes the conditional as a
    statement of its own, so the `else` inside it (and the one after it) belongs to no `if` and
    the rest of the function is lost ("could not parse code"). The directive lines become
    blanks (same length): the chain is read with its optional part, as a one-branch `#ifdef`
    is read everywhere else; under `#if 0` the part goes too, as a compiler drops it.
    (A scan of the `#if` regions, not a regex: "blanks and comments, then `else`" as a pattern
    backtracks exponentially over a line of `// // // ...`.)"""
    if b"else" not in data or not has_conditional(data):
        return data
    regions = _regions(data)
    spans: list[tuple[int, int]] = []
    stack: list[list] = []  # per open `#if`: [start, end, continues a chain, `#if 0`, has two branches]
    for index, (start, end, directive) in enumerate(regions):
        if directive in (b"if", b"ifdef", b"ifndef"):
            parts = data[start:end].split(None, 1)
            zero = directive == b"if" and len(parts) > 1 and parts[1].strip() in (b"0", b"(0)")
            stack.append([start, end, _else_follows(data, regions, index), zero, False])
        elif directive in (b"elif", b"else") and stack:
            stack[-1][2] = False  # two branches: left as they are
            stack[-1][4] = True
        elif directive == b"endif" and stack:
            if_start, if_end, continues, zero, branches = stack.pop()
            # `} else\n#endif\n{...}`: the branch ends with the `else` whose body follows the `#endif`
            if continues or (not branches and _else_precedes(data, start)):
                spans.extend([(if_start, end)] if zero else [(if_start, if_end), (start, end)])
    return _blanked(data, spans)


def _else_precedes(data: bytes, start: int) -> bool:
    """Is the last token before `start` (a directive line), past blanks and `//` comments, the
    keyword `else`?"""
    i = _before_blanks_and_line_comments(data, start)
    return i >= 3 and data[i - 3:i + 1] == b"else" and (i == 3 or data[i - 4] not in _WORD_BYTES)


def _else_follows(data: bytes, regions: list[tuple[int, int, bytes | None]], index: int) -> bool:
    """Is the first token after region `index` (a directive line), past blanks and comments,
    the keyword `else`?"""
    pos = regions[index][1]
    following = index + 1
    while True:
        pos = _BLANK_RUN.match(data, pos).end()
        if following < len(regions) and regions[following][0] == pos and regions[following][2] is None \
                and data.startswith((b"/*", b"//"), pos):
            pos = regions[following][1]
            following += 1
            continue
        break
    return data.startswith(b"else", pos) and (pos + 4 >= len(data) or data[pos + 4] not in _WORD_BYTES)


def blank_preprocessor_alternatives(data: bytes) -> bytes:
    """`blank_unbalanced_alternatives(blank_conditionals_in_parens(data))`, finding the regions
    of the text once when the first pass changes nothing (the common case)."""
    if not has_conditional(data):
        return data
    regions = _regions(data)
    blanked = _blank_conditionals_in_parens(data, regions)
    if blanked is not data:
        return blank_unbalanced_alternatives(blanked)
    return _blank_unbalanced_alternatives(data, regions)

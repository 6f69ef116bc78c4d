"""Reading text the way people paste it: any source, any damage, constant memory.

`iter_lines` yields logical lines from bytes read in fixed-size chunks, so a 1 GB log
costs the same memory as a 1 KB one. tqdm and rich redraw a bar with `\\r`, so `\\r` ends
a line too. Every line is capped (`MAX_LINE`): a file with no newline at all is still
read in pieces. Bytes are decoded as UTF-8 with replacement, so binary garbage becomes
text that simply matches nothing.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from trainsteps.patterns import lazy

CHUNK = 1 << 20
MAX_LINE = 8192
_ANSI = lazy(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


def iter_lines(stream: BinaryIO) -> Iterator[str]:
    """Lines of a binary stream, decoded, without ANSI colour codes, each at most MAX_LINE characters."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    while True:
        chunk = stream.read(CHUNK)
        text = pending + decoder.decode(chunk, final=not chunk)
        lines = text.split("\n")
        pending = lines.pop() if chunk else ""
        if not chunk and lines and not lines[-1]:  # the text after the last newline is not a line
            lines.pop()
        if "\r" in pending:
            parts = pending.split("\r")
            pending = parts.pop()
            if not pending and chunk and parts:  # a \r at the end of a chunk may be the first half of \r\n
                pending = parts.pop() + "\r"
            lines += parts
        for line in lines:
            if line.endswith("\r"):  # CRLF: one line end, not two
                line = line[:-1]
            if "\r" in line:
                yield from (clean(part) for part in line.split("\r"))
            else:
                yield clean(line)
        while len(pending) > MAX_LINE * 4:  # no line end in sight: emit in pieces
            yield clean(pending[:MAX_LINE * 4])
            pending = pending[MAX_LINE * 4:]
        if not chunk:
            return


def clip(text: str, width: int) -> str:
    """A quote cut to fit says that it was cut."""
    return text if len(text) <= width else text[:width - 1] + "…"


def iter_text_lines(text: str) -> Iterable[str]:
    """The lines of a pasted text as written (the reader cleans each, and keeps the written form for quotes)."""
    yield from re.split(r"\r\n|\r|\n", text)


# Full-width forms a Chinese input method produces: 128，770 and Num examples ＝ 1,047 read as their ASCII forms.
_FULL_WIDTH = {**{0xFF10 + d: ord("0") + d for d in range(10)}, ord("，"): ",", ord("＝"): "=", ord("："): ":",
               ord("\u3000"): " ", ord("（"): "(", ord("）"): ")", ord("．"): "."}
_HAS_FULL_WIDTH = lazy("[\uff01-\uff5e\u3000]")


def clean(line: str) -> str:
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\x00" in line:
        line = line.replace("\x00", "")
    if not line.isascii() and _HAS_FULL_WIDTH.search(line):  # isascii: a C test, far cheaper than a search
        line = line.translate(_FULL_WIDTH)
    return line[:MAX_LINE]


# A whole number as a banner prints it, with any one thousands separator used consistently:
# 1,047  1.047  1 047  1'047  1_047  1 047 (no-break spaces)  or plain 1047.
_SEPS = ",.' _\u00a0\u202f\u2009\u2019"
# Read by hand, not by a pattern: compiling the pattern (tests/logs/test_banner_parsing.py) cost a banner 0.3 ms.


def _digits_end(text: str, start: int) -> int:
    """Where the run of digits (`\\d`: Unicode decimals) starting at `start` ends."""
    end, size = start, len(text)
    while end < size and text[end].isdecimal():
        end += 1
    return end


def _number_end(text: str) -> int:
    """The end of NUMBER matched at the start of `text`, 0 when none: 1-3 digits, then groups of a separator and three
    digits (the same separator each time) as long as three digits and no fourth follow; else every leading digit."""
    run = _digits_end(text, 0)
    if 1 <= run <= 3 and run < len(text) and text[run] in _SEPS:
        sep, end = text[run], run
        while end < len(text) and text[end] == sep and _digits_end(text, end + 1) == end + 4:
            end += 4
        if end > run:
            return end
    return run


def parse_int(text: str) -> tuple[int, str] | None:
    """The first whole number at the start of `text` (after spaces, `*`, backticks) and whatever follows it.

    Returns (value, rest) or None. `rest` is what was glued after the number, e.g. `.teps = 3,900`."""
    stripped = text.lstrip(" \t*`\"'")
    end = _number_end(stripped)
    if not end:
        return None
    digits = "".join(c for c in stripped[:end] if c.isdecimal())
    if len(digits) > 30:
        return None
    return int(digits), stripped[end:]


def parse_float(text: str) -> float | None:
    match = re.match(r"\s*[*`]*\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)", text)
    return float(match.group(1)) if match else None


_NOT_LOWER_ASCII = {code: None for code in range(128) if not 97 <= code <= 122}


def letters(text: str) -> str:
    """Lower-case letters only: how labels are compared, so damaged spacing does not matter."""
    low = text.lower()
    if low.isascii():  # nearly every label: a table drops the rest, with no pattern to compile (0.1 ms) or run
        return low.translate(_NOT_LOWER_ASCII)
    return re.sub(r"[^a-z]", "", low)


# The banner's labels, for pastes and logs that lost their line breaks ("Num examples = 1,047 Num Epochs = 300 ...").
BANNER_LABELS = ("Num examples", "Num Epochs", "Num update steps per epoch", "Instantaneous batch size per device",
                 "Training with DataParallel", "Total train batch size", "Gradient Accumulation steps",
                 "Total optimization steps", "Number of trainable parameters")
_NEXT_LABEL = lazy(r"\s+(?=(?:" + "|".join(re.escape(label) for label in BANNER_LABELS) + r")\b)")


def unglued(line: str) -> list[str]:
    """A line holding several banner labels, split before each of them (as the Trainer printed them); else the line."""
    if "Num " not in line and "Total " not in line:  # cheap test first: most log lines are not banners
        return [line]
    if sum(line.count(label) for label in BANNER_LABELS) < 2:
        return [line]
    return _NEXT_LABEL.split(line)

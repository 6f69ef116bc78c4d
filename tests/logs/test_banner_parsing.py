"""The Trainer banner's numbers, labels and logger prefix are read by hand (logs/hf.py, logs/text.py), not by the
patterns they replace, so that a banner compiles none: each reader must find exactly what its pattern finds."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from trainsteps.logs import hf
from trainsteps.logs.text import letters, parse_int

NUMBER = re.compile(r"(?<![\d.,])(\d{1,3}(?:([,.' _\u00a0\u202f\u2009\u2019])\d{3}(?![\d]))(?:\2\d{3}(?!\d))*|\d+)")
SOURCE = re.compile(r"\btrainer\.py:(\d+)")
DATE = re.compile(r"\b(20\d\d-[01]\d-[0-3]\d)[ T]\d\d:\d\d")
PARENS = re.compile(r"\([^()]*\)")
CODE_LABEL = re.compile(r"[A-Za-z]\w*_\w*\s*$")
FRACTION_ZEROS = re.compile(r"^\.0+\s*$")

# pieces that make the patterns' edge cases likely: separators, Unicode digits and letters, the prefix's words
_PIECES = st.sampled_from(["1", "0", "2", "20", "9", "047", "123", "1234", ",", ".", "'", " ", "_", "\u00a0", "\u2019", "٣", "²", "a",
                           "Z", "é", "-", "T", ":", "(", ")", "trainer.py:", "x", "\n", "\t", "*", "`", "K", "İ", "2025-03-22 15:43"])
_TEXT = st.lists(_PIECES, max_size=14).map("".join)


def _by_pattern(text):
    stripped = text.lstrip(" \t*`\"'")
    match = NUMBER.match(stripped)
    if not match:
        return None
    digits = re.sub(r"\D", "", match.group(1))
    return None if len(digits) > 30 else (int(digits), stripped[match.end():])


@settings(max_examples=3000, deadline=None)
@given(_TEXT)
def test_a_banner_number_is_read_as_its_pattern_reads_it(text):
    assert parse_int(text) == _by_pattern(text)


@settings(max_examples=3000, deadline=None)
@given(_TEXT)
def test_the_prefix_and_the_label_are_read_as_their_patterns_read_them(text):
    source, date = SOURCE.search(text), DATE.search(text)
    assert hf.source_line(text) == (int(source.group(1)) if source else None)
    assert hf.date_of(text) == (date.group(1) if date else None)
    assert hf.without_parens(text) == PARENS.sub("", text)
    assert hf._ends_in_identifier(text) == bool(CODE_LABEL.search(text))
    assert hf._zeros_after_point(text) == bool(FRACTION_ZEROS.match(text))
    assert letters(text) == re.sub(r"[^a-z]", "", text.lower())


def test_the_readers_find_what_a_real_banner_line_holds():
    line = "[INFO|trainer.py:2413] 2025-03-22 15:43:25,001 >>   Total optimization steps (w. parallel) = 3,900"
    assert (hf.source_line(line), hf.date_of(line)) == (2413, "2025-03-22")
    assert hf.key_of(line.split("=")[0]) == "max_steps" and parse_int(" 3,900 .0") == (3900, " .0")
    assert parse_int("1.047.000x") == (1047000, "x") and parse_int("1,047.000") == (1047, ".000")


CUT_START, CUT_ALONE = re.compile(r"^[,.'_ ]\d"), re.compile(r"^[,.]\s*$")


@settings(max_examples=3000, deadline=None)
@given(_TEXT, _TEXT)
def test_a_cut_number_is_told_as_its_patterns_tell_it(glued, rest):
    assert hf._cut_number(glued, rest) == bool(CUT_START.match(glued) or CUT_ALONE.match(rest))

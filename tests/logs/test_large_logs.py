"""Large inputs: the middle of a log over 1 MB is read by line shape (tests/logs/.. reader.FULL_BYTES); what must
never be lost is not: line numbers, the banner, a crash, an evaluation, the last step."""

import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from trainsteps.logs import read_bytes, reader
from trainsteps.logs.explain import explain_log

from .conftest import FIXTURES

BANNER = (FIXTURES / "seed_001_1047.log").read_text(encoding="utf-8")


def _log(steps: int, crlf: bool = False, middle: str | None = None) -> tuple[bytes, int]:
    """A long run: bar redraws (\\r) and loss dicts; `middle` is put after step steps // 2. Returns the bytes and the
    1-based line number of `middle` as explain counts lines (\\r and \\n both end a line, \\r\\n is one end)."""
    end = "\r\n" if crlf else "\n"
    parts = [BANNER.replace("\n", end), end]
    for step in range(1, steps + 1):
        parts.append(f" {step * 100 // 3900:3d}%|████▌     | {step}/3900 [01:02<00:58,  4.00s/it]\r"
                     f" {step * 100 // 3900:3d}%|████▌     | {step}/3900 [01:03<00:57,  4.00s/it]{end}")
        parts.append(f"{{'loss': 0.61, 'grad_norm': 1.25, 'learning_rate': 1e-05, 'epoch': {step / 13:.2f}}}{end}")
        if middle is not None and step == steps // 2:
            parts.append(middle + end)
    text = "".join(parts)
    if middle is None:
        return text.encode(), 0
    before = text[:text.index(middle)]
    line = before.count("\n") + before.count("\r") - before.count("\r\n") + 1
    return text.encode(), line


def test_a_line_in_the_middle_of_a_large_log_keeps_its_true_line_number():
    for crlf in (False, True):
        data, line = _log(30000, crlf=crlf, middle="{'eval_loss': 0.5, 'eval_runtime': 12.5, 'epoch': 1153.85}")
        assert len(data) > 3 << 20
        obs = read_bytes(data)
        (inf,) = explain_log(obs)
        p = inf.run.progress
        assert p.evals == 1 and p.eval_runtime == 12.5
        assert inf.run.last_step.value == 30000  # the last draw is never sampled away
        # the evaluation's step comes from the bar drawn just before it (a sampled line may be an earlier one)
        assert p.eval_steps and p.eval_steps[0] <= 15000
        data, line = _log(30000, crlf=crlf, middle="transformers==4.49.0")
        (run,) = read_bytes(data).runs
        assert run.transformers_version.value == "4.49.0" and run.transformers_version.line == line


def test_a_crash_at_the_end_of_a_large_log_is_found_with_its_line():
    data, _ = _log(30000)
    crash = b"Traceback (most recent call last):\nRuntimeError: NCCL communicator was aborted\n"
    obs = read_bytes(data + crash)
    (inf,) = explain_log(obs)
    assert inf.stopped == "crashed"
    total = (data + crash).decode()
    expected = total.count("\n") + total.count("\r") - 1  # the Traceback line: the second-to-last line
    assert inf.facts[0].params["line"] == expected


def test_a_banner_after_the_first_megabyte_is_read():
    data, _ = _log(30000)
    obs = read_bytes(data + BANNER.encode())
    assert len(obs.runs) == 2 and obs.runs[1].value("max_steps") == 3900


LINE_PARTS = st.sampled_from(["0", "7", "12", "305", "\r", "\r\n", "\n", " ", "a", "loss", "Traceback", "é", "\xff", "%|", "/"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(LINE_PARTS, max_size=12).map("".join), min_size=1, max_size=900), st.integers(0, 12))
@example(["\r", "\r0", "\r", "\r"], 0)  # "\r0" (a redraw: two lines) has the shape of "\r" (a CRLF end: one)
def test_a_sampled_chunk_reads_by_form_exactly_the_lines_it_reads_by_shape(lines, head_size):
    """The sampled path finds shapes, offsets and carriage returns on one copy with digits as 0s; the same chunk read
    as split lines and shapes (`_by_shape`, the plain algorithm) must read the same lines with the same numbers."""
    data = "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n"
    head = data[:min(head_size, data.index(b"\n"))]  # the unfinished line the chunk before left
    seen: list[list[tuple[int, str]]] = [[], []]
    target = seen[0]
    original = reader._read_line
    reader._read_line = lambda physical, number, ctx: target.append((number, physical))
    try:
        by_form = reader._chunk((head, data[len(head):] + b"unfinished", len(data) - len(head)), 10, None, full=False)
        target = seen[1]
        by_shape = reader._by_shape(data, 10, None)
    finally:
        reader._read_line = original
    assert (by_form, seen[0]) == (by_shape, seen[1])


def _read_lines_of(read) -> tuple[int, list[tuple[int, str]]]:
    seen: list[tuple[int, str]] = []
    original = reader._read_line
    reader._read_line = lambda physical, number, ctx: seen.append((number, physical))
    try:
        return read(), seen
    finally:
        reader._read_line = original


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 10 ** 12), min_size=1, max_size=3000), st.sampled_from(["", "\r", "\r\r"]),
       st.sampled_from(["", "\r"]), st.integers(0, 12), st.sampled_from([0, 600, 1500]), st.sampled_from([reader.SEGMENT, 700, 1]))
def test_a_chunk_of_one_shape_reads_the_lines_and_numbers_the_split_lines_give(numbers, inside, crlf, head_size, width, segment):
    """Lines that differ only in their digits (loss dicts, jsonl rows, long metrics lines), with carriage returns
    inside and CRLF ends: the chunk read without splitting it reads the same lines under the same numbers as
    `_by_shape`, whatever its segments (one line each, a few, or the whole chunk)."""
    filler = "- x:" * (width // 4)
    data = "".join(f"{{'loss': {n % 997}, 'step': {n}}}{inside}[{n // 7}/{n}]{filler}{crlf}\n" for n in numbers).encode()
    head = data[:min(head_size, data.index(b"\n"))]
    body = data[len(head):] + b"unfinished"
    assert reader._probe(head + body[:reader.SPARSE_PROBE]) in ("one", "sparse")
    kept, reader.SEGMENT = reader.SEGMENT, segment
    try:
        one = _read_lines_of(lambda: reader._one_shape(head, body, len(data) - len(head), 10, None))
        assert one[0] is not None
        assert one == _read_lines_of(lambda: reader._by_shape(data, 10, None))
        assert one == _read_lines_of(lambda: reader._chunk((head, body, len(data) - len(head)), 10, None, full=False))
    finally:
        reader.SEGMENT = kept


@pytest.mark.parametrize("where", [0, 1, 1000, 1999, 2000])
def test_a_chunk_with_a_second_shape_is_not_read_as_one_shape(where):
    rows = [b"{'loss': %d}\n" % n for n in range(2000)]
    rows.insert(where, b"Traceback (most recent call last):\n")
    data = b"".join(rows)
    assert reader._one_shape(b"", data + b"{'loss'", len(data), 0, None) is None


def _true_line(text: str, needle: str) -> int:
    before = text[:text.index(needle)]
    return before.count("\n") + before.count("\r") - before.count("\r\n") + 1


def test_a_very_long_line_counts_as_one_line_wherever_it_is():
    """The MAX_LINE cap reads a long line in pieces; the pieces are not lines: line numbers and the count stay the
    file's (a 5 MB first line, one in the sampled middle, one split across chunks, a file with no line end)."""
    bar = " 30%|███       | 300/1000 [25:00<58:20,  5.00s/it]"
    long_line = "x" * (5 << 20)
    for text in (long_line + "\n" + bar + "\n",  # the first line is 5 MB: the bar is line 2 of 2
                 "a\n" * 200000 + long_line + "\n" + "b\n" * 200000 + bar + "\n",  # a long line in the sampled middle
                 "a\n" * 100 + "y" * (reader.CHUNK - 150) + "z" * 70000 + "\n" + bar,  # a line across two chunks
                 "a\n" * 3 + "y" * 40000 + "\r" + bar + "\r\n" + "c\n"):  # a long line, then \r and CRLF
        obs = read_bytes(text.encode())
        (run,) = obs.runs
        assert run.last_step.value == 300 and run.last_step.line == _true_line(text, bar)
        lines = text.count("\n") + text.count("\r") - text.count("\r\n") + (not text.endswith("\n"))
        assert obs.lines_read == lines
    assert read_bytes(long_line.encode()).lines_read == 1  # no line end at all: one line


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(LINE_PARTS, max_size=12).map("".join), min_size=1, max_size=900), st.booleans())
def test_a_sparse_chunk_reads_each_line_it_reads_under_its_true_number_and_counts_every_line(lines, ends_with_newline):
    """A chunk of nearly all-different lines is read sparsely (`_sparse`: no split, lines counted in place); the lines it
    reads must carry the numbers reading the chunk whole gives them, and it must count as many lines."""
    data = "\n".join(lines).encode("utf-8", "surrogateescape") + (b"\n" if ends_with_newline else b"")
    seen: list[list[tuple[int, str]]] = [[], []]
    target = seen[0]
    original = reader._read_line
    reader._read_line = lambda physical, number, ctx: target.append((number, physical))
    try:
        sparse = reader._sparse(data, 10, None)
        target = seen[1]
        whole = reader._chunk((b"", data, len(data)), 10, None, full=True)
    finally:
        reader._read_line = original
    assert sparse == whole
    numbered = {}
    for number, text in seen[1]:
        numbered.setdefault(number, []).append(text)
    for number, text in seen[0]:
        assert text in numbered.get(number, [])


def test_a_large_forum_post_is_read_sparsely_and_its_crash_in_the_middle_is_found():
    words = ("the", "run", "on", "my", "GPU", "keeps", "growing", "memory", "after", "each", "epoch", "and", "it", "crashes")
    rng = random.Random(30)
    prose = "".join(" ".join(rng.choice(words) for _ in range(rng.randint(15, 30))) + ".\n" for _ in range(30000))
    crash = "Traceback (most recent call last):\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    middle = len(prose) // 2
    middle = prose.index("\n", middle) + 1
    text = prose[:middle] + crash + prose[middle:]
    assert len(text) > 3 << 20
    chunk = text.encode()[2 << 20:(2 << 20) + reader.SPARSE_PROBE]
    assert reader._looks_sparse(chunk)
    obs = read_bytes(text.encode())
    assert obs.lines_read == text.count("\n")
    (inf,) = explain_log(obs)
    assert inf.stopped == "crashed"

"""`--sample N`: estimates from random rows read by seeking, whose 95% intervals cover the truth about 95% of the time."""

import io
import json

from trainsteps.data.count import CountOptions, count
from trainsteps.data.sample import count_lines, estimate, line_at

from .conftest import TINY_TOKENIZER, alpaca_rows, text_rows, write_jsonl


def test_the_line_containing_an_offset_is_found_from_either_side():
    data = b'{"a": 1}\n{"bb": 22}\n{"c": 3}'
    f = io.BytesIO(data)
    assert line_at(f, 0) == (0, b'{"a": 1}\n')
    assert line_at(f, 8) == (0, b'{"a": 1}\n')  # the newline belongs to its line
    assert line_at(f, 9) == (9, b'{"bb": 22}\n')
    assert line_at(f, 15) == (9, b'{"bb": 22}\n')
    assert line_at(f, len(data) - 1) == (20, b'{"c": 3}')  # last line without a newline


def _coverage(paths, seeds, n, block_bytes, **kw):
    paths = [str(p) for p in paths]
    truth = count(CountOptions(paths, str(TINY_TOKENIZER), progress=False, **kw))
    true = {"examples": truth.examples, "tokens": int(truth.lengths.tokens.sum()),
            "supervised_tokens": int(truth.lengths.supervised.sum())}
    hits = {key: 0 for key in true}
    for seed in seeds:
        _, summary = estimate(CountOptions(paths, str(TINY_TOKENIZER), progress=False, **kw), n, seed, block_bytes)
        assert summary["examples"]["blocks"] == n  # the block estimate, not an exact line count
        for key, value in true.items():
            hits[key] += summary[key]["low"] <= value <= summary[key]["high"]
    return {key: h / len(seeds) for key, h in hits.items()}


def test_stated_95_percent_intervals_cover_the_true_counts_about_95_percent_of_the_time(tmp_path):
    # 300 seeds: a true coverage of 95% lands in [0.91, 0.985] with probability > 0.999.
    # Blocks of 100 bytes (shorter than most lines) so that 300 blocks sample the file instead of scanning it.
    path = write_jsonl(tmp_path / "corpus.jsonl", text_rows(4000, seed=11, high=60))
    coverage = _coverage([path], range(300), 300, block_bytes=100)
    assert all(0.91 <= c <= 0.985 for c in coverage.values()), coverage


def test_chat_rows_estimate_supervised_tokens_with_the_same_coverage(tmp_path):
    path = write_jsonl(tmp_path / "alpaca.jsonl", alpaca_rows(2000, seed=4))
    coverage = _coverage([path], range(100), 300, block_bytes=400)
    assert all(0.88 <= c <= 0.99 for c in coverage.values()), coverage  # 100 seeds: 100/100 would be too wide


def test_blank_and_malformed_lines_and_several_files_keep_the_coverage(tmp_path):
    # Examples = lines x share of valid lines: the share comes from the drawn lines, the lines from the blocks.
    rows = [json.dumps(r) + "\n" for r in text_rows(3000, seed=5, high=40)]
    for i in range(0, 3000, 10):
        rows[i] = "\n" if i % 20 else rows[i][: len(rows[i]) // 2] + "\n"  # blank, or cut short as by a failed write
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(rows[:1700]))
    second.write_text("".join(rows[1700:]).rstrip("\n"))  # no newline after the last line
    coverage = _coverage([first, second], range(200), 300, block_bytes=150)
    assert 0.89 <= coverage["examples"] <= 0.99, coverage


def test_lines_of_files_smaller_than_the_blocks_would_read_are_counted_exactly(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b' \n{"text": "a"}\n\n{"text": "b"}\n')  # blank lines first and in the middle
    second.write_bytes(b'\t\n{"text": "c"}\n{"text": "d"}')  # blank first line; the last line has no newline
    lines = count_lines([str(first), str(second)], blocks=10, block_bytes=64 << 10, seed=0)
    assert (lines.lines, lines.blank, lines.standard_error, lines.blocks) == (7, 3, 0.0, 0)
    _, summary = estimate(CountOptions([str(first), str(second)], str(TINY_TOKENIZER), progress=False), 50, 0)
    assert summary["examples"]["estimate"] == summary["examples"]["low"] == summary["examples"]["high"] == 4


def test_block_line_estimate_is_unbiased_over_seeds(tmp_path):
    # Mean over 400 seeds of the block estimate is within 3 standard errors of the mean of the true line count.
    path = write_jsonl(tmp_path / "corpus.jsonl", text_rows(2000, seed=3, high=80))
    true = path.read_bytes().count(b"\n")
    estimates = [count_lines([str(path)], 50, 300, seed) for seed in range(400)]
    mean = sum(e.lines for e in estimates) / len(estimates)
    spread = (sum(e.standard_error ** 2 for e in estimates) / len(estimates)) ** 0.5 / len(estimates) ** 0.5
    assert abs(mean - true) < 3 * spread, (mean, true, spread)


def test_a_sample_reads_only_a_small_part_of_the_file(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "corpus.jsonl", text_rows(20000, seed=1, high=50))
    read = []
    import builtins

    real_open = builtins.open

    class Spy:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            block = self.f.read(n)
            read.append(len(block))
            return block

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def spy_open(file, mode="r", *a, **kw):
        f = real_open(file, mode, *a, **kw)
        return Spy(f) if str(file) == str(path) and "b" in mode else f

    monkeypatch.setattr(builtins, "open", spy_open)
    from trainsteps.data.sample import draw_lines

    draws = draw_lines([str(path)], 50, seed=0)
    assert len(draws) == 50
    assert sum(read) < path.stat().st_size / 2  # seeks, not a scan


def test_a_malformed_drawn_line_is_reported_once_with_its_byte_offset(tmp_path):
    good = b'{"text": "a b c d e f g h i j k l m n o p"}\n'
    bad = b'{"text": "cut short by a failed write ........................................................\n'
    path = tmp_path / "d.jsonl"
    path.write_bytes(good * 3 + bad + good * 3)
    counted, _ = estimate(CountOptions([str(path)], str(TINY_TOKENIZER), progress=False), 200, 0)
    assert counted.malformed.count == 1  # drawn many times, listed once
    assert counted.malformed.first[0][0] == str(path) and f"at byte {len(good) * 3}" in counted.malformed.first[0][2]

"""The .bin/.idx reader: counts, percentiles, and one clear error per kind of damage.

Files are written by trainsteps' own writer in megatron-core's layout; tools/record_pretrain.py checks
megatron-core's IndexedDataset reads the same files (and builds its GPTDataset from them)."""

import os
import struct

import pytest

np = pytest.importorskip("numpy")

from trainsteps.data import idx as idxmod  # noqa: E402
from trainsteps.data.idx import IdxReader, read_idx, write_idx_from_lengths  # noqa: E402
from trainsteps.errors import InputError  # noqa: E402

from .conftest import load  # noqa: E402

LENGTHS = load("mcore")["datasets"]["L1000"]


@pytest.fixture
def dataset(tmp_path):
    return write_idx_from_lengths(str(tmp_path / "corpus_text_document"), LENGTHS)


def test_summary_counts_documents_sequences_tokens_and_percentiles(dataset):
    s = read_idx(dataset)
    assert (s.num_documents, s.num_sequences, s.num_tokens, s.dtype) == (1000, 1000, sum(LENGTHS), "uint16")
    assert (s.min_length, s.max_length) == (min(LENGTHS), max(LENGTHS))
    ordered = sorted(LENGTHS)
    assert s.percentiles["p50"] == ordered[499] and s.percentiles["p99"] == ordered[989]
    assert s.bin_bytes == 2 * sum(LENGTHS)


def test_range_sums_agree_with_the_lengths_across_chunks(dataset, monkeypatch):
    monkeypatch.setattr(idxmod, "CHUNK", 7)
    reader = IdxReader(dataset)
    for begin, end in [(0, 969), (969, 999), (999, 1000), (3, 4), (0, 1000), (500, 500)]:
        assert reader.tokens(begin, end) == sum(LENGTHS[begin:end])


def test_multi_sentence_documents(tmp_path):
    prefix = write_idx_from_lengths(str(tmp_path / "s"), [3, 4, 5, 6], document_indices=[0, 2, 4])
    s = read_idx(prefix)
    assert (s.num_documents, s.num_sequences, s.num_tokens) == (2, 4, 18)
    assert os.path.getsize(prefix + ".idx") == 34 + 12 * 4 + 8 * 3


def _error(prefix) -> str:
    with pytest.raises(InputError) as info:
        read_idx(prefix)
    return str(info.value)


def test_a_truncated_index_names_the_sizes(dataset):
    with open(dataset + ".idx", "r+b") as f:
        f.truncate(500)
    assert "truncated: 500 bytes" in _error(dataset) and "1,000 sequences" in _error(dataset)


def test_a_wrong_magic_is_named(dataset):
    with open(dataset + ".idx", "r+b") as f:
        f.write(b"NOTANIDX!")
    assert "does not start with MMIDIDX" in _error(dataset)


def test_a_legacy_cached_index_is_recognised(tmp_path):
    (tmp_path / "old.idx").write_bytes(b"TNTIDX\x00\x00" + bytes(40))
    assert "legacy 'cached'" in _error(str(tmp_path / "old"))


def test_unknown_dtype_and_version(dataset):
    with open(dataset + ".idx", "r+b") as f:
        f.seek(17)
        f.write(bytes([42]))
    assert "dtype code 42" in _error(dataset)
    with open(dataset + ".idx", "r+b") as f:
        f.seek(9)
        f.write(struct.pack("<Q", 7))
    assert "version 7" in _error(dataset)


def test_a_bin_of_the_wrong_size(dataset):
    with open(dataset + ".bin", "r+b") as f:
        f.truncate(10)
    assert "10 bytes but the index describes" in _error(dataset)


def test_negative_lengths_and_broken_document_index(tmp_path):
    prefix = write_idx_from_lengths(str(tmp_path / "n"), [3, -1, 2], write_bin=False)
    assert "sequence 1 has a negative length" in _error(prefix)
    prefix = write_idx_from_lengths(str(tmp_path / "d"), [3, 1, 2], document_indices=[0, 1, 2], write_bin=False)
    assert "document index runs from 0 to 2, expected 0 to 3" in _error(prefix)


def test_missing_file(tmp_path):
    assert "does not exist" in _error(str(tmp_path / "nothing"))

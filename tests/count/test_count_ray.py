"""`--engine ray` gives the same count as the local engine (on a local Ray instance)."""

import json

import pytest

from trainsteps.data.count import CountOptions, count

from .conftest import TINY_TOKENIZER, alpaca_rows, text_rows, write_jsonl

ray = pytest.importorskip("ray", reason="Ray Data is optional: pip install 'trainsteps[ray]'")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_engine_counts_the_same_examples_tokens_and_bad_lines(tmp_path, local_ray):
    from trainsteps.data.ray_engine import count_on_ray

    write_jsonl(tmp_path / "a.jsonl", alpaca_rows(700, seed=1))
    with open(tmp_path / "a.jsonl", "a", encoding="utf-8") as f:
        f.write("{not json\n" + json.dumps({"instruction": "x", "input": "", "output": None}) + "\n")
    write_jsonl(tmp_path / "b.jsonl", alpaca_rows(400, seed=2))
    options = CountOptions([str(tmp_path / "*.jsonl")], str(TINY_TOKENIZER), progress=False)
    local, distributed = count(options), count_on_ray(options)
    assert distributed.examples == local.examples == 1100
    assert distributed.lengths.tokens.tolist() == local.lengths.tokens.tolist()  # in file order: packing needs it
    assert distributed.lengths.supervised.tolist() == local.lengths.supervised.tolist()
    assert (distributed.malformed.count, distributed.invalid.count) == (local.malformed.count, local.invalid.count) == (1, 1)
    assert distributed.rows_read == local.rows_read


def test_without_packing_the_workers_send_length_tallies_that_add_up_to_the_local_count(tmp_path, local_ray):
    from trainsteps.data.ray_engine import count_on_ray

    rows = [json.dumps(r) for r in alpaca_rows(3000, seed=7)]
    for i in range(0, 3000, 97):  # malformed, invalid and blank lines spread over many batches
        rows[i] = ["{cut", json.dumps({"instruction": "x", "input": "", "output": None}), ""][i % 3]
    (tmp_path / "a.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    options = CountOptions([str(tmp_path / "a.jsonl")], str(TINY_TOKENIZER), progress=False, keep_order=False)
    local, distributed = count(options), count_on_ray(options)
    assert distributed.lengths.tokens.counts.tolist() == local.lengths.tokens.counts.tolist()
    assert distributed.lengths.supervised.counts.tolist() == local.lengths.supervised.counts.tolist()
    assert distributed.examples == local.examples
    for problems in ("malformed", "invalid"):
        assert getattr(distributed, problems).count == getattr(local, problems).count > 0
    assert distributed.malformed.blank_lines == local.malformed.blank_lines > 0
    assert len(distributed.malformed.first) == len(local.malformed.first)
    assert distributed.rows_read == local.rows_read


def test_ray_engine_reads_parquet_in_parallel(tmp_path, local_ray):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from trainsteps.data.ray_engine import count_on_ray

    for i in range(3):
        pq.write_table(pa.Table.from_pylist(text_rows(300, seed=i)), tmp_path / f"part-{i}.parquet")
    options = CountOptions([str(tmp_path)], str(TINY_TOKENIZER), progress=False)
    assert int(count_on_ray(options).lengths.tokens.sum()) == int(count(options).lengths.tokens.sum())

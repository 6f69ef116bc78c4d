"""LLaMA-Factory's data rules, checked against fixtures recorded from its own code and from `datasets`
(tools/record_wrappers.py functions / datasets)."""

import pytest

from trainsteps.frameworks import llamafactory as lf

from .conftest import load_fixture

FUNCTIONS = load_fixture("wrappers", "lf_functions.json")
DATASETS = load_fixture("wrappers", "datasets_functions.json")


@pytest.mark.parametrize("version", sorted(FUNCTIONS["versions"]))
def test_greedy_knapsack_packs_like_each_release(version):
    for case in FUNCTIONS["versions"][version]["greedy_knapsack"]:
        assert len(lf.greedy_knapsack(case["lengths"], case["capacity"])) == case["bins"]


@pytest.mark.parametrize("version", sorted(FUNCTIONS["versions"]))
def test_cutoff_len_default_and_packing_decrement_follow_the_release(version):
    recorded = FUNCTIONS["versions"][version]["data_args"]
    assert lf.CUTOFF_LEN_DEFAULT.at(version) == recorded["cutoff_len_default"]
    decremented = recorded["cutoff_len_1024_with_packing_true"] == 1023
    assert lf.CUTOFF_DECREMENT_IN_ARGS.at(version) is decremented
    assert lf.pt_block_size(version, 1024, packing_set_explicitly=True) == recorded["cutoff_len_1024_with_packing_true"]
    assert lf.pt_block_size(version, 1024, packing_set_explicitly=False) == 1024


@pytest.mark.parametrize("case", DATASETS["train_test_split"], ids=lambda c: f"n{c['n']}-v{c['val_size']}")
def test_val_size_splits_like_datasets(case):
    if "error" in case:
        assert lf.train_test_sizes(case["n"], case["val_size"])[0] == 0  # datasets refuses an empty train split
        return
    assert lf.train_test_sizes(case["n"], case["val_size"]) == (case["train"], case["test"])


@pytest.mark.parametrize("case", DATASETS["train_test_split"], ids=lambda c: f"n{c['n']}-v{c['val_size']}")
def test_the_seeded_split_is_replayed_row_for_row(case):
    pytest.importorskip("numpy")
    if "error" in case:
        return
    assert lf.split_indices(case["n"], case["val_size"], case["seed"])[:20] == case["train_indices_head"]


@pytest.mark.parametrize("case", DATASETS["interleave"], ids=lambda c: f"{c['sizes']}-{c['probabilities']}-{c['stopping']}")
def test_interleave_sizes_match_datasets(case):
    if case["probabilities"] is not None:
        pytest.importorskip("numpy")
    strategy = {v: k for k, v in lf.STOPPING.items()}[case["stopping"]]
    assert lf.interleave_rows(case["sizes"], strategy, case["probabilities"], case["seed"]).value == case["rows"]


@pytest.mark.parametrize("case", DATASETS["map_batches"], ids=lambda c: f"n{c['n']}-b{c['batch_size']}-p{c['num_proc']}")
def test_map_batches_match_datasets_map(case):
    assert [list(b) for b in lf.map_batches(case["n"], case["batch_size"], case["num_proc"])] == case["batches"]


def test_packing_counts_each_map_batch_on_its_own():
    lengths = [600] * 2500
    one_pass = lf.sft_packed_rows(lengths, 2047, batch_size=10**9)
    per_batch = lf.sft_packed_rows(lengths, 2047, batch_size=1000)
    assert per_batch > one_pass  # each 1000-row batch leaves its own partly filled bin


def test_max_samples_takes_the_first_rows_of_each_dataset():
    from trainsteps.derivation import Derivation

    p = lf.PipelineInput(datasets=[lf.DatasetRows("a", lf.Rows(500)), lf.DatasetRows("b", lf.Rows(80))], max_samples=100)
    assert lf.train_examples(p, Derivation()).value == 180


def test_val_size_cuts_packed_rows_up_to_0_9_3_and_raw_rows_from_0_9_4():
    from trainsteps.derivation import Derivation

    rows = lf.Rows(2500, lengths=[600] * 2500)
    old = lf.train_examples(lf.PipelineInput([lf.DatasetRows("a", rows)], version="0.9.3", packing=True, cutoff_len=2048, val_size=0.1), Derivation())
    new = lf.train_examples(lf.PipelineInput([lf.DatasetRows("a", rows)], version="0.9.4", packing=True, cutoff_len=2048, val_size=0.1), Derivation())
    assert old.value == lf.train_test_sizes(lf.sft_packed_rows([600] * 2500, 2047), 0.1)[0]
    assert new.value == lf.sft_packed_rows([600] * 2250, 2047)
    assert old.value != new.value


def test_the_default_transformers_is_the_newest_each_release_accepts():

    for version, metadata in (("0.9.3", "transformers!=4.46.*,!=4.47.*,!=4.48.0,!=4.52.0,<=4.52.4,>=4.45.0"),
                              ("0.9.5", "transformers!=4.52.0,!=4.57.0,<=5.6.0,>=4.55.0")):  # Requires-Dist of the wheels
        assert f"<={lf.TRANSFORMERS_CEILING.at(version)}," in metadata

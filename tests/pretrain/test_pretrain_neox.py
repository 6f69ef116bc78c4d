"""GPT-NeoX planning against NeoX's own code (git ea7aefd8 and v2.0; tests/fixtures/pretrain/neox*.json)."""

import pytest

from trainsteps.errors import InputError
from trainsteps.frameworks.gptdata import SequenceLengths
from trainsteps.frameworks.neox import NeoXSpec, plan_neox

from .conftest import load

NEOX = load("neox")
V2 = load("neox_v2")


def _spec(run, **extra):
    lengths = SequenceLengths(tuple(NEOX["lengths"][run["data"]]))
    common = dict(seq_length=run["S"], split=run["split"], dataset=lengths, data_path=f"r{NEOX['runs'].index(run)}")
    if "train_iters" in run:
        return NeoXSpec(global_num_gpus=1, train_batch_size=run["B"], train_micro_batch_size_per_gpu=run["B"], train_iters=run["train_iters"],
                        eval_interval=run["eval_interval"], eval_iters=run["eval_iters"], **common, **extra)
    return NeoXSpec(global_num_gpus=run["dp"], train_micro_batch_size_per_gpu=run["micro"], gradient_accumulation_steps=run["gas"],
                    train_batch_size=run["B"], train_epochs=run["train_epochs"], **common, **extra)


@pytest.mark.parametrize("run", NEOX["runs"], ids=lambda r: f"{r['data']}-{r['split']}-{r.get('train_iters', 'ep')}-{r['S']}")
def test_every_split_has_the_epochs_samples_and_length_neox_builds(run):
    schedule = plan_neox(_spec(run))
    d = schedule.derivation
    for name, recorded in zip(("train", "valid", "test"), run["splits"], strict=False):
        if recorded is None:
            assert f"{name}.length" not in d
            continue
        assert d[f"{name}.length"].value == recorded["len"]
        assert d[f"{name}.samples_built"].value + 1 == recorded["sample_idx_rows"]
        printed = [ln for ln in recorded["log"] if ln.startswith("    total number of epochs")]
        assert d[f"{name}.epochs_built"].value == int(printed[0].split(":")[1])


@pytest.mark.parametrize("run", [r for r in NEOX["runs"] if "train_epochs" in r], ids=lambda r: f"ep{r['train_epochs']}-S{r['S']}")
def test_train_epochs_infers_iterations_like_update_iterations(run):
    schedule = plan_neox(_spec(run))
    assert schedule.run.optimizer_steps == run["splits"][0]["train_iters"]
    assert f"Training for a total of {run['splits'][0]['train_iters']} iterations, corresponding to {run['train_epochs']} epochs." \
        in schedule.banner_lines


@pytest.mark.parametrize("run", NEOX["runs"][:3], ids=lambda r: str(r["train_iters"]))
def test_printed_lines_and_index_map_names_are_neox_own(run):
    schedule = plan_neox(_spec(run))
    log = run["splits"][0]["log"]
    for line in ("    total number of samples: ", "    total number of epochs: ", "     total number of samples:   "):
        assert [ln for ln in log if ln.startswith(line)] == [ln for ln in schedule.banner_lines if ln.startswith(line)]
    assert f" > loading sample-idx mapping from {run['splits'][0]['files'][1]}" in [ln.replace("/", "") for ln in schedule.banner_lines] or \
        any(ln.endswith(run["splits"][0]["files"][1]) for ln in schedule.banner_lines)


def test_v2_names_maps_without_pack_impl_and_warns_about_shuffle_length():
    spec = NeoXSpec(global_num_gpus=1, seq_length=V2["S"], train_batch_size=64, train_micro_batch_size_per_gpu=64, train_iters=10,
                    eval_iters=0, dataset=SequenceLengths(tuple(NEOX["lengths"]["L1000"])), split="969,30,1", data_path="v2", version="2.0")
    lines = plan_neox(spec).banner_lines
    assert any(ln.endswith(V2["files"][1]) for ln in lines)
    warning = [ln for ln in V2["log"] if ln.startswith("WARNING: shuffle index length")]
    assert warning[0] in lines


def test_seed004_one_epoch_and_two_epoch_request_from_the_issue_log():
    seed = NEOX["seed004"]
    spec = NeoXSpec(global_num_gpus=1, seq_length=seed["S"], train_batch_size=1000, train_micro_batch_size_per_gpu=1000,
                    train_iters=seed["num_samples"] // 1000, train_tokens=seed["tokens_per_epoch"], data_path="seed004")
    schedule = plan_neox(spec)
    printed = [ln for ln in seed["log"] if ln.startswith("    total number of")]
    assert printed == [ln for ln in schedule.banner_lines if ln.startswith("    total number of")]
    assert schedule.derivation["train.length"].value == seed["len"]
    assert "NEOX_SECOND_EPOCH" in [t.code for t in schedule.warnings]


@pytest.mark.parametrize("blend", NEOX["blends"], ids=lambda b: str(b["weights"]))
def test_weighted_path_asks_each_dataset_for_the_surplus_and_sums_lengths(blend):
    tokens = tuple(sum(blend["lengths"][n]) for n in blend["lengths"])
    spec = NeoXSpec(global_num_gpus=1, seq_length=blend["S"], train_batch_size=blend["B"], train_micro_batch_size_per_gpu=blend["B"],
                    train_iters=blend["train_iters"], train_data_tokens=tokens, train_data_weights=tuple(blend["weights"]))
    d = plan_neox(spec).derivation
    assert d["train.weighted_num_samples"].value == [x["num_samples"] for x in blend["datasets"]]
    assert [d[f"train_{i}.length"].value for i in range(len(tokens))] == [x["len"] for x in blend["datasets"]]
    assert d["train.blend_length"].value == blend["len"]


def test_data_parallel_size_must_be_whole_with_neox_wording():
    with pytest.raises(InputError) as info:
        plan_neox(NeoXSpec(global_num_gpus=4, model_parallel_size=3, train_micro_batch_size_per_gpu=1, train_iters=1, train_tokens=10**6))
    assert "[(4 / 1) / 3] must be a whole number" in info.value.framework_error


def test_neox_prints_the_data_parallel_size_as_a_float_in_batch_errors():
    with pytest.raises(InputError) as info:
        plan_neox(NeoXSpec(global_num_gpus=4, train_batch_size=30, train_micro_batch_size_per_gpu=4, train_iters=1, train_tokens=10**6))
    assert info.value.framework_error.endswith("world_size \n30 != 4 * 1 * 4.0")


def test_train_epochs_is_refused_before_it_existed():
    with pytest.raises(InputError):
        plan_neox(NeoXSpec(global_num_gpus=1, train_micro_batch_size_per_gpu=1, train_epochs=1, train_tokens=10**6, version="2.0"))


@pytest.mark.parametrize("case", NEOX["batch"], ids=lambda c: f"g{c['gpus']}-pp{c['pp']}-mp{c['mp']}-{c['tb']}-{c['mb']}-{c['ga']}")
def test_batch_parameters_match_neoxargs(case):
    spec = NeoXSpec(global_num_gpus=case["gpus"], pipe_parallel_size=case["pp"], model_parallel_size=case["mp"], train_batch_size=case["tb"],
                    train_micro_batch_size_per_gpu=case["mb"], gradient_accumulation_steps=case["ga"], train_iters=1, train_tokens=10**7)
    if case["error"] is None:
        d = plan_neox(spec).derivation
        assert [d["train_batch_size"].value, case["mb"] or d["train_micro_batch_size_per_gpu"].value,
                case["ga"] or d["gradient_accumulation_steps"].value] == case["result"]
    else:
        with pytest.raises(InputError) as info:
            plan_neox(spec)
        assert info.value.framework_error == case["error"]


def test_index_map_files_in_train_epochs_mode_carry_none():
    run = next(r for r in NEOX["runs"] if "train_epochs" in r)
    lines = plan_neox(_spec(run)).banner_lines
    assert any(ln.endswith(run["splits"][0]["files"][1]) for ln in lines)

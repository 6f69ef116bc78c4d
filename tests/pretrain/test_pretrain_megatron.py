"""Megatron planning against megatron-core 0.16.1 (tests/fixtures/pretrain/mcore.json)."""

import pytest

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.gptdata import SequenceLengths
from trainsteps.frameworks.megatron import MegatronSpec, _dataset_splits, plan_megatron, rampup_schedule

from .conftest import load

MCORE = load("mcore")
SINGLE = [c for c in MCORE["cases"] if len(c["data"]) == 1 and c["sizes"][0] and all(s is None or s % 1 == 0 for s in c["sizes"])]


def _single_spec(case):
    """A sample-based run whose dataset targets are exactly the recorded sizes (gbs 1, eval batch = test size)."""
    train, valid, test = case["sizes"]
    kwargs = dict(world_size=1, micro_batch_size=1, global_batch_size=1, train_samples=train, seq_length=case["S"], split=case["split"],
                  dataset=SequenceLengths(tuple(MCORE["datasets"][case["data"][0]])), add_extra_token_to_sequence=case.get("extra", True),
                  drop_last_partial_validation_sequence=case.get("drop_last_valid", True))
    if valid is None:
        return MegatronSpec(eval_interval=None, eval_iters=1, eval_global_batch_size=test or 1, **kwargs), (train, None, test)
    egbs = test or valid
    if valid % egbs:
        return None, None
    for interval in range(1, train + 2):
        if (train // interval + 1) * egbs == valid:
            return MegatronSpec(eval_interval=interval, eval_iters=1, eval_global_batch_size=egbs, **kwargs), (train, valid, egbs)
    return None, None


@pytest.mark.parametrize("case", MCORE["cases"][:13], ids=lambda c: f"{c['split']}-{c['sizes']}-S{c['S']}")
def test_every_split_has_the_epochs_and_length_megatron_core_builds(case):
    spec = MegatronSpec(world_size=1, micro_batch_size=1, train_iters=1, seq_length=case["S"], split=case["split"],
                        add_extra_token_to_sequence=case.get("extra", True),
                        drop_last_partial_validation_sequence=case.get("drop_last_valid", True))
    d = Derivation()
    splits = _dataset_splits(spec, SequenceLengths(tuple(MCORE["datasets"][case["data"][0]])), case["sizes"], d, [])
    for split, recorded in zip(splits, case["splits"], strict=False):
        assert (split is None) == (recorded is None)
        if split is not None:
            assert (split.begin, split.end, split.tokens_per_epoch) == (recorded["begin"], recorded["end"], recorded["tokens_per_epoch"])
            assert (split.epochs_built, split.length, split.printed_samples) == (recorded["epochs"], recorded["len"], recorded["len"])


@pytest.mark.parametrize("case", MCORE["cases"][:13], ids=lambda c: f"{c['split']}-{c['sizes']}-S{c['S']}")
def test_split_samples_epochs_and_printed_lines_match_megatron_core(case):
    spec, targets = _single_spec(case)
    if spec is None:
        pytest.skip("targets not reachable with one eval batch size")
    schedule = plan_megatron(spec)
    d = schedule.derivation
    for name, recorded, target in zip(("train", "valid", "test"), case["splits"], targets, strict=False):
        if recorded is None or target is None:
            continue
        assert d[f"{name}.length"].value == recorded["len"]
        assert d[f"{name}.epochs_built"].value == recorded["epochs"]
    printed = [ln for ln in schedule.banner_lines if ln.startswith(("> total number", "Let split_matrix", "Build and save the GPT"))]
    recorded_lines = [ln for ln in case["log"] if ln.startswith(("> total number of samples", "> total number of epochs", "Let split_matrix",
                                                                  "Build and save the GPT"))]
    if all(t is not None for t in targets):
        assert printed == recorded_lines


@pytest.mark.parametrize("case", [c for c in MCORE["cases"] if len(c["data"]) == 2], ids=lambda c: f"{c['weights']}-{c['sizes']}")
def test_blends_match_megatron_core(case):
    train, valid, test = case["sizes"]
    interval = next((i for i in range(1, train + 2) if (train // i + 1) * test == valid), None)
    if interval is None:
        pytest.skip("validation target not reachable")
    spec = MegatronSpec(world_size=1, micro_batch_size=1, global_batch_size=1, train_samples=train, eval_interval=interval, eval_iters=1,
                        eval_global_batch_size=test, seq_length=case["S"], split=case["split"],
                        blend=tuple(SequenceLengths(tuple(MCORE["datasets"][n])) for n in case["data"]),
                        blend_weights=tuple(case["weights"]) if case["weights"] else None)
    d = plan_megatron(spec).derivation
    for i, recorded in enumerate(case["splits"]):
        assert d[f"split{i}.blend_length"].value == recorded["len"]
        for k, part in enumerate(recorded["datasets"]):
            assert d[f"ds{k}.{('train', 'valid', 'test')[i]}.length"].value == part["len"]


@pytest.mark.parametrize("case", MCORE["rampup"], ids=lambda c: f"{c['train_samples']}-{c['rampup']}")
def test_iterations_and_samples_with_and_without_rampup(case):
    if case["rampup"] is None:
        spec = MegatronSpec(world_size=case["dp"], micro_batch_size=case["mbs"], global_batch_size=case["gbs"],
                            train_samples=case["train_samples"], train_tokens=10**12)
        schedule = plan_megatron(spec)
        assert schedule.run.optimizer_steps == case["train_iters"]
        assert schedule.run.samples_seen == case["samples_consumed"]
        assert f"setting training iterations to {case['train_iters']}" in schedule.banner_lines
    else:
        it, ramp_it, consumed = rampup_schedule(*case["rampup"], case["gbs"], case["train_samples"])
        assert (it, ramp_it, consumed) == (case["train_iters"], case["ramp_iterations"], case["samples_consumed"])


def test_expert_parallelism_does_not_shrink_data_parallelism():
    spec = MegatronSpec(world_size=64, micro_batch_size=1, global_batch_size=1024, tensor_model_parallel_size=2,
                        pipeline_model_parallel_size=2, context_parallel_size=2, expert_model_parallel_size=8, train_iters=10, train_tokens=10**9)
    d = plan_megatron(spec).derivation
    assert d["data_parallel_size"].value == 8
    assert d["num_microbatches"].value == 128


def test_indivisible_global_batch_quotes_megatron():
    with pytest.raises(InputError) as info:
        plan_megatron(MegatronSpec(world_size=8, micro_batch_size=3, global_batch_size=100, train_iters=1, train_tokens=10**6))
    assert info.value.framework_error == "global batch size (100) is not divisible by micro batch size (3) times data parallel size (8)"


def test_an_empty_split_with_a_target_is_flagged_because_megatron_core_hangs():
    spec = MegatronSpec(world_size=1, micro_batch_size=1, global_batch_size=8, train_iters=1, eval_interval=1, eval_iters=1, seq_length=64,
                        split="969,30,1", dataset=SequenceLengths(tuple(MCORE["datasets"]["A"])))
    assert "MEGATRON_EMPTY_SPLIT_HANGS" in [t.code for t in plan_megatron(spec).warnings]


def test_sample_based_plan_with_rampup_uses_the_ramp():
    case = MCORE["rampup"][0]
    spec = MegatronSpec(world_size=case["dp"], micro_batch_size=case["mbs"], global_batch_size=case["gbs"], train_samples=case["train_samples"],
                        rampup_batch_size=tuple(case["rampup"]), train_tokens=10**12, lr_warmup_iters=10, release=MCORE["version"])
    schedule = plan_megatron(spec)
    assert schedule.run.optimizer_steps == case["train_iters"]
    assert schedule.run.samples_seen == case["samples_consumed"]
    assert "MEGATRON_RAMPUP_ITERS" in [t.code for t in schedule.warnings]


def test_rampup_is_refused_for_iteration_based_training():
    with pytest.raises(InputError):
        plan_megatron(MegatronSpec(world_size=8, micro_batch_size=1, global_batch_size=64, train_iters=10, rampup_batch_size=(16, 8, 1000),
                                   train_tokens=10**9, release=MCORE["version"]))


def test_a_ramp_batch_that_micro_times_dp_does_not_divide_stops_the_run_as_megatron_does():
    # megatron-core's calculator asserts in update(consistency_check=True), which the training loop calls every
    # iteration; --decrease-batch-size-if-needed rounds the ramp batch down instead (fewer samples, same iterations).
    from trainsteps.frameworks.framework_error import FrameworkRuleError

    with pytest.raises(FrameworkRuleError) as stop:
        rampup_schedule(32, 32, 1_000_000, 1024, 10_000_000, micro=4, dp=64)
    assert stop.value.framework_error == ("current global batch size (32) is not divisible by micro-batch-size (4) "
                                          "timesdata parallel size (64)")
    plain = rampup_schedule(256, 128, 1_000_000, 1024, 10_000_000)
    rounded = rampup_schedule(256, 128, 1_000_000, 1024, 10_000_000, micro=4, dp=64, decrease=True)
    assert rounded[:2] == plain[:2] and rounded[2] < plain[2]
    assert rampup_schedule(256, 256, 1_000_000, 1024, 10_000_000, micro=4, dp=64) == rampup_schedule(256, 256, 1_000_000, 1024, 10_000_000)

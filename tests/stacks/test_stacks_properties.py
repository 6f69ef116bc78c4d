"""The litgpt, Megatron-Bridge and ms-swift Megatron rules on random settings: each plan is a schedule or one refusal
(InputError), never another exception, and its numbers keep the identities the frameworks' loops keep."""

from hypothesis import given, settings
from hypothesis import strategies as st

from trainsteps.errors import InputError
from trainsteps.frameworks.litgpt import LitgptSpec, plan_litgpt
from trainsteps.frameworks.megatron_bridge import BridgeSpec, plan_megatron_bridge
from trainsteps.frameworks.swift_megatron import SwiftMegatronSpec, plan_swift_megatron

SMALL = st.integers(min_value=0, max_value=300)
POSITIVE = st.integers(min_value=1, max_value=64)


@settings(max_examples=300, deadline=None)
@given(rows=SMALL, devices=st.integers(1, 8), nodes=st.integers(1, 3), gbs=POSITIVE, micro=st.integers(1, 8),
       epochs=st.integers(1, 6), max_steps=st.one_of(st.none(), POSITIVE), release=st.sampled_from(["0.4.13", "0.5.2", "0.5.13"]))
def test_litgpt_finetune_steps_never_take_more_micro_batches_than_the_loop_runs(rows, devices, nodes, gbs, micro, epochs, max_steps,
                                                                               release):
    spec = LitgptSpec(num_examples=rows, devices=devices, num_nodes=nodes, global_batch_size=gbs, micro_batch_size=micro, epochs=epochs,
                      max_steps=max_steps, release=release)
    try:
        s = plan_litgpt(spec)
    except InputError:
        return
    ga, steps, iterations = s.inputs["gradient_accumulation_steps"], s.run.optimizer_steps, s.inputs["iterations"]
    if max_steps is None or steps < max_steps:  # the epochs end the loop: the last partial window never steps
        assert steps * ga <= iterations < (steps + 1) * ga
    else:  # max_steps ends it on a step
        assert iterations == steps * ga
    assert s.inputs["horizon"] <= steps  # the schedule never outlasts the loop; the loop can outlast the schedule
    assert s.run.save_steps[-1] == s.run.optimizer_steps


@settings(max_examples=300, deadline=None)
@given(rows=st.integers(1, 500), gbs=POSITIVE, micro=st.integers(1, 4), dp=st.integers(1, 4), mode=st.sampled_from(["iters", "samples", "epochs"]),
       amount=st.integers(1, 200), drop_last=st.booleans())
def test_megatron_bridge_iterations_are_real_plus_padded_global_batches(rows, gbs, micro, dp, mode, amount, drop_last):
    horizon = {"iters": {"train_iters": amount}, "samples": {"train_samples": amount * 7},
               "epochs": {"num_epochs": amount / 10}}[mode]
    try:
        s = plan_megatron_bridge(BridgeSpec(num_examples=rows, global_batch_size=gbs, micro_batch_size=micro, dp=dp, drop_last=drop_last,
                                            **horizon))
    except InputError:
        return
    assert s.run.samples_seen + s.inputs["padded_samples"] == s.run.optimizer_steps * gbs
    assert s.inputs["padded_samples"] == 0 or not s.inputs["drop_last_used"]


@settings(max_examples=300, deadline=None)
@given(rows=SMALL, micro=st.integers(1, 4), dp=st.integers(1, 8), gbs=POSITIVE, epochs=st.integers(1, 5),
       grpo=st.booleans(), release=st.sampled_from(["3.12.6", "4.6.0"]))
def test_ms_swift_megatron_never_trains_more_samples_than_its_epochs_hold(rows, micro, dp, gbs, epochs, grpo, release):
    spec = SwiftMegatronSpec(num_examples=rows, micro_batch_size=micro, dp=dp, global_batch_size=gbs, epochs=epochs,
                             rlhf_type="grpo" if grpo else None, release=release)
    try:
        s = plan_swift_megatron(spec)
    except InputError:
        return
    assert s.run.samples_seen <= s.run.samples_per_epoch * epochs < s.run.samples_seen + gbs

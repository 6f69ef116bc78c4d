"""The arithmetic loop model equals a batch-by-batch walk through the Trainer's loop, for any settings.

`walk` below transcribes the Trainer's inner loop one micro-batch at a time (the counters, the
4.46-4.51 prefetch chunks, the resume skip). The engine computes the same per epoch, with jumps over
identical epochs; hypothesis searches for settings where the two disagree. Recorded runs of the real
Trainer check the walk itself (test_hf_fixtures.py).
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from trainsteps.frameworks.hf.loop import LoopInput, run_loop
from trainsteps.frameworks.hf.releases import FAMILIES


def walk(inp: LoopInput):
    fam, ga, L = inp.family, inp.grad_accum, inp.steps_in_epoch
    gs, ends, state, consumed, real = inp.resume_step, [], None if inp.resume_step else 0.0, 0, 0
    e0, skip = (gs // inp.nupe, (gs % inp.nupe) * ga) if inp.resume_step else (0, 0)
    rem = inp.num_examples % ga or ga
    total = 0
    for epoch in range(e0, min(inp.epochs, e0 + 400)):
        first = skip if epoch == e0 else 0
        avail = inp.batches_per_epoch - first
        pulled = min(avail, ga * (L // ga) + rem) if fam.chunk_bug else avail
        step = first - 1 if (fam.resume_realigns and epoch == e0) else -1
        for i in range(pulled):
            step += 1
            total += 1
            consumed += 1
            if fam.counter == "cumulative":
                forced = L <= ga and step + 1 == L
                sync = total % ga == 0 or forced
                updates = total % ga == 0 or fam.extra_sync_updates
            else:
                sync = updates = (step + 1) % ga == 0 or step + 1 == L
            if sync:
                gs += 1
                real += 1 if updates else 0
                state = epoch + (first + i + 1) / L
                if gs >= inp.max_steps:
                    ends.append(gs)
                    return gs, ends, state, consumed, real
        ends.append(gs)
    return gs, ends, state, consumed, real


@settings(max_examples=600, deadline=None)
@given(
    family=st.sampled_from([family for _, family in FAMILIES.entries]),
    batches=st.integers(1, 40),
    ga=st.integers(1, 12),
    n=st.integers(1, 500),
    epochs=st.integers(1, 30),
    extra_steps=st.integers(-5, 60),
    resume=st.integers(0, 50),
)
def test_the_arithmetic_loop_equals_a_batch_by_batch_walk(family, batches, ga, n, epochs, extra_steps, resume):
    nupe = max(batches // ga + (batches % ga > 0), 1) if family.rounding == "ceil" else max(batches // ga, 1)
    max_steps = max(1, nupe * epochs + extra_steps)
    resume = resume % max_steps
    inp = LoopInput(family, batches, batches, ga, max_steps, epochs, n, resume, nupe)
    got = run_loop(inp)
    gs, ends, state, consumed, real = walk(inp)
    assert got.global_step == gs
    assert got.epoch_end_steps == ends
    assert got.batches_consumed == consumed
    assert got.real_updates == real - 0  # the walk counts only steps taken after the resume, like the engine
    if state is None:
        assert got.state_epoch is None
    else:
        assert abs(got.state_epoch - state) < 1e-9


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(version=st.sampled_from(["4.30.0", "4.40.0", "4.49.0", "5.23.0"]), n=st.integers(1, 60), bs=st.integers(1, 4),
       ga=st.integers(1, 6), epochs=st.integers(1, 40), delay=st.one_of(st.integers(0, 45), st.floats(0, 45)), resume=st.integers(0, 30))
def test_evaluation_after_a_delay_reads_only_the_epochs_near_it_and_finds_what_a_walk_of_every_epoch_finds(
        version, n, bs, ga, epochs, delay, resume):
    from unittest import mock

    import trainsteps
    from trainsteps.errors import TrainstepsError

    settings_ = dict(num_examples=n, per_device_train_batch_size=bs, gradient_accumulation_steps=ga, num_train_epochs=epochs,
                     eval_strategy="epoch", eval_delay=delay, save_strategy="no", transformers=version, resume_from_step=resume)
    try:
        near = trainsteps.plan(**settings_).run.eval_steps
    except TrainstepsError:
        return
    with mock.patch("trainsteps.frameworks.hf.plan._epochs_near_the_delay", lambda spec, epochs: (0, epochs)):  # every epoch
        every = trainsteps.plan(**settings_).run.eval_steps
    assert near == every


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(version=st.sampled_from(["4.30.0", "4.40.0", "4.46.0", "4.49.0", "5.23.0"]), n=st.integers(1, 60), bs=st.integers(1, 4),
       ga=st.integers(1, 8), epochs=st.integers(1, 60), first=st.booleans(), resume=st.integers(0, 30))
def test_logging_at_epoch_ends_logs_each_step_once_after_the_start_as_a_walk_of_the_triggers_does(
        version, n, bs, ga, epochs, first, resume):
    import trainsteps
    from trainsteps.errors import TrainstepsError

    try:
        run = trainsteps.plan(num_examples=n, per_device_train_batch_size=bs, gradient_accumulation_steps=ga, num_train_epochs=epochs,
                              logging_strategy="epoch", logging_first_step=first, transformers=version, resume_from_step=resume).run
    except TrainstepsError:
        return  # a release that crashes on a repeated step refuses the plan
    triggers = sorted(([1] if first and resume == 0 and run.optimizer_steps >= 1 else []) + list(run.epoch_end_steps))
    logged, last = [], resume
    for step in triggers:
        if step > last:
            logged.append(step)
            last = step
    assert run.log_steps == logged

"""RunSpec -> Schedule for the Hugging Face Trainer: the banner, the loop, the events, the traps."""

from __future__ import annotations

import math
import sys

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.hf import intervals, traps
from trainsteps.frameworks.hf.banner import BannerValues, banner_lines, render_banner
from trainsteps.frameworks.hf.loader import LoaderShape, loader_shape
from trainsteps.frameworks.hf.loop import LoopInput, LoopResult, run_loop
from trainsteps.frameworks.hf.releases import EMPTY_LOADER_ERROR, LOG_SAME_STEP_ERROR, Rules, rules_for
from trainsteps.record import Deferred
from trainsteps.schedule import RunFacts, Schedule
from trainsteps.spec import RunSpec, settings_dict
from trainsteps.steps import Steps
from trainsteps.validate import validate_trainer_spec


def plan(spec: RunSpec) -> Schedule:
    """Everything transformers `spec.transformers` will print and do for these settings."""
    validate_trainer_spec(spec)
    try:
        rules = rules_for(spec.transformers)
    except ValueError as exc:
        raise InputError("hf.error.version", "hf.hint.version", version=spec.transformers, detail=str(exc)) from None
    _check_release_accepts(rules, spec)
    d = Derivation()
    d.given("transformers", rules.release, "hf.family.reason", family=rules.family.name)
    bs, ga = spec.per_device_train_batch_size, spec.gradient_accumulation_steps
    dp, banner_ranks = _parallel_layout(d, rules, spec)
    total_batch = d.add(
        "total_train_batch_size", bs * ga * banner_ranks, "bs x GA x ranks", ("{} x {} x {}", bs, ga, banner_ranks), "hf.total_batch"
    )
    if spec.streaming:
        return _plan_stream(d, rules, spec, dp, total_batch)
    shape = loader_shape(d, rules.family.loader, spec.num_examples, bs, dp, spec.dataloader_drop_last, spec.split_batches,
                         spec.even_batches)
    L = shape.batches
    if rules.version.major >= 5 and spec.sequence_parallel_size > 1:
        L = d.add("batches_per_epoch", L * spec.sequence_parallel_size, "L x sp", ("{} x {}", L, spec.sequence_parallel_size), "hf.loader.sp")
    if L == 0:
        return _plan_empty_loader(d, rules, spec, total_batch)
    nupe = _update_steps_per_epoch(d, rules, L, ga)
    max_steps, epochs = _max_steps_and_epochs(d, spec, nupe)
    track = _epochs_near_the_delay(spec, epochs) if spec.eval_strategy == "epoch" and spec.eval_delay > 0 else (0, 0)
    loop = run_loop(
        LoopInput(rules.family, L, L, ga, max_steps, epochs, spec.num_examples, spec.resume_from_step or 0, nupe, track)
    )
    return _schedule(d, rules, spec, shape, loop, nupe, max_steps, epochs, total_batch, L)


def _epochs_near_the_delay(spec: RunSpec, epochs: int) -> tuple[int, int]:
    """The epochs whose state.epoch the loop must read to compare it with eval_delay. state.epoch at the end of epoch i
    (from 0) is at most i + 1, so the epochs before floor(eval_delay) - 1 are all before the delay; it moves at every
    optimizer step, so GA epochs after ceil(eval_delay) (an epoch has at least one batch) it is past the delay."""
    delay = spec.eval_delay
    return max(0, math.floor(delay) - 1), min(epochs, math.ceil(delay) + spec.gradient_accumulation_steps + 1)


def _check_release_accepts(rules: Rules, spec: RunSpec) -> None:
    """Settings this release cannot take: the real launch stops before training."""
    if spec.split_batches and not rules.split_batches_settable:
        raise InputError("hf.error.split_batches_unavailable", "hf.hint.split_batches_unavailable", version=rules.release)
    intervals.check_save_strategy(rules, spec)


def _parallel_layout(d: Derivation, rules: Rules, spec: RunSpec) -> tuple[int, int]:
    """(ranks that read different data, ranks counted in the banner's total batch)."""
    w = d.given("world_size", spec.world_size)
    tp, cp, sp = spec.tensor_parallel_size, spec.context_parallel_size, spec.sequence_parallel_size
    if tp == cp == sp == 1:
        return w, w
    divisor = 1
    if "tp" in rules.batch_divisor:
        divisor *= tp
    if "cp" in rules.batch_divisor:
        divisor *= cp * sp
    ranks = d.add("data_parallel_size", w // divisor, "W / (" + " x ".join(rules.batch_divisor) + ")", ("{} / {}", w, divisor), "hf.parallel.divisor")
    return ranks, ranks


def _update_steps_per_epoch(d: Derivation, rules: Rules, L: int, ga: int) -> int:
    if rules.family.rounding == "ceil":
        return d.add("num_update_steps_per_epoch", max(math.ceil(L / ga), 1), "max(ceil(L / GA), 1)", ("max(ceil({} / {}), 1)", L, ga), "hf.nupe.ceil")
    return d.add("num_update_steps_per_epoch", max(L // ga, 1), "max(floor(L / GA), 1)", ("max(floor({} / {}), 1)", L, ga), "hf.nupe.floor")


def _max_steps_and_epochs(d: Derivation, spec: RunSpec, nupe: int) -> tuple[int, int]:
    if spec.max_steps > 0:
        m = d.given("max_steps", spec.max_steps, "hf.max_steps.given")
        epochs = d.add("num_train_epochs", math.ceil(m / nupe), "ceil(max_steps / nupe)", ("ceil({} / {})", m, nupe), "hf.epochs.from_max_steps")
        return m, epochs
    e = spec.num_train_epochs
    m = d.add("max_steps", math.ceil(e * nupe), "ceil(E x nupe)", ("ceil({} x {})", _num(e), nupe), "hf.max_steps.from_epochs")
    epochs = d.add("num_train_epochs", math.ceil(e), "ceil(E)", ("ceil({})", _num(e)), "hf.epochs.ceil")
    return m, epochs


def _plan_stream(d: Derivation, rules: Rules, spec: RunSpec, dp: int, total_batch: int) -> Schedule:
    from trainsteps.frameworks.hf import stream  # streams only: map-style plans do not load it

    if spec.max_steps <= 0:
        raise InputError("hf.error.stream_needs_max_steps", "hf.hint.stream_needs_max_steps", framework_error=rules.no_length_error)
    m = d.given("max_steps", spec.max_steps, "hf.stream.max_steps")
    epochs = d.add("num_train_epochs", sys.maxsize, "sys.maxsize", "", "hf.stream.epochs")
    d.add("num_examples", total_batch * m, "total_batch x max_steps", ("{} x {}", total_batch, m), "hf.stream.examples")
    ga, bs = spec.gradient_accumulation_steps, spec.per_device_train_batch_size
    split = stream.rank_split(rules.version, spec, dp)
    n = stream.pass_rows(d, spec)
    shape = None
    loop = LoopResult(global_step=m, state_epoch=None, reached_max_steps=True, real_updates=m)
    if n is not None:
        drop_last = stream.effective_drop_last(rules.version, spec, split)
        shape = stream.stream_shape(d, split, n, bs, dp, drop_last, spec.split_batches)
        if shape.batches == 0:
            raise InputError("hf.error.stream_too_small", "hf.hint.stream_too_small", n=n, bs=bs)
        loop = run_loop(LoopInput(rules.family, shape.batches, m * ga, ga, m, epochs, total_batch * m, 0, m))
    schedule = _schedule(d, rules, spec, shape, loop, m, m, epochs, total_batch, m * ga, stream=True)
    return stream.annotate(d, schedule, spec, split, n, shape, loop)


def _plan_empty_loader(d: Derivation, rules: Rules, spec: RunSpec, total_batch: int) -> Schedule:
    """No batch at all (fewer rows than one batch with drop_last)."""
    n, bs = spec.num_examples, spec.per_device_train_batch_size
    if rules.empty_loader == "crash":
        raise InputError("hf.error.empty_loader", "hf.hint.empty_loader", n=n, bs=bs,
                         framework_error="the Trainer prints its banner, then fails in the loop (TypeError or ZeroDivisionError)")
    if spec.max_steps <= 0:
        raise InputError("hf.error.empty_loader", "hf.hint.empty_loader", n=n, bs=bs,
                         framework_error=EMPTY_LOADER_ERROR.format(max_steps=spec.max_steps))
    # 4.49+: a length of 0 takes the no-length path; the first epoch yields nothing and the Trainer stops.
    m = d.given("max_steps", spec.max_steps, "hf.stream.max_steps")
    epochs = d.add("num_train_epochs", sys.maxsize, "sys.maxsize", "", "hf.empty.epochs")
    loop = LoopResult(global_step=0, epoch_end_steps=Steps([0]), state_epoch=0.0, reached_max_steps=False, real_updates=0)
    shape = LoaderShape(0, bs * spec.world_size, 0, spec.world_size)
    return _schedule(d, rules, spec, shape, loop, m, m, epochs, total_batch, m * spec.gradient_accumulation_steps,
                     stream=True, empty=True)


def _schedule(d, rules, spec, shape, loop, nupe, max_steps, epochs, total_batch, steps_in_epoch, stream=False, empty=False) -> Schedule:
    bs, ga = spec.per_device_train_batch_size, spec.gradient_accumulation_steps
    num_examples = total_batch * max_steps if stream else spec.num_examples
    values = BannerValues(num_examples, epochs, nupe, bs, bs, total_batch, ga, max_steps, spec.trainable_parameters)
    warmup = intervals.warmup_steps(d, rules, max_steps, spec.warmup_ratio, spec.warmup_steps)
    final = loop.global_step
    start = spec.resume_from_step or 0
    log_steps = _log_steps(d, rules, spec, loop, max_steps, start)
    eval_steps = _eval_steps(d, rules, spec, loop, max_steps, start)
    save_steps = _save_steps(d, rules, spec, loop, max_steps, start, eval_steps)
    samples = None
    if shape is not None:
        samples = _samples_seen(d, loop, shape)
    elif stream:
        samples = d.add("samples_seen", final * ga * bs * spec.world_size, "steps x GA x bs x W", ("{} x {} x {} x {}", final, ga, bs, spec.world_size), "hf.samples.stream")
    d.add("optimizer_steps", final, why="hf.optimizer_steps_reached" if loop.reached_max_steps else "hf.optimizer_steps_short")
    if loop.state_epoch is not None:
        whole = int(loop.state_epoch)
        batch = round((loop.state_epoch - whole) * steps_in_epoch)
        d.add("epochs_completed", round(loop.state_epoch, 4), "epochs + batch / steps_in_epoch",
              ("{} + {} / {}", whole, batch, steps_in_epoch), "hf.stream.logged_epoch" if stream else "hf.state_epoch",
              steps_in_epoch=steps_in_epoch)
    facts = RunFacts(
        optimizer_steps=final,
        max_steps=max_steps,
        epoch_end_steps=loop.epoch_end_steps,
        epochs_completed=None if loop.state_epoch is None else round(loop.state_epoch, 4),
        epochs_planned=None if spec.max_steps > 0 else spec.num_train_epochs,
        samples_seen=samples,
        warmup_steps=warmup,
        log_steps=log_steps,
        eval_steps=eval_steps,
        save_steps=save_steps,
        real_optimizer_updates=loop.real_updates,
        batches_per_epoch=shape.batches if shape else None,
        samples_per_epoch=(shape.batches - 1) * shape.full_rows + shape.last_rows if shape and shape.batches else None,
    )
    found = traps.find(rules, spec, facts, loop, shape, total_batch, stream, empty)
    return Schedule(
        framework="hf",
        version=rules.release,
        family=rules.family.name,
        family_reason=rules.family.reason,
        banner=Deferred(_banner_dict, rules.banner_layout, values),
        banner_lines=Deferred(_banner_text, rules.banner_layout, values),
        run=facts,
        warnings=found,
        derivation=d,
        inputs=Deferred(settings_dict, spec.field_values()),
    )


def _banner_dict(layout: str, values: BannerValues) -> dict[str, str]:
    return dict(banner_lines(layout, values))


def _banner_text(layout: str, values: BannerValues) -> list[str]:
    return render_banner(banner_lines(layout, values))


def _samples_seen(d: Derivation, loop: LoopResult, shape: LoaderShape) -> int:
    short = loop.last_batches_consumed if shape.last_rows != shape.full_rows else 0
    samples = (loop.batches_consumed - short) * shape.full_rows + short * shape.last_rows
    if short:
        return d.add("samples_seen", samples, "full batches x rows + short last batches x rows (all ranks)",
                     ("{} x {} + {} x {}", loop.batches_consumed - short, shape.full_rows, short, shape.last_rows), "hf.samples")
    return d.add("samples_seen", samples, "batches x rows per batch (all ranks)", ("{} x {}", loop.batches_consumed, shape.full_rows),
                 "hf.samples")


def _log_steps(d, rules, spec, loop, max_steps, start) -> Steps:
    # DefaultFlowCallback sets should_log at global_step 1 whatever the strategy.
    first = spec.logging_first_step and start == 0 and loop.global_step >= 1
    if spec.logging_strategy == "steps":
        every = _every(d, rules, spec, "logging_steps", spec.logging_steps, max_steps)
        steps = intervals.multiples(every, loop.global_step, start + 1)
        if first and (not steps or steps[0] != 1):
            steps = Steps([1]) + steps
        return steps
    ends = loop.epoch_end_steps if spec.logging_strategy == "epoch" else Steps()
    triggers = Steps([1]) + ends if first else ends
    if triggers.strictly_increasing() and (not triggers or triggers[0] > start):
        return triggers[:]  # each trigger logs: no Python loop over a million epoch ends
    if triggers.non_decreasing() and rules.log_same_step != "crash":
        return triggers.distinct().at_least(start + 1)  # a step logs once, however many epochs end there
    logged, last = Steps(), start
    for step in triggers if triggers.non_decreasing() else sorted(triggers):  # a crash comes at the first repeat
        if step > last:
            logged.append(step)
            last = step
        elif rules.log_same_step == "crash":  # the loss is divided by (step - last logged step) = 0
            raise InputError("hf.error.log_same_step", "hf.hint.log_same_step", version=rules.release, step=step,
                             framework_error=LOG_SAME_STEP_ERROR)
    return logged


def _eval_steps(d, rules, spec, loop, max_steps, start) -> Steps:
    if spec.eval_strategy == "epoch":
        # eval_delay is compared with state.epoch, which may end an epoch below its number: read where it was kept,
        # the epochs before those are before the delay and the epochs after them past it (_epochs_near_the_delay)
        ends, states = loop.epoch_end_steps, loop.epoch_end_states
        if spec.eval_delay <= 0:
            return ends[:]
        tracked_from, tracked_to = _epochs_near_the_delay(spec, sys.maxsize)
        start = max(0, tracked_from - loop.first_epoch)
        kept = [step for i, (step, epoch) in enumerate(zip(ends[start:start + len(states)], states, strict=True), start)
                if spec.eval_delay <= (i + 1 if epoch is None else epoch)]
        return Steps(kept) + ends[start + len(states):]
    if spec.eval_strategy != "steps":
        return Steps()
    every = _every(d, rules, spec, "eval_steps", spec.eval_steps or spec.logging_steps, max_steps)
    steps = intervals.multiples(every, loop.global_step, start + 1, "eval_steps").at_least(math.ceil(spec.eval_delay))
    if rules.final_step_eval and loop.reached_max_steps and every and max_steps % every and max_steps >= spec.eval_delay:
        steps.append(max_steps)
    return steps


def _save_steps(d, rules, spec, loop, max_steps, start, eval_steps) -> Steps:
    if spec.save_strategy == "best":
        return intervals.best_saves(spec.improving_evals, eval_steps)
    final = loop.reached_max_steps and spec.save_strategy in rules.final_step_save
    if spec.save_strategy == "epoch":
        ends = loop.epoch_end_steps
        if not (final and ends):
            return ends[:]
        steps = ends[:-1]
        steps.append(max_steps)  # saved at max_steps, then again at the end of that epoch
        steps.append(ends[-1])
        return steps
    if spec.save_strategy != "steps":
        return Steps()
    every = _every(d, rules, spec, "save_steps", spec.save_steps, max_steps)
    steps = intervals.multiples(every, loop.global_step, start + 1, "save_steps")
    if final and (not every or max_steps % every):
        steps.append(max_steps)
    return steps


def _every(d, rules, spec, name: str, value: float, max_steps: int) -> int:
    """The interval in force: a resumed run of 4.32+ keeps the one stored in its checkpoint."""
    stored = getattr(spec, "checkpoint_" + name) if spec.resume_from_step else None
    if stored is not None and rules.resume_intervals == "checkpoint":
        return d.add(name, int(stored), why="hf.interval.checkpoint", version=rules.release)
    return intervals.interval(d, name, value, max_steps)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)

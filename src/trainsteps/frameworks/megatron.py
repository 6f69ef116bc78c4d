"""Megatron-LM / megatron-core: parallel sizes, batch and micro-batches, iterations vs samples,
batch-size ramp-up or step schedule (megatron_step.py), GPTDataset epochs and samples, split and blends,
and what it prints.

Rules from megatron-core 0.16.1 (`datasets/gpt_dataset.py`, `blended_megatron_dataset_builder.py`,
`blended_megatron_dataset_config.py`, `num_microbatches_calculator.py`) and Megatron-LM's
`training.py` / `arguments.py`; checked against the real code in tests/fixtures/pretrain/mcore.json.

Two dataset code bases exist: `core` (megatron.core.datasets, every Megatron-LM since 2023) and
`legacy` (megatron/data in Megatron-LM v2.x and its forks). Their differences are data below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks import gptdata, megatron_step
from trainsteps.frameworks.framework_error import FrameworkRuleError
from trainsteps.frameworks.hf.intervals import multiples
from trainsteps.frameworks.windows import SplitFacts, build_split
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.versions import Timeline


@dataclass(frozen=True, slots=True)
class DatasetCode:
    """How one Megatron dataset code base counts."""

    printed_offset: int
    """Added to N in the "total number of samples" line (legacy prints sample_idx.shape[0] = N + 1)."""
    split_rule: str
    """`neox` (rounding error pushed onto every boundary) or `mcore` (each bookend rounded on its own)."""


DATASET_CODE = {
    "core": DatasetCode(printed_offset=0, split_rule="mcore"),
    "legacy": DatasetCode(printed_offset=1, split_rule="neox"),
}

NEWEST_CORE_RELEASE = "0.19.0"
"""The megatron-core release assumed when none is given."""

BATCH_SCHEDULE = Timeline("megatron.batch_schedule", [
    # --rampup-batch-size START INCREMENT SAMPLES is honoured; there is no step schedule.
    ("0.0.0", "rampup"),
    # Megatron-LM 532ad926 (PR #4411): --step-batch-size-schedule replaces the ramp-up calculator;
    # --rampup-batch-size is still parsed but nothing reads it (no error, no warning).
    ("0.18.0", "step"),
])
"""Which batch-size schedule a megatron-core release runs (legacy Megatron-LM v2.x: `rampup`)."""


@dataclass(frozen=True, slots=True)
class MegatronSpec:
    """Megatron-LM command-line settings that decide how long a run is (names as the --flags, with _)."""

    world_size: int
    """All ranks of the job."""
    micro_batch_size: int
    """--micro-batch-size: samples per forward/backward per data-parallel rank."""
    seq_length: int = 2048
    """--seq-length: tokens per sample window."""
    global_batch_size: int | None = None
    """--global-batch-size (default micro x dp)."""
    tensor_model_parallel_size: int = 1
    """--tensor-model-parallel-size."""
    pipeline_model_parallel_size: int = 1
    """--pipeline-model-parallel-size."""
    context_parallel_size: int = 1
    """--context-parallel-size."""
    expert_model_parallel_size: int = 1
    """--expert-model-parallel-size: forms its own expert-data-parallel group; does not reduce dense dp."""
    train_iters: int | None = None
    """--train-iters (iteration-based training)."""
    train_samples: int | None = None
    """--train-samples (sample-based training)."""
    rampup_batch_size: tuple[int, int, int] | None = None
    """--rampup-batch-size START INCREMENT SAMPLES (sample-based training only)."""
    decrease_batch_size_if_needed: bool = False
    """--decrease-batch-size-if-needed: round the global batch down to a multiple of micro x dp."""
    eval_interval: int | None = 1000
    """--eval-interval (None: no validation target)."""
    eval_iters: int = 100
    """--eval-iters."""
    eval_global_batch_size: int | None = None
    """--eval-global-batch-size (default: the training global batch)."""
    split: str = "969, 30, 1"
    """--split over sequences of each --data-path prefix."""
    dataset: gptdata.SequenceTokens | None = None
    """A single unweighted --data-path prefix (its `.idx`)."""
    train_tokens: int | None = None
    """Tokens of the train split, when no dataset is given (valid/test are then not modelled)."""
    blend: tuple[gptdata.SequenceTokens, ...] | None = None
    """Several --data-path prefixes."""
    blend_weights: tuple[float, ...] | None = None
    """Their weights (`--data-path w1 p1 w2 p2`); None: weighted by their sizes, one epoch each."""
    add_extra_token_to_sequence: bool = True
    """Each window reads seq_length + 1 tokens (megatron-core default)."""
    drop_last_partial_validation_sequence: bool = True
    """False rounds the validation sample count up."""
    mid_level_dataset_surplus: float = 0.005
    """--mid-level-dataset-surplus: extra samples built per blended dataset."""
    lr_warmup_iters: int = 0
    """--lr-warmup-iters."""
    lr_warmup_fraction: float | None = None
    """--lr-warmup-fraction (of --lr-decay-iters or train_iters)."""
    lr_decay_iters: int | None = None
    """--lr-decay-iters."""
    save_interval: int | None = None
    """--save-interval."""
    log_interval: int = 100
    """--log-interval."""
    code: str = "core"
    """`core` (megatron.core.datasets) or `legacy` (megatron/data of Megatron-LM v2.x)."""
    step_batch_size_schedule: str | None = None
    """--step-batch-size-schedule "THRESHOLD:BATCH ...": thresholds in tokens (K/M/B/T suffixes), megatron-core >= 0.18.0."""
    release: str | None = None
    """megatron-core release (None: NEWEST_CORE_RELEASE); decides which batch-size schedule exists."""


def parallel_sizes(spec: MegatronSpec, d: Derivation) -> int:
    model = spec.tensor_model_parallel_size * spec.pipeline_model_parallel_size * spec.context_parallel_size
    if model < 1 or spec.world_size % model:
        raise InputError("mega.error.world", "mega.hint.world", world=spec.world_size, model=model,
                         tp=spec.tensor_model_parallel_size, pp=spec.pipeline_model_parallel_size, cp=spec.context_parallel_size)
    return d.add("data_parallel_size", spec.world_size // model, "world // (tp * pp * cp)",
                 f"{spec.world_size} // ({spec.tensor_model_parallel_size} * {spec.pipeline_model_parallel_size} * {spec.context_parallel_size})",
                 "mega.why.dp", ep=spec.expert_model_parallel_size)


def batch_sizes(spec: MegatronSpec, dp: int, d: Derivation) -> tuple[int, int]:
    mbs = spec.micro_batch_size
    if spec.global_batch_size is None:
        gbs = d.add("global_batch_size", mbs * dp, "micro * dp", f"{mbs} * {dp}", "mega.why.gbs_default")
    else:
        gbs = d.given("global_batch_size", spec.global_batch_size)
    if gbs % (mbs * dp):
        if spec.decrease_batch_size_if_needed:
            gbs = d.add("global_batch_size", gbs // (mbs * dp) * (mbs * dp), "floor(gbs / (micro*dp)) * micro*dp",
                        f"floor({gbs} / {mbs * dp}) * {mbs * dp}", "mega.why.decrease")
        else:
            raise FrameworkRuleError("mega.error.gbs", "mega.hint.gbs", gbs=gbs, mbs=mbs, dp=dp,
                             framework_error=f"global batch size ({gbs}) is not divisible by micro batch size ({mbs}) "
                                             f"times data parallel size ({dp})")
    micro = d.add("num_microbatches", gbs // (mbs * dp), "gbs // (micro * dp)", f"{gbs} // ({mbs} * {dp})", "mega.why.micro")
    return gbs, micro


def rampup_schedule(start: int, increment: int, ramp_samples: int, gbs: int, train_samples: int, micro: int = 1, dp: int = 1,
                    decrease: bool = False) -> tuple[int, int, int]:
    """Megatron-LM `update_train_iters` with the ramp-up calculator: (train_iters, ramp iterations, samples consumed).

    `update_train_iters` counts iterations with the ramp's batch sizes as they are; the training loop then checks
    each one (`update_num_microbatches(..., consistency_check=True)`): a size that is not a multiple of
    micro x dp stops the run, unless --decrease-batch-size-if-needed rounds it down, in which case the
    rounded sizes are what is consumed."""
    if (gbs - start) % increment or gbs < start:
        raise InputError("mega.error.rampup", "mega.hint.rampup", start=start, increment=increment, gbs=gbs)
    per_increment = ramp_samples / ((gbs - start) // increment) if gbs > start else math.inf

    def batch_at(consumed: int) -> int:
        if consumed > ramp_samples:
            return gbs
        return start + int(consumed / per_increment) * increment

    iterations = consumed = 0
    while consumed <= ramp_samples and consumed <= train_samples:
        consumed += batch_at(consumed)
        iterations += 1
    ramp_iterations = iterations
    if train_samples > consumed:
        iterations += (train_samples - consumed) // gbs
    total = done = 0
    while done < iterations and total <= ramp_samples:  # the training loop, iteration by iteration
        total += _running_batch(batch_at(total), micro, dp, decrease, done + 1)
        done += 1
    total += (iterations - done) * gbs
    return iterations, ramp_iterations, total


def _running_batch(batch: int, micro: int, dp: int, decrease: bool, iteration: int) -> int:
    """The batch an iteration really runs: Megatron's consistency check, or its rounding down."""
    unit = micro * dp
    if batch % unit == 0:
        return batch
    if decrease:
        if batch < unit:  # rounded down to no micro-batch at all: no samples would ever be consumed
            raise InputError("mega.error.rampup_zero", "mega.hint.rampup_batch", batch=batch, unit=unit, iteration=iteration)
        return batch // unit * unit
    raise FrameworkRuleError("mega.error.rampup_batch", "mega.hint.rampup_batch", batch=batch, unit=unit, iteration=iteration,
                             framework_error=f"current global batch size ({batch}) is not divisible by micro-batch-size ({micro}) "
                                             f"timesdata parallel size ({dp})")  # sic: megatron-core's message


def batch_regime(spec: MegatronSpec) -> str:
    """`rampup` or `step`: the batch-size schedule the release runs (BATCH_SCHEDULE)."""
    if spec.code == "legacy":
        return "rampup"
    try:
        return BATCH_SCHEDULE.at(spec.release or NEWEST_CORE_RELEASE)
    except ValueError:
        raise InputError("mega.error.release", "mega.hint.release", release=spec.release) from None


def _check_mode(spec: MegatronSpec) -> None:
    if (spec.train_iters is None) == (spec.train_samples is None):
        raise InputError("mega.error.mode", "mega.hint.mode")


def _iterations(spec: MegatronSpec, gbs: int, d: Derivation, rampup: tuple[int, int, int] | None,
                dp: int = 1) -> tuple[int, int, int | None]:
    """(train_iters, samples consumed, ramp iterations)."""
    _check_mode(spec)
    if spec.train_iters is not None:
        if rampup:
            raise InputError("mega.error.rampup_iters", "mega.hint.rampup_iters")
        it = d.given("train_iters", spec.train_iters)
        return it, d.add("samples_seen", it * gbs, "train_iters * gbs", f"{it:,} * {gbs}", "mega.why.consumed"), None
    if rampup:
        start, inc, ramp = rampup
        it, ramp_it, consumed = rampup_schedule(start, inc, ramp, gbs, spec.train_samples, spec.micro_batch_size, dp,
                                                spec.decrease_batch_size_if_needed)
        d.add("ramp_iterations", ramp_it, "iterations while consumed <= ramp samples", f"{start}+{inc}... over {ramp:,} samples",
              "mega.why.ramp")
        d.add("train_iters", it, "ramp iterations + (train_samples - ramp consumed) // gbs", "", "mega.why.ramp_iters")
        return it, d.add("samples_seen", consumed, "sum of the batch sizes", "", "mega.why.ramp_consumed"), ramp_it
    it = d.add("train_iters", spec.train_samples // gbs, "train_samples // gbs", f"{spec.train_samples:,} // {gbs}", "mega.why.sample_mode")
    return it, d.add("samples_seen", it * gbs, "train_iters * gbs", f"{it:,} * {gbs}", "mega.why.consumed"), None


@dataclass(frozen=True, slots=True)
class StepRun:
    """A run under --step-batch-size-schedule, as Megatron-LM walks it."""

    train_iters: int
    """Iterations (given, or Megatron's `update_train_iters` count for --train-samples)."""
    consumed: int
    """Samples the run consumes."""
    last_batch: int
    """Global batch of the last iteration."""
    lines: list[str]
    """What Megatron prints setting the calculator up."""


def _step_fail(msg_id: str, hint_id: str, exc: megatron_step.StepScheduleError, **params):
    return FrameworkRuleError(msg_id, hint_id, framework_error=exc.text, kind=exc.kind, **params)


def _step_schedule(spec: MegatronSpec, dp: int, d: Derivation, traps: list[Trap]) -> tuple[int, StepRun]:
    """(args.global_batch_size, the walked schedule), checked in the order Megatron-LM checks it."""
    raw, mbs, S = spec.step_batch_size_schedule, spec.micro_batch_size, spec.seq_length
    if spec.global_batch_size is not None:  # validate_args
        raise FrameworkRuleError("mega.error.step_conflict", "mega.hint.step_gbs", option="--global-batch-size",
                                 framework_error="Cannot specify both --step-batch-size-schedule and --global-batch-size")
    _check_mode(spec)
    gbs = d.add("global_batch_size", mbs * dp, "micro * dp", f"{mbs} * {dp}", "mega.why.step_gbs")
    if spec.decrease_batch_size_if_needed:  # the calculator
        raise FrameworkRuleError("mega.error.step_conflict", "mega.hint.step_decrease", option="--decrease-batch-size-if-needed",
                                 framework_error="Cannot specify both --step-batch-size-schedule and --decrease-batch-size-if-needed")
    try:
        entries = megatron_step.parse_schedule(raw, S)
        megatron_step.validate_schedule(entries)
    except megatron_step.StepScheduleError as exc:
        raise _step_fail("mega.error.step_schedule", "mega.hint.step_schedule", exc, schedule=raw) from None
    for k, e in enumerate(entries):
        d.add(f"step{k}.threshold_samples", e.threshold, "threshold_tokens // seq_length", f"{e.written:,} // {S}",
              "mega.why.step_threshold", batch=e.batch)
    segments = megatron_step.walk(entries, spec.train_samples, spec.train_iters)
    try:
        megatron_step.check_run(segments, entries[0].batch, mbs, dp)
    except megatron_step.StepScheduleError as exc:
        raise _step_fail("mega.error.step_run", "mega.hint.step_run", exc, iteration=(exc.iteration or 0) + 1, unit=mbs * dp) from None
    for seg in segments:
        k = seg.entry
        d.add(f"step{k}.first_iteration", seg.first_iteration + 1, "1 + iterations before consumed >= threshold", "",
              "mega.why.step_first", batch=seg.batch, consumed=seg.consumed_at_start, micro=seg.batch // (mbs * dp))
        d.add(f"step{k}.iterations", seg.iterations, "ceil((min(next threshold, end) - consumed) / batch)", "",
              "mega.why.step_segment", batch=seg.batch)
    consumed = sum(s.iterations * s.batch for s in segments)
    terms = " + ".join(f"{s.iterations:,} * {s.batch}" for s in segments) or "0"
    if spec.train_samples is not None:
        it = d.add("train_iters", sum(s.iterations for s in segments), "sum of the iterations of each entry",
                   " + ".join(f"{s.iterations:,}" for s in segments) or "0", "mega.why.step_iters")
    else:
        it = d.given("train_iters", spec.train_iters)
    d.add("samples_seen", consumed, "sum of iterations x batch of each entry", terms, "mega.why.step_consumed")
    _step_traps(spec, entries, segments, consumed, gbs, traps)
    lines = megatron_step.calculator_lines(raw, entries, S, mbs, dp)
    return gbs, StepRun(it, consumed, segments[-1].batch if segments else entries[0].batch, lines)


def _step_traps(spec: MegatronSpec, entries, segments, consumed: int, gbs: int, traps: list[Trap]) -> None:
    reached = {s.entry for s in segments}
    last = max(reached) if reached else -1
    for k, e in enumerate(entries):
        if k not in reached and k < last:
            traps.append(Trap("MEGATRON_STEP_SKIPPED", "mega.trap.step_skipped", {"threshold": e.threshold, "batch": e.batch}))
        elif k > last:
            traps.append(Trap("MEGATRON_STEP_NOT_REACHED", "mega.trap.step_not_reached",
                              {"threshold": e.threshold, "batch": e.batch, "consumed": consumed}))
    if spec.train_samples is not None and consumed > spec.train_samples:
        traps.append(Trap("MEGATRON_STEP_OVERSHOOT", "mega.trap.step_overshoot",
                          {"consumed": consumed, "train_samples": spec.train_samples, "extra": consumed - spec.train_samples}))
    if spec.train_iters is not None and consumed != spec.train_iters * gbs:
        traps.append(Trap("MEGATRON_STEP_ITERS_TARGET", "mega.trap.step_iters_target",
                          {"target": spec.train_iters * gbs, "gbs": gbs, "consumed": consumed}))


def _targets(spec: MegatronSpec, it: int, gbs: int, d: Derivation) -> list[int | None]:
    train = d.add("train.num_samples", spec.train_samples if spec.train_samples is not None else it * gbs,
                  "train_samples or train_iters * gbs", "", "mega.why.target_train")
    egbs = spec.eval_global_batch_size or gbs
    if spec.eval_interval:
        valid = d.add("valid.num_samples", (it // spec.eval_interval + 1) * spec.eval_iters * egbs,
                      "(train_iters // eval_interval + 1) * eval_iters * eval_gbs",
                      f"({it} // {spec.eval_interval} + 1) * {spec.eval_iters} * {egbs}", "mega.why.target_valid")
    else:
        valid = None
    test = d.add("test.num_samples", spec.eval_iters * egbs, "eval_iters * eval_gbs", f"{spec.eval_iters} * {egbs}", "mega.why.target_test")
    return [train, valid, test]


def _split_ranges(spec: MegatronSpec, n: int) -> list[tuple[int, int] | None]:
    if DATASET_CODE[spec.code].split_rule == "neox":
        b = gptdata.split_neox(spec.split, n)
        return [(b[i], b[i + 1]) if b[i + 1] > b[i] else None for i in range(3)]
    return gptdata.split_mcore(spec.split, n)


def _dataset_splits(spec: MegatronSpec, ds: gptdata.SequenceTokens, targets, d: Derivation, traps: list[Trap], prefix: str = "") -> list:
    extra = int(spec.add_extra_token_to_sequence)
    code = DATASET_CODE[spec.code]
    out = []
    for i, (name, rng) in enumerate(zip(("train", "valid", "test"), _split_ranges(spec, ds.num_sequences), strict=False)):
        if rng is None:
            out.append(None)
            continue
        begin, end = rng
        tokens = ds.tokens(begin, end)
        if tokens == 0 and targets[i]:
            traps.append(Trap("MEGATRON_EMPTY_SPLIT_HANGS", "mega.trap.empty_split", {"split": prefix + name, "begin": begin, "end": end,
                                                                                      "samples": targets[i]}))
            out.append(None)
            continue
        round_up = name == "valid" and not spec.drop_last_partial_validation_sequence
        out.append(build_split(d, prefix + name, tokens, spec.seq_length, targets[i], extra, 0, code.printed_offset, begin, end, round_up))
    return out


def _blend(spec: MegatronSpec, targets, d: Derivation, traps: list[Trap]) -> tuple[list, list]:
    """Per-split blended lengths and the component datasets."""
    parts = spec.blend
    components = []
    if spec.blend_weights is not None:
        if len(spec.blend_weights) != len(parts):
            raise InputError("mega.error.weights_count", "mega.hint.weights_count", weights=len(spec.blend_weights), datasets=len(parts))
        weights = gptdata.normalize_weights(spec.blend_weights)
        lengths = []
        per_split = []
        for i, target in enumerate(targets):
            if target is None:
                per_split.append((None, None))
                continue
            want, built = gptdata.mcore_blend_num_samples(weights, target, spec.mid_level_dataset_surplus)
            d.add(f"split{i}.blend_targets", want, "ceil(size * w_i)", f"ceil({target:,} * w)", "mega.why.blend_target")
            d.add(f"split{i}.blend_built", built, "ceil(ceil(size * w_i) * (1 + surplus))", "", "mega.why.blend_surplus",
                  surplus=spec.mid_level_dataset_surplus)
            per_split.append((want, built))
        for k, ds in enumerate(parts):
            requested = [per_split[i][1][k] if per_split[i][1] else None for i in range(3)]
            components.append(_dataset_splits(spec, ds, requested, d, traps, prefix=f"ds{k}."))
        for i in range(3):
            want = per_split[i][0]
            if want is None:
                lengths.append(None)
                continue
            for k, comp in enumerate(components):
                if comp[i] is not None and want[k] > comp[i].length:
                    traps.append(Trap("MEGATRON_BLEND_OVERSAMPLES", "mega.trap.oversample", {"k": want[k], "i": k, "n": comp[i].length}))
            lengths.append(d.add(f"split{i}.blend_length", sum(want), "sum_i ceil(size * w_i)", " + ".join(map(str, want)), "mega.why.blend_len"))
        return lengths, components
    for k, ds in enumerate(parts):
        components.append(_dataset_splits(spec, ds, [None, None, None], d, traps, prefix=f"ds{k}."))
    lengths = []
    for i, target in enumerate(targets):
        total = sum(c[i].length for c in components if c[i] is not None)
        lengths.append(d.add(f"split{i}.blend_length", total if target is None else min(target, total), "min(size, sum(len_i))",
                             f"min({target}, {total})", "mega.why.blend_unweighted"))
    return lengths, components


def plan_megatron(spec: MegatronSpec) -> Schedule:
    if spec.code not in DATASET_CODE:
        raise InputError("mega.error.code", "mega.hint.code", code=spec.code)
    d = Derivation()
    traps: list[Trap] = []
    dp = parallel_sizes(spec, d)
    regime = batch_regime(spec)
    step_run = None
    if spec.step_batch_size_schedule is not None:
        if regime != "step":
            raise InputError("mega.error.step_release", "mega.hint.step_release", release=spec.release or spec.code)
        gbs, step_run = _step_schedule(spec, dp, d, traps)
        it, consumed, ramp_it = step_run.train_iters, step_run.consumed, None
    else:
        rampup = spec.rampup_batch_size if regime == "rampup" else None
        if spec.rampup_batch_size and rampup is None:
            traps.append(Trap("MEGATRON_RAMPUP_IGNORED", "mega.trap.rampup_ignored",
                              {"release": spec.release or NEWEST_CORE_RELEASE, "start": spec.rampup_batch_size[0]}))
        gbs, micro = batch_sizes(spec, dp, d)
        it, consumed, ramp_it = _iterations(spec, gbs, d, rampup, dp)
    targets = _targets(spec, it, gbs, d)
    S = spec.seq_length
    blend_lengths = None
    if spec.blend:
        blend_lengths, components = _blend(spec, targets, d, traps)
        train_parts = [c[0] for c in components if c[0] is not None]
        per_epoch = d.add("train.samples_per_epoch", sum(p.samples_per_epoch for p in train_parts), "sum_i samples_per_epoch_i", "",
                          "mega.why.blend_epoch")
        splits = [None, None, None]
        lines = _printed(spec, targets, [c for comp in components for c in comp], it)
        epochs_built = max(p.epochs_built for p in train_parts)
    elif spec.dataset is not None:
        splits = _dataset_splits(spec, spec.dataset, targets, d, traps)
        if splits[0] is None:
            raise InputError("mega.error.empty_train", "mega.hint.empty_train", split=spec.split)
        per_epoch, epochs_built = splits[0].samples_per_epoch, splits[0].epochs_built
        lines = _printed(spec, targets, splits, it)
    elif spec.train_tokens is not None:
        splits = [build_split(d, "train", spec.train_tokens, S, targets[0], int(spec.add_extra_token_to_sequence), 0,
                              DATASET_CODE[spec.code].printed_offset), None, None]
        per_epoch, epochs_built = splits[0].samples_per_epoch, splits[0].epochs_built
        lines = _printed(spec, targets, splits, it)
    else:
        raise InputError("mega.error.no_data", "mega.hint.no_data")
    tokens_seen = d.add("tokens_seen", consumed * S, "consumed samples * seq_length", f"{consumed:,} * {S}", "mega.why.tokens")
    epochs = d.add("epochs_trained", round(consumed / per_epoch, 6) if per_epoch else 0.0, "consumed samples / samples_per_epoch",
                   f"{consumed:,} / {per_epoch:,}", "mega.why.epochs_trained")
    if epochs_built > 1:
        traps.append(Trap("MEGATRON_EPOCHS_BUILT", "mega.trap.epochs_built", {"built": epochs_built, "trained": epochs}))
    if ramp_it is not None and spec.lr_warmup_iters:
        traps.append(Trap("MEGATRON_RAMPUP_ITERS", "mega.trap.rampup_lr", {"iters": it}))
    decay = spec.lr_decay_iters or it
    warm = spec.lr_warmup_iters if spec.lr_warmup_fraction is None else spec.lr_warmup_fraction * decay
    d.add("warmup_steps", warm, "lr_warmup_fraction * lr_decay_iters" if spec.lr_warmup_fraction is not None else "lr_warmup_iters", "",
          "mega.why.warmup")
    facts = RunFacts(
        optimizer_steps=it, max_steps=it, epoch_end_steps=[], epochs_completed=epochs, epochs_planned=epochs_built,
        samples_seen=consumed, warmup_steps=math.ceil(warm),
        # multiples() refuses more than MAX_EVENTS steps, as on the Trainer path
        log_steps=multiples(spec.log_interval, it, name="log_interval") if spec.log_interval else [],
        eval_steps=multiples(spec.eval_interval, it, name="eval_interval") if spec.eval_interval and spec.eval_iters else [],
        save_steps=multiples(spec.save_interval, it, name="save_interval") if spec.save_interval else [],
        samples_per_epoch=per_epoch, tokens_seen=tokens_seen,
    )
    if step_run is not None:
        lines[:0] = step_run.lines
    lines.append(iteration_line(it, it, consumed, step_run.last_batch if step_run else gbs))
    train = splits[0]
    banner = {"total number of samples": str(train.printed_samples), "total number of epochs": str(train.epochs_built)} if train else {}
    inputs = {name: _jsonable(getattr(spec, name)) for name in MegatronSpec.__slots__}
    return Schedule(framework="megatron", version=spec.code, family=spec.code, family_reason=f"mega.family.{spec.code}", banner=banner,
                    banner_lines=lines, run=facts, warnings=traps, derivation=d, inputs=inputs)


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "num_sequences"):
        return {"num_sequences": value.num_sequences}
    return value


def _printed(spec: MegatronSpec, targets, splits, it: int) -> list[str]:
    out = [" > datasets target sizes (minimum size):", f"    train:      {targets[0]}", f"    validation: {targets[1]}",
           f"    test:       {targets[2]}"]
    if spec.code == "core":
        matrix = gptdata.split_matrix(spec.split)
        out.append(f"Let split_matrix = {[None if m is None else (0 if m[0] == 0 else m[0], m[1]) for m in matrix]}")
    for split in splits:
        if split is None:
            continue
        short = split.name.split(".")[-1]
        if spec.code == "core":
            out += [f"Build and save the GPTDataset {short} indices", f"> total number of samples: {split.printed_samples}",
                    f"> total number of epochs: {split.epochs_built}"]
        else:
            out += legacy_lines(split, spec.seq_length)
    if spec.train_samples is not None:
        out.append(f"setting training iterations to {it}")
    return out


def legacy_lines(split: SplitFacts, seq_length: int) -> list[str]:
    """What Megatron-LM v2.x's GPTDataset prints while building one split (rank 0)."""
    n = split.samples_built
    out = ["    using:", f"     number of documents:       {(split.end - split.begin) if split.begin is not None else '?'}",
           f"     number of epochs:          {split.epochs_built}", f"     sequence length:           {seq_length}",
           f"     total number of samples:   {n}"]
    if split.epochs_built == 1:
        out.append(" > only one epoch required, setting separate_last_epoch to False")
    elif split.num_samples_requested is not None:
        before = ((split.epochs_built - 1) * split.tokens_per_epoch - 1) // seq_length
        last = split.num_samples_requested - before
        per_epoch = split.samples_per_epoch
        word, flag = ("smaller", True) if last < int(0.80 * per_epoch) else ("larger", False)
        out.append(f" > last epoch number of samples ({last}) is {word} than 80% of number of samples per epoch ({per_epoch}), "
                   f"setting separate_last_epoch to {flag}")
    out += [f"    total number of samples: {split.printed_samples}", f"    total number of epochs: {split.epochs_built}"]
    return out


def iteration_line(iteration: int, train_iters: int, consumed: int, global_batch: int) -> str:
    """The start of Megatron-LM's training_log line (timestamp, timings and losses omitted)."""
    return (f" iteration {iteration:8d}/{train_iters:8d} | consumed samples: {consumed:12d} | ... | "
            f"global batch size: {global_batch:5d} | ...")

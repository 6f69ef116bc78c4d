"""Megatron-Bridge: iterations from train_iters, train_samples or num_epochs; the global batches of an epoch; padding;
the LR decay and warmup; evaluations, saves and the dataset target sizes.

Rules of Megatron-Bridge 0.5.1 and 0.6.0 (`training/config.py` TrainingConfig.finalize,
ConfigContainer._resolve_num_epochs / _validate_training_scheduler_compatibility / _calculate_scheduler_steps;
`data/loaders.py` get_train_valid_test_num_samples, cyclic_iter, the drop_last choice; `data/samplers.py`
MegatronPretrainingBatchSampler; `training/train.py` the eval and save conditions), recorded by running that code
(tools/record_megatron_bridge.py, tests/fixtures/pretrain/megatron_bridge.json):
- exactly one of train_iters, train_samples (train_iters = train_samples // GBS) and, from 0.6.0, num_epochs
  (train_iters = ceil(num_epochs x ceil(N / GBS)); a finite SFT dataset, dataloader_type "batch"); ramp-up only with
  train_iters;
- the sampler takes whole global batches: drop_last (the dataset's, True by default; False under num_epochs) keeps
  floor(N / GBS) of them an epoch, else ceil(N / GBS) with the last one padded to GBS by loss-masked -1 indices; the
  loader cycles, so train_iters past the data starts new epochs (NVIDIA-NeMo/Megatron-Bridge#2391);
- the LR decays over scheduler.max_steps (>= train_iters), lr_decay_iters or train_iters, counted in samples
  (x GBS); warmup is lr_warmup_fraction x decay or lr_warmup_iters x GBS, capped below the decay with a warning;
- evaluation every eval_interval iterations; checkpoints every save_interval and at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.versions import Timeline

NEWEST = "0.6.0"
"""The newest Megatron-Bridge release modelled (tag v0.6.0, 2026-08-19)."""
NUM_EPOCHS = Timeline("megatron_bridge.num_epochs", [("0.5.1", False), ("0.6.0", True)])
"""`train.num_epochs` exists from 0.6.0 (#4147)."""
MAX_EVENTS = 100_000


@dataclass(frozen=True, slots=True)
class BridgeSpec:
    """A Megatron-Bridge run over a finite dataset (the `train`, `scheduler`, `validation`, `checkpoint` and `dataset`
    sections of its ConfigContainer)."""

    num_examples: int
    """len(train_ds): rows, or packed rows when the SFT dataset is packed."""
    global_batch_size: int
    micro_batch_size: int = 1
    dp: int = 1
    """Data-parallel size: world / (tp x pp x cp)."""
    train_iters: int | None = None
    train_samples: int | None = None
    num_epochs: float | None = None
    drop_last: bool = True
    """dataset.drop_last (forced False under num_epochs)."""
    rampup_batch_size: tuple | None = None
    eval_interval: int | None = None
    eval_iters: int = 0
    eval_global_batch_size: int | None = None
    save_interval: int | None = None
    lr_warmup_iters: int = 0
    lr_warmup_fraction: float | None = None
    lr_warmup_samples: int = 0
    lr_decay_iters: int | None = None
    scheduler_max_steps: int | None = None
    release: str = NEWEST


def _refuse(said: str) -> None:
    raise InputError("mb.error.refused", "mb.hint.refused", said=said)


def _iterations(spec: BridgeSpec, d: Derivation) -> tuple[int, list[str]]:
    """train_iters and the line Bridge prints when it derives them (TrainingConfig.finalize, _resolve_num_epochs)."""
    if spec.num_epochs is not None and not NUM_EPOCHS.at(spec.release):
        raise InputError("mb.error.not_in_release", "mb.hint.not_in_release", key="num_epochs", release=spec.release)
    modes = [name for name in ("train_iters", "train_samples", "num_epochs") if getattr(spec, name) is not None]
    if len(modes) != 1:
        _refuse("One of train_iters, train_samples, or num_epochs must be provided" if not modes else
                "Cannot specify more than one of train_iters, train_samples, or num_epochs")
    if spec.rampup_batch_size is not None and spec.train_iters is None:
        _refuse("Batch size rampup not supported with epoch-based training" if spec.num_epochs is not None else
                "Batch size rampup not supported with sample-based training yet")
    gbs = spec.global_batch_size
    if spec.train_samples is not None:
        iters = d.add("train_iters", spec.train_samples // gbs, "train_samples // GBS", f"{spec.train_samples} // {gbs}", "mb.why.samples")
        return iters, [f"Setting training iterations to {iters} based on {spec.train_samples} samples"]
    if spec.num_epochs is not None:
        per_epoch = math.ceil(spec.num_examples / gbs)
        iters = d.add("train_iters", math.ceil(spec.num_epochs * per_epoch), "ceil(num_epochs x ceil(N / GBS))",
                      f"ceil({spec.num_epochs} x ceil({spec.num_examples} / {gbs}))", "mb.why.epochs")
        return iters, [f"Setting training iterations to {iters} based on {_number(spec.num_epochs)} epochs, {spec.num_examples} train "
                       f"samples, {per_epoch} iterations per epoch, and global batch size {gbs}"]
    return d.add("train_iters", spec.train_iters, why="mb.why.iters"), []


def _number(value: float) -> str:
    """A number as Python prints it in an f-string (2 stays 2, 1.5 stays 1.5)."""
    return str(value)


def _lr(spec: BridgeSpec, iters: int, d: Derivation) -> tuple[int | float, int | float, list[Trap]]:
    """(decay steps, warmup steps), both in samples, as _calculate_scheduler_steps sets them."""
    gbs, traps = spec.global_batch_size, []
    if spec.train_samples is not None:
        if spec.scheduler_max_steps is not None or spec.lr_decay_iters is not None or spec.lr_warmup_iters:
            _refuse("Use lr_warmup_samples for sample-based training, not lr_warmup_iters" if spec.lr_warmup_iters else
                    "Use lr_decay_samples for sample-based training, not lr_decay_iters")
        decay = spec.train_samples
        warmup = spec.lr_warmup_fraction * decay if spec.lr_warmup_fraction is not None else spec.lr_warmup_samples
    else:
        if spec.lr_warmup_samples:
            _refuse("Use lr_warmup_iters for iteration-based training, not lr_warmup_samples")
        if spec.scheduler_max_steps is not None and spec.scheduler_max_steps < iters:
            _refuse(f"scheduler.max_steps ({spec.scheduler_max_steps}) must be greater than or equal to train.train_iters ({iters}).")
        decay_iters = spec.scheduler_max_steps or spec.lr_decay_iters or iters
        decay = decay_iters * gbs
        warmup = spec.lr_warmup_fraction * decay if spec.lr_warmup_fraction is not None else spec.lr_warmup_iters * gbs
    if spec.lr_warmup_fraction is not None and (spec.lr_warmup_iters or spec.lr_warmup_samples):
        _refuse("Can only specify one of lr_warmup_fraction or lr_warmup_iters")
    d.add("lr_decay_steps", decay, "(scheduler.max_steps or lr_decay_iters or train_iters) x GBS, or train_samples", "", "mb.why.decay")
    if warmup >= decay:
        traps.append(Trap("MB_WARMUP_CAPPED", "mb.trap.warmup", {"warmup": warmup, "decay": decay, "capped": decay - 1}))
        warmup = decay - 1
    d.add("lr_warmup_steps", warmup, "lr_warmup_fraction x decay, or lr_warmup_iters x GBS (samples)", "", "mb.why.warmup")
    return decay, warmup, traps


def plan_megatron_bridge(spec: BridgeSpec) -> Schedule:
    _check(spec)
    d = Derivation()
    gbs, unit = spec.global_batch_size, spec.micro_batch_size * spec.dp
    if gbs % unit:
        _refuse(f"`global_batch_size` ({gbs}) is not divisible by `micro_batch_size ({spec.micro_batch_size}) x data_parallel_size "
                f"({spec.dp})`")
    iters, lines = _iterations(spec, d)
    drop_last = False if spec.num_epochs is not None else spec.drop_last  # data/loaders.py
    if drop_last and spec.num_examples < gbs:
        _refuse(f"drop_last=True requires at least one full global batch; got total_samples={spec.num_examples}, "
                f"global_batch_size={gbs}")
    per_epoch = d.add("global_batches_per_epoch", spec.num_examples // gbs if drop_last else math.ceil(spec.num_examples / gbs),
                      "floor(N / GBS) with drop_last, else ceil(N / GBS)", f"{spec.num_examples} / {gbs}", "mb.why.sampler")
    padding = 0 if drop_last else per_epoch * gbs - spec.num_examples
    full = iters // per_epoch
    padded = d.add("padded_samples", full * padding, "complete epochs x (ceil(N / GBS) x GBS - N)", f"{full} x {padding}", "mb.why.padded")
    real = iters * gbs - padded
    decay, warmup, traps = _lr(spec, iters, d)
    dropped = spec.num_examples - per_epoch * gbs if drop_last else 0
    if dropped:
        traps.append(Trap("MB_DROPPED_ROWS", "mb.trap.dropped", {"rows": dropped, "n": spec.num_examples, "gbs": gbs}))
    if padding and spec.num_epochs is not None:
        traps.append(Trap("MB_PADDED_LAST_BATCH", "mb.trap.padded", {"pad": padding, "gbs": gbs, "iters": iters, "epochs": spec.num_epochs}))
    if spec.num_epochs is None and iters > per_epoch:
        traps.append(Trap("MB_CYCLES", "mb.trap.cycles", {"iters": iters, "per_epoch": per_epoch, "epochs": round(iters / per_epoch, 4)}))
    if spec.rampup_batch_size is not None:  # passed to megatron-core's num-microbatches calculator (training/initialize.py)
        start, increment, ramp = spec.rampup_batch_size
        traps.append(Trap("MB_RAMPUP", "mb.trap.rampup", {"start": start, "increment": increment, "ramp": ramp, "gbs": gbs}))
    evals, saves = _events(spec, iters)
    eval_gbs = spec.eval_global_batch_size or gbs
    target_valid = (iters // spec.eval_interval + 1) * spec.eval_iters * eval_gbs if spec.eval_interval else 0
    target_train = spec.train_samples if spec.train_samples is not None else iters * gbs
    target_test = spec.eval_iters * eval_gbs
    lines += [f" > datasets target sizes (minimum size): train: {target_train} validation: {target_valid} test: {target_test}",
              f" [YYYY-mm-dd HH:MM:SS] iteration {iters:8d}/{iters:8d} | consumed samples: {iters * gbs:12d} | ..."]
    facts = RunFacts(optimizer_steps=iters, max_steps=iters, epoch_end_steps=[per_epoch * (e + 1) for e in range(min(full, 100_000))],
                     epochs_completed=round(iters / per_epoch, 4), epochs_planned=spec.num_epochs or round(iters / per_epoch, 4),
                     samples_seen=real, warmup_steps=round(warmup / gbs, 4), eval_steps=evals, save_steps=saves,
                     batches_per_epoch=per_epoch, samples_per_epoch=spec.num_examples - dropped, equivalent_epochs=round(real / spec.num_examples, 4))
    inputs = {name: getattr(spec, name) for name in BridgeSpec.__slots__}
    inputs.update(world_size=spec.dp, gradient_accumulation_steps=gbs // unit, per_device_train_batch_size=spec.micro_batch_size,
                  drop_last_used=drop_last, padded_samples=padded, lr_decay_steps=decay, lr_warmup_steps=warmup,
                  target_train_samples=target_train, target_valid_samples=target_valid)
    family = "num_epochs" if spec.num_epochs is not None else "train_samples" if spec.train_samples is not None else "train_iters"
    return Schedule(framework="megatron-bridge", version=spec.release, family=family, family_reason=f"mb.family.{family}",
                    banner={"train_iters": str(iters)}, banner_lines=lines, run=facts, warnings=traps, derivation=d, inputs=inputs)


def _check(spec: BridgeSpec) -> None:
    for name in ("num_examples", "global_batch_size", "micro_batch_size", "dp", "train_iters", "train_samples", "eval_interval",
                 "eval_iters", "eval_global_batch_size", "save_interval", "lr_warmup_iters", "lr_warmup_samples", "lr_decay_iters",
                 "scheduler_max_steps"):
        value = getattr(spec, name)
        low = 0 if name in ("eval_interval", "eval_iters", "lr_warmup_iters", "lr_warmup_samples", "save_interval") else 1
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise InputError("mb.error.value", "mb.hint.value", name=name, value=value)
    for name, low, high in (("num_epochs", 0, math.inf), ("lr_warmup_fraction", 0, 1)):
        value = getattr(spec, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or not low < value <= high
                                  or math.isinf(value)):
            raise InputError("mb.error.value", "mb.hint.value", name=name, value=value)


def _events(spec: BridgeSpec, iters: int) -> tuple[list[int], list[int]]:
    """Evaluations every eval_interval; checkpoints every save_interval and at the last iteration (train.py)."""
    if max(iters // spec.eval_interval if spec.eval_interval else 0, iters // spec.save_interval if spec.save_interval else 0) > MAX_EVENTS:
        raise InputError("mb.error.too_many_events", "mb.hint.too_many_events", iters=iters, limit=MAX_EVENTS)
    evals = list(range(spec.eval_interval, iters + 1, spec.eval_interval)) if spec.eval_interval else []
    saves = sorted({*(range(spec.save_interval, iters + 1, spec.save_interval) if spec.save_interval else ()), iters}) \
        if spec.save_interval != 0 else []
    return evals, saves

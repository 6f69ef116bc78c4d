"""NeMo Automodel: the StepScheduler's steps, epochs, checkpoint and validation steps, and its num_epochs trap.

Rules of nemo_automodel 0.5.0 and 0.7.0 (`components/training/step_scheduler.py` StepScheduler and
StepSchedulerConfig, `components/datasets/loader.py` `_make_sampler`, `components/optim/optimizer.py` the LR
horizon, `recipes/base_recipe.py` `_log_step_scheduler_details`), recorded by running that code
(tools/record_automodel.py, tests/fixtures/pretrain/automodel.json):
- each rank reads floor(N / dp) rows (StatefulDistributedSampler, drop_last=True) in batches of local_batch_size,
  the last one short: L = ceil(floor(N / dp) / local);
- accumulation = global // (local x dp) (refused when it does not divide); an epoch is ceil(L / accumulation) steps:
  the partial window at an epoch's end steps too;
- `StepSchedulerConfig.num_epochs` defaults to 10, so a YAML that sets only `max_steps` still stops after 10 epochs
  (NVIDIA-NeMo/Automodel#3767); `num_epochs: null` derives ceil(max_steps / epoch) epochs;
- the run is min(max_steps, num_epochs x epoch) steps; the LR horizon is the same, warmup min(1000, total // 10);
- checkpoints every `ckpt_every_steps` (default 100; null: once per epoch), at every epoch end, at the last step;
  validation every `val_every_steps` and on every checkpoint step (`validate_on_checkpoint`, from 0.7.0 a setting).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.hf.loop import MAX_EPOCH_ENDS
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.steps import Steps
from trainsteps.versions import Timeline

NEWEST = "0.7.0"
"""The newest nemo_automodel release modelled (PyPI)."""
DEFAULT_EPOCHS = 10
"""StepSchedulerConfig.num_epochs when the YAML does not say it."""
VALIDATE_ON_CHECKPOINT_SETTING = Timeline("automodel.validate_on_checkpoint", [("0.5.0", False), ("0.7.0", True)])
"""Before 0.7.0 every checkpoint step validates; from 0.7.0 `validate_on_checkpoint` can turn it off."""
MAX_EVENTS = 100_000


@dataclass(frozen=True, slots=True)
class AutomodelSpec:
    """A NeMo Automodel fine-tuning run over a map-style dataset (the `step_scheduler` section of its YAML)."""

    num_examples: int
    """Rows of the training dataset."""
    dp: int = 1
    """Data-parallel size: world / (tp x cp x pp)."""
    local_batch_size: int = 1
    """step_scheduler.local_batch_size: rows per micro-batch per rank."""
    global_batch_size: int = 32
    """step_scheduler.global_batch_size."""
    num_epochs: int | None = DEFAULT_EPOCHS
    """step_scheduler.num_epochs; None (`null` in the YAML) derives it from max_steps."""
    num_epochs_given: bool = False
    """Whether the YAML or a flag set num_epochs (10 when it did not)."""
    max_steps: int | None = None
    """step_scheduler.max_steps."""
    ckpt_every_steps: int | None = 100
    """step_scheduler.ckpt_every_steps; None saves once per epoch."""
    save_checkpoint_every_epoch: bool = True
    """step_scheduler.save_checkpoint_every_epoch."""
    val_every_steps: int | None = None
    """step_scheduler.val_every_steps; None: validation only on checkpoint steps."""
    validate_on_checkpoint: bool = True
    """step_scheduler.validate_on_checkpoint (0.7.0)."""
    lr_warmup_steps: int | None = None
    """lr_scheduler.lr_warmup_steps; None: min(1000, total // 10)."""
    release: str = NEWEST


def _check(spec: AutomodelSpec) -> None:
    for name in ("num_examples", "dp", "local_batch_size", "global_batch_size", "num_epochs", "max_steps", "ckpt_every_steps",
                 "val_every_steps", "lr_warmup_steps"):
        value = getattr(spec, name)
        low = 0 if name in ("num_examples", "lr_warmup_steps") else 1
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise InputError("am.error.value", "am.hint.value", name=name, value=value)
    if spec.num_epochs is None and spec.max_steps is None:
        raise InputError("am.error.unbounded", "am.hint.unbounded")
    if not spec.validate_on_checkpoint and not VALIDATE_ON_CHECKPOINT_SETTING.at(spec.release):
        raise InputError("am.error.not_in_release", "am.hint.not_in_release", key="validate_on_checkpoint", release=spec.release)


def plan_automodel(spec: AutomodelSpec) -> Schedule:
    _check(spec)
    d = Derivation()
    traps: list[Trap] = []
    local = spec.local_batch_size * spec.dp
    if spec.global_batch_size % local:
        raise InputError("am.error.global_batch", "am.hint.global_batch", global_batch=spec.global_batch_size,
                         local=spec.local_batch_size, dp=spec.dp)
    ga = d.add("gradient_accumulation_steps", spec.global_batch_size // local, "global // (local x dp)",
               f"{spec.global_batch_size} // ({spec.local_batch_size} x {spec.dp})", "am.why.ga")
    rows = d.add("rows_per_rank", spec.num_examples // spec.dp, "floor(N / dp)", f"{spec.num_examples} // {spec.dp}", "am.why.sampler")
    batches = d.add("batches_per_epoch", -(-rows // spec.local_batch_size), "ceil(rows / local)", f"ceil({rows} / {spec.local_batch_size})",
                    "am.why.loader")
    epoch_len = d.add("num_update_steps_per_epoch", -(-batches // ga), "ceil(L / accumulation)", f"ceil({batches} / {ga})", "am.why.epoch_len")
    if epoch_len == 0:
        raise InputError("am.error.empty", "am.hint.empty", rows=spec.num_examples, dp=spec.dp)
    epochs = spec.num_epochs
    if epochs is None:
        epochs = d.add("num_epochs", -(-spec.max_steps // epoch_len), "ceil(max_steps / epoch)", f"ceil({spec.max_steps} / {epoch_len})",
                       "am.why.epochs_from_steps")
    else:
        d.add("num_epochs", epochs, why="am.why.epochs_given" if spec.num_epochs_given else "am.why.epochs_default")
    max_steps = spec.max_steps if spec.max_steps is not None else epochs * epoch_len
    steps = d.add("optimizer_steps", min(max_steps, epochs * epoch_len), "min(max_steps, num_epochs x epoch)",
                  f"min({max_steps}, {epochs} x {epoch_len})", "am.why.steps")
    if spec.max_steps is not None and steps < spec.max_steps:
        code, msg = ("AUTOMODEL_DEFAULT_EPOCHS_CAP", "am.trap.default_epochs") if not spec.num_epochs_given else \
            ("AUTOMODEL_EPOCHS_CAP", "am.trap.epochs_cap")
        traps.append(Trap(code, msg, {"max_steps": spec.max_steps, "steps": steps, "epochs": epochs, "epoch_len": epoch_len}))
    warmup = spec.lr_warmup_steps if spec.lr_warmup_steps is not None else min(1000, steps // 10)
    d.add("warmup_steps", warmup, "lr_warmup_steps or min(1000, total // 10)", f"min(1000, {steps} // 10)", "am.why.warmup")
    every = spec.ckpt_every_steps if spec.ckpt_every_steps is not None else epoch_len
    counts = (steps // every, steps // spec.val_every_steps if spec.val_every_steps else 0,
              steps // epoch_len if spec.save_checkpoint_every_epoch else 0)
    if max(counts) > MAX_EVENTS:
        raise InputError("am.error.too_many_events", "am.hint.too_many_events", steps=steps, limit=MAX_EVENTS)
    ends_saved = range(epoch_len, steps + 1, epoch_len) if spec.save_checkpoint_every_epoch else ()
    saves = sorted({*range(every, steps + 1, every), *ends_saved, steps})
    on_save = spec.validate_on_checkpoint or not VALIDATE_ON_CHECKPOINT_SETTING.at(spec.release)
    vals = sorted({*(saves if on_save else ()), *(range(spec.val_every_steps, steps + 1, spec.val_every_steps) if spec.val_every_steps else ())})
    full, rest = divmod(steps, epoch_len)
    samples = d.add("samples_seen", (full * rows + min(rest * ga * spec.local_batch_size, rows)) * spec.dp,
                    "(full epochs x rows per rank + rows of the cut epoch) x dp", "", "am.why.samples")
    if full > MAX_EPOCH_ENDS:  # the same cap as every plan that lists its epoch ends
        raise InputError("hf.error.too_many_epochs", "hf.hint.too_many_epochs", limit=MAX_EPOCH_ENDS, max_steps=steps)
    ends = Steps.every(epoch_len, epoch_len, epoch_len * full)
    facts = RunFacts(
        optimizer_steps=steps, max_steps=max_steps, epoch_end_steps=ends, epochs_completed=round(full + rest / epoch_len, 4),
        epochs_planned=epochs, samples_seen=samples, warmup_steps=warmup, eval_steps=vals, save_steps=saves,
        batches_per_epoch=batches, samples_per_epoch=rows * spec.dp,
    )
    lines = []
    if spec.max_steps is None:
        lines.append(f"max_steps not provided; will run for up to {max_steps} steps")
    if spec.ckpt_every_steps is None:
        lines.append(f"ckpt_every_steps not provided; will save checkpoint every {every} steps")
    lines += ["Step scheduler:", f"- Gradient accumulation steps: {ga}", f"- Checkpoint every steps: {every}",
              "- Garbage collect every steps: None", "- Current Epoch: 0", f"- Number of epochs: {epochs}",
              f"- Validation every steps: {spec.val_every_steps}", f"- Max train steps: {max_steps}"]
    inputs = {name: getattr(spec, name) for name in AutomodelSpec.__slots__}
    inputs.update(world_size=spec.dp, gradient_accumulation_steps=ga, per_device_train_batch_size=spec.local_batch_size)
    return Schedule(framework="automodel", version=spec.release, family="step_scheduler", family_reason="am.family",
                    banner={"Max train steps": str(max_steps), "Number of epochs": str(epochs)}, banner_lines=lines, run=facts,
                    warnings=traps, derivation=d, inputs=inputs)

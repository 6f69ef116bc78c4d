"""PyTorch Lightning: batches per epoch, optimizer steps, estimated_stepping_batches and what the progress bar counts.

Rules of lightning 2.6 (`trainer/trainer.py::estimated_stepping_batches`, `loops/fit_loop.py`,
`loops/training_epoch_loop.py::_should_accumulate`, `loops/utilities.py::_parse_loop_limits`,
`trainer/connectors/data_connector.py`); checked by running Lightning on CPU, one process and two
gloo ranks (tests/fixtures/pretrain/lightning.json).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.hf.loop import MAX_EPOCH_ENDS
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.steps import Steps


@dataclass(frozen=True, slots=True)
class LightningSpec:
    """A `Trainer.fit` run over a map-style dataset."""

    num_samples: int
    """Rows of the training dataset (`len(dataset)`)."""
    batch_size: int
    """DataLoader batch_size per process."""
    world_size: int = 1
    """Processes (devices x num_nodes); DDP shards with a DistributedSampler."""
    accumulate_grad_batches: int = 1
    """Trainer(accumulate_grad_batches)."""
    max_epochs: int | None = None
    """Trainer(max_epochs); None becomes 1000 without max_steps, else -1 (unlimited)."""
    max_steps: int = -1
    """Trainer(max_steps): optimizer steps (global_step); -1 for no limit."""
    limit_train_batches: int | float = 1.0
    """Trainer(limit_train_batches): an int counts batches, a float is a fraction of them."""
    drop_last: bool = False
    """DataLoader(drop_last)."""


def _rows_per_rank(spec: LightningSpec) -> int:
    return -(-spec.num_samples // spec.world_size) if spec.world_size > 1 else spec.num_samples


def batches_per_epoch(spec: LightningSpec, d: Derivation) -> int:
    if spec.world_size > 1:
        rows = d.add("rows_per_rank", -(-spec.num_samples // spec.world_size), "ceil(N / world)", f"ceil({spec.num_samples} / {spec.world_size})",
                     "lit.why.sampler")
    else:
        rows = d.given("rows_per_rank", spec.num_samples)
    if spec.drop_last:
        loader = d.add("dataloader_len", rows // spec.batch_size, "rows // batch", f"{rows} // {spec.batch_size}", "lit.why.drop_last")
    else:
        loader = d.add("dataloader_len", -(-rows // spec.batch_size), "ceil(rows / batch)", f"ceil({rows} / {spec.batch_size})", "lit.why.loader")
    limit = spec.limit_train_batches
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit < 0:
        raise InputError("lit.error.limit", "lit.hint.limit", value=limit)
    if isinstance(limit, int):
        return d.add("num_training_batches", min(loader, limit), "min(len, limit)", f"min({loader}, {limit})", "lit.why.limit_int")
    if limit > 1.0:
        raise InputError("lit.error.limit", "lit.hint.limit", value=limit)
    batches = d.add("num_training_batches", int(loader * limit), "int(len * limit)", f"int({loader} * {limit})", "lit.why.limit_float")
    if batches == 0 and limit > 0:
        raise InputError("lit.error.limit_zero", "lit.hint.limit_zero", limit=limit, length=loader)
    return batches


def plan_lightning(spec: LightningSpec) -> Schedule:
    if spec.num_samples < 0 or spec.batch_size < 1 or spec.accumulate_grad_batches < 1 or spec.world_size < 1:
        raise InputError("lit.error.values", "lit.hint.values")
    if spec.max_steps < -1:  # Lightning's Trainer takes -1 (no limit) or a count of steps
        raise InputError("lit.error.max_steps", "lit.hint.max_steps", value=spec.max_steps)
    d = Derivation()
    traps: list[Trap] = []
    batches = batches_per_epoch(spec, d)
    acc = spec.accumulate_grad_batches
    max_epochs = spec.max_epochs
    if max_epochs is None:
        max_epochs = d.add("max_epochs", 1000 if spec.max_steps == -1 else -1, why="lit.why.max_epochs_none")
        if spec.max_steps == -1:
            traps.append(Trap("LIGHTNING_MAX_EPOCHS_1000", "lit.trap.max_epochs_1000"))
    per_epoch = d.add("steps_per_epoch", -(-batches // acc), "ceil(batches / accumulate)", f"ceil({batches} / {acc})", "lit.why.partial_steps")
    if batches % acc:
        traps.append(Trap("LIGHTNING_PARTIAL_WINDOW", "lit.trap.partial", {"left": batches % acc, "acc": acc}))
    if max_epochs == -1:
        estimated = spec.max_steps if spec.max_steps != -1 else math.inf
        d.add("estimated_stepping_batches", estimated, "max_steps", "", "lit.why.estimated_unlimited")
    else:
        est = per_epoch * max(max_epochs, 1)
        estimated = min(est, spec.max_steps) if spec.max_steps != -1 else est
        d.add("estimated_stepping_batches", estimated, "min(ceil(batches / acc) * max_epochs, max_steps)",
              f"min({per_epoch} * {max(max_epochs, 1)}, {spec.max_steps})" if spec.max_steps != -1 else f"{per_epoch} * {max(max_epochs, 1)}",
              "lit.why.estimated")
    if estimated == math.inf:
        raise InputError("lit.error.unbounded", "lit.hint.unbounded")
    steps = int(estimated)
    if max_epochs == 0:  # the fit loop is done before the first epoch; only the estimate uses max(max_epochs, 1)
        steps = d.add("steps_run", 0, "max_epochs = 0: no epoch starts", "", "lit.why.max_epochs_zero")
    full, rest = divmod(steps, per_epoch) if per_epoch else (0, 0)
    run_batches = d.add("batches_run", full * batches + rest * acc, "full epochs * batches + leftover steps * accumulate",
                        f"{full} * {batches} + {rest} * {acc}", "lit.why.batches_run")
    d.add("global_step", steps, why="lit.why.global_step")
    d.add("current_epoch", full + (1 if rest else 0), "full epochs (+1 when stopped inside an epoch)", f"{full} + {1 if rest else 0}",
          "lit.why.current_epoch")
    epoch_rows = min(_rows_per_rank(spec), batches * spec.batch_size)  # the last batch may be short
    samples = d.add("samples_seen", (full * epoch_rows + min(rest * acc * spec.batch_size, epoch_rows)) * spec.world_size,
                    "(full epochs * rows per epoch + rows of the cut epoch) * world", "", "lit.why.samples")
    if full > MAX_EPOCH_ENDS:  # the same cap as the Trainer path
        raise InputError("hf.error.too_many_epochs", "hf.hint.too_many_epochs", limit=MAX_EPOCH_ENDS, max_steps=steps)
    ends = Steps.every(per_epoch, per_epoch, per_epoch * full)
    if rest:
        ends.append(steps)
    facts = RunFacts(
        optimizer_steps=steps, max_steps=steps, epoch_end_steps=ends,
        epochs_completed=round(run_batches / batches, 4) if batches else 0.0, epochs_planned=max_epochs if max_epochs >= 0 else (round(steps / per_epoch, 4) if per_epoch else 0.0),  # -1: max_steps decides
        samples_seen=samples, warmup_steps=0, batches_per_epoch=batches, samples_per_epoch=epoch_rows * spec.world_size,
    )
    shown = range(full) if full <= 3 else (0, 1, None, full - 1)  # None: the epochs in between, shown as "…"
    progress = ["…" if e is None else f"Epoch {e}: 100%|| {batches}/{batches}" for e in shown]
    if rest:
        progress.append(f"Epoch {full}: {rest * acc}/{batches}")
    stop = (f"`Trainer.fit` stopped: `max_steps={spec.max_steps}` reached." if spec.max_steps != -1 and steps == spec.max_steps
            else f"`Trainer.fit` stopped: `max_epochs={max_epochs}` reached.")
    inputs = {name: getattr(spec, name) for name in LightningSpec.__slots__}
    return Schedule(framework="lightning", version="2.6", family="2.x", family_reason="lit.family", banner={"estimated_stepping_batches": str(int(estimated))},
                    banner_lines=progress + [stop], run=facts, warnings=traps, derivation=d, inputs=inputs)

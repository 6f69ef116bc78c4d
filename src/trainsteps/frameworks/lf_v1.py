"""LLaMA-Factory v1 (`USE_V1=1 llamafactory-cli sft ...`, 0.9.5 and main): its own loader and step horizon, not the Trainer's.

Rules of llamafactory 0.9.5 (`v1/core/utils/batching.py` BatchGenerator, `v1/core/base_trainer.py`
BaseTrainer.__init__ / fit), recorded by running that code (tools/record_lf_v1.py,
tests/fixtures/llamafactory_v1/batching_0.9.5.json):
- accumulation k = global_batch_size // dp // micro_batch_size (global defaults to dp x micro; refused when it does
  not divide); the loader reads micro x k rows per rank per step, StatefulDistributedSampler and DataLoader both
  with drop_last=True: steps per epoch = floor(floor(N / dp) / (micro x k)), the rest of every epoch never trained;
- num_training_steps = max_steps when > 0, else num_train_epochs x steps per epoch; it is also the LR horizon;
- the loop runs `while global_step < num_training_steps`, starting epoch after epoch: a max_steps beyond the epochs
  trains more epochs than num_train_epochs says; an epoch of 0 steps trains nothing;
- save_epochs sets save_steps = max(1, int(steps per epoch x save_epochs)); checkpoints at multiples of save_steps.

main after 0.9.5 (recorded at ff6d4d1, 2026-08-18: tests/fixtures/llamafactory_v1/batching_main-ff6d4d1.json) adds one
rule, `BatchGenerator._drop_unsupervised` (PR #10598, b61140d, 2026-07-10): a row longer than cutoff_len whose
supervised tokens all lie past it is dropped at batching, and the buffer refills from the loader. An epoch then yields
floor(kept rows of the loader's full batches / (micro x k)) steps, fewer than len(BatchGenerator), while the horizon
stays num_train_epochs x len(BatchGenerator): the loop runs into an extra epoch. Which rows a rank keeps depends on
the shuffle, so the steps of such an epoch are an estimate: on 5 recorded cases not used to choose it, the epochs the
loop runs matched in all 5 and 13 of 14 epochs were within one step (one, by two). 0.9.5 trains those rows with zero
loss instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.hf.loop import MAX_EPOCH_ENDS
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.steps import Steps
from trainsteps.versions import Timeline

RELEASES = {"0.9.5": "0.9.5", "main": "0.9.10598"}
"""0.9.5 ships v1; main after it has no release yet, so it is modelled as 0.9.<PR> of the newest rule change."""
NEWEST = "main"
DROPS_UNSUPERVISED = Timeline("lfv1.drops_unsupervised", [("0.9.5", False), ("0.9.10598", True)])
"""`_drop_unsupervised` in BatchGenerator: from PR #10598 (b61140d, 2026-07-10) on main."""
MAX_SAVES = 100_000


@dataclass(frozen=True, slots=True)
class LfV1Spec:
    """A v1 SFT run (its TrainingArguments names)."""

    num_examples: int
    """Rows of the training dataset."""
    dp: int = 1
    """Data-parallel ranks."""
    micro_batch_size: int = 1
    global_batch_size: int | None = None
    """None: dp x micro_batch_size."""
    num_train_epochs: int = 3
    max_steps: int | None = None
    save_steps: int | None = None
    save_epochs: float | None = None
    cutoff_len: int = 2048
    """Printed in the start-up line."""
    batching_workers: int = 16
    """Printed in the start-up line."""
    release: str = NEWEST
    """A key of RELEASES."""
    unsupervised_rows: int | None = None
    """Rows whose supervised tokens all lie past cutoff_len (None: not known)."""


def _check(spec: LfV1Spec) -> None:
    if spec.release not in RELEASES:
        raise InputError("lfv1.error.release", "lfv1.hint.release", release=str(spec.release)[:40], known=", ".join(RELEASES))
    for name in ("num_examples", "dp", "micro_batch_size", "global_batch_size", "num_train_epochs", "max_steps", "save_steps",
                 "unsupervised_rows"):
        value = getattr(spec, name)
        lowest = 0 if name in ("num_examples", "unsupervised_rows") else 1
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < lowest):
            raise InputError("lfv1.error.value", "lfv1.hint.value", name=name, value=value)
    if spec.save_epochs is not None and not spec.save_epochs > 0:
        raise InputError("lfv1.error.value", "lfv1.hint.value", name="save_epochs", value=spec.save_epochs)
    if (spec.unsupervised_rows or 0) > spec.num_examples:
        raise InputError("lfv1.error.unsupervised", "lfv1.hint.unsupervised", rows=spec.unsupervised_rows, n=spec.num_examples)


def steps_per_epoch_after_drops(spec: LfV1Spec, rows_per_rank: int, batch: int) -> int:
    """Steps one epoch yields on main when unsupervised rows are dropped: the rows of the loader's full batches, less
    their share of unsupervised rows, refill the buffer; every full buffer of micro x k rows is a step."""
    used = rows_per_rank // batch * batch
    kept = used * (spec.num_examples - spec.unsupervised_rows) // spec.num_examples
    return kept // batch


def _drop_traps(spec: LfV1Spec, d: Derivation, rows: int, per_epoch: int, steps: int, traps: list[Trap]) -> int:
    """The steps each epoch yields under the release's rule for unsupervised rows (and its warning)."""
    drops = DROPS_UNSUPERVISED.at(RELEASES[spec.release])
    if spec.unsupervised_rows is None:
        if drops:
            traps.append(Trap("LF_V1_DROPS_UNSUPERVISED", "lfv1.trap.drop_rule", {"cutoff_len": spec.cutoff_len}))
        return per_epoch
    if not spec.unsupervised_rows:
        return per_epoch
    if not drops:
        traps.append(Trap("LF_V1_ZERO_LOSS_ROWS", "lfv1.trap.zero_loss", {"rows": spec.unsupervised_rows, "release": spec.release}))
        return per_epoch
    batch = (spec.global_batch_size or spec.dp * spec.micro_batch_size) // spec.dp  # micro x k
    kept = d.add("steps_per_epoch_after_drops", steps_per_epoch_after_drops(spec, rows, batch),
                 "floor(floor(full batches' rows x (N - unsupervised) / N) / (micro x k))",
                 f"floor(floor({rows // batch * batch} x {spec.num_examples - spec.unsupervised_rows} / {spec.num_examples}) / {batch})",
                 "lfv1.why.drops")
    if not kept:
        raise InputError("lfv1.error.never_ends", "lfv1.hint.never_ends", rows=spec.unsupervised_rows, batch=batch)
    if kept < per_epoch:
        traps.append(Trap("LF_V1_EXTRA_EPOCH_DROPS", "lfv1.trap.drops", {
            "rows": spec.unsupervised_rows, "cutoff_len": spec.cutoff_len, "len": per_epoch, "kept": kept, "steps": steps,
            "epochs": -(-steps // kept), "planned": spec.num_train_epochs}))
    return kept


def plan_lf_v1(spec: LfV1Spec) -> Schedule:
    _check(spec)
    d = Derivation()
    traps: list[Trap] = []
    per_step = spec.dp * spec.micro_batch_size
    global_batch = spec.global_batch_size or per_step
    if global_batch % per_step:
        raise InputError("lfv1.error.global_batch", "lfv1.hint.global_batch", global_batch=global_batch, dp=spec.dp,
                         micro=spec.micro_batch_size)
    k = d.add("gradient_accumulation_steps", global_batch // spec.dp // spec.micro_batch_size, "global // dp // micro",
              f"{global_batch} // {spec.dp} // {spec.micro_batch_size}", "lfv1.why.k")
    rows = d.add("rows_per_rank", spec.num_examples // spec.dp, "floor(N / dp)", f"{spec.num_examples} // {spec.dp}", "lfv1.why.sampler")
    per_epoch = d.add("num_update_steps_per_epoch", rows // (spec.micro_batch_size * k), "floor(rows / (micro x k))",
                      f"{rows} // ({spec.micro_batch_size} x {k})", "lfv1.why.loader")
    dropped = spec.num_examples - per_epoch * global_batch
    if dropped:
        traps.append(Trap("LF_V1_DROPPED_ROWS", "lfv1.trap.dropped", {"rows": dropped, "n": spec.num_examples}))
    if spec.max_steps:
        steps = d.add("optimizer_steps", spec.max_steps, "max_steps", "", "lfv1.why.max_steps")
    else:
        steps = d.add("optimizer_steps", spec.num_train_epochs * per_epoch, "num_train_epochs x steps per epoch",
                      f"{spec.num_train_epochs} x {per_epoch}", "lfv1.why.epochs")
    if per_epoch == 0:
        raise InputError("lfv1.error.empty", "lfv1.hint.empty", rows=spec.num_examples, dp=spec.dp, batch=global_batch)
    loader_epoch = per_epoch
    per_epoch = _drop_traps(spec, d, rows, per_epoch, steps, traps)
    full, rest = divmod(steps, per_epoch)
    epochs_run = full + (1 if rest else 0)
    if spec.max_steps and epochs_run > spec.num_train_epochs:
        traps.append(Trap("LF_V1_EXTRA_EPOCHS", "lfv1.trap.extra_epochs", {"max_steps": steps, "epochs": epochs_run,
                                                                             "planned": spec.num_train_epochs}))
    if full > MAX_EPOCH_ENDS:
        raise InputError("hf.error.too_many_epochs", "hf.hint.too_many_epochs", limit=MAX_EPOCH_ENDS, max_steps=steps)
    save_every = spec.save_steps
    if spec.save_epochs is not None:
        save_every = d.add("save_steps", max(1, int(loader_epoch * spec.save_epochs)), "max(1, int(steps per epoch x save_epochs))",
                           f"max(1, int({loader_epoch} x {spec.save_epochs}))", "lfv1.why.save_epochs")
    if save_every and steps // save_every > MAX_SAVES:
        raise InputError("lfv1.error.too_many_saves", "lfv1.hint.too_many_saves", steps=steps, every=save_every, limit=MAX_SAVES)
    saves = Steps.every(save_every, save_every, steps) if save_every else Steps()
    ends = Steps.every(per_epoch, per_epoch, per_epoch * full)
    if rest:
        ends.append(steps)
    facts = RunFacts(optimizer_steps=steps, max_steps=steps, epoch_end_steps=ends, epochs_completed=round(steps / per_epoch, 4),
                     epochs_planned=spec.num_train_epochs, samples_seen=steps * global_batch, warmup_steps=0, save_steps=saves,
                     batches_per_epoch=loader_epoch, samples_per_epoch=loader_epoch * global_batch)
    lines = [f"Init unified data loader with global batch size {global_batch}, micro batch size {spec.micro_batch_size}, "
             f"num micro batch {k}, cutoff len {spec.cutoff_len}, batching workers {spec.batching_workers}, batching strategy normal.",
             f"Reached max_steps ({steps}), stopping training."]
    inputs = {name: getattr(spec, name) for name in LfV1Spec.__slots__}
    inputs.update(world_size=spec.dp, gradient_accumulation_steps=k, per_device_train_batch_size=spec.micro_batch_size)
    return Schedule(framework="llamafactory-v1", version=spec.release, family="v1", family_reason="lfv1.family",
                    banner={"num_training_steps": str(steps)}, banner_lines=lines, run=facts, warnings=traps, derivation=d, inputs=inputs)

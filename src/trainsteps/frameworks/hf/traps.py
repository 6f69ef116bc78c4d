"""Warnings with stable codes for runs that will not do what their settings suggest."""

from __future__ import annotations

from trainsteps.derivation import format_epochs
from trainsteps.frameworks.hf.loader import LoaderShape
from trainsteps.frameworks.hf.loop import LoopResult
from trainsteps.frameworks.hf.releases import Rules
from trainsteps.schedule import RunFacts, Trap
from trainsteps.spec import RunSpec


def find(rules: Rules, spec: RunSpec, facts: RunFacts, loop: LoopResult, shape: LoaderShape | None,
         total_batch: int, stream: bool, empty: bool = False) -> list[Trap]:
    found: list[Trap] = []
    version = rules.release
    if rules.newer_than_known:
        found.append(Trap("HF_NEWER_THAN_KNOWN", "hf.trap.newer", {"version": version}))
    elif not rules.published:
        found.append(Trap("HF_UNKNOWN_RELEASE", "hf.trap.unknown_release", {"version": version, "family": rules.family.name}))
    if spec.resume_from_step and spec.resume_from_step >= facts.max_steps:
        found.append(Trap("HF_RESUME_PAST_END", "hf.trap.resume_past_end", {"resume": spec.resume_from_step, "max_steps": facts.max_steps}))
    if max(spec.tensor_parallel_size, spec.context_parallel_size, spec.sequence_parallel_size) > 1:
        found.append(Trap("HF_PARALLEL_NOT_RECORDED", "hf.trap.parallel", {"version": version}))
    if empty:
        found.append(Trap("HF_EMPTY_LOADER", "hf.trap.empty_loader",
                          {"n": spec.num_examples, "bs": spec.per_device_train_batch_size, "version": version}))
        return found
    if loop.never_ends:
        found.append(Trap("HF_STREAM_NEVER_ENDS", "hf.trap.stream_never_ends", {"ga": spec.gradient_accumulation_steps, "batches": shape.batches if shape else 0}))
        return found
    if not loop.reached_max_steps:
        code = "HF_RESUME_LOSES_STEP" if spec.resume_from_step and rules.family.rounding == "ceil" else "HF_NEVER_REACHES_MAX_STEPS"
        found.append(Trap(code, "hf.trap.short_" + ("resume" if code == "HF_RESUME_LOSES_STEP" else "run"),
                          {"final": facts.optimizer_steps, "max_steps": facts.max_steps, "version": version}))
    elif facts.epochs_planned and facts.epochs_completed is not None and facts.epochs_completed < facts.epochs_planned - 1e-9:
        found.append(Trap("HF_PLAN_LOOP_MISMATCH", "hf.trap.stops_early",
                          {"epoch": format_epochs(facts.epochs_completed), "planned": format_epochs(facts.epochs_planned), "version": version,
                           "family": rules.family.name}))
    uneven_ranks = shape and not stream and not spec.even_batches and spec.world_size > 1 and not spec.split_batches
    if uneven_ranks and not spec.dataloader_drop_last and (shape.batches - 1) * shape.full_rows + shape.last_rows < shape.batches * shape.full_rows:
        found.append(Trap("HF_UNEVEN_BATCHES", "hf.trap.uneven_batches", {"batches": shape.batches}))
    if isinstance(facts.warmup_steps, float) and not facts.warmup_steps.is_integer():
        found.append(Trap("HF_FRACTIONAL_WARMUP", "hf.trap.fractional_warmup", {"value": facts.warmup_steps, "version": version}))
    if loop.batches_never_read:
        found.append(Trap("HF_BATCHES_NEVER_READ", "hf.trap.never_read", {"batches": loop.batches_never_read, "version": version}))
    taken = facts.optimizer_steps - (spec.resume_from_step or 0)  # real updates count only this run's steps
    if facts.real_optimizer_updates is not None and facts.real_optimizer_updates < taken:
        found.append(Trap("HF_STEP_WITHOUT_UPDATE", "hf.trap.no_update", {"real": facts.real_optimizer_updates, "steps": taken}))
    if spec.num_examples and spec.num_examples < total_batch and not stream:
        repeated = spec.world_size > 1 and not spec.dataloader_drop_last
        found.append(Trap("HF_FEWER_EXAMPLES_THAN_BATCH", "hf.trap.small_dataset" if repeated else "hf.trap.small_dataset_one_rank",
                          {"n": spec.num_examples, "batch": total_batch}))
    if shape and spec.dataloader_drop_last and not stream:
        dropped = spec.num_examples - shape.batches * shape.full_rows
        if dropped > 0 and not spec.split_batches:
            found.append(Trap("HF_DROP_LAST_DISCARDS", "hf.trap.drop_last", {"rows": dropped}))
    if spec.save_strategy == "best":
        found.extend(_best_save_traps(spec, facts))
    if spec.resume_from_step and rules.resume_intervals == "checkpoint":
        found.extend(_checkpoint_interval_traps(spec, version))
    if (shape and not stream and rules.family.counter == "cumulative" and shape.batches > spec.gradient_accumulation_steps
            and shape.batches % spec.gradient_accumulation_steps):
        found.append(Trap("HF_WINDOW_CROSSES_EPOCHS", "hf.trap.window_crosses",
                          {"left": shape.batches % spec.gradient_accumulation_steps}))
    return found


def _best_save_traps(spec: RunSpec, facts: RunFacts) -> list[Trap]:
    if not facts.eval_steps:
        return [Trap("HF_BEST_NEVER_SAVES", "hf.trap.best_never_saves", {"strategy": spec.eval_strategy})]
    if (spec.improving_evals or "all").strip().lower() == "all" and len(facts.eval_steps) > 1:
        return [Trap("HF_BEST_SAVES_UPPER_BOUND", "hf.trap.best_upper_bound",
                     {"metric": spec.metric_for_best_model, "saves": len(facts.save_steps)})]
    return []


def _checkpoint_interval_traps(spec: RunSpec, version: str) -> list[Trap]:
    found = []
    for name in ("logging_steps", "eval_steps", "save_steps"):
        stored, given = getattr(spec, "checkpoint_" + name), getattr(spec, name)
        if stored is not None and given is not None and given >= 1 and int(stored) != given:
            found.append(Trap("HF_RESUME_KEEPS_CHECKPOINT_INTERVAL", "hf.trap.checkpoint_interval",
                              {"name": name, "stored": int(stored), "given": _plain(given), "version": version}))
    return found


def _plain(value: float):
    return int(value) if float(value).is_integer() else value

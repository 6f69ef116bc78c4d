"""litgpt: optimizer steps, epochs, tokens, the LR horizon, evaluations and saves of `litgpt finetune_*` and `litgpt pretrain`.

Rules of litgpt 0.4.13 and 0.5.13 (`litgpt/args.py` TrainArgs, `finetune/lora.py` main / fit / validate_args, the same
loop in full.py, adapter.py, adapter_v2.py; `pretrain.py` fit / validate_args), recorded by running that code
(tools/record_litgpt.py, tests/fixtures/pretrain/litgpt.json):
- per-rank batch = global_batch_size // (devices x num_nodes) (before 0.5.8: // devices), accumulation = that //
  micro_batch_size, both refused at 0 (an assert);
- finetune: Fabric's DistributedSampler (drop_last=False) gives each rank ceil(N / world) rows, L = ceil(rows /
  micro_batch_size) micro-batches an epoch; the LR horizon is min(epochs x (L // GA), max_steps), but the loop runs
  epochs x L micro-batches (one more before 0.5.2, whose epoch check came before the next fetch) and steps on every
  GA-th, so floor(epochs x L / GA) steps can pass the horizon: CosineAnnealingLR then climbs again;
- pretrain: max_iters = (max_tokens // world) // (micro_batch_size x max_seq_length) micro-batches and max_iters // GA
  steps; `epochs` is refused, `max_steps` refused before 0.5.13 and only warned about (never checked) from 0.5.13
  (Lightning-AI/litgpt#1819); warmup lr_warmup_steps x GA or ceil(lr_warmup_fraction x L) micro-batches, capped at max_iters;
- evaluations and saves on every step that is a multiple of eval.interval / save_interval, then a final save.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.hf.loop import MAX_EPOCH_ENDS
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.versions import Timeline

NEWEST = "0.5.13"
"""The newest litgpt release modelled (PyPI)."""
OLDEST = "0.4.13"
NODES_IN_ACCUMULATION = Timeline("litgpt.nodes_in_accumulation", [(OLDEST, False), ("0.5.8", True)])
"""TrainArgs.batch_size divides by devices x num_nodes from 0.5.8; before, by devices only."""
EPOCH_CHECK_AFTER_FETCH = Timeline("litgpt.epoch_check_after_fetch", [(OLDEST, False), ("0.5.2", True)])
"""From 0.5.2 the finetune loop stops on the batch that starts epoch `epochs`; before, it trained that batch first."""
PRETRAIN_MAX_STEPS = Timeline("litgpt.pretrain_max_steps", [(OLDEST, "refused"), ("0.5.13", "warned")])
"""pretrain.py's validate_args: `max_steps` unsupported (an error), from 0.5.13 a warning; the loop never reads it."""
SCRIPTS = ("lora", "full", "adapter", "adapter_v2", "pretrain")
EVAL_INTERVAL = {"full": 600, "pretrain": 1000}
"""EvalArgs.interval in each script's signature (100 elsewhere)."""
FINETUNE_DEFAULTS = {"global_batch_size": 16, "micro_batch_size": 1, "lr_warmup_steps": 100, "epochs": 5, "save_interval": 1000}
PRETRAIN_DEFAULTS = {"global_batch_size": 512, "micro_batch_size": 4, "lr_warmup_steps": 2000, "max_tokens": 3 * 10**12,
                     "save_interval": 1000}
"""The TrainArgs each script's signature builds (the same at 0.4.13 and 0.5.13)."""
MAX_EVENTS = 100_000


@dataclass(frozen=True, slots=True)
class LitgptSpec:
    """A litgpt run: the script and its `train.*` / `eval.*` settings; a setting left None takes the script's default."""

    script: str = "lora"
    """lora, full, adapter, adapter_v2 (`litgpt finetune_*`) or pretrain."""
    num_examples: int | None = None
    """Finetune: training rows. Pretrain: sequences of max_seq_length + 1 tokens in the train loader (for warmup
    fractions and equivalent epochs)."""
    devices: int = 1
    num_nodes: int = 1
    global_batch_size: int | None = None
    micro_batch_size: int | None = None
    epochs: int | None = None
    max_steps: int | None = None
    max_tokens: int | None = None
    max_seq_length: int | None = None
    """Pretrain: tokens per sequence (train.max_seq_length, else the model's block_size)."""
    lr_warmup_steps: int | None = None
    lr_warmup_fraction: float | None = None
    save_interval: int | None = None
    eval_interval: int | None = None
    given: frozenset = field(default_factory=frozenset)
    """The settings the user set (a given None is `null`, not the default)."""
    release: str = NEWEST


def _setting(spec: LitgptSpec, name: str):
    if name in spec.given or getattr(spec, name) is not None:
        return getattr(spec, name)
    defaults = PRETRAIN_DEFAULTS if spec.script == "pretrain" else FINETUNE_DEFAULTS
    return defaults.get(name)


def _check(spec: LitgptSpec) -> None:
    if spec.script not in SCRIPTS:
        raise InputError("lg.error.script", "lg.hint.script", script=str(spec.script)[:40], known=", ".join(SCRIPTS))
    for name in ("num_examples", "devices", "num_nodes", "global_batch_size", "micro_batch_size", "epochs", "max_steps",
                 "max_tokens", "max_seq_length", "lr_warmup_steps", "save_interval", "eval_interval"):
        value = getattr(spec, name)
        low = 0 if name in ("num_examples", "lr_warmup_steps") else 1
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
            raise InputError("lg.error.value", "lg.hint.value", name=name, value=value)
    fraction = spec.lr_warmup_fraction
    if fraction is not None and (isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 <= fraction <= 1):
        raise InputError("lg.error.value", "lg.hint.value", name="lr_warmup_fraction", value=fraction)
    required = ("global_batch_size", "micro_batch_size", "max_tokens") if spec.script == "pretrain" else \
        ("global_batch_size", "micro_batch_size", "epochs")
    for name in required:  # validate_args: "requires the 'epochs' argument"; TrainArgs' batch arithmetic
        if _setting(spec, name) is None:
            raise InputError("lg.error.required", "lg.hint.required", name=name, script=spec.script)
    if fraction and _setting(spec, "lr_warmup_steps"):  # TrainArgs.__post_init__
        raise InputError("lg.error.refused", "lg.hint.both_warmups",
                         said="Can't provide both `--train.lr_warmup_fraction` and `--train.lr_warmup_steps`. Choose one.")


def _accumulation(spec: LitgptSpec, d: Derivation) -> tuple[int, int]:
    """(world size, gradient accumulation) as TrainArgs computes them, refused where its asserts fail."""
    world = spec.devices * spec.num_nodes
    divisor = world if NODES_IN_ACCUMULATION.at(spec.release) else spec.devices
    global_batch, micro = _setting(spec, "global_batch_size"), _setting(spec, "micro_batch_size")
    per_rank = global_batch // divisor
    ga = per_rank // micro
    if per_rank == 0 or ga == 0:
        raise InputError("lg.error.batch", "lg.hint.batch", global_batch=global_batch, divisor=divisor, micro=micro)
    formula = "global_batch_size // (devices x num_nodes) // micro_batch_size" if divisor == world else \
        "global_batch_size // devices // micro_batch_size"
    d.add("gradient_accumulation_steps", ga, formula, f"{global_batch} // {divisor} // {micro}", "lg.why.ga")
    return world, ga


def plan_litgpt(spec: LitgptSpec) -> Schedule:
    _check(spec)
    return _plan_pretrain(spec) if spec.script == "pretrain" else _plan_finetune(spec)


def _batch_traps(spec: LitgptSpec, world: int, ga: int) -> list[Trap]:
    traps = []
    global_batch, micro = _setting(spec, "global_batch_size"), _setting(spec, "micro_batch_size")
    if spec.num_nodes > 1 and not NODES_IN_ACCUMULATION.at(spec.release):
        traps.append(Trap("LITGPT_NODES_IGNORED", "lg.trap.nodes", {"nodes": spec.num_nodes, "batch": ga * micro * world,
                                                                     "global_batch": global_batch, "release": spec.release}))
    elif ga * micro * world != global_batch:
        traps.append(Trap("LITGPT_BATCH_ROUNDED", "lg.trap.rounded", {"batch": ga * micro * world, "global_batch": global_batch}))
    return traps


def _plan_finetune(spec: LitgptSpec) -> Schedule:
    if spec.num_examples is None:
        raise InputError("lg.error.no_examples", "lg.hint.no_examples")
    for name in ("max_tokens", "lr_warmup_fraction"):  # finetune validate_args: unsupported
        if getattr(spec, name) is not None:
            raise InputError("lg.error.unsupported", "lg.hint.unsupported", name=name, script=spec.script)
    d = Derivation()
    world, ga = _accumulation(spec, d)
    micro, epochs, max_steps = _setting(spec, "micro_batch_size"), _setting(spec, "epochs"), spec.max_steps
    rows = d.add("rows_per_rank", -(-spec.num_examples // world), "ceil(N / world)", f"ceil({spec.num_examples} / {world})",
                 "lg.why.sampler")
    batches = d.add("batches_per_epoch", -(-rows // micro), "ceil(rows / micro_batch_size)", f"ceil({rows} / {micro})", "lg.why.loader")
    if batches // ga == 0:
        raise InputError("lg.error.empty", "lg.hint.empty", batches=batches, ga=ga)
    per_epoch = d.add("steps_per_epoch", batches // ga, "L // GA", f"{batches} // {ga}", "lg.why.steps_per_epoch")
    horizon = d.add("lr_max_steps", min(epochs * per_epoch, max_steps or epochs * per_epoch), "min(epochs x steps_per_epoch, max_steps)",
                    f"min({epochs} x {per_epoch}, {max_steps or 'inf'})", "lg.why.horizon")
    extra = 0 if EPOCH_CHECK_AFTER_FETCH.at(spec.release) else 1
    iterations = epochs * batches + extra
    by_epochs = iterations // ga
    steps = d.add("optimizer_steps", min(by_epochs, max_steps) if max_steps else by_epochs,
                  "min(floor((epochs x L + extra) / GA), max_steps)", f"floor(({epochs} x {batches} + {extra}) / {ga})", "lg.why.steps")
    if max_steps and max_steps <= by_epochs:
        iterations = steps * ga
    warmup = _setting(spec, "lr_warmup_steps") or 0
    traps = _batch_traps(spec, world, ga)
    if steps > horizon:
        traps.append(Trap("LITGPT_PAST_LR_HORIZON", "lg.trap.horizon", {"steps": steps, "horizon": horizon, "batches": batches, "ga": ga}))
    if warmup >= horizon:
        traps.append(Trap("LITGPT_WARMUP_PAST_HORIZON", "lg.trap.warmup", {"warmup": warmup, "horizon": horizon}))
    full, rest = divmod(iterations, batches)
    if full > MAX_EPOCH_ENDS:
        raise InputError("hf.error.too_many_epochs", "hf.hint.too_many_epochs", limit=MAX_EPOCH_ENDS, max_steps=steps)
    samples = d.add("samples_seen", (full * rows + min(rest * micro, rows)) * world, "(full epochs x rows + rows of the last) x world",
                    "", "lg.why.samples")
    ends = [(e + 1) * batches // ga for e in range(min(full, epochs))]
    evals, saves = _events(spec, steps)
    last_epoch = (iterations - 1) // batches + 1
    lines = [f"Epoch {last_epoch} | iter {iterations} step {steps} | loss train: ..."]
    if extra == 0 and (not max_steps or steps < max_steps):  # the stop message came with the check after the fetch
        lines.append(f"Number of epochs {epochs} reached, stopping training...")
    facts = RunFacts(optimizer_steps=steps, max_steps=max_steps or horizon, epoch_end_steps=ends,
                     epochs_completed=round(iterations / batches, 4), epochs_planned=epochs, samples_seen=samples, warmup_steps=warmup,
                     eval_steps=evals, save_steps=saves, batches_per_epoch=batches, samples_per_epoch=rows * world)
    return _schedule(spec, facts, traps, d, lines, ga, world, {"horizon": horizon, "iterations": iterations})


def _events(spec: LitgptSpec, steps: int) -> tuple[list[int], list[int]]:
    """Evaluations on every multiple of eval.interval; saves on every multiple of save_interval and at the end."""
    every_eval = spec.eval_interval or EVAL_INTERVAL.get(spec.script, 100)
    every_save = _setting(spec, "save_interval")
    if max(steps // every_eval, steps // every_save if every_save else 0) > MAX_EVENTS:
        raise InputError("lg.error.too_many_events", "lg.hint.too_many_events", steps=steps, limit=MAX_EVENTS)
    saves = sorted({*(range(every_save, steps + 1, every_save) if every_save else ()), steps})
    return list(range(every_eval, steps + 1, every_eval)), saves


def _plan_pretrain(spec: LitgptSpec) -> Schedule:
    if spec.epochs is not None:
        raise InputError("lg.error.unsupported", "lg.hint.unsupported", name="epochs", script="pretrain")
    if spec.max_steps is not None and PRETRAIN_MAX_STEPS.at(spec.release) == "refused":
        raise InputError("lg.error.unsupported", "lg.hint.unsupported", name="max_steps", script=f"pretrain {spec.release}")
    if spec.max_seq_length is None:
        raise InputError("lg.error.no_seq_length", "lg.hint.no_seq_length")
    d = Derivation()
    world, ga = _accumulation(spec, d)
    micro, seq, max_tokens = _setting(spec, "micro_batch_size"), spec.max_seq_length, _setting(spec, "max_tokens")
    iters = d.add("max_iters", (max_tokens // world) // (micro * seq), "(max_tokens // world) // (micro_batch_size x max_seq_length)",
                  f"({max_tokens} // {world}) // ({micro} x {seq})", "lg.why.max_iters")
    steps = d.add("optimizer_steps", iters // ga, "max_iters // GA", f"{iters} // {ga}", "lg.why.pretrain_steps")
    if steps == 0:
        raise InputError("lg.error.no_steps", "lg.hint.no_steps", iters=iters, ga=ga)
    batches = None
    if spec.num_examples:
        rows = -(-spec.num_examples // world)
        batches = d.add("batches_per_epoch", -(-rows // micro), "ceil(ceil(N / world) / micro_batch_size)", "", "lg.why.loader")
    warmup_iters = _pretrain_warmup(spec, iters, ga, batches, d)
    traps = _batch_traps(spec, world, ga)
    if spec.max_steps is not None:
        traps.append(Trap("LITGPT_PRETRAIN_MAX_STEPS_IGNORED", "lg.trap.max_steps", {"max_steps": spec.max_steps, "steps": steps}))
    evals, saves = _events(spec, steps)
    tokens = d.add("tokens_seen", iters * micro * seq * world, "max_iters x micro_batch_size x max_seq_length x world", "", "lg.why.tokens")
    epochs = round(iters / batches, 4) if batches else None
    facts = RunFacts(optimizer_steps=steps, max_steps=steps, epoch_end_steps=[], epochs_completed=epochs or 0.0, epochs_planned=epochs or 0.0,
                     samples_seen=iters * micro * world, warmup_steps=round(warmup_iters / ga, 4), eval_steps=evals, save_steps=saves,
                     batches_per_epoch=batches, samples_per_epoch=spec.num_examples, equivalent_epochs=epochs, tokens_seen=tokens,
                     tokens_per_step={"tokens": ga * micro * world * seq, "rows": ga * micro * world})
    logged = steps * ga  # the last line: log_interval 1 prints every GA-th micro-batch
    lines = [f"Epoch {(logged - 1) // batches + 1 if batches else '?'} | iter {logged} step {steps} | loss train: ... remaining time: ...",
             f"| - Total tokens  : {tokens:,}"]
    return _schedule(spec, facts, traps, d, lines, ga, world, {"horizon": iters, "iterations": iters, "warmup_iters": warmup_iters})


def _pretrain_warmup(spec: LitgptSpec, iters: int, ga: int, batches: int | None, d: Derivation) -> int:
    """TrainArgs.warmup_iters: micro-batches of warmup, capped at max_iters."""
    if spec.lr_warmup_fraction:
        if batches is None:
            raise InputError("lg.error.fraction_needs_rows", "lg.hint.fraction_needs_rows")
        return d.add("warmup_iters", min(iters, math.ceil(spec.lr_warmup_fraction * batches)),
                     "min(max_iters, ceil(lr_warmup_fraction x len(train_dataloader)))", "", "lg.why.warmup_fraction")
    steps = _setting(spec, "lr_warmup_steps") or 0
    return d.add("warmup_iters", min(iters, steps * ga), "min(max_iters, lr_warmup_steps x GA)", f"min({iters}, {steps} x {ga})",
                 "lg.why.warmup_steps")


def _schedule(spec, facts, traps, d, lines, ga, world, extra: dict) -> Schedule:
    inputs = {name: getattr(spec, name) for name in LitgptSpec.__slots__ if name != "given"}
    inputs.update(world_size=world, gradient_accumulation_steps=ga, per_device_train_batch_size=_setting(spec, "micro_batch_size"),
                  global_batch_size=_setting(spec, "global_batch_size"), **extra)
    family = "pretrain" if spec.script == "pretrain" else "finetune"
    return Schedule(framework="litgpt", version=spec.release, family=family, family_reason=f"lg.family.{family}",
                    banner={"steps": str(facts.optimizer_steps)}, banner_lines=lines, run=facts, warnings=traps, derivation=d,
                    inputs=inputs)

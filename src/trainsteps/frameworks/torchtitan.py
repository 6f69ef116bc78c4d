"""torchtitan: steps, tokens, equivalent epochs, LR warmup and decay, checkpoint and validation steps, start-up line.

torchtitan has no epochs: `training.steps` is the run, and the training data repeats forever
(`infinite=True`, "Dataset ... is being re-looped"). What a step reads, per release (Timeline `WINDOWS`):
- 0.2.2 (`torchtitan/hf_datasets/text_datasets.py` `HuggingFaceTextDataset.__iter__`): documents encoded with bos
  and eos are concatenated and cut into windows of `seq_len + 1` tokens (input = x[:-1], labels = x[1:]): a pass of
  D documents of T tokens gives floor((T + 2D) / (seq_len + 1)) samples.
- 0.3.0: inputs and labels are shifted inside each document, so a document adds len + 1 tokens and a sample is
  `seq_len` tokens: floor((T + D) / seq_len) samples a pass.
Each data-parallel rank reads its contiguous shard (`split_dataset_by_node`; the first N mod dp ranks get one more
document). The token buffer is kept across re-loops, so k passes give floor(k x stream / window) samples.
Batches (train.py / trainer.py `Trainer.__init__`): global batch -1 means local x dp; it must be a multiple of
local x dp; gradient accumulation = global // (local x dp). LR (`build_lr_schedulers`): warmup clipped to the
horizon (`lr_scheduler.total_steps`, default `training.steps`), decay `round(total x decay_ratio)` (clipped to
total - warmup) or all the rest. Checkpoints (`CheckpointManager._should_save`): every `interval`, the last step
and step 1 with `enable_first_step_checkpoint`. Validation (`BaseValidator.should_validate`): step 1 and every
`freq`. All recorded by running torchtitan's own code (tools/record_torchtitan.py, tests/fixtures/pretrain/torchtitan.json).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.versions import Timeline

NEWEST = "0.3.0"
"""The newest torchtitan release modelled (PyPI, 2026-09)."""
WINDOWS = Timeline("torchtitan.windows", [("0.2.2", "concat_plus_one"), ("0.3.0", "shift_in_document")])
"""How documents become samples: windows of seq_len + 1 over the concatenated stream, or seq_len after a shift
inside each document (0.3.0, trainer.py replaced train.py)."""
CONFIG_FILES = Timeline("torchtitan.config_files", [("0.2.2", "toml"), ("0.3.0", "python")])
"""0.2.2 reads `--job.config_file X.toml`; 0.3.0 reads a Python config function (`--module M --config F`)."""


def newest_reading(kind: str) -> str:
    """The newest release whose configs are of this kind ("toml")."""
    return str(max(start for start, value in CONFIG_FILES.entries if value == kind))


MAX_EVENTS = 100_000
"""Most save or validation steps listed: a bigger list is refused rather than built."""


@dataclass(frozen=True, slots=True)
class TitanSpec:
    """A torchtitan training run (the names of its config sections)."""

    dp: int = 1
    """Data-parallel degree (dp_replicate x dp_shard): world size / (tp x pp x cp)."""
    local_batch_size: int = 8
    """training.local_batch_size: samples per micro-batch per data-parallel rank."""
    global_batch_size: int = -1
    """training.global_batch_size; -1 means local_batch_size x dp (no accumulation)."""
    seq_len: int = 2048
    """training.seq_len: tokens per sample."""
    steps: int = 10000
    """training.steps: the run (`while self.step < training.steps`)."""
    warmup_steps: int = 200
    """lr_scheduler.warmup_steps."""
    lr_total_steps: int | None = None
    """lr_scheduler.total_steps: the LR horizon when it is not training.steps."""
    decay_ratio: float | None = None
    """lr_scheduler.decay_ratio: decay over the last share of the horizon; None: all steps after warmup."""
    checkpoint_enable: bool = False
    """checkpoint.enable."""
    checkpoint_interval: int = 500
    """checkpoint.interval."""
    first_step_checkpoint: bool = False
    """checkpoint.enable_first_step_checkpoint."""
    validation_enable: bool = False
    """validation.enable."""
    validation_freq: int = 10
    """validation.freq."""
    dataset_tokens: int | None = None
    """Tokens of the training documents as the tokenizer encodes them, without bos/eos (for equivalent epochs)."""
    documents: int | None = None
    """Documents in the training data (each adds bos and eos)."""
    resume_from_step: int = 0
    """The checkpoint step a run resumes from (`step` restored; the run makes training.steps - step more)."""
    release: str = NEWEST
    """The torchtitan release."""


def gradient_accumulation(spec: TitanSpec, d: Derivation) -> tuple[int, int]:
    """(global batch, gradient accumulation steps) as Trainer.__init__ computes them, with its refusal."""
    local = spec.local_batch_size * spec.dp
    if spec.global_batch_size < 0:
        global_batch = d.add("global_batch_size", local, "local_batch_size x dp", f"{spec.local_batch_size} x {spec.dp}", "tt.why.global_default")
    else:
        global_batch = d.given("global_batch_size", spec.global_batch_size)
    if global_batch == 0 or global_batch % local:
        raise InputError("tt.error.global_batch", "tt.hint.global_batch", global_batch=global_batch,
                         local=spec.local_batch_size, dp=spec.dp)
    ga = d.add("gradient_accumulation_steps", global_batch // local, "global // (local x dp)",
               f"{global_batch} // ({spec.local_batch_size} x {spec.dp})", "tt.why.ga")
    return global_batch, ga


def window_tokens(seq_len: int, release: str) -> tuple[int, int]:
    """(tokens a sample consumes from the stream, tokens a document adds beyond its text) for a release."""
    return (seq_len + 1, 2) if WINDOWS.at(release) == "concat_plus_one" else (seq_len, 1)


def samples_of_documents(lengths, seq_len: int, release: str, passes: int = 1) -> int:
    """Samples one rank's documents give over `passes` passes (the buffer carries over between passes)."""
    window, extra = window_tokens(seq_len, release)
    return passes * sum(n + extra for n in lengths) // window


def rank_shards(lengths: list, dp: int) -> list[list]:
    """The contiguous shard of each rank (`split_dataset_by_node`): the first N mod dp ranks get one more document."""
    size, rest = divmod(len(lengths), dp)
    shards, start = [], 0
    for rank in range(dp):
        stop = start + size + (1 if rank < rest else 0)
        shards.append(lengths[start:stop])
        start = stop
    return shards


def lr_horizon(spec: TitanSpec, d: Derivation) -> dict:
    """Warmup, stable and decay steps as `build_lr_schedulers` sets them."""
    total = spec.lr_total_steps if spec.lr_total_steps is not None else spec.steps
    d.add("lr_total_steps", total, "lr_scheduler.total_steps or training.steps", "", "tt.why.lr_total")
    warmup = d.add("lr_warmup_steps", min(spec.warmup_steps, total), "min(warmup_steps, total)", f"min({spec.warmup_steps}, {total})",
                   "tt.why.warmup_clip")
    if spec.decay_ratio is not None:
        decay = min(round(total * spec.decay_ratio), total - warmup)
        d.add("lr_decay_steps", decay, "min(round(total x decay_ratio), total - warmup)",
              f"min(round({total} x {spec.decay_ratio}), {total} - {warmup})", "tt.why.decay")
    else:
        decay = d.add("lr_decay_steps", total - warmup, "total - warmup", f"{total} - {warmup}", "tt.why.decay_rest")
    stable = d.add("lr_stable_steps", total + 1 - warmup - decay, "total + 1 - warmup - decay", f"{total} + 1 - {warmup} - {decay}",
                   "tt.why.stable")
    return {"total": total, "warmup": warmup, "decay": decay, "stable": stable}


def save_steps(spec: TitanSpec, start: int) -> list[int]:
    """Every `interval`, the last step, and step 1 with enable_first_step_checkpoint (steps after `start` only)."""
    if not spec.checkpoint_enable:
        return []
    _refuse_long_list(spec.steps - start, spec.checkpoint_interval)
    steps = _multiples(spec.checkpoint_interval, start, spec.steps)
    if spec.steps > start and (not steps or steps[-1] != spec.steps):
        steps.append(spec.steps)
    return sorted({1, *steps}) if spec.first_step_checkpoint and start < 1 else steps


def _multiples(interval: int, start: int, last: int) -> list[int]:
    """Multiples of `interval` in (start, last]."""
    return list(range((start // interval + 1) * interval, last + 1, interval))


def eval_steps(spec: TitanSpec, start: int) -> list[int]:
    """Step 1 and every `freq` (steps after `start` only)."""
    if not spec.validation_enable:
        return []
    _refuse_long_list(spec.steps - start, spec.validation_freq)
    steps = _multiples(spec.validation_freq, start, spec.steps)
    return sorted({1, *steps}) if start < 1 else steps


def _refuse_long_list(steps: int, interval: int) -> None:
    if steps // interval > MAX_EVENTS:
        raise InputError("tt.error.too_many_events", "tt.hint.too_many_events", steps=steps, interval=interval, limit=MAX_EVENTS)


def startup_line(spec: TitanSpec, global_batch: int, ga: int) -> str:
    """The line Trainer.__init__ logs (the configured warmup, before the scheduler clips it)."""
    return (f"Trainer is initialized with local batch size {spec.local_batch_size}, global batch size {global_batch}, "
            f"gradient accumulation steps {ga}, sequence length {spec.seq_len}, total steps {spec.steps} "
            f"(warmup {spec.warmup_steps})")


def _check(spec: TitanSpec) -> None:
    for name in ("dp", "local_batch_size", "seq_len", "steps", "checkpoint_interval", "validation_freq"):
        value = getattr(spec, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError("tt.error.value", "tt.hint.value", name=name, value=value)
    if spec.warmup_steps < 0 or (spec.lr_total_steps is not None and spec.lr_total_steps < 1):
        raise InputError("tt.error.value", "tt.hint.value", name="warmup_steps / total_steps", value=spec.warmup_steps)
    if spec.decay_ratio is not None and not 0 <= spec.decay_ratio <= 1:
        raise InputError("tt.error.value", "tt.hint.value", name="decay_ratio", value=spec.decay_ratio)
    if not 0 <= spec.resume_from_step <= spec.steps:
        raise InputError("tt.error.resume", "tt.hint.resume", step=spec.resume_from_step, steps=spec.steps)
    if (spec.dataset_tokens is None) != (spec.documents is None):
        raise InputError("tt.error.data_pair", "tt.hint.data_pair")


def plan_torchtitan(spec: TitanSpec) -> Schedule:
    _check(spec)
    d = Derivation()
    traps: list[Trap] = []
    global_batch, ga = gradient_accumulation(spec, d)
    start = spec.resume_from_step
    steps_run = d.add("steps_run", spec.steps - start, "training.steps - resumed step", f"{spec.steps} - {start}", "tt.why.steps")
    samples = d.add("samples_seen", steps_run * global_batch, "steps x global batch", f"{steps_run} x {global_batch}", "tt.why.samples")
    tokens = d.add("tokens_seen", samples * spec.seq_len, "samples x seq_len", f"{samples} x {spec.seq_len}", "tt.why.tokens")
    window, extra = window_tokens(spec.seq_len, spec.release)
    epochs, per_pass = None, None
    if spec.dataset_tokens is not None:
        stream = d.add("stream_tokens", spec.dataset_tokens + extra * spec.documents, f"T + {extra} x documents",
                       f"{spec.dataset_tokens} + {extra} x {spec.documents}", f"tt.why.stream_{WINDOWS.at(spec.release)}")
        per_pass = d.add("samples_per_pass", stream // window, "stream // window", f"{stream} // {window}", "tt.why.per_pass")
        if per_pass == 0:
            raise InputError("tt.error.no_sample", "tt.hint.no_sample", tokens=stream, window=window)
        epochs = d.add("equivalent_epochs", round(spec.steps * global_batch * window / stream, 4),
                       "training.steps x global batch x window / stream", f"{spec.steps} x {global_batch} x {window} / {stream}",
                       "tt.why.epochs")
        if epochs > 1:
            traps.append(Trap("TORCHTITAN_RELOOPED", "tt.trap.relooped", {"epochs": f"{epochs:g}", "step": -(-per_pass // global_batch)}))
    lr = lr_horizon(spec, d)
    if spec.warmup_steps > lr["total"]:
        traps.append(Trap("TORCHTITAN_WARMUP_CLIPPED", "tt.trap.warmup_clipped", {"warmup": spec.warmup_steps, "total": lr["total"]}))
    if lr["total"] != spec.steps:
        traps.append(Trap("TORCHTITAN_LR_HORIZON", "tt.trap.lr_horizon", {"total": lr["total"], "steps": spec.steps}))
    facts = RunFacts(
        optimizer_steps=steps_run, max_steps=spec.steps, epoch_end_steps=[], epochs_completed=epochs or 0.0,
        epochs_planned=epochs or 0.0, samples_seen=samples, warmup_steps=lr["warmup"], eval_steps=eval_steps(spec, start),
        save_steps=save_steps(spec, start), samples_per_epoch=per_pass, equivalent_epochs=epochs, tokens_seen=tokens,
        tokens_per_step={"tokens": global_batch * spec.seq_len, "rows": global_batch},
    )
    lines = [startup_line(spec, global_batch, ga), f"Training starts at step {start + 1}"]
    inputs = {name: getattr(spec, name) for name in TitanSpec.__slots__}
    inputs.update(world_size=spec.dp, seq_length=spec.seq_len, lr=lr, gradient_accumulation_steps=ga)
    return Schedule(framework="torchtitan", version=spec.release, family=WINDOWS.at(spec.release),
                    family_reason=f"tt.family.{WINDOWS.at(spec.release)}", banner={"Trainer is initialized with": lines[0]},
                    banner_lines=lines, run=facts, warnings=traps, derivation=d, inputs=inputs)

"""prime-rl (PrimeIntellect-ai/prime-rl, `uv run rl @ rl.toml`): an orchestrator feeds a trainer that takes one
optimizer step per batch.

Read from the source at 559b447 (2026-08-21) and 5a6ab4a (2026-02-28); `validate_scheduler` and the loop's checkpoint
condition were run by tools/record_rl_stacks.py (the loop itself needs the trainer and the orchestrator):

- `src/prime_rl/trainer/rl/train.py:253-270 train` (read): `Progress.step` starts at 1 (trainer/ckpt.py:30) (a resumed run at the checkpoint's step + 1);
  `while True: ... if is_last_step: break; progress.step += 1` with `is_last_step = step == max_steps`: steps
  `start..max_steps`, one `optimizer.step(); scheduler.step()` each; `max_steps = None` runs indefinitely.
- checkpoints every `ckpt.interval` steps except the last (train.py:602-612, run), then a final one after the loop when `[ckpt]` is set.
- `configs/orchestrator.py:619-631 resolve_batching` (read): `batch_size` samples (default 128) or `token_batch_size` tokens, never
  both; `batch_size % group_size == 0` ("Batch size must be divisible by the number of samples per problem");
  `max_off_policy_steps` (default 8) bounds staleness: rollouts are generated ahead, asynchronously.
- `configs/trainer.py:393-412 validate_scheduler` (run): constant (default); linear needs warmup or decay steps, decay needs
  `max_steps` and `warmup + decay <= max_steps`; cosine needs `max_steps > warmup_steps` (defaults 10 and 10).
There are no epochs: the environments' samplers draw tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_settings, event_steps
from trainsteps.frameworks.rollout_shape import rollout_shape
from trainsteps.schedule import Trap

VERSION = "559b447 (2026-08-21)"


@dataclass(slots=True)
class PrimeRLSpec:
    """What a prime-rl rl.toml sets (its pydantic defaults)."""

    max_steps: int | None = None
    batch_size: int | None = None
    token_batch_size: int | None = None
    group_size: int = 1
    seq_len: int = 2048
    max_completion_tokens: int | None = None
    scheduler: str = "constant"
    warmup_steps: int = 10
    decay_steps: int = 10
    ckpt: bool = False
    """A `[ckpt]` table (a final checkpoint, and every `interval`)."""
    ckpt_interval: int | None = None
    resume_step: int | None = None
    """The checkpoint step a resumed run starts after."""
    max_off_policy_steps: int = 8
    train_gpus: int = 1
    infer_gpus: int | None = None


KEYS = {"max_steps": "max_steps", "batch_size": "orchestrator.batch_size", "token_batch_size": "orchestrator.token_batch_size",
        "group_size": "orchestrator.group_size", "seq_len": "seq_len", "warmup_steps": "trainer.scheduler.warmup_steps",
        "decay_steps": "trainer.scheduler.decay_steps", "ckpt_interval": "ckpt.interval", "resume_step": "resume step",
        "max_completion_tokens": "orchestrator.train.sampling.max_completion_tokens"}


def plan_prime_rl(spec: PrimeRLSpec) -> RLPlan:
    check_settings(spec, KEYS, positive=("max_steps", "batch_size", "token_batch_size", "group_size", "seq_len", "ckpt_interval",
                                         "max_completion_tokens"),
                   non_negative=("warmup_steps", "decay_steps", "resume_step"))
    d = Derivation()
    warnings: list[Trap] = []
    if spec.batch_size is not None and spec.token_batch_size is not None:
        raise ValueError("prime-rl raises \"Set exactly one of batch_size or token_batch_size\"")
    batch = spec.batch_size if spec.batch_size is not None or spec.token_batch_size is not None else 128
    if batch is not None and batch % spec.group_size:
        raise ValueError("prime-rl raises \"Batch size must be divisible by the number of samples per problem\"")
    _check_scheduler(spec)
    if spec.max_steps is None:
        raise ValueError("prime-rl runs indefinitely without max_steps: give max_steps (it is the whole plan)")
    start = (spec.resume_step + 1) if spec.resume_step is not None else 1
    steps = d.add("training_steps", max(spec.max_steps - start + 1, 0), "max_steps - start step + 1", f"{spec.max_steps} - {start} + 1")
    if batch is None:  # token batches: each sample holds at most seq_len tokens
        batch = d.add("samples_per_step", -(-spec.token_batch_size // spec.seq_len), "ceil(token_batch_size / seq_len)  (at least)",
                      f"ceil({spec.token_batch_size} / {spec.seq_len})")
        warnings.append(Trap("PRIME_TOKEN_BATCH", "prime.warn.token_batch", {"tokens": f"{spec.token_batch_size:,}", "rows": f"{batch:,}"}))
    warmup = spec.warmup_steps if spec.scheduler != "constant" else 0
    saves = []
    if spec.ckpt:  # every interval but the last step, which the final checkpoint after the loop writes
        saves = [s for s in event_steps(spec.ckpt_interval or 0, spec.max_steps, name="ckpt.interval", at_end=False)
                 if start <= s < spec.max_steps] + ([spec.max_steps] if steps else [])
    prompts_per_step = max(batch // spec.group_size, 1)
    run = RLRun(
        training_steps=steps, optimizer_steps=steps, scheduler_steps=spec.max_steps, scheduler_steps_taken=spec.max_steps, warmup_steps=warmup,
        rollouts=batch * steps, rollouts_per_step=batch, prompts_per_step=prompts_per_step, prompts=0, steps_per_epoch=0,
        epochs_planned=0.0, epochs_completed=0.0, updates_per_step=1, save_steps=saves,
        response_tokens_max=batch * steps * spec.max_completion_tokens if spec.max_completion_tokens else None,
    )
    notions = [Notion("prime.what.step", "training", spec.max_steps), Notion("verl.what.warmup", "scheduler", warmup),
               Notion("verl.what.actor_updates", "optimizer", steps)]
    shape = rollout_shape(framework="prime-rl", training_steps=steps, prompts_per_step=prompts_per_step, samples_per_prompt=spec.group_size,
                          max_response_length=spec.max_completion_tokens, asynchronous=spec.max_off_policy_steps > 0,
                          gpus=spec.train_gpus, rollout_gpus=spec.infer_gpus, reference=False)
    inputs = {name: getattr(spec, name) for name in PrimeRLSpec.__slots__}
    inputs.update(world_size=spec.train_gpus + (spec.infer_gpus or 0), rollout_shape=shape)
    return RLPlan("prime-rl", VERSION, {"Starting training loop (max_steps=...)": str(spec.max_steps)}, run, notions, warnings, d,
                  inputs=inputs, algorithm="GRPO",
                  sources=[f"prime-rl {VERSION} and 5a6ab4a: validate_scheduler and the checkpoint condition run by "
                           "tools/record_rl_stacks.py; the loop read from src/prime_rl/trainer/rl/train.py"])


def _check_scheduler(spec: PrimeRLSpec) -> None:
    """prime-rl's `validate_scheduler`, in its words."""
    if spec.scheduler == "linear":
        if spec.warmup_steps == 0 and spec.decay_steps == 0:
            raise ValueError("prime-rl raises \"Linear scheduler requires warmup_steps > 0 or decay_steps > 0\"")
        if spec.decay_steps > 0:
            if spec.max_steps is None:
                raise ValueError("prime-rl raises \"Must specify max_steps when using a linear scheduler with decay_steps > 0\"")
            if spec.warmup_steps + spec.decay_steps > spec.max_steps:
                raise ValueError(f"prime-rl raises \"warmup_steps ({spec.warmup_steps}) + decay_steps ({spec.decay_steps}) must not "
                                 f"exceed max_steps ({spec.max_steps})\"")
    elif spec.scheduler == "cosine":
        if spec.max_steps is None:
            raise ValueError("prime-rl raises \"Must specify max_steps when using a cosine scheduler\"")
        if spec.warmup_steps >= spec.max_steps:
            raise ValueError(f"prime-rl raises \"warmup_steps ({spec.warmup_steps}) must be less than max_steps ({spec.max_steps})\"")
    elif spec.scheduler != "constant":
        raise ValueError(f"prime-rl has no scheduler type {spec.scheduler!r} (constant, linear, cosine)")

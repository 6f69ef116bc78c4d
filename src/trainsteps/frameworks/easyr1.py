"""EasyR1 (hiyouga/EasyR1, `python3 -m verl.trainer.main config=...`): a verl fork with its own batch names.

Read from the source at commit b44b311 (2026-07-30; tags v0.3.x), not run (EasyR1 is not on PyPI):

- `verl/trainer/data_loader.py create_dataloader`: the train loader's batch is `data.mini_rollout_batch_size` or
  `data.rollout_batch_size` prompts, `drop_last=True`; `filter_overlong_prompts` defaults to true.
- `verl/trainer/ray_trainer.py RayPPOTrainer.__init__`: `training_steps = trainer.max_steps`, else
  `len(loader) x mini_rollout_batch_size // rollout_batch_size x total_epochs` with mini-rollouts, else
  `len(loader) x total_epochs`; printed as "Total training steps"; it is also the actor's and critic's
  `optim.training_steps`. `rollout_batch_size` must be a multiple of `worker.actor.global_batch_size`.
- `fit()` runs `while global_step < training_steps` (the data is cycled past the last epoch when max_steps asks for more).
- `dp_actor.update_policy`: mini-batches of `global_batch_size` prompts (x n responses), `ppo_epochs` passes: one
  optimizer step each, so `rollout_batch_size / global_batch_size x ppo_epochs` updates per step.
- `fsdp_workers`: the LR scheduler steps once per update call (per training step); warmup is `lr_warmup_steps` or
  `int(lr_warmup_ratio x training_steps)`.
- Online filtering (`algorithm.online_filtering`) regenerates until `rollout_batch_size` prompts pass: an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_rows, check_settings, event_steps
from trainsteps.schedule import Trap

VERSION = "b44b311 (2026-07-30)"


@dataclass(slots=True)
class EasyR1Spec:
    """What an EasyR1 run sets (its dataclass defaults in verl/trainer/config.py and workers/actor/config.py)."""

    prompts: int
    """Prompt rows (after filter_overlong_prompts when counted)."""
    rollout_batch_size: int = 512
    """data.rollout_batch_size: prompts per training step."""
    mini_rollout_batch_size: int | None = None
    """data.mini_rollout_batch_size: prompts per loader batch, when set."""
    rollout_n: int = 5
    """worker.rollout.n."""
    actor_global_batch_size: int = 256
    """worker.actor.global_batch_size: prompts per actor update."""
    ppo_epochs: int = 1
    """worker.actor.ppo_epochs."""
    total_epochs: int = 15
    """trainer.total_epochs."""
    max_steps: int | None = None
    """trainer.max_steps: replaces the epoch count."""
    lr_warmup_ratio: float = 0.0
    """worker.actor.optim.lr_warmup_ratio."""
    lr_warmup_steps: int | None = None
    """worker.actor.optim.lr_warmup_steps."""
    val_freq: int = -1
    """trainer.val_freq."""
    save_freq: int = -1
    """trainer.save_freq."""
    val_before_train: bool = True
    """trainer.val_before_train."""
    online_filtering: bool = False
    """algorithm.online_filtering."""
    max_response_length: int | None = None
    """data.max_response_length."""
    adv_estimator: str = "grpo"
    """algorithm.adv_estimator."""


KEYS = {"prompts": "num_examples", "rollout_batch_size": "data.rollout_batch_size",
        "mini_rollout_batch_size": "data.mini_rollout_batch_size", "rollout_n": "worker.rollout.n",
        "actor_global_batch_size": "worker.actor.global_batch_size", "ppo_epochs": "worker.actor.ppo_epochs",
        "total_epochs": "trainer.total_epochs", "max_steps": "trainer.max_steps", "lr_warmup_ratio": "worker.actor.optim.lr_warmup_ratio",
        "lr_warmup_steps": "worker.actor.optim.lr_warmup_steps", "max_response_length": "data.max_response_length"}
"""Spec field -> EasyR1's own key, for the refusals."""


def plan_easyr1(spec: EasyR1Spec) -> RLPlan:
    check_rows(spec.prompts)
    check_settings(spec, KEYS, positive=("rollout_batch_size", "mini_rollout_batch_size", "rollout_n", "actor_global_batch_size",
                                         "ppo_epochs", "total_epochs", "max_steps", "max_response_length"),
                   non_negative=("lr_warmup_ratio", "lr_warmup_steps"))
    d = Derivation()
    warnings: list[Trap] = []
    if spec.rollout_batch_size % spec.actor_global_batch_size:
        raise ValueError(f"EasyR1 raises \"Rollout batch size must be divisible by actor global batch size.\" "
                         f"({spec.rollout_batch_size} and {spec.actor_global_batch_size})")
    loader_batch = spec.mini_rollout_batch_size or spec.rollout_batch_size
    prompts = d.given("prompt_rows", spec.prompts)
    length = d.add("len_train_dataloader", prompts // loader_batch, "floor(prompts / batch)  (drop_last=True)", f"floor({prompts} / {loader_batch})")
    if spec.max_steps is not None:
        steps = d.add("training_steps", spec.max_steps, "trainer.max_steps")
    elif spec.mini_rollout_batch_size:
        steps = d.add("training_steps", length * loader_batch // spec.rollout_batch_size * spec.total_epochs,
                      "len(loader) x mini_rollout_batch_size // rollout_batch_size x total_epochs",
                      f"{length} x {loader_batch} // {spec.rollout_batch_size} x {spec.total_epochs}")
    else:
        steps = d.add("training_steps", length * spec.total_epochs, "len(loader) x total_epochs", f"{length} x {spec.total_epochs}")
    per_step = d.add("actor_updates_per_step", spec.rollout_batch_size // spec.actor_global_batch_size * spec.ppo_epochs,
                     "rollout_batch_size / global_batch_size x ppo_epochs",
                     f"{spec.rollout_batch_size} / {spec.actor_global_batch_size} x {spec.ppo_epochs}")
    optimizer = d.add("actor_optimizer_steps", per_step * steps, "updates per step x training steps", f"{per_step} x {steps}")
    warmup = spec.lr_warmup_steps if spec.lr_warmup_steps is not None else int(spec.lr_warmup_ratio * steps)
    d.add("warmup_steps", warmup, "lr_warmup_steps or int(lr_warmup_ratio x training_steps)")
    per_epoch = max(prompts // spec.rollout_batch_size, 0)
    epochs = steps * spec.rollout_batch_size / (prompts - prompts % loader_batch) if prompts >= loader_batch else 0.0
    if spec.online_filtering:
        warnings.append(Trap("EASYR1_ONLINE_FILTERING", "easyr1.warn.online_filtering", {"steps": f"{steps:,}"}))
    rollouts_per_step = spec.rollout_batch_size * spec.rollout_n
    tests = event_steps(spec.val_freq, steps, name="trainer.val_freq")
    run = RLRun(
        training_steps=steps, optimizer_steps=optimizer, scheduler_steps=steps, scheduler_steps_taken=steps, warmup_steps=warmup,
        rollouts=rollouts_per_step * steps, rollouts_per_step=rollouts_per_step, prompts_per_step=spec.rollout_batch_size,
        prompts=prompts, steps_per_epoch=per_epoch, epochs_planned=float(spec.total_epochs), epochs_completed=round(epochs, 4),
        updates_per_step=per_step, test_steps=([0] if spec.val_before_train else []) + tests,
        save_steps=event_steps(spec.save_freq, steps, name="trainer.save_freq"), upper_bound=spec.online_filtering,
        response_tokens_max=rollouts_per_step * steps * spec.max_response_length if spec.max_response_length else None,
    )
    notions = [Notion("verl.what.total_line", "training", steps), Notion("easyr1.what.running_step", "training", steps),
               Notion("verl.what.checkpoint", "training", run.save_steps[-1] if run.save_steps else None),
               Notion("verl.what.warmup", "scheduler", warmup), Notion("verl.what.decay", "scheduler", steps),
               Notion("verl.what.actor_updates", "optimizer", optimizer)]
    return RLPlan("easyr1", VERSION, {"Total training steps": str(steps)}, run, notions, warnings, d,
                  inputs={name: getattr(spec, name) for name in EasyR1Spec.__slots__}, algorithm=spec.adv_estimator.upper(),
                  sources=[f"EasyR1 {VERSION}: rules read from its source (not run: EasyR1 is not published on PyPI)"])

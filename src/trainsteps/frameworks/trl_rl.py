"""TRL beyond SFT/GRPO: PPO (`trl.experimental.ppo`, 0.20-1.0), KTO's unpairing, DPO's reference pre-pass.

PPO (`PPOTrainer.__init__` and `train()`, run on CPU for the fixtures in tests/fixtures/rl/trl-*.json):

- `total_episodes = int(num_train_epochs x N)` unless set; `batch_size = per_device x GA x world`;
  `num_total_batches = ceil(total_episodes / batch_size)`; that is `state.max_steps`, the LR scheduler's horizon (the
  scheduler steps once per batch) and the final `global_step`.
- Each batch: `num_ppo_epochs` passes, `num_mini_batches` mini-batches of `batch_size / num_mini_batches`, each cut into
  micro-batches of `per_device_train_batch_size` inside `accelerator.accumulate`. accelerate applies the update every
  GA micro-batches, counting across mini-batches and batches, except on the last batch of each pass over the train
  loader (`drop_last=True`, `len = N // (per_device x GA x world)`): there every micro-batch is an update and the count
  restarts. So the optimizer steps are `num_total_batches x num_ppo_epochs x num_mini_batches` only when GA is 1.

KTO (`KTOTrainer` with a paired chosen/rejected dataset): `maybe_unpair_preference_dataset` makes one row per
completion, so N pairs are 2N rows. DPO with `precompute_ref_log_probs` runs the reference model over the train (and
eval) data once before step 1: time, not steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_rows, check_settings, event_steps
from trainsteps.schedule import Trap

PPO_VERSION = "1.0.0"
"""The release whose PPO trainer was run (the last that ships trl.experimental.ppo)."""


@dataclass(slots=True)
class PPOSpec:
    """TRL PPOConfig fields that change the counts."""

    num_examples: int
    """Rows (queries) of the train dataset."""
    per_device_train_batch_size: int = 64
    gradient_accumulation_steps: int = 1
    world_size: int = 1
    num_train_epochs: float = 3.0
    total_episodes: int | None = None
    """Episodes (responses) to train on; replaces num_train_epochs x N."""
    num_mini_batches: int = 1
    num_ppo_epochs: int = 4
    response_length: int = 53
    logging_steps: float = 500
    save_steps: float = 500
    warmup_ratio: float = 0.0


def kto_rows(pairs: int) -> int:
    """Rows KTO trains on: each chosen/rejected pair becomes two rows (`unpair_preference_dataset`)."""
    return 2 * pairs


def ppo_optimizer_steps(batches: int, pass_length: int, micro_per_batch: int, ga: int) -> int:
    """Updates accelerate applies: every GA micro-batches across batches, every micro-batch on a pass's last batch.

    In closed form: the counter restarts after each pass's last batch (`end_of_dataloader` syncs every micro-batch), so
    a full pass makes floor((pass_length - 1) x micro / GA) + micro updates and the batches after the last full pass
    floor(rest x micro / GA); with no full pass (pass_length 0) the counter runs over all batches."""
    if not pass_length:
        return batches * micro_per_batch // ga
    passes, rest = divmod(batches, pass_length)
    per_pass = (pass_length - 1) * micro_per_batch // ga + micro_per_batch
    return passes * per_pass + rest * micro_per_batch // ga


PPO_POSITIVE = ("num_examples", "per_device_train_batch_size", "gradient_accumulation_steps", "world_size", "total_episodes",
                "num_mini_batches", "num_ppo_epochs", "response_length")


def plan_trl_ppo(spec: PPOSpec) -> RLPlan:
    check_rows(spec.num_examples)
    check_settings(spec, {}, positive=PPO_POSITIVE, above_zero=("num_train_epochs",),
                   non_negative=("logging_steps", "save_steps", "warmup_ratio"))
    d = Derivation()
    warnings: list[Trap] = []
    n, bs, ga, w = spec.num_examples, spec.per_device_train_batch_size, spec.gradient_accumulation_steps, spec.world_size
    episodes = spec.total_episodes if spec.total_episodes is not None else int(spec.num_train_epochs * n)
    d.add("ppo_total_episodes", episodes, "total_episodes or int(num_train_epochs x N)",
          str(episodes) if spec.total_episodes is not None else f"int({spec.num_train_epochs} x {n})")
    batch = d.add("ppo_batch_size", bs * ga * w, "per_device_train_batch_size x GA x world", f"{bs} x {ga} x {w}")
    local = bs * ga
    if local % spec.num_mini_batches:
        raise ValueError(f"TRL raises \"`local_batch_size` must be a multiple of `num_mini_batches`\" ({local} and {spec.num_mini_batches})")
    total = d.add("ppo_num_total_batches", math.ceil(episodes / batch), "ceil(total_episodes / batch_size)", f"ceil({episodes} / {batch})",
                  "trlppo.why.total")
    pass_length = n // batch
    local_mini = local // spec.num_mini_batches
    micro = spec.num_ppo_epochs * spec.num_mini_batches * math.ceil(local_mini / bs)
    updates = d.add("actor_optimizer_steps", ppo_optimizer_steps(total, pass_length, micro, ga),
                    "micro-batches per batch = num_ppo_epochs x num_mini_batches x ceil(mini / per_device); one update per GA, "
                    "every micro-batch on a pass's last batch", f"{spec.num_ppo_epochs} x {spec.num_mini_batches} x "
                    f"{math.ceil(local_mini / bs)} = {micro} per batch, GA {ga}, {pass_length} batches per pass", "trlppo.why.updates")
    if ga > 1 and spec.num_mini_batches > 1 or ga > 1 and pass_length:
        if updates != total * spec.num_ppo_epochs * spec.num_mini_batches:
            warnings.append(Trap("TRL_PPO_ACCUMULATION", "trlppo.warn.accumulation",
                                 {"updates": f"{updates:,}", "naive": f"{total * spec.num_ppo_epochs * spec.num_mini_batches:,}"}))
    if pass_length == 0:
        warnings.append(Trap("TRL_PPO_EMPTY_LOADER", "trlppo.warn.empty", {"rows": n, "batch": batch}))
    warmup = math.ceil(spec.warmup_ratio * total)
    run = RLRun(
        training_steps=total, optimizer_steps=updates, scheduler_steps=total, scheduler_steps_taken=total, warmup_steps=warmup,
        rollouts=total * batch, rollouts_per_step=batch, prompts_per_step=batch, prompts=n, steps_per_epoch=pass_length,
        epochs_planned=episodes / n if n else 0.0, epochs_completed=round(total * batch / n, 4) if n else 0.0,
        updates_per_step=micro // ga if ga <= micro else 0,
        save_steps=event_steps(_steps(spec.save_steps, total), total, name="save_steps", at_end=False),
        response_tokens_max=total * batch * spec.response_length,
    )
    notions = [Notion("trlppo.what.max_steps", "training", total), Notion("trlppo.what.global_step", "training", total),
               Notion("verl.what.decay", "scheduler", total), Notion("verl.what.actor_updates", "optimizer", updates)]
    return RLPlan("trl-ppo", PPO_VERSION, {}, run, notions, warnings, d, inputs={k: getattr(spec, k) for k in PPOSpec.__slots__},
                  algorithm="PPO", sources=[f"TRL {PPO_VERSION}: PPOTrainer.train() run on CPU with tiny models (tools/record_rl.py trl)"])


def _steps(value: float, total: int) -> int:
    """TRL PPO: a logging/save step below 1 is a fraction of max_steps (rounded up)."""
    return math.ceil(total * value) if value < 1 else int(value)

"""AReaL (inclusionAI/AReaL, `python -m areal.launcher.local gsm8k_grpo.py --config grpo.yaml key=value`): GRPO/PPO.

Read from the source at 4aef98d (2026-05-21) and v1.0.4 (37d6c64, 2026-05-07); the loader length (torch's
DistributedSampler and DataLoader), FinetuneSpec and the frequency controls were run by tools/record_rl_stacks.py:

- `areal/utils/dataloader.py:29-59 create_dataloader`: `batch_size % world_size` must be 0; each of the actor's dp ranks
  loads `batch_size / dp` prompts through a `DistributedSampler(drop_last=True)`, with the loader's `drop_last`
  (default true): one step = one loader batch = `train_dataset.batch_size` prompts over all ranks.
- `areal/trainer/rl_trainer.py:534-556 RLTrainer.train` (read, not run): `max_steps = total_train_epochs x len(train_dataloader)`;
  `for global_step in range(start_step, max_steps)` breaks at `total_train_steps` ("for benchmarking purposes only").
  Online (agent proxy) mode: `steps_per_epoch = total_train_steps // total_train_epochs`.
- `areal/api/io_struct.py:134-146 FinetuneSpec.total_train_steps = total_train_epochs x (dataset_size // batch_size)`, with
  `dataset_size = len(loader) x batch_size`: the LR horizon (`fsdp_engine.py`, warmup `int(warmup_steps_proportion x
  total)`, fsdp_engine.py:1150-1167), stepped once per training step (rl_trainer.py:686); `total_train_steps` does not shorten it.
- `areal/trainer/ppo/actor.py:336-345` (read): the step's batch is split into `ppo_n_minibatches` (default 4) mini-batches, one
  `train_batch` (one optimizer step) each; a critic the same.
- `areal/utils/saver.py:133`, `evaluator.py:34`, `timeutil.py:17-181`: every `freq_steps` steps, every `freq_epochs` epoch ends
  (either fires); `evaluator.eval_before_train` makes the first check fire (after the first step); `freq_secs` is by clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_rows, check_settings
from trainsteps.frameworks.rollout_shape import rollout_shape
from trainsteps.schedule import Trap

VERSION = "4aef98d (2026-05-21)"


@dataclass(slots=True)
class ArealSpec:
    """What an AReaL GRPO/PPO run sets (its dataclass defaults in areal/api/cli_args.py)."""

    prompts: int | None
    """Prompts in the training set (after `train_dataset.max_length`); None in online mode."""
    batch_size: int = 1
    """train_dataset.batch_size: prompts per step over all ranks."""
    dp: int = 1
    """Data-parallel ranks of the actor."""
    drop_last: bool = True
    """train_dataset.drop_last."""
    n_samples: int = 1
    """gconfig.n_samples: responses per prompt."""
    total_train_epochs: int = 1
    """total_train_epochs."""
    total_train_steps: int | None = None
    """total_train_steps: stops the loop (benchmarking), not the LR schedule."""
    ppo_n_minibatches: int = 4
    """actor.ppo_n_minibatches: optimizer steps per training step."""
    critic: bool = False
    """A `critic:` section (PPO with a value model)."""
    critic_n_minibatches: int = 4
    """critic.ppo_n_minibatches."""
    warmup_steps_proportion: float = 0.001
    """actor.optimizer.warmup_steps_proportion."""
    save_freq_steps: int | None = None
    """saver.freq_steps."""
    save_freq_epochs: int | None = None
    """saver.freq_epochs."""
    save_freq_secs: int | None = None
    """saver.freq_secs."""
    eval_freq_steps: int | None = None
    """evaluator.freq_steps."""
    eval_freq_epochs: int | None = None
    """evaluator.freq_epochs."""
    eval_freq_secs: int | None = None
    """evaluator.freq_secs."""
    eval_before_train: bool = False
    """evaluator.eval_before_train."""
    start_step: int = 0
    """The global step a recovered run starts from."""
    online: bool = False
    """rollout.agent.mode: online (agent proxy; no dataset)."""
    max_new_tokens: int = 16384
    """gconfig.max_new_tokens."""
    max_length: int | None = None
    """train_dataset.max_length: longer prompts are filtered out."""
    gpus: int | None = None
    """GPUs of the training engine (the actor's world)."""
    rollout_gpus: int | None = None
    """GPUs of the inference servers (allocation_mode's sglang/vllm part)."""
    rollout_tp: int = 1
    """Tensor-parallel size of one inference server."""
    max_head_offpolicyness: int = 0
    """rollout.max_head_offpolicyness: policy versions a rollout may lag (0: on-policy, generation waits)."""


KEYS = {"prompts": "num_examples", "batch_size": "train_dataset.batch_size", "dp": "data-parallel size", "n_samples": "gconfig.n_samples",
        "total_train_epochs": "total_train_epochs", "total_train_steps": "total_train_steps",
        "ppo_n_minibatches": "actor.ppo_n_minibatches", "critic_n_minibatches": "critic.ppo_n_minibatches",
        "warmup_steps_proportion": "actor.optimizer.warmup_steps_proportion", "save_freq_steps": "saver.freq_steps",
        "save_freq_epochs": "saver.freq_epochs", "eval_freq_steps": "evaluator.freq_steps", "eval_freq_epochs": "evaluator.freq_epochs",
        "start_step": "start step", "max_new_tokens": "gconfig.max_new_tokens"}


class FrequencyControl:
    """AReaL's `FrequencyControl` (areal/utils/timeutil.py) without the clock: fires once `frequency` counts have passed
    since it last fired (None: never), or on the first check when `initial` is set."""

    def __init__(self, frequency: int | None, initial: bool = False) -> None:
        self.frequency, self.initial, self.count, self.last = frequency, initial, 0, 0

    def check(self, counts: int = 1) -> bool:
        self.count += counts
        if self.initial:
            self.initial, self.last = False, self.count
            return True
        if self.frequency is None or self.count - self.last < self.frequency:
            return False
        self.last = self.count
        return True


def fired_steps(freq_steps: int | None, freq_epochs: int | None, steps_per_epoch: int, start: int, stop: int,
                initial: bool = False) -> list[int]:
    """Global steps (1-based) after which AReaL's saver or evaluator runs: `EpochStepTimeFreqCtl.check(epochs=int(step
    is the epoch's last), steps=1)` after each step (both controls are checked every time, so neither short-circuits)."""
    epochs, steps = FrequencyControl(freq_epochs, initial), FrequencyControl(freq_steps)
    fired = []
    for global_step in range(start, stop):
        at_epoch_end = int(global_step % steps_per_epoch == steps_per_epoch - 1)
        by_epoch, by_step = epochs.check(at_epoch_end), steps.check(1)
        if by_epoch or by_step:
            fired.append(global_step + 1)
    return fired


def loader_length(prompts: int, batch_size: int, dp: int, drop_last: bool) -> int:
    """`len(train_dataloader)` on one rank: DistributedSampler(drop_last=True) gives floor(N / dp) prompts per rank,
    batched by batch_size / dp with the loader's drop_last."""
    per_rank, local = prompts // dp, batch_size // dp
    return per_rank // local if drop_last else -(-per_rank // local)


def plan_areal(spec: ArealSpec) -> RLPlan:
    check_settings(spec, KEYS, positive=("batch_size", "dp", "n_samples", "total_train_epochs", "total_train_steps", "ppo_n_minibatches",
                                         "critic_n_minibatches", "save_freq_steps", "save_freq_epochs", "eval_freq_steps",
                                         "eval_freq_epochs", "max_new_tokens"),
                   non_negative=("warmup_steps_proportion", "start_step"))
    d = Derivation()
    warnings: list[Trap] = []
    if spec.batch_size % spec.dp:
        raise ValueError(f"AReaL raises \"batch size({spec.batch_size}) must be divisible by world_size({spec.dp})!\"")
    if spec.online:
        if spec.total_train_steps is None:
            raise ValueError("AReaL raises \"total_train_steps must be set for online mode\"")
        per_epoch = d.add("len_train_dataloader", spec.total_train_steps // spec.total_train_epochs,
                          "total_train_steps // total_train_epochs  (online mode)", f"{spec.total_train_steps} // {spec.total_train_epochs}")
        if per_epoch < 1:
            raise ValueError(f"AReaL raises \"total_train_steps ({spec.total_train_steps}) must be >= total_train_epochs "
                             f"({spec.total_train_epochs}) so that steps_per_epoch >= 1.\"")
        prompts = per_epoch * spec.batch_size
    else:
        if spec.prompts is None:
            raise ValueError("AReaL's steps come from the training set: give --num-examples (prompts after max_length) or --data")
        prompts = check_rows(d.given("prompt_rows", spec.prompts))
        per_epoch = d.add("len_train_dataloader", loader_length(prompts, spec.batch_size, spec.dp, spec.drop_last),
                          "floor(N / dp) // (batch_size / dp)" + ("" if spec.drop_last else "  (ceil: drop_last false)"),
                          f"floor({prompts} / {spec.dp}) // ({spec.batch_size} / {spec.dp})")
        if per_epoch == 0:
            raise ValueError(f"AReaL's loader is empty: {prompts} prompts over {spec.dp} ranks fill no batch of {spec.batch_size}")
    max_steps = d.add("max_steps", spec.total_train_epochs * per_epoch, "total_train_epochs x len(train_dataloader)",
                      f"{spec.total_train_epochs} x {per_epoch}")
    stop = max_steps if spec.total_train_steps is None else min(max_steps, spec.total_train_steps)
    if spec.total_train_steps is not None and spec.total_train_steps < max_steps:
        d.add("steps_run", stop, "min(max_steps, total_train_steps)", f"min({max_steps}, {spec.total_train_steps})")
        warnings.append(Trap("AREAL_BENCHMARK_CAP", "areal.warn.benchmark_cap", {"cap": f"{spec.total_train_steps:,}",
                                                                                  "horizon": f"{max_steps:,}"}))
    steps = max(stop - spec.start_step, 0)
    warmup = d.add("warmup_steps", int(spec.warmup_steps_proportion * max_steps), "int(warmup_steps_proportion x total_train_steps)",
                   f"int({spec.warmup_steps_proportion} x {max_steps})")
    optimizer = d.add("actor_optimizer_steps", spec.ppo_n_minibatches * steps, "ppo_n_minibatches x training steps",
                      f"{spec.ppo_n_minibatches} x {steps}")
    for freq, name in ((spec.save_freq_secs, "saver.freq_secs"), (spec.eval_freq_secs, "evaluator.freq_secs")):
        if freq is not None:
            warnings.append(Trap("AREAL_CLOCK_EVENTS", "areal.warn.clock", {"name": name, "secs": freq}))
    saves = _events(spec.save_freq_steps, spec.save_freq_epochs, per_epoch, spec.start_step, stop)
    tests = _events(spec.eval_freq_steps, spec.eval_freq_epochs, per_epoch, spec.start_step, stop, spec.eval_before_train)
    rollouts_per_step = spec.batch_size * spec.n_samples
    used = per_epoch * spec.batch_size
    run = RLRun(
        training_steps=steps, optimizer_steps=optimizer, scheduler_steps=max_steps, scheduler_steps_taken=stop, warmup_steps=warmup,
        rollouts=rollouts_per_step * steps, rollouts_per_step=rollouts_per_step, prompts_per_step=spec.batch_size, prompts=prompts,
        steps_per_epoch=per_epoch, epochs_planned=float(spec.total_train_epochs),
        epochs_completed=round(stop * spec.batch_size / used, 4) if used else 0.0, updates_per_step=spec.ppo_n_minibatches,
        critic_optimizer_steps=spec.critic_n_minibatches * steps if spec.critic else None,
        critic_updates_per_step=spec.critic_n_minibatches if spec.critic else None, test_steps=tests, save_steps=saves,
        response_tokens_max=rollouts_per_step * steps * spec.max_new_tokens,
    )
    notions = [Notion("areal.what.train_step", "training", max_steps), Notion("areal.what.loop", "training", stop),
               Notion("verl.what.warmup", "scheduler", warmup), Notion("verl.what.decay", "scheduler", max_steps),
               Notion("verl.what.actor_updates", "optimizer", optimizer)]
    shape = rollout_shape(framework="areal", training_steps=steps, prompts_per_step=spec.batch_size, samples_per_prompt=spec.n_samples,
                          max_prompt_length=spec.max_length, max_response_length=spec.max_new_tokens, asynchronous=spec.max_head_offpolicyness > 0,
                          gpus=spec.gpus or spec.dp, rollout_gpus=spec.rollout_gpus, rollout_tp=spec.rollout_tp, critic=spec.critic)
    inputs = {name: getattr(spec, name) for name in ArealSpec.__slots__}
    inputs.update(world_size=(spec.gpus or spec.dp) + (spec.rollout_gpus or 0), rollout_shape=shape)
    return RLPlan("areal", VERSION, {"Train step N/total": str(max_steps)}, run, notions, warnings, d, inputs=inputs,
                  algorithm="PPO" if spec.critic else "GRPO",
                  sources=[f"AReaL {VERSION} and v1.0.4: the loader (torch DistributedSampler + DataLoader), FinetuneSpec and "
                           "FrequencyControl run by tools/record_rl_stacks.py; the loop read from areal/trainer/rl_trainer.py"])


def _events(freq_steps: int | None, freq_epochs: int | None, per_epoch: int, start: int, stop: int, initial: bool = False) -> list[int]:
    """`fired_steps`, walked only when something can fire; a walk past the event cap is refused as the other planners do."""
    from trainsteps.frameworks.hf.intervals import MAX_EVENTS
    from trainsteps.frameworks.rl import event_steps

    if freq_steps is None and freq_epochs is None and not initial:
        return []
    if stop - start > MAX_EVENTS:
        event_steps(1, stop - start, name="saver/evaluator freq_steps")
    return fired_steps(freq_steps, freq_epochs, per_epoch, start, stop, initial)

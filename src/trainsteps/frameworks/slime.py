"""slime (THUDM/slime: `python train.py --rollout-batch-size 32 ...`, or `train_async.py`): rollouts, Megatron updates.

Read from the source at 624b824 (2026-08-21) and v0.2.2 (2418a78, 2026-01-18); the loop, the periodic-action rule,
the dp schedule and the scheduler lines were run by tools/record_rl_stacks.py (fixtures in tests/fixtures/rl_stacks/):

- `slime/utils/arguments.py:1971-2005` (post-parse): `--num-steps-per-rollout k` sets `global_batch_size = rollout_batch_size x
  n_samples_per_prompt // k` and asserts an explicit `--global-batch-size` equals it; `--num-epoch` is ignored when
  `--num-rollout` is set; one of the two is required; `--num-epoch` needs the global dataset.
- `slime/ray/placement_group.py:239-244 create_rollout_manager`: `num_rollout = len(dataset) // rollout_batch_size x num_epoch`
  (`get_num_rollout_per_epoch`), which must be > 0; the dataset is counted after the prompt-length filter.
- `train.py:49-91 train`: `for rollout_id in range(start_rollout_id, num_rollout)`; evaluation before rollout 0 unless
  `--skip-eval-before-train`; saves and evaluations by `should_run_periodic_action` (misc.py:107-128): every `interval`
  rollouts, at each epoch end when the horizon came from `--num-epoch`, and (saves only) at the last rollout.
- `slime/utils/dp_schedule.py:135 build_dp_schedule`: a rollout's samples make `floor(rollouts / global_batch_size)`
  optimizer steps; the trailing rollouts that do not fill one are dropped.
- `slime/backends/megatron_utils/model.py:203-214 get_optimizer_param_scheduler`: `train_iters = num_rollout x
  rollout_batch_size x n_samples_per_prompt // global_batch_size`; `lr_decay_iters` defaults to it; the scheduler is
  stepped in samples (`global_batch_size` per optimizer step).
- `slime/rollout/data_source.py:90-103 get_samples` (read, not run): prompts wrap into the next (reshuffled) epoch: nothing is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_rows, check_settings
from trainsteps.frameworks.rollout_shape import rollout_shape
from trainsteps.schedule import Trap

VERSION = "624b824 (2026-08-21)"


@dataclass(slots=True)
class SlimeSpec:
    """What a slime run sets (its argparse defaults in slime/utils/arguments.py)."""

    rollout_batch_size: int
    """--rollout-batch-size (required): prompts per rollout step."""
    prompts: int | None = None
    """Prompts in --prompt-data after the length filter (needed for --num-epoch)."""
    n_samples_per_prompt: int = 1
    """--n-samples-per-prompt."""
    global_batch_size: int | None = None
    """--global-batch-size: samples per optimizer step."""
    num_steps_per_rollout: int | None = None
    """--num-steps-per-rollout: sets the global batch size."""
    num_rollout: int | None = None
    """--num-rollout."""
    num_epoch: int | None = None
    """--num-epoch (ignored when --num-rollout is set)."""
    start_rollout_id: int = 0
    """--start-rollout-id (or the rollout read from --load)."""
    eval_interval: int | None = None
    """--eval-interval (None: no evaluation)."""
    skip_eval_before_train: bool = False
    """--skip-eval-before-train."""
    save_interval: int | None = None
    """--save-interval (None: no periodic saves)."""
    lr_warmup_iters: int = 0
    """--lr-warmup-iters (Megatron)."""
    lr_warmup_fraction: float | None = None
    """--lr-warmup-fraction (Megatron; wins over the iterations)."""
    lr_decay_iters: int | None = None
    """--lr-decay-iters (default: train_iters)."""
    use_critic: bool = False
    """--use-critic."""
    num_critic_only_steps: int = 0
    """--num-critic-only-steps: first rollouts that train only the critic."""
    rollout_global_dataset: bool = True
    """False with --disable-rollout-global-dataset."""
    dynamic_sampling: bool = False
    """--dynamic-sampling-filter-path or an --over-sampling-batch-size above the rollout batch: more prompts per step."""
    asynchronous: bool = False
    """train_async.py: rollout k+1 overlaps training on rollout k."""
    rollout_max_prompt_len: int | None = None
    """--rollout-max-prompt-len (default: --rollout-max-context-len - 1)."""
    rollout_max_response_len: int | None = None
    """--rollout-max-response-len."""
    actor_gpus: int = 8
    """--actor-num-nodes x --actor-num-gpus-per-node."""
    rollout_gpus: int | None = None
    """--rollout-num-gpus (None with --colocate: the actor's GPUs generate)."""
    rollout_tp: int = 1
    """--rollout-num-gpus-per-engine."""
    reference: bool = True
    """A reference model runs (--ref-load, or a KL term)."""


KEYS = {"rollout_batch_size": "--rollout-batch-size", "n_samples_per_prompt": "--n-samples-per-prompt",
        "global_batch_size": "--global-batch-size", "num_steps_per_rollout": "--num-steps-per-rollout",
        "num_rollout": "--num-rollout", "num_epoch": "--num-epoch", "start_rollout_id": "--start-rollout-id",
        "eval_interval": "--eval-interval", "save_interval": "--save-interval", "lr_warmup_iters": "--lr-warmup-iters",
        "lr_warmup_fraction": "--lr-warmup-fraction", "lr_decay_iters": "--lr-decay-iters",
        "num_critic_only_steps": "--num-critic-only-steps", "prompts": "num_examples"}
"""Spec field -> slime's own flag, for the refusals."""


def periodic(rollout_id: int, interval: int | None, per_epoch: int | None = None, num_rollout: int | None = None) -> bool:
    """slime's `should_run_periodic_action` (slime/utils/misc.py): every `interval` rollouts, at each epoch end, and
    at the last rollout when `num_rollout` is passed (saves pass it, evaluations do not)."""
    if interval is None:
        return False
    if num_rollout is not None and rollout_id == num_rollout - 1:
        return True
    step = rollout_id + 1
    return step % interval == 0 or (per_epoch is not None and step % per_epoch == 0)


def plan_slime(spec: SlimeSpec) -> RLPlan:
    check_settings(spec, KEYS, positive=("rollout_batch_size", "n_samples_per_prompt", "global_batch_size", "num_steps_per_rollout",
                                         "num_epoch", "eval_interval", "save_interval", "prompts"),
                   non_negative=("num_rollout", "start_rollout_id", "lr_warmup_iters", "lr_warmup_fraction", "lr_decay_iters",
                                 "num_critic_only_steps"))
    d = Derivation()
    warnings: list[Trap] = []
    samples = spec.rollout_batch_size * spec.n_samples_per_prompt
    if spec.num_rollout is None and spec.num_epoch is None:  # the argument checks run before any rollout
        raise ValueError("slime asserts \"num_epoch is not set, but num_rollout is not set, please set --num-rollout or --num-epoch\"")
    gbs = _global_batch(spec, samples, d)
    per_epoch = None
    if spec.num_rollout is not None:
        num_rollout = d.add("num_rollout", spec.num_rollout, "--num-rollout")
        if spec.num_epoch is not None:
            warnings.append(Trap("SLIME_NUM_EPOCH_IGNORED", "slime.warn.num_epoch_ignored", {"num_rollout": f"{num_rollout:,}"}))
    else:
        if not spec.rollout_global_dataset:
            raise ValueError("slime asserts \"num_epoch is set, but rollout_global_dataset is not set\"")
        if spec.prompts is None:
            raise ValueError("--num-epoch counts the prompt data: give --num-examples (prompts after the length filter) or --data")
        check_rows(spec.prompts)
        per_epoch = d.add("rollouts_per_epoch", spec.prompts // spec.rollout_batch_size, "len(dataset) // rollout_batch_size",
                          f"{spec.prompts} // {spec.rollout_batch_size}")
        num_rollout = d.add("num_rollout", per_epoch * spec.num_epoch, "rollouts per epoch x num_epoch", f"{per_epoch} x {spec.num_epoch}")
        if num_rollout <= 0:
            raise ValueError(f"slime asserts num_rollout > 0 ({spec.prompts} prompts < rollout batch {spec.rollout_batch_size})")
    run_rollouts = max(num_rollout - spec.start_rollout_id, 0)
    per_step = d.add("optimizer_steps_per_rollout", samples // gbs, "floor(rollout_batch_size x n_samples_per_prompt / global_batch_size)",
                     f"floor({samples} / {gbs})")
    if samples % gbs:
        warnings.append(Trap("SLIME_TRAILING_SAMPLES", "slime.warn.trailing", {"samples": samples, "gbs": gbs, "dropped": samples % gbs}))
    actor_rollouts = run_rollouts - (min(spec.num_critic_only_steps, run_rollouts) if spec.use_critic else 0)
    optimizer = d.add("actor_optimizer_steps", per_step * actor_rollouts, "optimizer steps per rollout x rollouts the actor trains",
                      f"{per_step} x {actor_rollouts}")
    train_iters = d.add("train_iters", num_rollout * samples // gbs,
                        "num_rollout x rollout_batch_size x n_samples_per_prompt // global_batch_size", f"{num_rollout} x {samples} // {gbs}")
    decay = d.add("lr_decay_iters", spec.lr_decay_iters if spec.lr_decay_iters is not None else train_iters, "--lr-decay-iters or train_iters")
    warmup = int(spec.lr_warmup_fraction * decay) if spec.lr_warmup_fraction is not None else spec.lr_warmup_iters
    d.add("warmup_steps", warmup, "lr_warmup_fraction x lr_decay_iters, else lr_warmup_iters")
    taken = per_step * (num_rollout - (min(spec.num_critic_only_steps, num_rollout) if spec.use_critic else 0))
    if taken < decay:
        warnings.append(Trap("SLIME_LR_NOT_FINISHED", "slime.warn.lr_short", {"taken": f"{taken:,}", "decay": f"{decay:,}"}))
    if spec.dynamic_sampling:
        warnings.append(Trap("SLIME_DYNAMIC_SAMPLING", "slime.warn.dynamic_sampling", {"prompts": spec.rollout_batch_size}))
    tests, saves = _events(spec, num_rollout, per_epoch)
    prompts = spec.prompts or 0
    run = RLRun(
        training_steps=run_rollouts, optimizer_steps=optimizer, scheduler_steps=decay, scheduler_steps_taken=taken, warmup_steps=warmup,
        rollouts=samples * run_rollouts, rollouts_per_step=samples, prompts_per_step=spec.rollout_batch_size, prompts=prompts,
        steps_per_epoch=per_epoch if per_epoch is not None else (prompts // spec.rollout_batch_size if prompts else 0),
        epochs_planned=float(spec.num_epoch if spec.num_rollout is None else (num_rollout * spec.rollout_batch_size / prompts if prompts else 0)),
        epochs_completed=round(run_rollouts * spec.rollout_batch_size / prompts, 4) if prompts else 0.0,
        updates_per_step=per_step, critic_optimizer_steps=per_step * run_rollouts if spec.use_critic else None,
        critic_updates_per_step=per_step if spec.use_critic else None, test_steps=tests, save_steps=saves,
        upper_bound=False,
        response_tokens_max=samples * run_rollouts * spec.rollout_max_response_len if spec.rollout_max_response_len else None,
    )
    notions = [Notion("slime.what.rollout_id", "training", num_rollout - 1 if num_rollout else None),
               Notion("slime.what.train_iters", "optimizer", train_iters),
               Notion("slime.what.scheduler", "scheduler", decay * gbs),
               Notion("verl.what.actor_updates", "optimizer", optimizer)]
    shape = rollout_shape(framework="slime", training_steps=run_rollouts, prompts_per_step=spec.rollout_batch_size,
                          samples_per_prompt=spec.n_samples_per_prompt, max_prompt_length=spec.rollout_max_prompt_len,
                          max_response_length=spec.rollout_max_response_len, asynchronous=spec.asynchronous, gpus=spec.actor_gpus,
                          rollout_gpus=spec.rollout_gpus, rollout_tp=spec.rollout_tp, critic=spec.use_critic,
                          reference=spec.reference)
    inputs = {name: getattr(spec, name) for name in SlimeSpec.__slots__}
    inputs.update(global_batch_size=gbs, world_size=spec.actor_gpus + (spec.rollout_gpus or 0), rollout_shape=shape)
    return RLPlan("slime", VERSION, {}, run, notions, warnings, d, inputs=inputs, algorithm="GRPO" if not spec.use_critic else "PPO",
                  sources=[f"slime {VERSION} and v0.2.2: train.py loop, should_run_periodic_action, build_dp_schedule and the "
                           "scheduler lines run by tools/record_rl_stacks.py; argument checks read from slime/utils/arguments.py"])


def _global_batch(spec: SlimeSpec, samples: int, d: Derivation) -> int:
    if spec.num_steps_per_rollout is not None:
        derived = samples // spec.num_steps_per_rollout
        if spec.global_batch_size is not None and spec.global_batch_size != derived:
            raise ValueError(f"slime asserts global_batch_size {spec.global_batch_size} is not equal to rollout_batch_size "
                             f"{spec.rollout_batch_size} * n_samples_per_prompt {spec.n_samples_per_prompt} // num_steps_per_rollout "
                             f"{spec.num_steps_per_rollout}")
        gbs = d.add("global_batch_size", derived, "rollout_batch_size x n_samples_per_prompt // num_steps_per_rollout",
                    f"{samples} // {spec.num_steps_per_rollout}")
    elif spec.global_batch_size is not None:
        gbs = d.given("global_batch_size", spec.global_batch_size)
    else:
        raise ValueError("slime needs --global-batch-size or --num-steps-per-rollout (samples per optimizer step)")
    if gbs < 1 or samples // gbs < 1:
        raise ValueError(f"slime's dp schedule asserts num_rollouts ({samples}) >= global_batch_size ({gbs})")
    return gbs


def _events(spec: SlimeSpec, num_rollout: int, per_epoch: int | None) -> tuple[list[int], list[int]]:
    """Rollout steps (1-based: after rollout_id) with an evaluation (0: before rollout 0) and with a save."""
    from trainsteps.frameworks.hf.intervals import MAX_EVENTS
    from trainsteps.frameworks.rl import event_steps

    tests: list[int] = []
    if spec.eval_interval is not None and spec.start_rollout_id == 0 and num_rollout > 0 and not spec.skip_eval_before_train:
        tests.append(0)
    first = spec.start_rollout_id + 1
    if per_epoch is None:  # every `interval` rollouts (and, for saves, the last)
        tests += [s for s in event_steps(spec.eval_interval or 0, num_rollout, name="--eval-interval", at_end=False) if s >= first]
        saves = [s for s in event_steps(spec.save_interval or 0, num_rollout, name="--save-interval") if s >= first]
        return tests, saves
    if spec.eval_interval is None and spec.save_interval is None:
        return tests, []
    if num_rollout - spec.start_rollout_id > MAX_EVENTS:  # epoch ends too: walk the rollouts, refusing a list too long
        event_steps(1, num_rollout - spec.start_rollout_id, name="--num-epoch")
    tests += [i + 1 for i in range(spec.start_rollout_id, num_rollout) if periodic(i, spec.eval_interval, per_epoch)]
    saves = [i + 1 for i in range(spec.start_rollout_id, num_rollout) if periodic(i, spec.save_interval, per_epoch, num_rollout)]
    return tests, saves

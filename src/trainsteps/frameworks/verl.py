"""verl (`python3 -m verl.trainer.main_ppo`): PPO, GRPO, DAPO, RLOO, REINFORCE++ — what one step is, and how many.

The rules, as verl's code has them from 0.3 to 0.9 (checked by running that code, see tools/record_rl.py):

- `RayPPOTrainer._create_dataloader`: the train loader's batch is `data.gen_batch_size` (0.4+) or
  `data.train_batch_size` prompts, with `drop_last=True`; `total_training_steps = len(loader) x trainer.total_epochs`,
  replaced by `trainer.total_training_steps` when set, and written into `actor.optim.total_training_steps` (and the
  critic's). It prints `Total training steps: N`.
- The prompts are the rows of `data.train_files` after `train_max_samples` (0.6+: the first rows, or a seeded draw
  with `data.shuffle`) and then `filter_overlong_prompts` (prompts whose chat-templated tokens exceed
  `max_prompt_length` are dropped).
- `fit()`: the loop runs `total_epochs` passes over the loader and stops at `total_training_steps`. One training step
  generates `rollout.n` responses per prompt. The actor is updated on every step from `trainer.critic_warmup` on.
- The actor update: the step's `train_batch_size x n` responses are split over the data-parallel ranks and each rank's
  part into mini-batches of `ppo_mini_batch_size x n / dp` (the last one may be short), `ppo_epochs` times; one
  optimizer step per mini-batch. Micro-batches (`ppo_micro_batch_size_per_gpu`) and `use_dynamic_bsz` only change how
  a mini-batch is accumulated, never the number of optimizer steps.
- The LR scheduler steps once per actor update (0.3-0.7: after `update_policy`; 0.8+: on the last mini-batch), so it
  counts training steps; its horizon is `total_training_steps` and its warmup `lr_warmup_steps`, or
  `int(lr_warmup_steps_ratio x total_training_steps)` when that is not positive.
- Validation runs before training (`val_before_train`, default true) and every `test_freq` steps and at the last step;
  a checkpoint `global_step_N` every `save_freq` steps and at the last step (only on steps that update the actor).
- DAPO's dynamic sampling (`algorithm.filter_groups.enable`): a step may take several generation batches, so the
  counts are upper bounds and the schedule's horizon (counted in generation batches) is not reached.

The v1 trainer (`verl/trainer/ppo/v1`, 0.9+, main_ppo's default `trainer.use_v1: true`; `use_v1=False` runs the legacy
RayPPOTrainer, `main_ppo_v0.py`), `PPOTrainer._init_dataloader` (run for the fixtures on 0.9.1, read on 0.9.0):

- `steps_per_epoch = len(train_dataset) // train_batch_size`, whatever the loader's batch: a `gen_batch_size` loader
  no longer shortens the run (0.9.1 legacy: 250 prompts, gen_batch 48, batch 16 = 5 steps an epoch; v1: 15);
- the asynchronous modes (`trainer.v1.trainer_mode` colocate_async / separate_async), DAPO and
  `sync_refill_failed_groups` fetch one prompt at a time (`gen_batch_size` forced to 1);
- the LR scheduler steps once per local update and a step makes `parameter_sync_step` of them (separate_async,
  default 4; 1 otherwise), so the horizon written into `actor.optim.total_training_steps` is
  `total_training_steps x parameter_sync_step`; separate_async asserts `train_batch_size == parameter_sync_step x
  ppo_mini_batch_size`;
- the loop (`fit`, read from source): `while epoch < total_epochs and global_steps <= total_training_steps`, epoch =
  `(global_steps - 1) // steps_per_epoch`; validation and checkpoints as in the legacy trainer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_release, check_rows, ending_at, event_steps
from trainsteps.schedule import Trap
from trainsteps.steps import Steps
from trainsteps.versions import Timeline, as_version

NEWEST = "0.9.1"
OLDEST = "0.3.0"
"""The oldest release whose rules are modelled."""
RECORDED = ("0.3.0.post1", "0.4.1", "0.5.0", "0.6.1", "0.7.1", "0.8.0", "0.9.1")
"""Releases whose code was run for the fixtures in tests/fixtures/rl/."""

GEN_BATCH_SIZE = Timeline("verl.gen_batch_size", [("0.3.0", False), ("0.4.0", True)])
"""Whether the train loader's batch can be `data.gen_batch_size` (added for DAPO in 0.4)."""
TRAIN_MAX_SAMPLES = Timeline("verl.train_max_samples", [("0.3.0", False), ("0.6.0", True)])
"""Whether `data.train_max_samples` exists."""
SCHEDULER_KEY = Timeline("verl.scheduler_key", [("0.3.0", "warmup_style"), ("0.6.0", "lr_scheduler_type")])
"""Name of the LR schedule's type in `actor.optim` (constant or cosine)."""
LR_STEP_AT = Timeline("verl.lr_step_at", [("0.3.0", "update_actor"), ("0.8.0", "last_mini_batch")])
"""Where the actor's scheduler steps: after `update_policy` in the FSDP workers, or on the last mini-batch of the
engine workers' `train_mini_batch`. Either way once per training step."""
UNEVEN_MINI_BATCH = Timeline("verl.uneven_mini_batch", [("0.3.0", "short_last"), ("0.8.0", "assert")])
"""A rank's responses that mini-batches do not divide: the FSDP workers' `split` makes a short last mini-batch (up to
0.7, the default `use_legacy_worker_impl: auto`); the engine workers' iterator asserts divisibility (0.8+)."""
USE_V1 = Timeline("verl.use_v1", [("0.3.0", False), ("0.9.0", True)])
"""Whether main_ppo runs the v1 trainer by default (`trainer.use_v1`, 0.9.0+; earlier releases have no v1 trainer)."""
FILTER_DEFAULT = Timeline("verl.filter_overlong_prompts", [("0.3.0", False)])
"""`data.filter_overlong_prompts` in the config main_ppo composes (ppo_trainer.yaml, `_generated_ppo_trainer.yaml` from
0.5; tests/fixtures/rl/defaults-verl.json). RLHFDataset's own fallback (True from 0.5) never applies: the key is set."""
TRUNCATION_DEFAULT = Timeline("verl.truncation", [("0.3.0", "error")])
"""`data.truncation` in the composed config: a prompt over max_prompt_length raises and stops the run."""

ALGORITHMS = {"gae": "PPO", "grpo": "GRPO", "rloo": "RLOO", "reinforce_plus_plus": "REINFORCE++", "remax": "ReMax",
              "reinforce_plus_plus_baseline": "REINFORCE++ (baseline)", "opo": "OPO", "grpo_passk": "GRPO pass@k",
              "gpg": "GPG", "optimal_token_baseline": "OTB"}


@dataclass(slots=True)
class VerlSpec:
    """What a verl PPO-family run sets (Hydra keys of ppo_trainer.yaml)."""

    prompts: int
    """Rows of `data.train_files` (before `train_max_samples` and the long-prompt filter unless `prompts_filtered`)."""
    train_batch_size: int = 1024
    """`data.train_batch_size`: prompts per training step."""
    rollout_n: int = 1
    """`actor_rollout_ref.rollout.n`: responses per prompt (GRPO: the group size)."""
    ppo_mini_batch_size: int = 256
    """`actor_rollout_ref.actor.ppo_mini_batch_size`, in prompts (x n responses)."""
    ppo_epochs: int = 1
    """`actor_rollout_ref.actor.ppo_epochs`: passes over one step's responses."""
    total_epochs: int = 30
    """`trainer.total_epochs`: passes over the prompts."""
    total_training_steps: int | None = None
    """`trainer.total_training_steps`: replaces len(loader) x total_epochs when set."""
    gen_batch_size: int | None = None
    """`data.gen_batch_size` (0.4+; DAPO): prompts per generation batch, the train loader's batch."""
    train_max_samples: int = -1
    """`data.train_max_samples` (0.6+): keep this many prompts (-1: all)."""
    prompts_filtered: int | None = None
    """Prompts left after `filter_overlong_prompts`, when the data and the tokenizer were read."""
    filter_overlong_prompts: bool | None = None
    """`data.filter_overlong_prompts`; None: the release's default."""
    truncation: str | None = None
    """`data.truncation` (error, left, right, middle); None: the release's default."""
    max_prompt_length: int = 512
    """`data.max_prompt_length`."""
    max_response_length: int | None = None
    """`data.max_response_length`: bounds the tokens generated."""
    n_gpus_per_node: int = 8
    """`trainer.n_gpus_per_node`."""
    nnodes: int = 1
    """`trainer.nnodes`."""
    ulysses_sequence_parallel_size: int = 1
    """`actor_rollout_ref.actor.ulysses_sequence_parallel_size`: ranks sharing one sequence (dp = GPUs / this)."""
    adv_estimator: str = "gae"
    """`algorithm.adv_estimator`: gae (PPO, with a critic), grpo, rloo, reinforce_plus_plus, ..."""
    critic_enable: bool | None = None
    """`critic.enable` (0.6+), else a critic exactly when adv_estimator is gae."""
    critic_ppo_mini_batch_size: int | None = None
    """`critic.ppo_mini_batch_size` (defaults to the actor's)."""
    critic_ppo_epochs: int | None = None
    """`critic.ppo_epochs` (defaults to the actor's)."""
    critic_warmup: int = 0
    """`trainer.critic_warmup`: the actor is not updated before this step."""
    lr_warmup_steps: int = -1
    """`actor.optim.lr_warmup_steps`: positive values win over the ratio."""
    lr_warmup_steps_ratio: float = 0.0
    """`actor.optim.lr_warmup_steps_ratio`."""
    lr_scheduler_type: str = "constant"
    """`actor.optim.lr_scheduler_type` (`warmup_style` before 0.6): constant or cosine."""
    test_freq: int = -1
    """`trainer.test_freq`."""
    save_freq: int = -1
    """`trainer.save_freq`."""
    val_before_train: bool = True
    """`trainer.val_before_train`."""
    filter_groups: bool = False
    """`algorithm.filter_groups.enable` (DAPO dynamic sampling)."""
    max_num_gen_batches: int = 0
    """`algorithm.filter_groups.max_num_gen_batches` (0: no limit)."""
    multi_turn: bool = False
    """`actor_rollout_ref.rollout.multi_turn.enable`: agent or tool-calling rollouts of several assistant turns."""
    max_assistant_turns: int | None = None
    """`actor_rollout_ref.rollout.multi_turn.max_assistant_turns` (None: verl's default, no cap)."""
    use_v1: bool | None = None
    """`trainer.use_v1` (0.9+): the v1 trainer; None: the release's default."""
    v1_trainer_mode: str = "sync"
    """`trainer.v1.trainer_mode`: sync, colocate_async or separate_async."""
    parameter_sync_step: int | None = None
    """`trainer.v1.separate_async.parameter_sync_step` (default 4; local updates per step in separate_async)."""
    version: str = NEWEST
    """verl release."""


def data_parallel_size(spec: VerlSpec) -> int:
    """Ranks that share a step's responses: GPUs / Ulysses sequence-parallel size."""
    return max(spec.n_gpus_per_node * spec.nnodes // max(spec.ulysses_sequence_parallel_size, 1), 1)


def updates_per_step(batch_prompts: int, mini_prompts: int, n: int, epochs: int, dp: int, version: str = NEWEST) -> int:
    """Optimizer steps of one update on one rank: its share of the responses in mini-batches of `mini x n / dp`
    (fsdp_workers: `ppo_mini_batch_size *= n; //= dp`), the last one short if it does not divide (up to 0.7; 0.8+
    stops with verl's own assertion); `epochs` passes."""
    per_rank = batch_prompts * n // dp
    mini = mini_prompts * n // dp
    if (mini_prompts * n) % dp and UNEVEN_MINI_BATCH.at(version) == "assert":  # engine_workers.train_mini_batch
        raise ValueError(f"verl {version} asserts \"Got mini_batch_size={mini_prompts * n} and "
                         f"self.engine.get_data_parallel_size()={dp}\": ppo_mini_batch_size x n must divide by the "
                         "data-parallel ranks")
    if mini <= 0:
        raise ValueError(f"ppo_mini_batch_size {mini_prompts} x n {n} / {dp} data-parallel ranks is 0: verl's workers "
                         "assert ppo_mini_batch_size > 0 after normalization")
    if per_rank % mini and UNEVEN_MINI_BATCH.at(version) == "assert":
        raise ValueError(f"verl {version} asserts \"{per_rank} % {mini} != 0\": each rank's {per_rank} responses must split into "
                         f"whole mini-batches of ppo_mini_batch_size x n / dp = {mini}")
    return math.ceil(per_rank / mini) * epochs


def prompts_after_max_samples(rows: int, max_samples: int, version: str) -> int:
    """`RLHFDataset`: `train_max_samples` keeps that many rows when it is positive and smaller (0.6+)."""
    if TRAIN_MAX_SAMPLES.at(version) and 0 < max_samples < rows:
        return max_samples
    return rows


def plan_verl(spec: VerlSpec) -> RLPlan:
    version = check_release("verl", spec.version, OLDEST)
    check_rows(spec.prompts)
    d = Derivation()
    warnings: list[Trap] = []
    if as_version(version) > as_version(NEWEST):
        warnings.append(Trap("VERL_NEWER_THAN_KNOWN", "verl.warn.newer", {"version": version, "newest": NEWEST}))
    rows = d.given("prompt_rows", spec.prompts)
    prompts = prompts_after_max_samples(rows, spec.train_max_samples, version)
    if prompts != rows:
        d.add("prompts_sampled", prompts, "min(rows, train_max_samples)", f"min({rows}, {spec.train_max_samples})", "verl.why.max_samples")
    filtering = FILTER_DEFAULT.at(version) if spec.filter_overlong_prompts is None else spec.filter_overlong_prompts
    if filtering:
        if spec.prompts_filtered is not None:
            prompts = d.add("prompts_kept", spec.prompts_filtered, "prompts with chat-templated tokens <= max_prompt_length",
                            f"{prompts} prompts, max_prompt_length {spec.max_prompt_length}", "verl.why.filter_counted")
        else:
            warnings.append(Trap("VERL_FILTER_NOT_COUNTED", "verl.warn.filter_not_counted",
                                 {"prompts": f"{prompts:,}", "max_prompt_length": spec.max_prompt_length}))
    elif (spec.truncation or TRUNCATION_DEFAULT.at(version)) == "error":
        warnings.append(Trap("VERL_LONG_PROMPT_STOPS", "verl.warn.truncation_error", {"max_prompt_length": spec.max_prompt_length}))
    if spec.multi_turn:
        # the step time plans one turn: the per-turn cost has not earned its place in the RL fit (timing.rl.TURN_SECONDS)
        warnings.append(Trap("VERL_MULTI_TURN_AS_ONE_TURN", "verl.warn.multi_turn",
                             {"turns": spec.max_assistant_turns or "null"}))  # verl's own default, in either language
    gen_batch = spec.gen_batch_size if GEN_BATCH_SIZE.at(version) and spec.gen_batch_size else None
    v1 = _v1(spec, d)
    sync_step = 1
    if v1:
        mode = spec.v1_trainer_mode
        if mode not in ("sync", "colocate_async", "separate_async"):
            raise ValueError(f"verl {version} v1: Unknown trainer '{mode}'. Available trainers: colocate_async, separate_async, sync.")
        if mode == "separate_async":
            sync_step = spec.parameter_sync_step or 4
            if spec.train_batch_size != sync_step * spec.ppo_mini_batch_size:
                raise ValueError("train_batch_size must equal parameter_sync_step * ppo_mini_batch_size in separate async "
                                 f"mode: train_batch_size={spec.train_batch_size}, parameter_sync_step={sync_step}, "
                                 f"ppo_mini_batch_size={spec.ppo_mini_batch_size}")
        if mode != "sync" or spec.filter_groups:
            gen_batch = 1  # exact refill: one prompt per fetch
    loader_batch = gen_batch or spec.train_batch_size
    loader_length = d.add("len_train_dataloader", prompts // loader_batch, "floor(prompts / batch)  (drop_last=True)",
                          f"floor({prompts} / {loader_batch})", "verl.why.loader", batch_key="gen_batch_size" if gen_batch else "train_batch_size")
    steps_per_epoch = loader_length
    if v1:
        steps_per_epoch = d.add("steps_per_epoch", prompts // spec.train_batch_size, "floor(prompts / train_batch_size)",
                                f"floor({prompts} / {spec.train_batch_size})", "verl.why.v1_steps_per_epoch")
        loader_batch = spec.train_batch_size
    if steps_per_epoch == 0:  # legacy: _create_dataloader asserts; v1: fit() divides by steps_per_epoch
        raise ValueError(f"verl {version} stops before step 1: {prompts} prompts make no full batch of {loader_batch} "
                         + ("(ZeroDivisionError: steps_per_epoch = len(train_dataset) // train_batch_size = 0)" if v1 else
                            "(AssertionError: Train dataloader is empty!)"))
    natural = steps_per_epoch * spec.total_epochs
    d.add("loader_steps", natural, "len(train_dataloader) x total_epochs", f"{steps_per_epoch} x {spec.total_epochs}")
    total = natural
    if spec.total_training_steps is not None:
        total = d.add("total_training_steps", spec.total_training_steps, "trainer.total_training_steps", "", "verl.why.override")
    else:
        d.add("total_training_steps", total, "len(train_dataloader) x total_epochs" if not v1 else "steps_per_epoch x total_epochs",
              f"{steps_per_epoch} x {spec.total_epochs}", "verl.why.v1_total" if v1 else "verl.why.total")
    ran = d.add("training_steps", min(total, natural), "min(total_training_steps, len(loader) x total_epochs)",
                f"min({total}, {natural})", "verl.why.loop")
    upper = False
    if spec.filter_groups:
        upper = True
        per_step = math.ceil(spec.train_batch_size / loader_batch)  # v1: steps already count train batches (1)
        bound = natural // per_step
        ran = d.add("training_steps_at_most", min(ran, bound), "floor(generation batches / ceil(train_batch_size / gen_batch_size))",
                    f"floor({natural} / {per_step})", "verl.why.dynamic_sampling")
        warnings.append(Trap("VERL_DYNAMIC_SAMPLING", "verl.warn.dynamic_sampling", {"bound": f"{ran:,}", "total": f"{total:,}"}))
    dp = data_parallel_size(spec)
    n = spec.rollout_n
    per_step = updates_per_step(spec.train_batch_size, spec.ppo_mini_batch_size, n, spec.ppo_epochs, dp, version)
    d.add("actor_updates_per_step", per_step, "ceil((train_batch_size x n / dp) / (ppo_mini_batch_size x n / dp)) x ppo_epochs",
          f"ceil(({spec.train_batch_size} x {n} / {dp}) / ({spec.ppo_mini_batch_size} x {n} / {dp})) x {spec.ppo_epochs}",
          "verl.why.updates")
    skipped = min(max(spec.critic_warmup - 1, 0), ran)
    actor_steps = ran - skipped
    optimizer_steps = d.add("actor_optimizer_steps", per_step * actor_steps, "updates per step x steps that update the actor",
                            f"{per_step} x {actor_steps}", "verl.why.critic_warmup" if skipped else None, skipped=skipped)
    critic = spec.critic_enable if spec.critic_enable is not None else spec.adv_estimator == "gae"
    critic_per_step = critic_steps = None
    if critic:
        mini = spec.critic_ppo_mini_batch_size or spec.ppo_mini_batch_size
        epochs = spec.critic_ppo_epochs or spec.ppo_epochs
        critic_per_step = updates_per_step(spec.train_batch_size, mini, n, epochs, dp, version)
        critic_steps = d.add("critic_optimizer_steps", critic_per_step * ran, "critic updates per step x training steps",
                             f"{critic_per_step} x {ran}", "verl.why.critic")
    taken = actor_steps
    if sync_step > 1:
        total, taken = total * sync_step, taken * sync_step
        d.add("scheduler_steps", total, "total_training_steps x parameter_sync_step (one scheduler step per local update)",
              f"{total // sync_step} x {sync_step}", "verl.why.v1_scheduler", sync=sync_step)
    else:
        d.add("scheduler_steps", total, "total_training_steps (one scheduler step per training step)", str(total), "verl.why.scheduler")
    warmup = spec.lr_warmup_steps if spec.lr_warmup_steps > 0 else int(spec.lr_warmup_steps_ratio * total)
    d.add("warmup_steps", warmup, "lr_warmup_steps if > 0 else int(lr_warmup_steps_ratio x total_training_steps)",
          f"{spec.lr_warmup_steps}" if spec.lr_warmup_steps > 0 else f"int({spec.lr_warmup_steps_ratio} x {total})", "verl.why.warmup")
    if taken < total:
        if spec.lr_scheduler_type == "cosine" or warmup > taken:
            warnings.append(Trap("VERL_SCHEDULE_NOT_FINISHED", "verl.warn.schedule_longer",
                                 {"taken": f"{taken:,}", "total": f"{total:,}", "kind": spec.lr_scheduler_type}))
        else:
            warnings.append(Trap("VERL_SCHEDULE_LONGER", "verl.warn.schedule_longer_constant", {"taken": f"{taken:,}", "total": f"{total:,}"}))
    if ran < natural and not upper:
        warnings.append(Trap("VERL_STOPS_BEFORE_EPOCHS", "verl.warn.stops_early",
                             {"steps": f"{ran:,}", "epoch": f"{ran / max(steps_per_epoch, 1):.2f}", "epochs": spec.total_epochs}))
    if prompts % loader_batch and steps_per_epoch:
        warnings.append(Trap("VERL_DROP_LAST", "verl.warn.drop_last", {"dropped": prompts % loader_batch, "batch": loader_batch}))
    if (spec.train_batch_size * n) % dp or (spec.ppo_mini_batch_size * n) % dp:
        warnings.append(Trap("VERL_BATCH_NOT_DIVISIBLE", "verl.warn.not_divisible", {"dp": dp, "n": n}))
    rollouts_per_step = spec.train_batch_size * n
    rollouts = d.add("rollouts", rollouts_per_step * ran, "train_batch_size x n x training steps",
                     f"{spec.train_batch_size} x {n} x {ran}")
    test_steps = event_steps(spec.test_freq, ran, name="trainer.test_freq")
    if spec.val_before_train:
        test_steps = Steps([0]) + test_steps
    first_actor_step = skipped + 1
    save_steps = event_steps(spec.save_freq, ran, name="trainer.save_freq").at_least(first_actor_step)
    epochs_done = ran / steps_per_epoch if steps_per_epoch else 0.0
    run = RLRun(
        training_steps=ran, optimizer_steps=optimizer_steps, scheduler_steps=total, scheduler_steps_taken=taken,
        warmup_steps=warmup, rollouts=rollouts, rollouts_per_step=rollouts_per_step, prompts_per_step=spec.train_batch_size,
        prompts=prompts, steps_per_epoch=steps_per_epoch, epochs_planned=float(spec.total_epochs),
        epochs_completed=round(epochs_done, 4), updates_per_step=per_step, critic_optimizer_steps=critic_steps,
        critic_updates_per_step=critic_per_step, test_steps=test_steps, save_steps=save_steps, upper_bound=upper,
        response_tokens_max=rollouts * spec.max_response_length if spec.max_response_length else None,
    )
    horizon, total = total, total // sync_step
    notions = [
        Notion("verl.what.total_line", "training", total),
        Notion("verl.what.logged_step", "training", ran),
        Notion("verl.what.checkpoint", "training", save_steps[-1] if save_steps else None),
        Notion("verl.what.progress_bar", "training", total),
        Notion("verl.what.warmup", "scheduler", warmup),
        Notion("verl.what.decay", "scheduler", horizon),
        Notion("verl.what.actor_updates", "optimizer", optimizer_steps),
    ]
    printed = ({"Total training steps": str(total)} if v1 else  # v1 logs the loader's size as "train dataset size"
               {"Size of train dataloader": str(steps_per_epoch), "Total training steps": str(total)})
    recorded = version in RECORDED
    sources = [f"verl {version}: " + ("dataloader, total_training_steps and actor mini-batches run (tools/record_rl.py)"
                                      if recorded else f"rules of the nearest recorded release ({NEWEST})")]
    if v1:
        sources.append(f"v1 trainer ({spec.v1_trainer_mode}): PPOTrainer._init_dataloader run on 0.9.1; its fit() loop read from source")
    if spec.filter_groups:
        sources.append("DAPO dynamic sampling: read from recipe/dapo (not run)")
    return RLPlan("verl", version, printed, run, notions, warnings, d, inputs=_inputs(spec),
                  algorithm=("DAPO" if spec.filter_groups else ALGORITHMS.get(spec.adv_estimator, spec.adv_estimator)), sources=sources)


def _v1(spec: VerlSpec, d: Derivation) -> bool:
    """Whether the run uses the v1 trainer: `trainer.use_v1`, default true from 0.9.0 (no v1 trainer before)."""
    default = USE_V1.at(spec.version)
    v1 = default if spec.use_v1 is None else bool(spec.use_v1) and default
    d.given("trainer", "v1" if v1 else "RayPPOTrainer", "verl.why.v1" if v1 else None)
    return v1


def _inputs(spec: VerlSpec) -> dict:
    return {name: getattr(spec, name) for name in VerlSpec.__slots__}


@dataclass(slots=True)
class VerlSFTSpec:
    """verl's SFT trainer (`python -m verl.trainer.sft_trainer`, sft_trainer_engine.yaml), read from 0.9.1's source."""

    rows: int
    """Rows of data.train_files."""
    train_batch_size: int = 256
    """data.train_batch_size: the global batch (split over data-parallel ranks)."""
    total_epochs: int = 4
    total_training_steps: int | None = None
    n_gpus: int = 8
    """Data-parallel ranks (GPUs / sequence-parallel size)."""
    save_freq: int | str = -1
    """trainer.save_freq: steps, or "after_each_epoch"."""
    test_freq: int | str = -1
    lr_warmup_steps_ratio: float = 0.0
    version: str = NEWEST
    trainer: str = "sft_trainer"
    """`sft_trainer` (0.6+) or the older `fsdp_sft_trainer` (0.3-0.6, removed in 0.7)."""


FSDP_SFT = Timeline("verl.fsdp_sft", [("0.3.0", "epoch_end"), ("0.4.0", "freq"), ("0.7.0", None)])
"""verl.trainer.fsdp_sft_trainer: 0.3 validates and saves at every epoch end (and at total_training_steps); 0.4-0.6
at `test_freq` / `save_freq` and at total_training_steps; removed in 0.7."""


def plan_verl_fsdp_sft(spec: VerlSFTSpec) -> RLPlan:
    """`FSDPSFTTrainer` (0.3-0.6): the loader is the SFT trainer's (each rank rows // dp, batch train_batch_size // dp,
    drop_last; run for the fixtures), but `_build_model_optimizer` builds the cosine (or wsd) schedule over
    `len(loader) x total_epochs` with warmup `int(that x warmup ratio)` (default 0.1) before `fit` reads
    `trainer.total_training_steps`: an override changes where the loop stops, not the schedule (read from source)."""
    check_release("verl", spec.version, OLDEST)
    check_rows(spec.rows)
    events = FSDP_SFT.at(spec.version)
    if events is None:
        raise ValueError(f"verl {spec.version} has no verl.trainer.fsdp_sft_trainer (removed in 0.7): use verl.trainer.sft_trainer")
    d = Derivation()
    dp = max(spec.n_gpus, 1)
    if spec.train_batch_size % dp:
        raise ValueError(f"Global batch size {spec.train_batch_size} is not divisible by dp size {dp}")
    per_dp_batch = spec.train_batch_size // dp
    length = d.add("len_train_dataloader", (spec.rows // dp) // per_dp_batch, "floor((rows // dp) / (train_batch_size // dp))",
                   f"floor(({spec.rows} // {dp}) / ({spec.train_batch_size} // {dp}))", "verl.why.sft_loader")
    natural = length * spec.total_epochs
    total = spec.total_training_steps if spec.total_training_steps is not None else natural
    d.add("total_training_steps", total, "len(train_dataloader) x total_epochs (or trainer.total_training_steps)", f"{length} x {spec.total_epochs}")
    ran = min(total, natural)
    horizon = d.add("scheduler_steps", natural, "len(train_dataloader) x total_epochs (the override is not read)",
                    f"{length} x {spec.total_epochs}", "verl.why.fsdp_sft_horizon")
    warmup = d.add("warmup_steps", int(spec.lr_warmup_steps_ratio * natural), "int(len(loader) x total_epochs x warmup ratio)",
                   f"int({natural} x {spec.lr_warmup_steps_ratio})")
    warnings = []
    if ran < horizon:
        warnings.append(Trap("VERL_SCHEDULE_NOT_FINISHED", "verl.warn.schedule_longer", {"taken": f"{ran:,}", "total": f"{horizon:,}", "kind": "cosine"}))
    ends = ran >= total  # fit() validates and saves when global_step reaches total_training_steps
    if events == "epoch_end":
        marks = event_steps(length, ran, name="trainer.total_epochs", at_end=False)
        test_steps = save_steps = ending_at(marks, ran) if ends else marks
    else:
        freq = {name: int(value) for name, value in (("save", spec.save_freq), ("test", spec.test_freq))}
        test_steps = event_steps(freq["test"], ran, name="trainer.test_freq", at_end=False)
        save_steps = event_steps(freq["save"], ran, name="trainer.save_freq", at_end=False)
        if ends:  # fit() also validates and saves at the last step
            test_steps, save_steps = ending_at(test_steps, ran), ending_at(save_steps, ran)
    if not ends:
        warnings.append(Trap("VERL_FSDP_SFT_NO_FINAL", "verl.warn.fsdp_sft_no_final", {"steps": f"{ran:,}", "total": f"{total:,}"}))
    samples = ran * per_dp_batch * dp
    d.add("samples", samples, "training steps x (train_batch_size // dp) x dp", f"{ran} x {per_dp_batch} x {dp}")
    run = RLRun(training_steps=ran, optimizer_steps=ran, scheduler_steps=horizon, scheduler_steps_taken=ran, warmup_steps=warmup,
                rollouts=0, rollouts_per_step=0, prompts_per_step=per_dp_batch * dp, prompts=spec.rows, steps_per_epoch=length,
                epochs_planned=float(spec.total_epochs), epochs_completed=round(ran / length, 4) if length else 0.0, updates_per_step=1,
                test_steps=test_steps, save_steps=save_steps)
    notions = [Notion("verl.what.total_line", "training", total), Notion("verl.what.logged_step", "optimizer", ran),
               Notion("verl.what.decay", "scheduler", horizon)]
    return RLPlan("verl-sft", spec.version, {"Total training steps": str(total)}, run, notions, warnings, d,
                  inputs={k: getattr(spec, k) for k in VerlSFTSpec.__slots__}, algorithm="SFT (fsdp_sft_trainer)",
                  sources=[f"verl {spec.version} fsdp_sft_trainer: the loader run (tools/record_rl.py); schedule and loop read from source"])


def plan_verl_sft(spec: VerlSFTSpec) -> RLPlan:
    """`SFTTrainer._build_dataset`: DistributedSampler(drop_last=True) gives each rank rows // dp; the loader's batch is
    train_batch_size // dp with drop_last; `_init_engine`: total = len(loader) x total_epochs (or the override); one
    optimizer and one LR step per global step; "after_each_epoch" frequencies become len(loader)."""
    if spec.trainer == "fsdp_sft_trainer":
        return plan_verl_fsdp_sft(spec)
    check_release("verl", spec.version, OLDEST)
    check_rows(spec.rows)
    d = Derivation()
    dp = max(spec.n_gpus, 1)
    per_rank = spec.rows // dp
    per_dp_batch = spec.train_batch_size // dp
    if per_dp_batch == 0:
        raise ValueError(f"train_batch_size {spec.train_batch_size} // {dp} data-parallel ranks is 0: the loader has no batch size")
    length = d.add("len_train_dataloader", per_rank // per_dp_batch, "floor((rows // dp) / (train_batch_size // dp))",
                   f"floor(({spec.rows} // {dp}) / ({spec.train_batch_size} // {dp}))", "verl.why.sft_loader")
    natural = length * spec.total_epochs
    total = spec.total_training_steps if spec.total_training_steps is not None else natural
    d.add("total_training_steps", total, "len(train_dataloader) x total_epochs (or trainer.total_training_steps)", f"{length} x {spec.total_epochs}")
    ran = min(total, natural)
    warmup = int(spec.lr_warmup_steps_ratio * total)
    freq = {name: (length if value == "after_each_epoch" else int(value)) for name, value in (("save", spec.save_freq), ("test", spec.test_freq))}
    warnings = []
    if ran < total:
        warnings.append(Trap("VERL_SCHEDULE_NOT_FINISHED", "verl.warn.schedule_longer", {"taken": f"{ran:,}", "total": f"{total:,}", "kind": "LR"}))
    samples = ran * per_dp_batch * dp
    run = RLRun(training_steps=ran, optimizer_steps=ran, scheduler_steps=total, scheduler_steps_taken=ran, warmup_steps=warmup,
                rollouts=0, rollouts_per_step=0, prompts_per_step=per_dp_batch * dp, prompts=spec.rows, steps_per_epoch=length,
                epochs_planned=float(spec.total_epochs), epochs_completed=round(ran / length, 4) if length else 0.0, updates_per_step=1,
                test_steps=event_steps(freq["test"], ran, name="trainer.test_freq"),
                save_steps=event_steps(freq["save"], ran, name="trainer.save_freq"))
    d.add("samples", samples, "training steps x (train_batch_size // dp) x dp", f"{ran} x {per_dp_batch} x {dp}")
    notions = [Notion("verl.what.total_line", "training", total), Notion("verl.what.logged_step", "optimizer", ran),
               Notion("verl.what.decay", "scheduler", total)]
    return RLPlan("verl-sft", spec.version, {"Total training steps": str(total)}, run, notions, warnings, d,
                  inputs={k: getattr(spec, k) for k in VerlSFTSpec.__slots__}, algorithm="SFT",
                  sources=[f"verl {spec.version} sft_trainer: rules read from 0.9.1's source (not run)"])

"""ROLL (alibaba/ROLL, `python examples/start_rlvr_pipeline.py --config_name rlvr_config`): pipeline steps of
`rollout_batch_size` prompts x `num_return_sequences_in_group` responses.

Read from the source at 8eb27cc (2026-08-19) and 9744713 (2026-01-28); `set_max_steps`, the checkpoint condition and
the evaluation condition were run by tools/record_rl_stacks.py (the pipeline itself needs Ray and the engines):

- `roll/pipeline/rlvr/rlvr_pipeline.py:483-487, 528 run`: `for global_step in range(max_steps)` (default 500), skipping the steps up
  to a resumed `state.step` (-1 when fresh); evaluation where `global_step % eval_steps == 0` (default 10), before the
  step's generation; `do_checkpoint` (base_pipeline.py:103-111) saves after step g when `g > 0` and `g % save_steps == 0` or g is
  the last (default 50). There are no epochs: prompts cycle, `dataset epoch` is logged at each wrap.
- `roll/configs/base_config.py:748-775 set_max_steps`: the actor's optimizer horizon is `max(1, max_steps x rollout_batch_size x
  n x ppo_epochs // (per_device_train_batch_size x gradient_accumulation_steps))` from v0.2.0 (2026-02-04), and
  `max_steps x (rollout_batch_size x n x ppo_epochs // (per-device x accumulation))` before; logged as "actor train
  max_steps without dp_size", then divided by the data-parallel size at strategy init (fsdp2/megatron strategy).
- per step (read, the strategies' train loops) each rank takes `(rollout_batch_size x n / dp) // (per_device_train_batch_size x gradient_accumulation_steps)`
  optimizer steps, `ppo_epochs` times.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_settings, event_steps
from trainsteps.frameworks.rollout_shape import rollout_shape
from trainsteps.schedule import Trap

VERSION = "8eb27cc (2026-08-19)"
NEWEST = "0.3.0"
OLDEST = "0.1.0"
FLOOR_OF_WHOLE_RUN = "0.2.0"
"""The release whose actor horizon floors the whole run's samples (before: max_steps x the floor of one step's)."""


@dataclass(slots=True)
class RollSpec:
    """What a ROLL RLVR config sets (its dataclass defaults)."""

    max_steps: int = 500
    rollout_batch_size: int = 128
    num_return_sequences_in_group: int = 1
    ppo_epochs: int = 1
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 1
    dp: int = 1
    eval_steps: int = 10
    save_steps: int = 50
    has_val_dataset: bool = False
    resumed_step: int = -1
    prompt_length: int | None = None
    response_length: int | None = None
    train_gpus: int = 1
    infer_gpus: int | None = None
    """GPUs of actor_infer when they are not the training GPUs (None: colocated)."""
    asynchronous: bool = False
    """async_generation_ratio > 0: generation runs ahead of training."""
    release: str = NEWEST


KEYS = {"max_steps": "max_steps", "rollout_batch_size": "rollout_batch_size", "num_return_sequences_in_group": "num_return_sequences_in_group",
        "ppo_epochs": "ppo_epochs", "per_device_train_batch_size": "actor_train.training_args.per_device_train_batch_size",
        "gradient_accumulation_steps": "actor_train.training_args.gradient_accumulation_steps", "dp": "data-parallel size",
        "eval_steps": "eval_steps", "save_steps": "save_steps"}


def plan_roll(spec: RollSpec) -> RLPlan:
    check_settings(spec, KEYS, positive=("max_steps", "rollout_batch_size", "num_return_sequences_in_group", "ppo_epochs",
                                         "per_device_train_batch_size", "gradient_accumulation_steps", "dp", "eval_steps", "save_steps"))
    d = Derivation()
    warnings: list[Trap] = []
    steps = d.add("training_steps", max(spec.max_steps - (spec.resumed_step + 1), 0), "max_steps - (resumed step + 1)",
                  f"{spec.max_steps} - ({spec.resumed_step} + 1)")
    samples = spec.rollout_batch_size * spec.num_return_sequences_in_group
    backward = spec.per_device_train_batch_size * spec.gradient_accumulation_steps
    per_rank = samples // spec.dp
    per_step = d.add("actor_updates_per_step", per_rank // backward * spec.ppo_epochs,
                     "(rollout_batch_size x n / dp) // (per_device_train_batch_size x gradient_accumulation_steps) x ppo_epochs",
                     f"({samples} / {spec.dp}) // {backward} x {spec.ppo_epochs}")
    if per_step == 0:
        raise ValueError(f"each rank gets {per_rank} samples, fewer than one backward batch of {backward}: no optimizer step")
    from trainsteps.frameworks.rl import check_release
    from trainsteps.versions import Version

    release = check_release("ROLL", spec.release, OLDEST)
    if Version.parse(release) >= Version.parse(FLOOR_OF_WHOLE_RUN):
        without_dp = d.add("actor_max_steps_without_dp", max(1, spec.max_steps * samples * spec.ppo_epochs // backward),
                           "max(1, max_steps x rollout_batch_size x n x ppo_epochs // (per_device x accumulation))",
                           f"max(1, {spec.max_steps} x {samples} x {spec.ppo_epochs} // {backward})")
    else:
        without_dp = d.add("actor_max_steps_without_dp", spec.max_steps * (samples * spec.ppo_epochs // backward),
                           "max_steps x (rollout_batch_size x n x ppo_epochs // (per_device x accumulation))",
                           f"{spec.max_steps} x ({samples} x {spec.ppo_epochs} // {backward})")
    horizon = d.add("lr_total_steps", without_dp // spec.dp, "actor max_steps // dp_size", f"{without_dp} // {spec.dp}")
    taken = per_step * spec.max_steps
    if taken != horizon:
        warnings.append(Trap("ROLL_LR_HORIZON", "roll.warn.horizon", {"taken": f"{taken:,}", "horizon": f"{horizon:,}"}))
    optimizer = d.add("actor_optimizer_steps", per_step * steps, "updates per step x steps", f"{per_step} x {steps}")
    first = spec.resumed_step + 1
    tests = [g for g in [0, *event_steps(spec.eval_steps, spec.max_steps - 1, name="eval_steps", at_end=False)] if g >= first] \
        if spec.has_val_dataset and spec.max_steps > 0 else []
    saves = [g + 1 for g in event_steps(spec.save_steps, spec.max_steps - 1, name="save_steps") if g >= first]
    run = RLRun(
        training_steps=steps, optimizer_steps=optimizer, scheduler_steps=horizon, scheduler_steps_taken=taken, warmup_steps=0,
        rollouts=samples * steps, rollouts_per_step=samples, prompts_per_step=spec.rollout_batch_size, prompts=0, steps_per_epoch=0,
        epochs_planned=0.0, epochs_completed=0.0, updates_per_step=per_step, test_steps=tests, save_steps=saves,
        response_tokens_max=samples * steps * spec.response_length if spec.response_length else None,
    )
    notions = [Notion("roll.what.pipeline_step", "training", spec.max_steps - 1),
               Notion("roll.what.actor_max_steps", "optimizer", without_dp), Notion("verl.what.decay", "scheduler", horizon)]
    shape = rollout_shape(framework="roll", training_steps=steps, prompts_per_step=spec.rollout_batch_size,
                          samples_per_prompt=spec.num_return_sequences_in_group, max_prompt_length=spec.prompt_length,
                          max_response_length=spec.response_length, asynchronous=spec.asynchronous, gpus=spec.train_gpus,
                          rollout_gpus=spec.infer_gpus, ppo_epochs=spec.ppo_epochs)
    inputs = {name: getattr(spec, name) for name in RollSpec.__slots__}
    inputs.update(world_size=spec.train_gpus + (spec.infer_gpus or 0), rollout_shape=shape)
    printed = {"pipeline max_steps": str(spec.max_steps), "actor train max_steps without dp_size": str(without_dp)}
    return RLPlan("roll", release, printed, run, notions, warnings, d, inputs=inputs, algorithm="GRPO",
                  sources=[f"ROLL {VERSION} and 9744713: set_max_steps, do_checkpoint's and the pipeline's evaluation conditions "
                           "run by tools/record_rl_stacks.py; the loop read from roll/pipeline/rlvr/rlvr_pipeline.py"])

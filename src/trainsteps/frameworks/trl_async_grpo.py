"""TRL's AsyncGRPOTrainer (`trl.experimental.async_grpo`, from TRL 1.0.0): a vLLM server generates while the
trainer trains; one step is one optimizer step of `per_device_train_batch_size x gradient_accumulation_steps x
num_processes` completion rows.

Read from the wheels of TRL 1.0.0, 1.8.0, 1.9.0 and 1.16.0; the step lines of `AsyncGRPOTrainer.__init__`
(async_grpo_trainer.py:1248-1266 in 1.16.0, :321-327 in 1.0.0) were run by tools/record_rl_stacks.py:

- `max_steps > 0`: the run stops there (and it is the LR horizon).
- otherwise, before 1.9.0: `max_steps = int(num_train_epochs x len(prompts) x num_generations / samples_per_step)`,
  the run's length and LR horizon (the scheduler is the Trainer's `linear`).
- from 1.9.0: the run stops after `ceil(num_train_epochs x len(prompts))` distinct prompt groups are trained;
  `max_steps = ceil(num_train_epochs x len(prompts) x num_generations x max_rows / samples_per_step)` is only a safety
  ceiling (`max_rows = max_tool_calling_iterations + 1`, else 32: the forks a multi-turn conversation may make), and the
  LR schedule defaults to `constant` because of it. A single-turn run trains `num_generations` rows per group, so it
  stops near `ceil(groups x num_generations / samples_per_step)` steps; forks and stale samples dropped
  (`max_staleness`) move it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_release, check_rows, check_settings, event_steps
from trainsteps.frameworks.rollout_shape import rollout_shape
from trainsteps.schedule import Trap

NEWEST = "1.16.0"
OLDEST = "1.0.0"
EPOCH_STOP = "1.9.0"
"""The first release that stops on distinct prompt groups (and makes max_steps a ceiling)."""


@dataclass(slots=True)
class AsyncGRPOSpec:
    """What an AsyncGRPOConfig sets (its defaults, and TrainingArguments' where it keeps them)."""

    prompts: int | None
    """Prompts in the training set (None: an environment supplies them; max_steps is then required)."""
    release: str = NEWEST
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    num_processes: int = 1
    num_generations: int = 8
    num_train_epochs: float = 3.0
    max_steps: int = -1
    max_tool_calling_iterations: int | None = None
    lr_scheduler_type: str | None = None
    """None: the release's default (constant from 1.9.0, the Trainer's linear before)."""
    warmup_steps: int = 0
    save_steps: int = 500
    save_strategy: str = "steps"
    max_completion_length: int = 2048
    max_staleness: int = 4


KEYS = {"prompts": "num_examples", "per_device_train_batch_size": "per_device_train_batch_size",
        "gradient_accumulation_steps": "gradient_accumulation_steps", "num_processes": "num_processes",
        "num_generations": "num_generations", "num_train_epochs": "num_train_epochs", "save_steps": "save_steps",
        "max_tool_calling_iterations": "max_tool_calling_iterations", "warmup_steps": "warmup_steps",
        "max_completion_length": "max_completion_length"}


def plan_async_grpo(spec: AsyncGRPOSpec) -> RLPlan:
    from trainsteps.versions import Version

    release = check_release("TRL", spec.release, OLDEST)
    check_settings(spec, KEYS, positive=("per_device_train_batch_size", "gradient_accumulation_steps", "num_processes", "num_generations",
                                         "max_completion_length", "prompts", "max_tool_calling_iterations"),
                   above_zero=("num_train_epochs",), non_negative=("warmup_steps", "save_steps"))
    d = Derivation()
    warnings: list[Trap] = []
    per_step = d.add("samples_per_step", spec.per_device_train_batch_size * spec.gradient_accumulation_steps * spec.num_processes,
                     "per_device_train_batch_size x gradient_accumulation_steps x num_processes",
                     f"{spec.per_device_train_batch_size} x {spec.gradient_accumulation_steps} x {spec.num_processes}")
    epoch_stop = Version.parse(release) >= Version.parse(EPOCH_STOP)
    scheduler = spec.lr_scheduler_type or ("constant" if epoch_stop else "linear")
    if spec.max_steps > 0:
        steps = horizon = d.add("max_steps", spec.max_steps, "max_steps (the stop condition)")
    elif spec.prompts is None:
        raise ValueError("AsyncGRPOTrainer needs max_steps when an environment supplies the prompts")
    else:
        prompts = check_rows(d.given("prompt_rows", spec.prompts))
        if epoch_stop:
            rows = (spec.max_tool_calling_iterations + 1) if spec.max_tool_calling_iterations is not None else 32
            horizon = d.add("max_steps", math.ceil(spec.num_train_epochs * prompts * spec.num_generations * rows / per_step),
                            "ceil(num_train_epochs x prompts x num_generations x max_rows / samples per step)  (a safety ceiling)",
                            f"ceil({spec.num_train_epochs} x {prompts} x {spec.num_generations} x {rows} / {per_step})")
            groups = d.add("prompt_groups", math.ceil(spec.num_train_epochs * prompts), "ceil(num_train_epochs x prompts)",
                           f"ceil({spec.num_train_epochs} x {prompts})")
            steps = d.add("training_steps", math.ceil(groups * spec.num_generations / per_step),
                          "ceil(groups x num_generations / samples per step)  (single-turn, nothing dropped)",
                          f"ceil({groups} x {spec.num_generations} / {per_step})")
            warnings.append(Trap("ASYNC_GRPO_EPOCH_STOP", "asyncgrpo.warn.epoch_stop", {"steps": f"{steps:,}", "ceiling": f"{horizon:,}"}))
            if scheduler != "constant":
                warnings.append(Trap("ASYNC_GRPO_LR_CEILING", "asyncgrpo.warn.lr_ceiling", {"scheduler": scheduler,
                                                                                             "ceiling": f"{horizon:,}"}))
        else:
            steps = horizon = d.add("max_steps", int(spec.num_train_epochs * prompts * spec.num_generations / per_step),
                                    "int(num_train_epochs x prompts x num_generations / samples per step)",
                                    f"int({spec.num_train_epochs} x {prompts} x {spec.num_generations} / {per_step})")
    if steps < 1:
        raise ValueError(f"the run has no step: {spec.prompts} prompts x {spec.num_generations} generations fill no batch of {per_step}")
    # the Trainer saves at its last step with save_strategy "steps" (DefaultFlowCallback; the epoch stop does the same)
    saves = event_steps(spec.save_steps, steps, name="save_steps") if spec.save_strategy == "steps" else []
    rows_per_step = per_step
    prompts = spec.prompts or 0
    run = RLRun(
        training_steps=steps, optimizer_steps=steps, scheduler_steps=horizon, scheduler_steps_taken=steps,
        warmup_steps=spec.warmup_steps, rollouts=rows_per_step * steps, rollouts_per_step=rows_per_step,
        prompts_per_step=max(rows_per_step // spec.num_generations, 1), prompts=prompts,
        steps_per_epoch=math.ceil(prompts * spec.num_generations / per_step) if prompts else 0,
        epochs_planned=float(spec.num_train_epochs), epochs_completed=round(steps * per_step / (prompts * spec.num_generations), 4) if prompts else 0.0,
        updates_per_step=1, save_steps=saves, upper_bound=False,
        response_tokens_max=rows_per_step * steps * spec.max_completion_length,
    )
    notions = [Notion("asyncgrpo.what.global_step", "optimizer", steps), Notion("asyncgrpo.what.max_steps", "scheduler", horizon)]
    shape = rollout_shape(framework="trl-async-grpo", training_steps=steps, prompts_per_step=run.prompts_per_step,
                          samples_per_prompt=spec.num_generations, max_response_length=spec.max_completion_length, asynchronous=True,
                          gpus=spec.num_processes, reference=False)
    inputs = {name: getattr(spec, name) for name in AsyncGRPOSpec.__slots__}
    inputs.update(lr_scheduler_type=scheduler, world_size=spec.num_processes, rollout_shape=shape)
    return RLPlan("trl-async-grpo", release, {}, run, notions, warnings, d, inputs=inputs, algorithm="GRPO",
                  sources=[f"TRL {release}: AsyncGRPOTrainer.__init__'s step lines run by tools/record_rl_stacks.py "
                           "(1.0.0, 1.8.0, 1.9.0, 1.16.0)"])

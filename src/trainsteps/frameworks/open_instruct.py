"""open-instruct GRPO (allenai/open-instruct, `python open_instruct/grpo_fast.py --total_episodes ... `).

Read from the source at e6c3044 (2026-08-20) and 8dfe8f2 (2026-02-19); the step count, the scheduler horizon, the
mini-batch split and the eval/save rules were run by tools/record_rl_stacks.py:

- `grpo_fast.py:1032-1034 setup_runtime_variables`: `num_training_steps = total_episodes // (num_unique_prompts_rollout x
  num_samples_per_prompt_rollout)`; `for training_step in range(resume_training_step, num_training_steps + 1)`
  (:1930, read; steps count from 1); an episode is one response.
- `grpo_fast.py:376-383 PolicyTrainerRayProcess.from_pretrained`: `num_scheduler_steps = num_training_steps x num_epochs x num_mini_batches`,
  warmup `int(num_scheduler_steps x warmup_ratio)` (8dfe8f2: `--warm_up_steps` unless `warmup_ratio > 0`).
- `grpo_fast.py:600-608, 651-735 step`: each learner splits its packed sequences into `accumulation_steps = max(ceil(n / num_mini_batches - 0.5), 1)`
  groups and steps the optimizer once per group, `num_epochs` times: `num_mini_batches` updates when the sequences
  divide evenly (the count the scheduler assumes), more or fewer otherwise.
- evaluation (`local_eval_every`, :1937-1944) and saves (`save_freq`, :1664-1666) at steps `k x every` past step 1, and at step 1 with
  `eval_on_step_0` (saves too); a final save after the loop (:2052, read).
- (:2247-2252, read) the training set must hold `max(async_steps, 1) x num_unique_prompts_rollout` prompts; prompts are drawn without
  epochs (the logged epoch is episodes / samples per prompt / prompts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_rows, check_settings, event_steps
from trainsteps.frameworks.rollout_shape import rollout_shape
from trainsteps.schedule import Trap

VERSION = "e6c3044 (2026-08-20)"


@dataclass(slots=True)
class OpenInstructSpec:
    """What an open-instruct grpo_fast.py run sets (defaults of GRPOExperimentConfig and StreamingDataLoaderConfig)."""

    prompts: int | None = None
    """Prompts in the training mix after the length filter (needed for epochs and the dataset-size check)."""
    total_episodes: int = 100000
    """--total_episodes: responses over the run."""
    num_unique_prompts_rollout: int = 16
    """--num_unique_prompts_rollout: prompts per training step."""
    num_samples_per_prompt_rollout: int = 4
    """--num_samples_per_prompt_rollout."""
    num_mini_batches: int = 1
    """--num_mini_batches."""
    num_epochs: int = 1
    """--num_epochs: passes over each step's responses."""
    warmup_ratio: float = 0.0
    """--warmup_ratio (grpo_fast sets 0.0 as its default)."""
    warm_up_steps: int | None = None
    """--warm_up_steps (releases before mid-2026; `warmup_ratio > 0` wins)."""
    local_eval_every: int = 100
    """--local_eval_every (-1: none)."""
    eval_on_step_0: bool = False
    """--eval_on_step_0."""
    save_freq: int = 200
    """--save_freq."""
    resume_training_step: int = 1
    """The step a resumed run starts from."""
    async_steps: int = 8
    """--async_steps (8 since mid-2026, 1 before)."""
    max_prompt_token_length: int = 256
    """--max_prompt_token_length."""
    response_length: int = 256
    """--response_length."""
    learners: int = 1
    """sum(--num_learners_per_node)."""
    vllm_num_engines: int = 1
    """--vllm_num_engines."""
    vllm_tensor_parallel_size: int = 1
    """--vllm_tensor_parallel_size."""
    has_eval_data: bool = True
    """An evaluation mix is given (no evaluations without one)."""
    load_ref_policy: bool = True
    """--load_ref_policy."""


KEYS = {"prompts": "num_examples", "total_episodes": "--total_episodes", "num_unique_prompts_rollout": "--num_unique_prompts_rollout",
        "num_samples_per_prompt_rollout": "--num_samples_per_prompt_rollout", "num_mini_batches": "--num_mini_batches",
        "num_epochs": "--num_epochs", "warmup_ratio": "--warmup_ratio", "warm_up_steps": "--warm_up_steps",
        "resume_training_step": "resume step", "async_steps": "--async_steps", "response_length": "--response_length",
        "max_prompt_token_length": "--max_prompt_token_length", "learners": "--num_learners_per_node",
        "vllm_num_engines": "--vllm_num_engines", "vllm_tensor_parallel_size": "--vllm_tensor_parallel_size"}


def updates_per_pass(sequences: int, num_mini_batches: int) -> int:
    """Optimizer steps one learner takes in one pass over its `sequences` packed sequences (grpo_fast `train`)."""
    accumulation = max(math.ceil(sequences / num_mini_batches - 0.5), 1)
    return (sequences - sequences % accumulation) // accumulation


def plan_open_instruct(spec: OpenInstructSpec) -> RLPlan:
    check_settings(spec, KEYS, positive=("total_episodes", "num_unique_prompts_rollout", "num_samples_per_prompt_rollout",
                                         "num_mini_batches", "num_epochs", "resume_training_step", "learners", "vllm_num_engines",
                                         "vllm_tensor_parallel_size", "response_length", "max_prompt_token_length", "prompts"),
                   non_negative=("warmup_ratio", "warm_up_steps", "async_steps"))
    d = Derivation()
    warnings: list[Trap] = []
    per_step = spec.num_unique_prompts_rollout * spec.num_samples_per_prompt_rollout
    if per_step < spec.learners:
        raise ValueError("open-instruct asserts \"num_samples_per_prompt_rollout * num_unique_prompts_rollout must be greater than or "
                         f"equal to world_size\" ({per_step} < {spec.learners} learners)")
    if spec.num_samples_per_prompt_rollout == 1:
        warnings.append(Trap("OI_ONE_SAMPLE", "oi.warn.one_sample", {}))
    steps = d.add("num_training_steps", spec.total_episodes // per_step,
                  "total_episodes // (num_unique_prompts_rollout x num_samples_per_prompt_rollout)",
                  f"{spec.total_episodes} // ({spec.num_unique_prompts_rollout} x {spec.num_samples_per_prompt_rollout})")
    if spec.resume_training_step > steps:
        raise ValueError(f"open-instruct raises \"Training didn't run since resume_training_step={spec.resume_training_step} > "
                         f"num_training_steps={steps}\"")
    run_steps = steps - spec.resume_training_step + 1
    updates = d.add("actor_updates_per_step", spec.num_mini_batches * spec.num_epochs, "num_mini_batches x num_epochs",
                    f"{spec.num_mini_batches} x {spec.num_epochs}")
    optimizer = d.add("actor_optimizer_steps", updates * run_steps, "updates per step x training steps", f"{updates} x {run_steps}")
    horizon = d.add("num_scheduler_steps", steps * spec.num_epochs * spec.num_mini_batches,
                    "num_training_steps x num_epochs x num_mini_batches", f"{steps} x {spec.num_epochs} x {spec.num_mini_batches}")
    if spec.warm_up_steps is not None and spec.warmup_ratio <= 0:
        warmup = d.add("warmup_steps", spec.warm_up_steps, "--warm_up_steps (releases that have it)")
    else:
        warmup = d.add("warmup_steps", int(horizon * spec.warmup_ratio), "int(num_scheduler_steps x warmup_ratio)",
                       f"int({horizon} x {spec.warmup_ratio})")
    if spec.num_mini_batches > 1:
        warnings.append(Trap("OI_PACKED_MINI_BATCHES", "oi.warn.packed_mini_batches", {"mini": spec.num_mini_batches}))
    prompts = spec.prompts
    if prompts is not None:
        check_rows(prompts)
        needed = max(spec.async_steps, 1) * spec.num_unique_prompts_rollout
        if prompts < needed:
            raise ValueError(f"open-instruct raises \"Train dataset is too small! Is {prompts} prompts, but {needed} are needed to have "
                             "enough prompts for bsz and prefill\"")
    if spec.total_episodes % per_step:
        warnings.append(Trap("OI_EPISODES_REMAINDER", "oi.warn.episodes", {"episodes": f"{spec.total_episodes:,}",
                                                                            "used": f"{steps * per_step:,}"}))
    tests, saves = _events(spec, steps)
    run = RLRun(
        training_steps=run_steps, optimizer_steps=optimizer, scheduler_steps=horizon, scheduler_steps_taken=updates * steps,
        warmup_steps=warmup, rollouts=per_step * run_steps, rollouts_per_step=per_step, prompts_per_step=spec.num_unique_prompts_rollout,
        prompts=prompts or 0, steps_per_epoch=(prompts // spec.num_unique_prompts_rollout) if prompts else 0,
        epochs_planned=round(steps * spec.num_unique_prompts_rollout / prompts, 4) if prompts else 0.0,
        epochs_completed=round(steps * spec.num_unique_prompts_rollout / prompts, 4) if prompts else 0.0,
        updates_per_step=updates, test_steps=tests, save_steps=saves,
        response_tokens_max=per_step * run_steps * spec.response_length,
    )
    notions = [Notion("oi.what.training_step", "training", steps),
               Notion("verl.what.warmup", "scheduler", warmup), Notion("verl.what.decay", "scheduler", horizon),
               Notion("verl.what.actor_updates", "optimizer", optimizer)]
    shape = rollout_shape(framework="open-instruct", training_steps=run_steps, prompts_per_step=spec.num_unique_prompts_rollout,
                          samples_per_prompt=spec.num_samples_per_prompt_rollout, max_prompt_length=spec.max_prompt_token_length,
                          max_response_length=spec.response_length, asynchronous=spec.async_steps > 0, gpus=spec.learners,
                          rollout_gpus=spec.vllm_num_engines * spec.vllm_tensor_parallel_size, rollout_tp=spec.vllm_tensor_parallel_size,
                          ppo_epochs=spec.num_epochs, reference=spec.load_ref_policy)
    inputs = {name: getattr(spec, name) for name in OpenInstructSpec.__slots__}
    inputs.update(world_size=spec.learners + spec.vllm_num_engines * spec.vllm_tensor_parallel_size, rollout_shape=shape)
    return RLPlan("open-instruct", VERSION, {}, run, notions, warnings, d, inputs=inputs, algorithm="GRPO",
                  sources=[f"open-instruct {VERSION} and 8dfe8f2: step, scheduler, mini-batch and event lines run by "
                           "tools/record_rl_stacks.py; the loop read from open_instruct/grpo_fast.py"])


def _events(spec: OpenInstructSpec, steps: int) -> tuple[list[int], list[int]]:
    """Steps with an evaluation (its prompts go out at the start of the step) and with a save (the final one included)."""
    first = spec.resume_training_step
    tests: list[int] = []
    if spec.has_eval_data and spec.local_eval_every > 0:
        tests = ([1] if spec.eval_on_step_0 and first == 1 else []) + \
            [s for s in event_steps(spec.local_eval_every, steps, name="--local_eval_every", at_end=False) if s > 1 and s >= first]
    saves: list[int] = []
    if spec.save_freq > 0:
        saves = ([1] if spec.eval_on_step_0 and first == 1 else []) + \
            [s for s in event_steps(spec.save_freq, steps, name="--save_freq", at_end=False) if s > 1 and s >= first]
    if not saves or saves[-1] != steps:
        saves.append(steps)  # save_final_model after the loop
    return tests, saves

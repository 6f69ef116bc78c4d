"""trainsteps: how long a training run really is, before it starts.

    >>> import trainsteps
    >>> s = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10,
    ...                     gradient_accumulation_steps=8, num_train_epochs=300, transformers="4.49.0")
    >>> s.banner["Total optimization steps"], s.run.epochs_completed
    ('3,900', 278.6095)
"""

from __future__ import annotations

from trainsteps.errors import InputError, TrainstepsError
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.spec import RunSpec

__version__ = "0.1.0"
__all__ = ["plan", "plan_rl", "plan_config", "estimate_time", "solve", "explain", "count", "render", "RunSpec", "Schedule",
           "RunFacts", "Trap", "TrainstepsError", "InputError", "__version__"]
_API = ("plan_config", "estimate_time", "solve", "explain", "count", "render")
"""Functions of `trainsteps.api`, loaded on first use (`import trainsteps` stays light)."""


def __getattr__(name: str):
    if name in _API:
        from trainsteps import api

        return getattr(api, name)
    raise AttributeError(f"module 'trainsteps' has no attribute {name!r}")


def plan(spec: RunSpec | None = None, /, *, framework: str = "hf", gpus: int | None = None, nodes: int | None = None,
         **settings) -> Schedule:
    """Plan a Hugging Face Trainer run: what it prints and what its loop really does.

    Pass a `RunSpec`, or its fields as keyword arguments with the command line's names (`--num-examples` is
    `num_examples=`). Every value is checked and converted as the command line does it: `"1,047"` and `1047.0` are
    1047; NaN, infinity, fractions of a whole number and words raise `InputError` (a `TrainstepsError`) naming the
    setting, and an unknown keyword suggests the one you probably meant.

    Settings (defaults in brackets):
      num_examples                 rows in the training set as the Trainer sees it (after preprocessing / packing)
      per_device_train_batch_size  rows per micro-batch per process [8]
      gradient_accumulation_steps  micro-batches per optimizer step [1]
      world_size                   processes (ranks) [1]; or gpus= (per node) and nodes=, as on the command line
      tensor_parallel_size, context_parallel_size, sequence_parallel_size   parallel group sizes [1]
      num_train_epochs             epochs, fractions allowed [3.0]
      max_steps                    optimizer steps; > 0 overrides epochs [-1]
      dataloader_drop_last, split_batches, even_batches [True], streaming   loader and accelerate switches
      resume_from_step             resume from checkpoint-K
      warmup_ratio, warmup_steps   learning-rate warmup
      logging_strategy, logging_steps [500], logging_first_step            when the loss is logged
      eval_strategy ["no"], eval_steps, eval_delay [0]                      when evaluation runs
      save_strategy ["steps"], save_steps [500]                             when checkpoints are written
      metric_for_best_model, greater_is_better, improving_evals ["all"]    save_strategy "best": which evaluations save
      checkpoint_logging_steps, checkpoint_eval_steps, checkpoint_save_steps   after a resume: the checkpoint's intervals
      trainable_parameters         the model's trainable parameters (banner's last line)
      transformers                 release to model, e.g. "4.49.0" [newest known]
      dataset_tokens, seq_length, dispatch_batches                          streams: size of one pass, packing, rank split

    framework: "hf" (the Trainer and the wrappers built on it). Config files, and GPT-NeoX, Megatron, DeepSpeed,
    Lightning and the RL trainers, are planned by `trainsteps.plan_config(...)` (the command line's JSON).

    Returns a `Schedule`: `.banner`, `.run` (RunFacts), `.warnings`, `.derivation`; `trainsteps.render(schedule)` is
    the report the command line prints.
    """
    if framework != "hf":
        from trainsteps.names import closest

        raise InputError("api.error.framework", "api.hint.framework", framework=repr(framework)[:60],
                         guess=closest(str(framework), ["hf"]) or "hf")
    if spec is None:
        _check_keywords(settings)
        if gpus is not None or nodes is not None:
            from trainsteps.world import world_size

            settings["world_size"] = world_size(settings.get("world_size"), gpus, nodes)
        spec = RunSpec(**settings)
    elif settings or gpus is not None or nodes is not None:
        raise InputError("api.error.spec_and_settings", "api.hint.spec_and_settings")
    elif not isinstance(spec, RunSpec):
        raise InputError("api.error.spec_type", "api.hint.spec_and_settings", found=type(spec).__name__)
    return _hf_plan()(spec)


def _hf_plan():
    """The Hugging Face planner, imported on first use (`import trainsteps` stays light)."""
    global _HF_PLAN
    if _HF_PLAN is None:
        from trainsteps.frameworks.hf import plan as hf_plan

        _HF_PLAN = hf_plan
    return _HF_PLAN


_HF_PLAN = None


def plan_rl(framework: str, settings: dict | None = None, *, num_examples: int | None = None, version: str | None = None,
            gpus: int | None = None, **options):
    """Plan an RL run (`verl`, `openrlhf`, `easyr1`, `trl-ppo`, `slime`, `areal`, `open-instruct`, `trl-async-grpo`,
    `prime-rl`, `roll`) from its own setting names, as on its launch line or in its config (nested keys dotted); the
    numbers are those of `trainsteps plan --framework NAME`. `num_examples` is the prompt count (prime-rl and ROLL have
    no epochs and refuse it), `version` the release where the planner models several, `gpus` the training GPUs:

    >>> p = trainsteps.plan_rl("verl", {"data.train_batch_size": 256, "actor_rollout_ref.rollout.n": 5,
    ...     "actor_rollout_ref.actor.ppo_mini_batch_size": 64, "trainer.total_epochs": 15}, num_examples=7473)
    >>> p.run.training_steps, p.run.optimizer_steps, p.run.scheduler_steps
    (435, 1740, 435)

    Hours, GPU-hours and cost (`step_time=`, `gpu=`, `params=`, ...) come from `trainsteps.api.estimate_time(framework=
    "verl", set=["data.train_batch_size=256", ...], step_time=60)`; given here, they are refused with that hint.
    """
    from trainsteps.planners.rl import plan_from_settings

    if options:
        name = sorted(options)[0]
        raise InputError("api.error.rl_option", "api.hint.rl_option", name=str(name)[:60], framework=str(framework)[:40])

    return plan_from_settings(framework, settings or {}, num_examples=num_examples, version=version, gpus=gpus)


def _check_keywords(settings: dict) -> None:
    names = RunSpec.__slots__  # a tuple: `in` over 35 names beats building a list per call
    for key in settings:
        if key not in names:
            from trainsteps.names import closest

            guess = closest(str(key), [*names, "gpus", "nodes"])
            raise InputError("api.error.unknown_setting", "api.hint.unknown_setting" if guess else "api.hint.no_effect",
                             name=str(key)[:60], guess=guess)

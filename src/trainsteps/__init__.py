"""trainsteps: how long a training run really is, before it starts.

    >>> import trainsteps
    >>> s = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10,
    ...                     gradient_accumulation_steps=8, num_train_epochs=300, transformers="4.49.0")
    >>> s.banner["Total optimization steps"], s.run.epochs_completed
    ('3,900', 278.6095)
"""

from __future__ import annotations

from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.spec import RunSpec

__version__ = "0.1.0"
__all__ = ["plan", "plan_rl", "RunSpec", "Schedule", "RunFacts", "Trap", "__version__"]


def plan(spec: RunSpec | None = None, /, *, framework: str = "hf", **settings) -> Schedule:
    """Plan a run: pass a `RunSpec`, or its fields as keyword arguments."""
    if spec is None:
        spec = RunSpec(**settings)
    elif settings:
        raise TypeError("pass either a RunSpec or keyword settings, not both")
    if framework != "hf":
        raise ValueError(f"unknown framework {framework!r}")
    return _hf_plan()(spec)


def _hf_plan():
    """The Hugging Face planner, imported on first use (`import trainsteps` stays light)."""
    global _HF_PLAN
    if _HF_PLAN is None:
        from trainsteps.frameworks.hf import plan as hf_plan

        _HF_PLAN = hf_plan
    return _HF_PLAN


_HF_PLAN = None



def plan_rl(framework: str, settings: dict | None = None, *, num_examples: int, version: str | None = None,
            gpus: int | None = None):
    """Plan an RL run (`verl`, `openrlhf`, `easyr1`, `trl-ppo`) from its own setting names, as on its launch line:

    >>> p = trainsteps.plan_rl("verl", {"data.train_batch_size": 256, "actor_rollout_ref.rollout.n": 5,
    ...     "actor_rollout_ref.actor.ppo_mini_batch_size": 64, "trainer.total_epochs": 15}, num_examples=7473)
    >>> p.run.training_steps, p.run.optimizer_steps, p.run.scheduler_steps
    (435, 1740, 435)
    """
    from trainsteps.configs.rl import plan_from_settings

    return plan_from_settings(framework, settings or {}, num_examples=num_examples, version=version, gpus=gpus)


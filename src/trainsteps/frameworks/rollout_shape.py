"""The facts of one RL training step that the step-time model needs, under the names of `timing.rl.RolloutShape`.

The planners of slime, AReaL, open-instruct, prime-rl, ROLL and TRL's AsyncGRPOTrainer put this dict in their plan's
`inputs["rollout_shape"]`, so the time wiring builds `RolloutShape(**shape)` without knowing each stack.
"""

from __future__ import annotations

FIELDS = ("framework", "training_steps", "prompts_per_step", "samples_per_prompt", "max_prompt_length", "max_response_length",
          "asynchronous", "gpus", "rollout_gpus", "rollout_tp", "ppo_epochs", "reference", "critic", "weight_sync")
"""The names a shape may carry (a subset of RolloutShape's fields; the rest keep their defaults)."""


def rollout_shape(**facts) -> dict:
    """The step facts a planner knows; unknown ones (None) are left out so RolloutShape's defaults apply."""
    unknown = set(facts) - set(FIELDS)
    if unknown:
        raise TypeError(f"not a RolloutShape field: {sorted(unknown)}")
    return {name: facts[name] for name in FIELDS if facts.get(name) is not None}

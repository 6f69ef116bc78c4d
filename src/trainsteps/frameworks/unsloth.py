"""Unsloth: the TRL config defaults it rewrites, and its GRPO batch override, by release.

Read from `unsloth/models/rl.py` (`_patch_trl_rl_trainers_impl`) of the pinned release (not run: importing Unsloth
needs a GPU). When Unsloth wraps a TRL `*Config`, the signature defaults become the values below; a setting the user
gave is kept. For GRPO, when neither steps_per_generation nor generation_batch_size is set and
`GA x world x per_device_train_batch_size` is not a multiple of `num_generations`, it sets
`per_device_train_batch_size = num_generations` and prints a notice.
"""

from __future__ import annotations

from trainsteps.versions import Timeline

NEWEST = "2026.10.9"

DEFAULTS = Timeline("unsloth.defaults", [
    ("2026.10.9", {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 2, "logging_steps": 1,
                   "learning_rate": 5e-05, "num_generations": 8, "warmup": 0.1}),
])
"""Rewritten defaults; `warmup` is `warmup_steps=0.1` (a fraction) on transformers >= 5, else `warmup_ratio=0.1`."""

PLAIN = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "logging_steps": 500, "learning_rate": 5e-05,
         "num_generations": 8, "warmup": 0}
"""The same settings' defaults in plain transformers/TRL, to say what changed."""


def known(release: str) -> bool:
    """Whether `release` is one the rules cover (the pinned release or newer, read as that release's rules)."""
    try:
        DEFAULTS.at(release)
    except ValueError:
        return False
    return True


def rewritten_defaults(release: str, given: set[str], transformers_major: int) -> list[tuple[str, object, object]]:
    """(setting, Unsloth's value, plain default) for each default Unsloth changes that the user did not set."""
    out = []
    for key, value in DEFAULTS.at(release).items():
        name = key if key != "warmup" else ("warmup_steps" if transformers_major >= 5 else "warmup_ratio")
        if name in given or key in given or PLAIN.get(key) == value:
            continue
        out.append((name, value, PLAIN.get(key)))
    return out


def grpo_batch(per_device: int, ga: int, world: int, num_generations: int, steps_per_generation=None,
               generation_batch_size=None) -> int:
    """The per-device batch Unsloth's GRPOConfig ends with."""
    if steps_per_generation is None and generation_batch_size is None and (ga * world * per_device) % num_generations:
        return num_generations
    return per_device

"""`Outcome`: what a wrapper decided about the data and steps before the Trainer starts."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainsteps.derivation import Derivation
from trainsteps.frameworks.count import Count


@dataclass(slots=True)
class Outcome:
    """What a wrapper decided before the Trainer starts."""

    num_examples: Count | None
    """`len(train_dataset)`; None for a stream (max_steps decides)."""
    derivation: Derivation
    """How `num_examples` was reached."""
    notes: list[tuple[str, str, dict]] = field(default_factory=list)
    """(code, message id, params) of wrapper behaviours worth a warning."""
    max_steps: int | None = None
    """A max_steps the wrapper passes to the Trainer itself (Axolotl)."""
    max_steps_range: tuple[int, int] | None = None
    """(low, high) of that max_steps when it depends on unknown token lengths."""
    loader_rows: int | None = None
    """Rows to give the Trainer engine so its loader length matches the wrapper's own sampler (GRPO, ms-swift),
    when that differs from the `Num examples` the banner prints."""
    token_profile: object | None = None
    """`tokens.TokenProfile` of the rows the Trainer sees, when each row's tokens were counted (a tokenizer was given)."""
    eval_examples: int | None = None
    """Rows of the evaluation set the config names (LLaMA-Factory `eval_dataset`), for the time of each evaluation."""

"""The result of reading one run: what the log determines (Known), the set-ups that fit it (Hypothesis), the
sentences of the explanation (Finding, Contradiction), all gathered in an Inference (pure value types).

Which module decides what: infer_world.py (the processes), infer_release.py (the transformers release),
infer.py (the settings, by replaying candidates on the plan engine), infer_progress.py (where a run stands and how it
ended), logs/timing.py (its rate and the time left).
"""

from __future__ import annotations

import sys
from typing import Any

from trainsteps.derivation import Derivation, format_value
from trainsteps.frameworks.hf.releases import Family
from trainsteps.logs.observed import RunObservation
from trainsteps.record import field, record
from trainsteps.schedule import Schedule
from trainsteps.spec import RunSpec

MAXSIZE = sys.maxsize
EPOCH_TOLERANCE = 0.0051  # progress lines print state.epoch rounded to 2 decimals in many releases
MAX_REPEAT = 64
REPLAY_EPOCHS = 2000
"""Above this many epochs a candidate is replayed only if the closed-form step count can print the banner's steps."""


@record
class Known:
    """A setting as far as the log determines it: exact, a range, or one of a few values."""

    exact: Any = None
    low: Any = None
    high: Any = None
    choices: list | None = None
    low_open: bool = False
    """The range excludes `low` (e.g. epochs in (299.92, 300])."""

    @property
    def is_exact(self) -> bool:
        return self.choices is None and self.low is None and self.high is None

    def to_json(self):
        if self.choices is not None:
            return {"one_of": self.choices}
        if self.low is not None or self.high is not None:
            out = {"min": self.low, "max": self.high}
            if self.low_open:
                out["min_exclusive"] = True
            return out
        return self.exact

    def contains(self, value) -> bool:
        if self.choices is not None:
            return value in self.choices
        if self.low is not None or self.high is not None:
            if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
                return False
            return self.high is None or value <= self.high
        return value == self.exact

    def text(self) -> str:
        if self.choices is not None:
            return " | ".join(format_value(c) for c in self.choices)
        if self.low is not None or self.high is not None:
            left = "(" if self.low_open else "["
            return f"{left}{format_value(self.low) if self.low is not None else ''}, {format_value(self.high) if self.high is not None else '...'}]"
        return format_value(self.exact)


@record
class Hypothesis:
    """One way the run could have been set up, checked against the log by running the engine."""

    family: Family
    version: str
    """The release the engine modelled (newest one the evidence allows within the family)."""
    releases: list[str]
    """Releases of this family the evidence allows."""
    drop_last: bool
    mode: str
    """`epochs` (num_train_epochs set), `max_steps` (max_steps > 0) or `stream` (no length)."""
    spec: RunSpec
    schedule: Schedule
    epochs: Known | None = None
    """num_train_epochs values that print the same banner (epochs mode)."""
    mismatches: list[str] = field(default_factory=list)
    """Observed keys the engine prints differently."""
    progress_mismatch: tuple[str, Any, Any] | None = None
    """(what, observed, predicted) when the loop would not stop where the log shows it stopped."""
    allowed: bool = True
    """The release evidence (line numbers, layout) allows this family."""

    @property
    def consistent(self) -> bool:
        return not self.mismatches and self.progress_mismatch is None


@record
class Finding:
    """A sentence of the explanation: message id and its parameters."""

    msg_id: str
    params: dict = field(default_factory=dict)
    code: str | None = None


@record
class Contradiction:
    what: Finding
    explanations: list[Finding] = field(default_factory=list)
    """Fitting explanations, most likely first."""


@record
class Inference:
    run: RunObservation
    world_size: int | None = None
    releases: list[str] = field(default_factory=list)
    """Releases the non-arithmetic evidence allows (line numbers, banner layout, notice level)."""
    evidence: list[Finding] = field(default_factory=list)
    hypotheses: list[Hypothesis] = field(default_factory=list)
    """Consistent hypotheses, best first."""
    rejected: list[Hypothesis] = field(default_factory=list)
    inferred: dict[str, Known] = field(default_factory=dict)
    facts: list[Finding] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    derivation: Derivation = field(default_factory=Derivation)
    stopped: str | None = None
    """`crashed` or `interrupted` when the log shows the run did not end on its own (kept for older readers: see status)."""
    status: str = "unknown"
    """How the run ended as the log shows it: `finished`, `crashed`, `interrupted`, `running` or `unknown`."""
    planned_end_step: int | None = None
    """The optimizer step the run was set to reach: the engine's last step for the inferred release (a loop that stops
    before max_steps included), else the planned total the log prints."""
    end_step: int | None = None
    """The optimizer step where the run ended: the crash, the interrupt or the finish as the log shows it (the
    engine's replay for a finished run whose log shows no step); None while it runs or when the log cannot tell."""
    timing: Any = None
    """logs.timing.Timing: the measured rate and the time left, when the log shows timing."""

    @property
    def best(self) -> Hypothesis | None:
        return self.hypotheses[0] if self.hypotheses else None

"""`Schedule`: what a framework will print and what its loop will really do."""

from __future__ import annotations

from trainsteps.derivation import Derivation
from trainsteps.record import field, record
from trainsteps.steps import Steps, compact_list


@record
class Trap:
    """A warning about a run that will not do what its settings suggest."""

    code: str
    """Stable identifier, e.g. `HF_PLAN_LOOP_MISMATCH`; safe to match on in scripts."""
    msg_id: str
    """Message id in the i18n catalogs."""
    params: dict = field(default_factory=dict)
    """Values substituted into the message."""

    def message(self, lang: str = "en") -> str:
        from trainsteps.i18n import message

        return message(self.msg_id, lang, **self.params)

    def to_dict(self, lang: str = "en") -> dict:
        return {"code": self.code, "message": self.message(lang)}


@record
class RunFacts:
    """What the training loop really does."""

    optimizer_steps: int
    """Optimizer steps actually taken (the final `global_step`)."""
    max_steps: int
    """The step count the framework plans for (what the scheduler and the banner use)."""
    epoch_end_steps: Steps
    """`global_step` at the end of each epoch the loop enters (a cut-short last epoch included)."""
    epochs_completed: float
    """Epochs actually run, as the framework's own `epoch` counter reads at the end."""
    epochs_planned: float
    """Epochs the user asked for (or that max_steps implies)."""
    samples_seen: int
    """Rows fed to the model over all ranks, counting rows duplicated to even out ranks."""
    warmup_steps: float
    """Optimizer steps of learning-rate warmup (a fraction only where a release takes a float as steps)."""
    log_steps: Steps = field(default_factory=Steps)
    """Steps where the loss is logged."""
    eval_steps: Steps = field(default_factory=Steps)
    """Steps where an evaluation runs."""
    save_steps: Steps = field(default_factory=Steps)
    """Steps where a checkpoint is saved (a step may appear twice when a release saves twice)."""
    real_optimizer_updates: int | None = None
    """Parameter updates actually applied, where they differ from `optimizer_steps`."""
    batches_per_epoch: int | None = None
    """Micro-batches per epoch on each rank (`len(train_dataloader)`)."""
    samples_per_epoch: int | None = None
    """Rows fed per full epoch over all ranks."""
    # --- streams (iterable datasets); None for map-style data ---
    rank_split: str | None = None
    """How ranks share the stream: `single`, `dispatch` (rank 0 reads and slices) or `shard` (each rank reads its part)."""
    passes_completed: int | None = None
    """Complete passes over the stream (needs its size)."""
    pass_end_steps: Steps | None = None
    """`global_step` at the end of each complete pass over the stream."""
    equivalent_epochs: float | None = None
    """Rows fed over all ranks / rows in one pass: the epochs the run is worth."""
    tokens_seen: int | None = None
    """Tokens fed to the model over all ranks (pretraining frameworks: samples x sequence length;
    a packed stream: rows x seq_length; a plan whose data was counted: the non-padding tokens of the rows fed)."""
    # --- tokens, when the data's token lengths are known (see trainsteps.tokens); None otherwise ---
    supervised_tokens_seen: int | None = None
    """Tokens fed whose label is trained on (not -100), over all ranks."""
    padded_tokens_seen: int | None = None
    """Tokens fed including padding (each micro-batch padded to its longest row, or packed rows to their length)."""
    padding_share: float | None = None
    """Share of the fed tokens that are padding: 1 - tokens_seen / padded_tokens_seen."""
    tokens_per_step: dict | None = None
    """Non-padding tokens per optimizer step: `mean`, a 95% `low`/`high` range, `supervised_mean`."""
    tokens_per_epoch: dict | None = None
    """Tokens in one epoch: `tokens`, `supervised`, `padded` (expected), `rows`."""
    tokens_exact: bool | None = None
    """True when tokens_seen is exact (whole epochs of counted data), False when it is an expectation."""


@record
class Schedule:
    """The full answer for one run under one framework release."""

    framework: str
    """`hf`, `megatron`, ... ."""
    version: str
    """The release modelled."""
    family: str
    """The regime of releases this one belongs to, e.g. `4.52-4.56`."""
    family_reason: str
    """Message id explaining the regime."""
    banner: dict[str, str] = field(deferred=True)
    """Banner label -> value string exactly as the framework prints it (built when first read)."""
    banner_lines: list[str] = field(deferred=True)
    """The banner exactly as printed, in order (built when first read)."""
    run: RunFacts
    warnings: list[Trap]
    derivation: Derivation
    inputs: dict = field(default_factory=dict, deferred=True)
    """The settings the schedule was computed from (built when first read)."""
    family_params: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        steps, done, planned = self.run.optimizer_steps, self.run.epochs_completed, self.run.epochs_planned
        return (f"<Schedule {self.framework} {self.version}: {steps:,} optimizer steps, {done:g} of {planned:g} epochs, "
                f"{len(self.warnings)} warning(s); trainsteps.render() gives the report>")

    def to_dict(self, lang: str = "en") -> dict:
        from trainsteps.i18n import message

        run = {name: compact_steps(value) if name in STEP_LISTS else value
               for name in RunFacts.__slots__ for value in (getattr(self.run, name),)}
        return {
            "framework": self.framework,
            "version": self.version,
            "family": {"name": self.family, "why": message(self.family_reason, lang, **self.family_params)},
            "inputs": self.inputs,
            "banner": dict(self.banner),
            "banner_lines": list(self.banner_lines),
            "run": run,
            "warnings": [trap.to_dict(lang) for trap in self.warnings],
            "derivation": self.derivation.to_list(lang),
        }


STEP_LISTS = ("epoch_end_steps", "pass_end_steps", "log_steps", "eval_steps", "save_steps")
"""RunFacts' lists of steps, which grow with the run: JSON writes a long one in its compact form (docs/json.md)."""


def compact_steps(steps):
    """The JSON form of a step list (a `Steps` or a plain list): the list up to LONG_LIST steps, the compact form above
    (docs/json.md); a `Steps` finds it from its runs without building the list."""
    if isinstance(steps, Steps):
        return steps.to_json()
    return compact_list(steps)


def expand_steps(value, limit: int | None = None) -> list[int]:
    """The steps of a JSON step list, plain or compact, as a list; with `limit`, at most that many spread evenly (and
    the last). A `head`/`tail` form gives what it holds."""
    if isinstance(value, list) and (limit is None or len(value) <= limit):
        return list(value)  # a short plain list is itself (no pairs built and taken apart)
    return [step for _, step in indexed_steps(value, limit)]


def indexed_steps(value, limit: int | None = None) -> list[tuple[int, int]]:
    """(position in the full list, step) pairs of `expand_steps`: an epoch end's position is its epoch."""
    if value is None:
        return []
    if isinstance(value, list):
        pairs = list(enumerate(value))
        if limit is None or len(pairs) <= limit:
            return pairs
        return [pairs[i] for i in _spread(len(pairs), limit)]
    count = value["count"]
    if "head" in value:
        return list(enumerate(value["head"])) + list(enumerate(value["tail"], count - len(value["tail"])))
    period, first, then = value["period"], value["first"], value.get("then") or []
    prefix = [0]
    for difference in period:
        prefix.append(prefix[-1] + difference)
    regular = count - len(then)
    indexes = range(regular) if limit is None or regular <= limit else _spread(regular, limit)
    pairs = [(i, first + (i // len(period)) * prefix[-1] + prefix[i % len(period)]) for i in indexes]
    return pairs + list(enumerate(then, regular))


def _spread(count: int, limit: int) -> list[int]:
    """`limit` positions spread evenly over `count` (more than `limit`), and the last: increasing, since each is more
    than one after the one before (a list, not a sorted set: this runs for every chart of a long plan)."""
    picks = [int(i * count / limit) for i in range(limit)]
    if picks[-1] != count - 1:
        picks.append(count - 1)
    return picks

"""What an RL run's steps are: the result every RL framework's rules fill in (verl, OpenRLHF, EasyR1, TRL PPO).

An RL run has three step counts that users read as "the step", and they differ:

- **training steps**: generation (rollout) batches. One step = generate `prompts_per_step x n` responses, score them,
  then update. verl's `Total training steps`, its logged `step:N` and its `global_step_N` checkpoints count these.
- **optimizer steps**: parameter updates of the actor (and of the critic, where there is one): each training step is
  split into mini-batches, each mini-batch is one `optimizer.step()`, repeated for `ppo_epochs`.
- **scheduler steps**: what the learning-rate schedule counts. In verl it steps once per training step; in OpenRLHF
  and TRL PPO once per optimizer step (OpenRLHF) or per batch (TRL).

`RLPlan.notions` says, for the framework modelled, which of the three each printed or logged number counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.hf.intervals import MAX_EVENTS
from trainsteps.schedule import Trap, compact_steps
from trainsteps.steps import Steps


@dataclass(slots=True)
class RLRun:
    """What the RL loop really does."""

    training_steps: int
    """Training (rollout) steps the loop runs: generation batches, the logged step at the end."""
    optimizer_steps: int
    """Actor optimizer updates over the run (`optimizer.step()` calls on one rank)."""
    scheduler_steps: int
    """The learning-rate schedule's horizon, in the scheduler's own steps."""
    scheduler_steps_taken: int
    """`lr_scheduler.step()` calls the loop really makes (the schedule is finished only if this reaches the horizon)."""
    warmup_steps: int
    """Learning-rate warmup, in scheduler steps."""
    rollouts: int
    """Responses generated for training over the run (prompts x samples per prompt x steps)."""
    rollouts_per_step: int
    """Responses generated per training step."""
    prompts_per_step: int
    """Prompts per training step (per generation batch)."""
    prompts: int
    """Prompts in the training set as the framework sees it (after its filters)."""
    steps_per_epoch: int
    """Training steps in one pass over the prompts."""
    epochs_planned: float
    """Passes over the prompts the settings ask for."""
    epochs_completed: float
    """Passes over the prompts the loop really makes."""
    updates_per_step: int
    """Actor optimizer updates per training step."""
    critic_optimizer_steps: int | None = None
    """Critic optimizer updates over the run, where there is a critic (PPO with GAE)."""
    critic_updates_per_step: int | None = None
    """Critic optimizer updates per training step."""
    test_steps: Steps = field(default_factory=Steps)
    """Training steps after which a validation runs (0 = before training)."""
    save_steps: Steps = field(default_factory=Steps)
    """Training steps whose checkpoint is written (`global_step_N`)."""
    upper_bound: bool = False
    """True where the counts are upper bounds (dynamic sampling may need several generation batches per step)."""
    response_tokens_max: int | None = None
    """At most this many response tokens are generated (rollouts x max response length), where that length is known."""


@dataclass(slots=True)
class Notion:
    """Which step count a number the framework prints or uses counts."""

    what: str
    """Message id of the printed/logged thing, e.g. `rl.what.total_line`."""
    counts: str
    """`training`, `optimizer`, `scheduler` (or `prompts`, for a bar that counts prompts)."""
    value: int | None = None
    """Its value in this run, where it is one number."""


@dataclass(slots=True)
class RLPlan:
    """The full answer for one RL run under one framework release."""

    framework: str
    version: str
    printed: dict[str, str]
    """Line label -> value exactly as the framework prints it at start-up (e.g. `Total training steps` -> `435`)."""
    run: RLRun
    notions: list[Notion]
    warnings: list[Trap]
    derivation: Derivation
    inputs: dict = field(default_factory=dict)
    algorithm: str = ""
    """PPO, GRPO, DAPO, ... as the settings say."""
    sources: list[str] = field(default_factory=list)
    """How each rule was checked: `recorded` (the framework's code was run) or `source` (read from its code)."""

    def to_dict(self, lang: str = "en") -> dict:
        from trainsteps.i18n import message

        run = {name: getattr(self.run, name) for name in RLRun.__slots__}
        run.update(test_steps=compact_steps(run["test_steps"]), save_steps=compact_steps(run["save_steps"]))  # docs/json.md
        run["max_steps"] = self.run.scheduler_steps  # the HF-style name of the planned horizon, for scripts that read it
        return {
            "framework": self.framework,
            "version": self.version,
            "algorithm": self.algorithm,
            "inputs": self.inputs,
            "printed": dict(self.printed),
            "run": run,
            "step_notions": [{"what": message(n.what, lang), "counts": n.counts, "value": n.value} for n in self.notions],
            "warnings": [trap.to_dict(lang) for trap in self.warnings],
            "derivation": self.derivation.to_list(lang),
            "verified": list(self.sources),
        }


MAX_ROWS = 10**13
"""Most prompts (rows) a plan takes: the Trainer path's cap. More is a typo, and every count grows with it."""
MAX_SETTING = 10**13
"""Largest value of any numeric setting (batch sizes, epochs, steps, episodes): far beyond any real run."""


def event_steps(every: int, last: int, *, name: str, at_end: bool = True) -> Steps:
    """Steps 1..last that are multiples of `every`, plus the last step when the framework also acts there; none if
    every <= 0. A list longer than the Trainer path's cap is refused, naming the setting `name`."""
    if every is None or every <= 0 or last <= 0:
        return Steps()
    count = last // every
    if count > MAX_EVENTS:
        raise InputError("hf.error.too_many_events", "hf.hint.too_many_events", name=name, every=every, count=count, steps=last)
    return ending_at(Steps.every(every, every, last), last) if at_end else Steps.every(every, every, last)


def ending_at(steps: Steps, last: int) -> Steps:
    """`steps` (all at or below `last`) with `last` added where it is not already the final one."""
    if last > 0 and (not steps or steps[-1] != last):
        steps.append(last)
    return steps


def check_rows(rows: int, name: str = "num_examples") -> int:
    """The prompts (rows) a plan starts from: at least one, at most `MAX_ROWS`."""
    if rows < 1:
        raise InputError("input.positive_int", "input.hint.positive_int", name=name, value=rows)
    if rows > MAX_ROWS:
        raise InputError("rl.error.too_large", "input.hint.too_large", name=name, value=_shown(rows), limit=MAX_ROWS)
    return rows


def check_settings(spec, names: dict[str, str], *, positive: tuple = (), above_zero: tuple = (), non_negative: tuple = ()) -> None:
    """Refuse count settings the framework cannot run with, by the name the user typed (`names`: spec field -> key):
    `positive` whole numbers >= 1, `above_zero` reals > 0, `non_negative` values >= 0; unset (None) fields pass."""
    for rule, fields in (("positive", positive), ("above_zero", above_zero), ("non_negative", non_negative)):
        for field_name in fields:
            value = getattr(spec, field_name)
            if value is None:
                continue
            key = names.get(field_name, field_name)
            check_size(value, key)
            if rule == "positive" and value < 1 or rule == "above_zero" and value <= 0 or rule == "non_negative" and value < 0:
                raise InputError(f"rl.error.{rule}", f"rl.hint.{rule}", key=key, value=_shown(value))


def check_size(value: int | float, name: str) -> int | float:
    """`value` of the setting `name`, refused past `MAX_SETTING` (the counts it feeds would fill memory)."""
    if abs(value) > MAX_SETTING:
        raise InputError("rl.error.too_large", "input.hint.too_large", name=name, value=_shown(value), limit=MAX_SETTING)
    return value


def check_release(framework: str, version: str, oldest: str) -> str:
    """A release string the rules can answer for: a release number, not older than the first modelled release."""
    from trainsteps.versions import Version

    try:
        parsed = Version.parse(version)
    except ValueError:
        raise InputError("rl.error.release", "rl.hint.release", framework=framework, version=str(version)[:60], oldest=oldest) from None
    if parsed < Version.parse(oldest):
        raise InputError("rl.error.release_old", "rl.hint.release", framework=framework, version=version, oldest=oldest)
    return version


def _shown(value) -> str:
    """A number as an error line shows it: a huge one by its size (Python refuses str() past 4,300 digits)."""
    if isinstance(value, int) and value.bit_length() > 100:
        return f"a {value.bit_length()}-bit number"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"

"""transformers releases as data: which rule holds from which release on.

Every difference between releases that changes a number lives here as a
`Timeline`; the rest of the package asks `rules_for(version)` and never compares
version numbers itself. Sources: the released wheels' trainer.py / training_args.py,
checked against recorded runs (tests/fixtures/hf). See docs/hf-trainer-rules.md.
"""

from __future__ import annotations

from functools import lru_cache

from trainsteps.record import record
from trainsteps.versions import Timeline, Version, as_version

OLDEST = Version(4, 30, 0)
NEWEST = Version(5, 24, 0)


@record(frozen=True)
class Family:
    """A regime of releases that count steps the same way."""

    name: str
    """Release range, e.g. `4.52-4.56`."""
    reason: str
    """Message id: what characterises the regime and the change that started it."""
    loader: str
    """`distributed_sampler`: the Trainer shards with torch's DistributedSampler (4.30);
    `accelerate`: accelerate's BatchSamplerShard shards batches (4.31+)."""
    rounding: str
    """How steps per epoch are rounded in the plan: `floor` (< 4.52) or `ceil`."""
    counter: str
    """Accumulation counter of the loop: `cumulative` (never reset between epochs) or `per_epoch`."""
    chunk_bug: bool
    """4.46-4.51 prefetch batches in chunks whose last size is `N % GA`, so some batches are never read."""
    resume_realigns: bool
    """4.57+: the resumed epoch keeps its step index, so its final partial window still steps."""
    extra_sync_updates: bool = True
    """False in 4.30: a step forced at the end of a short epoch is counted but accelerate skips the update."""


FAMILIES = Timeline(
    "training loop",
    [
        ("4.30.0", Family("4.30", "hf.family.v1", "distributed_sampler", "floor", "cumulative", False, False, False)),
        ("4.31.0", Family("4.31-4.45", "hf.family.v2", "accelerate", "floor", "cumulative", False, False)),
        ("4.46.0", Family("4.46", "hf.family.v3", "accelerate", "floor", "cumulative", True, False)),
        ("4.47.0", Family("4.47-4.51", "hf.family.v4", "accelerate", "floor", "per_epoch", True, False)),
        ("4.52.0", Family("4.52-4.56", "hf.family.v5", "accelerate", "ceil", "per_epoch", False, False)),
        ("4.57.0", Family("4.57+", "hf.family.v6", "accelerate", "ceil", "per_epoch", False, True)),
    ],
)

BANNER_LAYOUT = Timeline(
    "banner layout",
    [
        ("4.30.0", "v4.30"),  # "Instantaneous batch size" prints the (DataParallel-adjusted) loader batch
        ("4.31.0", "v4.31"),  # prints per_device_train_batch_size, plus a DataParallel line when they differ
        ("5.3.0", "v5.3"),  # adds "Num update steps per epoch" after "Num Epochs"
    ],
)

# The step at max_steps saves a checkpoint even when it is not a multiple of save_steps.
FINAL_STEP_SAVE = Timeline(
    "final-step save",
    [
        ("4.30.0", frozenset()),
        ("4.42.0", frozenset({"steps", "epoch", "best"})),  # PR #30160: any strategy but "no"
        ("4.47.0", frozenset({"steps", "epoch"})),  # not "best"
        ("4.50.0", frozenset({"steps"})),  # only the steps strategy
    ],
)

# The step at max_steps runs an evaluation even when it is not a multiple of eval_steps.
FINAL_STEP_EVAL = Timeline("final-step eval", [("4.30.0", False), ("5.4.0", True)])

WARMUP = Timeline(
    "warmup",
    [
        ("4.30.0", "steps_or_ratio"),  # warmup_steps if > 0 else ceil(M * warmup_ratio)
        ("5.0.0", "float_steps_ratio_deprecated"),  # warmup_steps < 1 is a ratio; warmup_ratio overwrites it
        ("5.15.0", "float_steps"),  # warmup_ratio no longer exists
    ],
)

# What TrainingArguments refuses for warmup_steps, and its words. None: nothing is checked (4.30-4.41 take
# a float such as 0.1 as a number of steps).
WARMUP_STEPS_CHECK = Timeline(
    "warmup_steps check",
    [
        ("4.30.0", None),
        ("4.42.0", ("zero_or_above_one", "ValueError: warmup_steps must be either 0 or > 1")),
        ("4.44.0", ("whole_number", "ValueError: warmup_steps must be of type int and must be 0 or a positive integer.")),
        ("5.0.0", None),  # a float below 1 is a fraction
    ],
)

# Ranks that do not count towards "Total train batch size" (they share the same data).
BATCH_DIVISOR = Timeline(
    "total batch divisor",
    [("4.30.0", ("tp_counted",)), ("4.53.0", ("tp",)), ("5.0.0", ("tp", "cp", "sp"))],
)

NO_LENGTH_ERROR = Timeline(
    "no-length error",
    [
        (
            "4.30.0",
            "ValueError: The train_dataset does not implement __len__, max_steps has to be specified. "
            "The number of steps needs to be known in advance for the learning rate scheduler.",
        ),
        (
            "5.14.0",
            "ValueError: The train_dataset does not implement __len__, so the number of training steps cannot "
            "be inferred; max_steps has to be specified. The total number of steps must be known in advance to "
            "bound the training loop and to configure the learning rate scheduler.",
        ),
    ],
)

# A map-style loader of length 0 (e.g. fewer rows than one batch with drop_last).
EMPTY_LOADER = Timeline(
    "empty loader",
    [
        ("4.30.0", "crash"),  # the loop divides by the loader length later on
        ("4.49.0", "no_length_path"),  # `if len_dataloader:` is false: treated like a stream
    ],
)
EMPTY_LOADER_ERROR = "ValueError: args.max_steps must be set to a positive value if dataloader does not have a length, was {max_steps}"


# save_strategy="best": SaveStrategy gained BEST in 4.47.0; before, TrainingArguments refuses the value.
SAVE_BEST = Timeline(
    "save_strategy best",
    [
        ("4.30.0", "refused"),
        ("4.47.0", "improving_evals"),  # a checkpoint at each evaluation that improves metric_for_best_model
    ],
)
SAVE_BEST_REFUSED = "ValueError: best is not a valid IntervalStrategy, please select one of ['no', 'steps', 'epoch']"
SAVE_BEST_NEEDS_METRIC = ("ValueError: `args.metric_for_best_model` must be provided when using 'best' save_strategy or "
                          "if `args.load_best_model_at_end` is set to `True`.")

# How a user can ask the Trainer for accelerate's split_batches.
SPLIT_BATCHES = Timeline(
    "split_batches",
    [
        ("4.30.0", False),  # the Trainer builds its Accelerator (or sampler) with no way to pass it
        ("4.35.0", True),  # TrainingArguments.split_batches; from 4.38 accelerator_config={"split_batches": True}
    ],
)


# A second log at a step already logged (logging_first_step and an epoch end at step 1, an epoch with no step):
# before 4.37 `_maybe_log_save_evaluate` divides the loss by (global_step - last logged step) and crashes.
LOG_SAME_STEP = Timeline("log at a logged step", [("4.30.0", "crash"), ("4.37.0", "skipped")])
LOG_SAME_STEP_ERROR = "ZeroDivisionError: float division by zero"


# Where a resumed run takes logging/eval/save steps from. From 4.32 the callbacks read state.*_steps, and the
# state loaded from the checkpoint's trainer_state.json replaces the one computed from the arguments.
RESUME_INTERVALS = Timeline("intervals after a resume", [("4.30.0", "arguments"), ("4.32.0", "checkpoint")])


@record(frozen=True)
class Rules:
    """Every rule in force at one release."""

    version: Version
    release: str
    """`version` as text ("4.49.0"), made once: every plan and trap names it."""
    family: Family
    family_start: Version
    banner_layout: str
    final_step_save: frozenset
    final_step_eval: bool
    warmup: str
    warmup_steps_check: tuple | None
    batch_divisor: tuple
    no_length_error: str
    empty_loader: str
    newer_than_known: bool
    published: bool
    """A release on the registry (in the banner line table of every release from 4.30.0 to the newest known)."""
    save_best: str
    split_batches_settable: bool
    log_same_step: str
    resume_intervals: str


@lru_cache(maxsize=1)
def _registry() -> frozenset:
    from trainsteps.frameworks.hf.log_lines import all_releases

    return frozenset(all_releases())


def _published(release: str) -> bool:
    return release in _registry()


@lru_cache(maxsize=256)
def rules_for(version: str | Version | None) -> Rules:
    """The rules of a release; None means the newest known. Raises ValueError for releases we do not model."""
    version = NEWEST if version is None else as_version(version)
    if version < OLDEST:
        raise ValueError(f"transformers {version} is older than {OLDEST}, the oldest release modelled")
    family_start, family = FAMILIES.entry(version)
    return Rules(
        version=version,
        release=str(version),
        family=family,
        family_start=family_start,
        banner_layout=BANNER_LAYOUT.at(version),
        final_step_save=FINAL_STEP_SAVE.at(version),
        final_step_eval=FINAL_STEP_EVAL.at(version),
        warmup=WARMUP.at(version),
        warmup_steps_check=WARMUP_STEPS_CHECK.at(version),
        batch_divisor=BATCH_DIVISOR.at(version),
        no_length_error=NO_LENGTH_ERROR.at(version),
        empty_loader=EMPTY_LOADER.at(version),
        newer_than_known=version > NEWEST,
        published=_published(str(version)),
        save_best=SAVE_BEST.at(version),
        split_batches_settable=SPLIT_BATCHES.at(version),
        log_same_step=LOG_SAME_STEP.at(version),
        resume_intervals=RESUME_INTERVALS.at(version),
    )


def representative_releases() -> list[Version]:
    """One release per family (its newest), for `--compare-versions`."""
    reps = {
        "4.30": "4.30.2",
        "4.31-4.45": "4.45.2",
        "4.46": "4.46.3",
        "4.47-4.51": "4.51.3",
        "4.52-4.56": "4.56.2",
        "4.57+": str(NEWEST),
    }
    return [Version.parse(v) for v in reps.values()]


def major_of(version: str | Version | None) -> int:
    """The major release number of the transformers release modelled (the newest known when None); an unparsable
    release is refused as the plan refuses it."""
    try:
        return (NEWEST if version is None else as_version(version)).major
    except ValueError as exc:
        from trainsteps.errors import InputError

        raise InputError("hf.error.version", "hf.hint.version", version=version, detail=str(exc)) from None

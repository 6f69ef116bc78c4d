"""`RunSpec`: what the user set for a run of a Trainer-based stack.

Field names follow `transformers.TrainingArguments` where one exists, so a user
can copy values across. Pretraining stacks (Megatron, GPT-NeoX) think in tokens and
global batches and have their own spec classes next to their rules.
"""

from __future__ import annotations

from operator import attrgetter

from trainsteps.record import record


@record
class RunSpec:
    """Settings of one training run, before any framework rule is applied."""

    num_examples: int | None = None
    """Rows in the training dataset as the Trainer sees it (`len(train_dataset)`), after any
    preprocessing or packing. None for a stream whose size is unknown."""

    per_device_train_batch_size: int = 8
    """Rows per micro-batch on each process (`--per_device_train_batch_size`)."""

    gradient_accumulation_steps: int = 1
    """Micro-batches accumulated into one optimizer step."""

    world_size: int = 1
    """Processes (ranks) in the job: GPUs per node x nodes. Tensor / context / sequence parallel
    groups are carved out of it; see `tensor_parallel_size` and friends."""

    tensor_parallel_size: int = 1
    """Ranks that hold one shard of each layer (transformers tp_plan, DeepSpeed autotp)."""

    context_parallel_size: int = 1
    """Ranks that share one sequence by splitting its context (accelerate ParallelismConfig cp_size)."""

    sequence_parallel_size: int = 1
    """Ranks of a sequence-parallel group (accelerate ParallelismConfig sp_size, transformers 5.x)."""

    num_train_epochs: float = 3.0
    """Passes over the data; fractions allowed. Ignored when `max_steps` > 0."""

    max_steps: int = -1
    """Optimizer steps to run; > 0 overrides `num_train_epochs`. Required for streams."""

    dataloader_drop_last: bool = False
    """Drop the last incomplete batch of each epoch."""

    split_batches: bool = False
    """accelerate: split each loader batch across ranks instead of giving each rank its own batch."""

    even_batches: bool = True
    """accelerate: wrap around to the start of the data so every rank gets the same number of full batches."""

    streaming: bool = False
    """The dataset is iterable (no `__len__`), e.g. `datasets` streaming mode. `num_examples`
    is then the size of one pass over the stream, if known."""

    resume_from_step: int | None = None
    """Resume from `checkpoint-K`: the global step K stored in its trainer_state.json."""

    warmup_ratio: float | None = None
    """Fraction of the optimizer steps used for learning-rate warmup (deprecated in transformers 5.0)."""

    warmup_steps: float | None = None
    """Warmup steps; from transformers 5.0 a value below 1 is a fraction of the steps."""

    logging_strategy: str = "steps"
    """When to log the loss: `steps`, `epoch` or `no`."""

    logging_steps: float = 500
    """Log every this many steps; a value below 1 is a fraction of the total steps (rounded up)."""

    logging_first_step: bool = False
    """Also log after the first optimizer step."""

    eval_strategy: str = "no"
    """When to evaluate: `steps`, `epoch` or `no` (`evaluation_strategy` before transformers 4.41)."""

    eval_steps: float | None = None
    """Evaluate every this many steps; below 1 is a fraction; defaults to `logging_steps`."""

    eval_delay: float = 0
    """Skip evaluations before this many steps (`steps` strategy) or epochs (`epoch` strategy)."""

    save_strategy: str = "steps"
    """When to write a checkpoint: `steps`, `epoch`, `best` or `no`."""

    save_steps: float = 500
    """Save every this many steps; below 1 is a fraction of the total steps (rounded up)."""

    checkpoint_logging_steps: int | None = None
    """After a resume: `logging_steps` stored in the checkpoint's trainer_state.json (absolute). From transformers
    4.32 the resumed run uses it instead of `logging_steps`; None means the same value as the arguments."""

    checkpoint_eval_steps: int | None = None
    """After a resume: `eval_steps` stored in the checkpoint (see `checkpoint_logging_steps`)."""

    checkpoint_save_steps: int | None = None
    """After a resume: `save_steps` stored in the checkpoint (see `checkpoint_logging_steps`)."""

    metric_for_best_model: str | None = None
    """Metric that `save_strategy="best"` compares at each evaluation (`loss` means `eval_loss`)."""

    greater_is_better: bool | None = None
    """Whether a larger `metric_for_best_model` is better; None lets the Trainer decide (False for
    names ending in `loss`)."""

    improving_evals: str = "all"
    """Which evaluations improve the best metric, for `save_strategy="best"` (it saves only at those):
    `all` (every one: an upper bound on saves), `first`, or the steps, comma-separated (`7,21,35`)."""

    trainable_parameters: int | None = None
    """Trainable parameters of the model, only for printing the banner's last line."""

    transformers: str | None = None
    """transformers release to model, any version string; None means the newest known."""

    # --- streams (iterable datasets) ---
    dataset_tokens: int | None = None
    """Tokens in one pass over a packed stream; with `seq_length` it gives the rows
    (`floor(dataset_tokens / seq_length)`) when `num_examples` is not set."""

    seq_length: int | None = None
    """Tokens per row of a packed dataset (every row full); turns rows seen into tokens seen."""

    dispatch_batches: bool | None = None
    """accelerate `dispatch_batches` (TrainingArguments `accelerator_config`): None is the default,
    which for an iterable dataset means rank 0 reads every batch and sends each rank its slice;
    False makes each rank read its own shard of the stream."""

    def to_dict(self) -> dict:
        return settings_dict(self.field_values())

    def field_values(self) -> tuple:
        """Every field's value, in field order (a snapshot: later changes to the spec do not reach it)."""
        return _ALL_FIELDS(self)

    @classmethod
    def field_names(cls) -> list[str]:
        return list(cls.__slots__)


_ALL_FIELDS = attrgetter(*RunSpec.__slots__)


def settings_dict(values: tuple) -> dict:
    """Field name -> value, from `RunSpec.field_values()`."""
    return dict(zip(RunSpec.__slots__, values, strict=True))

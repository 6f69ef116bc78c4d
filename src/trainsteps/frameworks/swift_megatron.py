"""ms-swift's Megatron trainer (`megatron sft`, `megatron pt`, `megatron rlhf`): iterations from epochs, the rows that
round away, GRPO's generations, save and eval intervals per epoch.

Rules of ms-swift 3.12.6 (`swift/megatron/trainers/base.py` BaseMegatronTrainer._get_iters) and 4.6.0
(`swift/megatron/arguments/megatron_args.py` MegatronArguments.init_iters), recorded by running that code
(tools/record_swift_megatron.py, tests/fixtures/pretrain/swift_megatron.json):
- N' = len(train_dataset) // (micro_batch_size x dp) x (micro_batch_size x dp) x g, where g = num_generations for GRPO
  and 1 otherwise; len(train_dataset) is packed rows with `--packing true`;
- with epochs, train_iters = N' x epochs // global_batch_size (floor: the last partial global batch is never trained;
  modelscope/ms-swift#7381); the option is `max_epochs` in 3.x and `num_train_epochs` from 4.0 (#7945);
- `save_strategy epoch` sets the save and eval intervals (3.x save_interval / eval_interval, 4.x save_steps /
  eval_steps) to N' // global_batch_size;
- defaults: micro_batch_size 1, global_batch_size 16, save interval 500, eval interval = save interval.
- the end of a run (tools/record_swift_megatron_end.py, tests/fixtures/pretrain/swift_megatron_end.json): the cyclic
  data iterator (4.x `cyclic_iter`, 3.x `new_cyclic_iter`, swift/megatron/trainers/base.py) sets train_iters =
  iteration + 1 when the last epoch's data runs out ("this approach will train for one additional step"). A dataset
  with a length never gets there: train_iters already stops at the floor above. A streamed run (`--streaming true`,
  train_iters required) does: rank 0 reads dp micro-batches a round (DataLoaderDispatcher; a short round ends the pass),
  so a pass is R = ceil(rows / micro) // dp micro-batches per rank, and the run stops after
  min(train_iters, floor(epochs x R / k) + 1) iterations (k = global // (micro x dp)): the step the data ran out in is
  finished with the next epoch's data, a whole extra step when epochs x R divides by k.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.schedule import RunFacts, Schedule, Trap
from trainsteps.versions import Timeline

NEWEST = "4.6.0"
"""The newest ms-swift release modelled (PyPI)."""
OPTION_NAMES = Timeline("swift_megatron.option_names", [("3.0.0", ("max_epochs", "save_interval", "eval_interval")),
                                                        ("4.0.0", ("num_train_epochs", "save_steps", "eval_steps"))])
"""The names of the epochs, save and eval options: renamed by the 4.0 refactor (#7945)."""
MAX_EVENTS = 100_000


@dataclass(frozen=True, slots=True)
class SwiftMegatronSpec:
    """A `megatron sft/pt/rlhf` run (MegatronArguments)."""

    num_examples: int
    """len(train_dataset): rows, or packed rows with --packing."""
    dp: int = 1
    """Megatron's data-parallel size: world / (tp x pp x cp)."""
    micro_batch_size: int = 1
    global_batch_size: int = 16
    epochs: int | None = None
    """num_train_epochs (4.x) / max_epochs (3.x)."""
    train_iters: int | None = None
    save_strategy: str = "steps"
    save_interval: int = 500
    eval_interval: int | None = None
    rlhf_type: str | None = None
    num_generations: int = 8
    release: str = NEWEST
    streaming: bool = False
    """An iterable dataset: num_examples is the rows one pass streams."""


def _check(spec: SwiftMegatronSpec) -> None:
    for name in ("num_examples", "dp", "micro_batch_size", "global_batch_size", "epochs", "train_iters", "save_interval", "eval_interval",
                 "num_generations"):
        value = getattr(spec, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InputError("swm.error.value", "swm.hint.value", name=name, value=value)
    if spec.save_strategy not in ("steps", "epoch"):
        raise InputError("swm.error.value", "swm.hint.value", name="save_strategy", value=spec.save_strategy)
    if spec.epochs is None and spec.train_iters is None:
        raise InputError("swm.error.unbounded", "swm.hint.unbounded", epochs=OPTION_NAMES.at(spec.release)[0])
    if spec.streaming and (spec.train_iters is None or spec.save_strategy == "epoch" or spec.rlhf_type == "grpo"):
        raise InputError("swm.error.streaming", "swm.hint.streaming")


def streamed_stop(spec: SwiftMegatronSpec) -> tuple[int, int, int]:
    """(iterations a streamed run trains, micro-batches a pass gives each rank, micro-batches a step draws)."""
    per_pass = -(-spec.num_examples // spec.micro_batch_size) // spec.dp  # DataLoaderDispatcher rounds of dp micro-batches
    per_step = spec.global_batch_size // (spec.micro_batch_size * spec.dp)
    if spec.epochs is None:  # no epoch count: the iterator cycles until train_iters
        return spec.train_iters, per_pass, per_step
    return min(spec.train_iters, spec.epochs * per_pass // per_step + 1), per_pass, per_step


def plan_swift_megatron(spec: SwiftMegatronSpec) -> Schedule:
    _check(spec)
    d = Derivation()
    step_batch = spec.micro_batch_size * spec.dp
    if spec.global_batch_size % step_batch:  # megatron-core's num-microbatches calculator
        raise InputError("swm.error.global_batch", "swm.hint.global_batch", gbs=spec.global_batch_size, micro=spec.micro_batch_size,
                         dp=spec.dp)
    g = spec.num_generations if spec.rlhf_type == "grpo" else 1
    samples = d.add("dataset_sample", spec.num_examples // step_batch * step_batch * g, "N // (mbs x dp) x (mbs x dp) x g",
                    f"{spec.num_examples} // {step_batch} x {step_batch} x {g}", "swm.why.samples")
    epoch_iters = samples // spec.global_batch_size
    traps = []
    if spec.streaming:
        iters, per_pass, per_step = streamed_stop(spec)
        samples = per_pass * step_batch
        epoch_iters = per_pass // per_step
        d.add("train_iters", iters, "min(train_iters, floor(epochs x R / k) + 1)",
              f"min({spec.train_iters}, floor({spec.epochs} x {per_pass} / {per_step}) + 1)", "swm.why.streamed")
        if spec.epochs is not None and iters < spec.train_iters:
            traps.append(Trap("SWIFT_MEGATRON_EXTRA_STEP", "swm.trap.extra_step", {
                "epochs": spec.epochs, "iters": iters, "full": iters - 1, "given": spec.train_iters}))
    elif spec.epochs is not None:
        iters = d.add("train_iters", samples * spec.epochs // spec.global_batch_size, "N' x epochs // global_batch_size",
                      f"{samples} x {spec.epochs} // {spec.global_batch_size}", "swm.why.iters")
    else:
        iters = d.add("train_iters", spec.train_iters, why="swm.why.train_iters")
    if iters == 0:
        raise InputError("swm.error.empty", "swm.hint.empty", samples=samples, gbs=spec.global_batch_size)
    epochs_name, save_name, eval_name = OPTION_NAMES.at(spec.release)
    save = epoch_iters if spec.save_strategy == "epoch" else spec.save_interval
    every_eval = epoch_iters if spec.save_strategy == "epoch" else (spec.eval_interval or save)
    if max(save and iters // save or 0, every_eval and iters // every_eval or 0) > MAX_EVENTS:
        raise InputError("swm.error.too_many_events", "swm.hint.too_many_events", iters=iters, limit=MAX_EVENTS)
    lost = spec.num_examples - spec.num_examples // step_batch * step_batch
    unused = samples * (spec.epochs or 0) - iters * spec.global_batch_size
    if spec.epochs is not None and not spec.streaming and (lost or unused):
        traps.append(Trap("SWIFT_MEGATRON_ROUNDED", "swm.trap.rounded", {"rows": lost, "step_batch": step_batch, "unused": unused,
                                                                        "iters": iters, "epochs": spec.epochs}))
    if spec.epochs is not None and spec.train_iters is not None and spec.train_iters != iters and not spec.streaming:  # init_iters overwrites it
        traps.append(Trap("SWIFT_MEGATRON_TRAIN_ITERS_REPLACED", "swm.trap.replaced", {"given": spec.train_iters, "iters": iters,
                                                                                     "epochs": epochs_name}))
    if g > 1:
        traps.append(Trap("SWIFT_MEGATRON_GENERATIONS", "swm.trap.generations", {"g": g, "samples": samples}))
    facts = RunFacts(optimizer_steps=iters, max_steps=iters, epoch_end_steps=[], epochs_completed=round(iters * spec.global_batch_size / samples, 4)
                     if samples else 0.0, epochs_planned=spec.epochs or 0, samples_seen=iters * spec.global_batch_size, warmup_steps=0,
                     eval_steps=list(range(every_eval, iters + 1, every_eval)) if every_eval else [],
                     save_steps=sorted({*range(save, iters + 1, save), iters}) if save else [iters], batches_per_epoch=epoch_iters,
                     samples_per_epoch=samples)
    lines = [f"{{'loss': ..., 'iteration': '{iters}/{iters}', 'elapsed_time': ..., 'remaining_time': ..., ...}}"]
    inputs = {name: getattr(spec, name) for name in SwiftMegatronSpec.__slots__}
    inputs.update(world_size=spec.dp, gradient_accumulation_steps=spec.global_batch_size // step_batch,
                  per_device_train_batch_size=spec.micro_batch_size, option_names=[epochs_name, save_name, eval_name],
                  save_every=save, eval_every=every_eval)
    return Schedule(framework="swift-megatron", version=spec.release, family=epochs_name, family_reason="swm.family",
                    banner={"train_iters": str(iters)}, banner_lines=lines, run=facts, warnings=traps, derivation=d, inputs=inputs)

"""DeepSpeed's batch triple: train_batch_size = micro x gradient accumulation x data-parallel size.

Rules of `deepspeed/runtime/config.py` (`_set_batch_related_parameters`, `_batch_assertion`; checked
against 0.19.8 in tests/fixtures/pretrain/deepspeed.json). GPT-NeoX runs the same rules itself
(`NeoXArgs.calculate_batch_parameters`) before handing the values to DeepSpeed, but computes the
data-parallel size as a float, which shows in its error text (`... * 4.0`).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.framework_error import FrameworkRuleError


@dataclass(frozen=True, slots=True)
class DeepSpeedSpec:
    """The batch keys of a DeepSpeed config and the data-parallel size they are checked against."""

    data_parallel_size: int
    """DeepSpeed's `world_size`: the data-parallel size (mpu's dp group, or all ranks / sequence_parallel_size)."""
    train_batch_size: int | None = None
    """`train_batch_size` (samples per optimizer step over all data-parallel ranks); None when omitted."""
    train_micro_batch_size_per_gpu: int | None = None
    """`train_micro_batch_size_per_gpu`; None when omitted."""
    gradient_accumulation_steps: int | None = None
    """`gradient_accumulation_steps`; None when omitted (GPT-NeoX's default is 1, not None)."""


@dataclass(frozen=True, slots=True)
class BatchTriple:
    """The three values after derivation, as the engine uses them."""

    train_batch_size: int
    """Samples per optimizer step, all data-parallel ranks together."""
    micro_batch: int
    """Samples per forward/backward per rank."""
    gradient_accumulation_steps: int
    """Micro-batches per optimizer step."""


def _dp_text(dp, float_dp: bool) -> str:
    return f"{float(dp)}" if float_dp else f"{dp}"


def derive_batch(spec: DeepSpeedSpec, d: Derivation | None = None, float_dp: bool = False) -> BatchTriple:
    """Fill the omitted keys the way DeepSpeed does (floor division), then run its assertions.

    Raises InputError carrying DeepSpeed's own assertion text in `framework_error`.
    `float_dp=True` renders the data-parallel size as GPT-NeoX does (`4.0`).
    """
    d = d if d is not None else Derivation()
    tb, mb, ga, dp = spec.train_batch_size, spec.train_micro_batch_size_per_gpu, spec.gradient_accumulation_steps, spec.data_parallel_size
    if dp < 1:
        raise InputError("ds.error.dp", "ds.hint.dp", dp=dp)
    if tb is not None and mb is not None and ga is not None:
        pass
    elif tb is not None and mb is not None:
        ga = d.add("gradient_accumulation_steps", tb // mb // dp, "tb // mb // dp", f"{tb} // {mb} // {dp}", "ds.why.derive_ga")
    elif tb is not None and ga is not None:
        mb = d.add("train_micro_batch_size_per_gpu", tb // dp // ga, "tb // dp // ga", f"{tb} // {dp} // {ga}", "ds.why.derive_mb")
    elif mb is not None and ga is not None:
        tb = d.add("train_batch_size", mb * ga * dp, "mb * ga * dp", f"{mb} * {ga} * {dp}", "ds.why.derive_tb")
    elif tb is not None:
        ga = d.add("gradient_accumulation_steps", 1, why="ds.why.only_tb")
        mb = d.add("train_micro_batch_size_per_gpu", tb // dp, "tb // dp", f"{tb} // {dp}", "ds.why.only_tb")
    elif mb is not None:
        tb = d.add("train_batch_size", mb * dp, "mb * dp", f"{mb} * {dp}", "ds.why.only_mb")
        ga = d.add("gradient_accumulation_steps", 1, why="ds.why.only_mb")
    else:
        _fail("Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided", "ds.error.none_given", "ds.hint.none_given")
    if tb <= 0:
        _fail(f"Train batch size: {tb} has to be greater than 0", "ds.error.not_positive", "ds.hint.floor_zero", key="train_batch_size", value=tb)
    if mb <= 0:
        _fail(f"Micro batch size per gpu: {mb} has to be greater than 0", "ds.error.not_positive", "ds.hint.floor_zero",
              key="train_micro_batch_size_per_gpu", value=mb)
    if ga <= 0:
        _fail(f"Gradient accumulation steps: {ga} has to be greater than 0", "ds.error.not_positive", "ds.hint.floor_zero",
              key="gradient_accumulation_steps", value=ga)
    if tb != mb * ga * dp:
        text = ("Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * "
                f"world_size {tb} != {mb} * {ga} * {_dp_text(dp, float_dp)}")
        if float_dp:
            text = text.replace("world_size ", "world_size \n")
        _fail(text, "ds.error.mismatch", "ds.hint.mismatch", tb=tb, mb=mb, ga=ga, dp=dp, product=mb * ga * dp)
    return BatchTriple(tb, mb, ga)


def _fail(framework_text: str, msg_id: str, hint_id: str, **params) -> None:
    raise FrameworkRuleError(msg_id, hint_id, framework_error=framework_text, **params)


def resolve_auto(value, fallback: int | None) -> int | None:
    """HF Trainer's DeepSpeed integration replaces "auto" with the TrainingArguments value before DeepSpeed sees it."""
    if value == "auto":
        return fallback
    return value


HF_MISMATCH_HEADER = "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:"
HF_MISMATCH_FOOTER = "The easiest method is to set these DeepSpeed config values to 'auto'."


def resolve_hf_batch(config: dict, per_device_train_batch_size: int, gradient_accumulation_steps: int, world_size: int,
                     auto_find_batch_size: bool = False) -> tuple[dict, list[str]]:
    """transformers' HfTrainerDeepSpeedConfig.trainer_config_process for the three batch keys.

    "auto" takes the TrainingArguments value (train_batch_size = world x per-device x GA); an explicit value
    that differs is a mismatch, reported in transformers' words, and training stops with
    HF_MISMATCH_HEADER + the mismatch lines + HF_MISMATCH_FOOTER. A missing key stays missing.
    """
    filled = dict(config)
    mismatches: list[str] = []
    rules = [
        ("train_micro_batch_size_per_gpu", per_device_train_batch_size, "per_device_train_batch_size", not auto_find_batch_size),
        ("gradient_accumulation_steps", gradient_accumulation_steps, "gradient_accumulation_steps", True),
        ("train_batch_size", world_size * per_device_train_batch_size * gradient_accumulation_steps, "train_batch_size (calculated)",
         not auto_find_batch_size),
    ]
    for key, hf_value, hf_key, must_match in rules:
        if key not in filled:
            continue
        if filled[key] == "auto":
            filled[key] = hf_value
        elif must_match and filled[key] is not None and filled[key] != hf_value:
            mismatches.append(f"- ds {key}={filled[key]} vs hf {hf_key}={hf_value}")
    return filled, mismatches


def config_lines(triple: BatchTriple, dp: int) -> list[str]:
    """The batch lines of `DeepSpeedEngine configuration:` (rank 0), dots as DeepSpeedConfig.print pads them."""
    values = {"gradient_accumulation_steps": triple.gradient_accumulation_steps, "train_batch_size": triple.train_batch_size,
              "train_micro_batch_size_per_gpu": triple.micro_batch, "world_size": dp}
    return [f"  {name} {'.' * (29 - len(name))} {value}" for name, value in sorted(values.items())]


@dataclass(slots=True)
class DeepSpeedPlan:
    """The derived triple, its provenance and the lines DeepSpeed prints."""

    spec: DeepSpeedSpec
    triple: BatchTriple
    derivation: Derivation
    printed: list[str]

    def to_dict(self, lang: str = "en") -> dict:
        return {
            "framework": "deepspeed",
            "inputs": {name: getattr(self.spec, name) for name in DeepSpeedSpec.__slots__},
            "batch": {"train_batch_size": self.triple.train_batch_size, "train_micro_batch_size_per_gpu": self.triple.micro_batch,
                      "gradient_accumulation_steps": self.triple.gradient_accumulation_steps, "data_parallel_size": self.spec.data_parallel_size},
            "banner_lines": list(self.printed),
            "derivation": self.derivation.to_list(lang),
        }


def plan_deepspeed(data_parallel_size: int, train_batch_size=None, micro_batch=None, gradient_accumulation_steps=None) -> DeepSpeedPlan:
    spec = DeepSpeedSpec(data_parallel_size, train_batch_size, micro_batch, gradient_accumulation_steps)
    d = Derivation()
    d.given("data_parallel_size", data_parallel_size, "ds.why.world")
    for key, value in (("train_batch_size", train_batch_size), ("train_micro_batch_size_per_gpu", micro_batch),
                       ("gradient_accumulation_steps", gradient_accumulation_steps)):
        if value is not None:
            d.given(key, value)
    triple = derive_batch(spec, d)
    return DeepSpeedPlan(spec, triple, d, config_lines(triple, data_parallel_size))

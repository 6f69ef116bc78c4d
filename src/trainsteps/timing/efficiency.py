"""Efficiency from measurements: the MFU a setup reaches, fitted on published throughputs, with an interval from the
residuals of similar setups and the fact that would narrow it most.

    log MFU = Σ coefficient x feature        (MFU against the BF16 dense peak; FLOPs = timing.flops' model FLOPs)

Features: the stack (Megatron / FSDP / Hugging Face Trainer-PEFT), the method (full, LoRA, QLoRA), activation
checkpointing, how full a micro-batch keeps the GPU (tokens per micro-batch on a saturating curve), model size
(log), MoE, fp8, the GPU generation and the GPU count; read between sources (every row of a source carries them), a
V100 or T4 and an accelerator NVIDIA does not make. The fit gives
every source its own intercept, so a stack's level is its typical source's
and a fact's coefficient is what holds inside sources (fp8's gain: sources that run one setup in bf16 and fp8; a
fact no two sources contrast stays at 0: Blackwell, Ada, the GPU's peak). The coefficients and the out-of-source residual quantiles are data written by tools/fit_efficiency.py
from the calibration rows of tests/fixtures/timing/time_corpus.json (efficiency_fit.py); bench/bench_time_model.py
--loso scores each source with a fit made without it. The interval's residuals are those of setups of the same stack
and method that also share what the user states of RESIDUAL_BY (whether the run pretrains, whether its rows are
packed); where that is unknown, those of the stack and method. Pure: no I/O.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from trainsteps.errors import InputError
from trainsteps.timing.efficiency_fit import COEFFICIENTS, RESIDUAL_BY, RESIDUALS
from trainsteps.timing.estimate import Interval
from trainsteps.timing.gpus import find_gpu

STACKS = ("megatron", "fsdp", "hf")
"""Training stacks the fit tells apart (Megatron-FSDP counts as megatron; DeepSpeed ZeRO as hf: the Trainer drives it)."""

GENERATIONS = {"a100-80g": "ampere", "a100-40g": "ampere", "a800": "ampere", "a10": "ampere", "a10g": "ampere",
               "rtx3090": "ampere", "rtx-a6000": "ampere", "h100-sxm": "hopper", "h100-pcie": "hopper",
               "h100-nvl": "hopper", "h200": "hopper", "h800": "hopper", "h20": "hopper", "gh200": "hopper",
               "b200": "blackwell", "gb200": "blackwell", "b300": "blackwell", "rtx5090": "blackwell",
               "rtx4090": "ada", "rtx-6000-ada": "ada", "l4": "ada", "l40s": "ada", "l20": "ada",
               "v100": "volta", "t4": "turing"}
"""GPU generation by `--gpu` key; other vendors' accelerators are read as hopper-class with their own level
(`other_vendor`, fitted between sources)."""

GEFORCE = frozenset({"rtx3090", "rtx4090", "rtx5090"})
"""GeForce cards, whose BF16 peak (timing.gpus) is the half rate of FP32 accumulation: `geforce`, a level of their own
tried between sources on 207 sources and not read."""

REFERENCE_PEAK = 989e12
"""H100 SXM's BF16 dense peak: `log_peak` is a GPU's peak relative to it (0 for an accelerator trainsteps does not know)."""


@dataclass(frozen=True, slots=True)
class SetupFacts:
    """What a run's setup says about its efficiency; None is unknown (the interval widens over it)."""

    method: str = "full"
    """full, lora, qlora (frozen counts as full)."""
    stack: str | None = None
    """megatron, fsdp or hf; None: unknown."""
    checkpointing: str | None = None
    """none, selective or full; None: unknown."""
    dtype: str = "bf16"
    """bf16 / fp16 / fp8."""
    tokens_per_micro_batch: float | None = None
    """Tokens one forward pass of one GPU computes (micro-batch x padded or packed row)."""
    active_params: float | None = None
    """Multiplying parameters a token uses (MoE: the active experts)."""
    moe: bool = False
    gpu: str | None = None
    """The `--gpu` key."""
    gpus: int = 1
    base_quant: str | None = None
    """How a QLoRA run's frozen base is stored: nf4 / fp4 (bitsandbytes 4-bit), int8 (bitsandbytes LLM.int8), gptq,
    awq; None: not said (planned as bitsandbytes 4-bit, the common QLoRA)."""
    offload: bool = False
    """Optimizer states or parameters offloaded to the CPU (DeepSpeed ZeRO offload, FSDP CPU offload)."""
    whole_run: bool = False
    """The rate is a whole run's wall time (model loading, evaluations and saves inside): true of calibration rows
    only; a plan states those parts apart (timing.overheads)."""
    pretraining: bool | None = None
    """Pretraining (a pretraining framework's plan, a pretraining corpus row) rather than fine-tuning; None: unknown."""
    packed: bool | None = None
    """Rows packed into full sequences (no padding); None: unknown."""


@dataclass(frozen=True, slots=True)
class MfuEstimate:
    """An MFU interval and what it rests on."""

    mfu: Interval
    """Against the BF16 dense peak (an fp8 run too)."""
    unknown: tuple[str, ...]
    """Facts the estimate had to range over (stack, checkpointing), most informative first."""
    similar: int
    """Calibration measurements of the same stack and method the interval's residuals come from."""
    stack_spread: float
    """Slowest / fastest stack's expected MFU for this setup (1.0 when the stack is given)."""


def features(facts: SetupFacts, stack: str, checkpointing: str) -> dict[str, float]:
    """The fit's features of one setup, with the stack and checkpointing chosen."""
    method = "full" if facts.method in ("full", "frozen") else facts.method
    generation = GENERATIONS.get(facts.gpu or "", "hopper")
    params = min(max(facts.active_params or 7e9, 1e8), 1e11)
    return {
        f"stack_{stack}": 1.0, f"method_{method}": 1.0 if method != "full" else 0.0,
        "checkpointing_full": 1.0 if checkpointing == "full" else 0.0,
        "checkpointing_selective": 1.0 if checkpointing == "selective" else 0.0,
        "fp8": 1.0 if facts.dtype == "fp8" else 0.0,
        "log_fill": micro_batch_fill(facts.tokens_per_micro_batch), "log_params": math.log(params / 7e9),
        "moe": 1.0 if facts.moe else 0.0,
        "ampere": 1.0 if generation == "ampere" else 0.0, "blackwell": 1.0 if generation == "blackwell" else 0.0,
        "ada": 1.0 if generation == "ada" else 0.0, "log_peak": math.log(_bf16_peak(facts.gpu) / REFERENCE_PEAK),
        "log_gpus": math.log(max(1, facts.gpus) / 8),
        "quant_int8": 1.0 if method == "qlora" and facts.base_quant == "int8" else 0.0,
        "quant_gptq": 1.0 if method == "qlora" and facts.base_quant in ("gptq", "awq") else 0.0,
        "offload": 1.0 if facts.offload else 0.0, "whole_run": 1.0 if facts.whole_run else 0.0,
        "log_small": max(0.0, math.log(1e9 / max(facts.active_params or 7e9, 1e7))),
        "pretraining": 1.0 if facts.pretraining else 0.0,
        "quant_fp4": 1.0 if method == "qlora" and facts.base_quant == "fp4" else 0.0,
        "qlora_log_params": math.log(params / 7e9) if method == "qlora" else 0.0,
        f"pretraining_{stack}": 1.0 if facts.pretraining else 0.0,
        # tried on 127 sources and left at 0 (tools/fit_efficiency.py UNMODELLED)
        "moe_fsdp": 1.0 if facts.moe and stack == "fsdp" else 0.0,
        "lora_packed": 1.0 if method in ("lora", "qlora") and facts.packed else 0.0,
        # fp8's gain growing with the model: fitted since 199 sources
        "fp8_log_params": math.log(params / 7e9) if facts.dtype == "fp8" else 0.0,
        # read between sources since 199 sources (tools/fit_efficiency.py LEVEL_FACTS)
        "older_nvidia": 1.0 if generation in ("volta", "turing") else 0.0,
        "other_vendor": 1.0 if _other_vendor(facts.gpu) else 0.0,
        # tried on 207 sources and left at 0 (tools/fit_efficiency.py UNMODELLED)
        "geforce": 1.0 if facts.gpu in GEFORCE else 0.0,
    }


HARDWARE_LEVELS = ("older_nvidia", "other_vendor")
"""Facts of the accelerator alone, which every row of a source shares: a fit may read them between sources
(tools/fit_efficiency.py LEVEL_FACTS; the shipped fit reads both)."""


def hardware_level(gpu: str | None) -> tuple[str, float] | None:
    """(the fact, the factor on its stack's level) where the fit plans a `--gpu` at a level of its own (a V100 or T4,
    another vendor's accelerator); None where it does not."""
    fitted = [name for name in HARDWARE_LEVELS if COEFFICIENTS.get(name)]
    if not fitted:  # a fit that reads no level: no features to compute on every plan
        return None
    on = features(SetupFacts(gpu=gpu), "hf", "none")
    return next(((name, math.exp(COEFFICIENTS[name])) for name in fitted if on[name]), None)


@functools.cache
def _other_vendor(gpu: str | None) -> bool:
    """An accelerator trainsteps knows that NVIDIA does not make (AMD, Intel Gaudi, Google TPU, Huawei Ascend); a peak
    given by hand (`custom`) is not known to be one."""
    try:
        return bool(gpu) and not find_gpu(gpu).title.startswith("NVIDIA")
    except InputError:
        return False


def _bf16_peak(gpu: str | None) -> float:
    """The BF16 dense peak of a `--gpu` key; the reference peak where the GPU is unknown (no effect)."""
    try:
        return find_gpu(gpu).peak("bf16") if gpu else REFERENCE_PEAK
    except InputError:
        return REFERENCE_PEAK


FILL_HALF_TOKENS = 4096
"""Tokens per micro-batch at which a GPU is taken to run at half its full-batch rate: log MFU moves with
log(t / (t + FILL_HALF_TOKENS)) x a fitted coefficient, so a micro-batch of one short row (a few hundred tokens) is
slow and a large packed one saturates. Chosen with the fact's ridge (tools/fit_efficiency.py `FILL_RIDGE`) by
leave-one-source-out over the calibration sources (docs/time.md, "The micro-batch fact")."""


def micro_batch_fill(tokens_per_micro_batch: float | None) -> float:
    """How full one forward pass keeps the GPU, as log(t / (t + half)) relative to a 4,096-token micro-batch (0 there
    and when unknown). Clamped to 16 ... 65,536 tokens: below, the curve is a guess; above, it is flat anyway."""
    tokens = min(max(tokens_per_micro_batch or 4096, 16), 65536)
    return math.log(tokens / (tokens + FILL_HALF_TOKENS)) - math.log(4096 / (4096 + FILL_HALF_TOKENS))


def predict_log_mfu(facts: SetupFacts, stack: str, checkpointing: str, coefficients: dict | None = None) -> float:
    """log MFU of a setup: the stack's level plus each fact's coefficient (`coefficients`: a refit's, for the bench)."""
    coefficients = COEFFICIENTS if coefficients is None else coefficients
    return sum(coefficients.get(name, 0.0) * value for name, value in features(facts, stack, checkpointing).items())


def estimate_mfu(facts: SetupFacts) -> MfuEstimate:
    """The expected MFU of a setup and an interval: the quantiles of how far calibration sources of a similar setup
    sit from a fit made without them (RESIDUALS), around the prediction, widened over every stack (and
    checkpointing) the facts leave open."""
    stacks = (facts.stack,) if facts.stack else STACKS
    checkpointings = (facts.checkpointing,) if facts.checkpointing else ("none", "full")
    predictions = {(s, c): predict_log_mfu(facts, s, c) for s in stacks for c in checkpointings}
    method = "full" if facts.method in ("full", "frozen") else facts.method
    expected_stack = facts.stack or "hf"  # what a Trainer-based run uses unless its config says otherwise
    expected_ckpt = facts.checkpointing or "none"
    expected = predictions.get((expected_stack, expected_ckpt), max(predictions.values()))
    residuals = {stack: _residuals(stack, method, residual_key_suffix(facts, RESIDUAL_BY)) for stack in stacks}
    # the bounds always hold the expected value: where every calibration source of a stack sat above its level
    # (megatron), the residuals alone would put the low end above the value planned with
    low = min(expected, *(value + residuals[stack][0] for (stack, _), value in predictions.items()))
    high = max(expected, *(value + residuals[stack][1] for (stack, _), value in predictions.items()))
    similar = sum(residuals[stack][2] for stack in stacks)
    by_stack = [max(v for (s, _), v in predictions.items() if s == stack) for stack in stacks]
    unknown = tuple(name for name, open_ in (("stack", not facts.stack), ("checkpointing", not facts.checkpointing)) if open_)
    return MfuEstimate(Interval(_mfu(low), _mfu(expected), _mfu(high)), unknown, similar,
                       math.exp(max(by_stack) - min(by_stack)))


def _residuals(stack: str | None, method: str, suffix: str = "") -> tuple[float, float, int]:
    """(low, high quantile of out-of-source log residuals, measurements) of the same stack and method, else of the
    method, else all; at each of these, first of setups that also share what `suffix` states (a key exists only where
    enough sources give its residuals). A fact the user leaves unknown has no suffix: the broader residuals apply."""
    for base in (f"{stack}/{method}" if stack else None, f"*/{method}", "*/*"):
        for key in ((base + suffix, base) if suffix and base else (base,)):
            if key and key in RESIDUALS and RESIDUALS[key][2] >= 5:
                return RESIDUALS[key]
    return RESIDUALS["*/*"]


def residual_key_suffix(facts: SetupFacts, by: tuple[str, ...]) -> str:
    """What the interval's residuals are keyed by beyond the stack and method (`by`: the fit's RESIDUAL_BY), e.g.
    "/nodes=1/packed=yes"; empty where a fact of `by` is unknown (the broader residuals then apply)."""
    values = {"nodes": "1" if facts.gpus <= 8 else "many",
              "generation": GENERATIONS.get(facts.gpu or "", "other") if facts.gpu else None,
              "pretraining": None if facts.pretraining is None else ("yes" if facts.pretraining else "no"),
              "packed": None if facts.packed is None else ("yes" if facts.packed else "no")}
    if not by or any(values[name] is None for name in by):
        return ""
    return "".join(f"/{name}={values[name]}" for name in by)


def _mfu(log_value: float) -> float:
    return min(1.0, math.exp(log_value))


def stack_of(framework: str | None, config: dict | None = None) -> str | None:
    """The stack a plan's framework and config imply: Megatron/NeoX configs are megatron, torchtitan (PyTorch FSDP2)
    is fsdp; a Trainer-family config with FSDP settings is fsdp, with DeepSpeed or none is hf (the Trainer drives the
    step); None when unknown."""
    if framework in ("megatron", "neox"):
        return "megatron"
    if framework == "torchtitan":
        return "fsdp"
    if not config:
        return None
    if config.get("fsdp") or config.get("fsdp_config"):
        return "fsdp"
    return "hf"

"""The FLOPs model: FLOPs per token of a transformer, and the MFU ranges that turn peak FLOP/s into a step time.

Per token, for training (model FLOPs, the PaLM/Megatron convention: activation recomputation is not counted, it
shows up as a lower MFU):

    full        6·N  + attention          N: parameters that do matrix multiplies for this token (MoE: the active
                                          experts; the embedding lookup is not a multiply, the LM head is)
    lora/qlora  4·N  + attention          frozen weights get no weight gradient: forward 2N + input gradients 2N;
                                          the adapters add 6·r·(d_in + d_out) per adapted matrix, < 1% at usual ranks.
                                          QLoRA does the same FLOPs; its dequantization shows up as a lower MFU.
    frozen      4·N … 6·N                 part of the model frozen: between the two, expected halfway
    attention   12·L·d_attn·s × ½ (causal) forward 4·L·d_attn·s (QKᵀ and AV) x 3 for forward + backward; s is the
                                          length attended: the padded row length of an unpadded batch, the packed
                                          row's length, or Σ len² / Σ len where the framework masks per sequence

Evaluation is forward only: 2·N + 4·L·d_attn·s × ½.
Pure: `shape_from_config` takes the parsed config.json dict (reading it is `timing.model_files`).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.errors import InputError
from trainsteps.timing.architectures import ModelShape, shape_from_config
from trainsteps.timing.estimate import Interval

__all__ = ["ModelShape", "shape_from_config"]  # read here by older callers; architectures.py owns them

TRAINING_KINDS = ("full", "lora", "qlora", "frozen")


def shape_from_params(params: float) -> ModelShape:
    """`--params N`: N taken as the multiply parameters; no attention term (layers unknown)."""
    if not params or params <= 0 or params != params:
        raise InputError("time.error.params", "time.hint.params", value=params)
    return ModelShape(float(params), float(params), source=f"--params {params:.4g}")


def attention_flops(shape: ModelShape, attended: float, causal: bool = True, forward_only: bool = False) -> float:
    """Attention-score FLOPs per token: 4·d_attn·(mean length a token attends) per layer forward (x3 with backward).

    Causal, a token at position i of a row of s attends i tokens: s/2 on average. A sliding-window layer (window w <
    s) attends min(i, w): w - w²/(2s) on average. Without a causal mask every token attends s."""
    if not shape.layers or not shape.attention_width or not attended:
        return 0.0
    full = attended * (0.5 if causal else 1.0)
    window = shape.sliding_window
    sliding = shape.sliding_layers if window else 0
    windowed = full if not sliding or attended <= window else (window - window * window / (2 * attended) if causal
                                                               else min(window, attended))
    forward = 4 * shape.attention_width * ((shape.layers - sliding) * full + sliding * windowed)
    return forward if forward_only else 3 * forward


def train_flops_per_token(shape: ModelShape, attended: float | None, training: str = "full",
                          causal: bool = True) -> Interval:
    """Training FLOPs per token as an interval (exact for full and LoRA; a range for a partly frozen model)."""
    if training not in TRAINING_KINDS:
        raise InputError("time.error.training", "time.hint.training", value=training, known=", ".join(TRAINING_KINDS))
    n, attn = shape.matmul_params, attention_flops(shape, attended or 0, causal)
    if training == "full":
        return Interval.exact(6 * n + attn)
    if training in ("lora", "qlora"):
        return Interval.exact(4 * n + attn)
    return Interval(4 * n + attn, 5 * n + attn, 6 * n + attn)


def eval_flops_per_token(shape: ModelShape, attended: float | None, causal: bool = True) -> float:
    """Forward-only FLOPs per token (evaluation without generation)."""
    return 2 * shape.matmul_params + attention_flops(shape, attended or 0, causal, forward_only=True)


@dataclass(frozen=True, slots=True)
class MfuRange:
    """Model FLOPs utilisation to assume for a kind of run, from published measurements."""

    mfu: Interval
    """low / expected / high."""
    source: str
    """The measurements behind the range (docs/time.md has the table)."""


MFU_DEFAULTS: dict[str, MfuRange] = {
    "pretrain": MfuRange(Interval(0.35, 0.45, 0.55),
                         "Megatron-LM 52% (1T, 3072 A100, Narayanan et al. 2021); PaLM 46.2% (TPU v4); "
                         "Llama 3 405B 38-43% (16K H100, Meta 2024); MegaScale 55.2% (175B, 12,288 GPUs, 2024)"),
    "full": MfuRange(Interval(0.25, 0.35, 0.45),
                     "GPT-NeoX-20B 37.5% (A100, Black et al. 2022); torchtitan Llama 3.1 8B 8xH100 FSDP ~33-38% "
                     "(Liang et al. 2024); ftune's default 0.35"),
    "lora": MfuRange(Interval(0.15, 0.25, 0.40),
                     "LoRA on 4N model FLOPs: small adapted matmuls and optimizer-free frozen weights run below full "
                     "fine-tuning's MFU; docs/time.md"),
    "qlora": MfuRange(Interval(0.10, 0.20, 0.30),
                      "QLoRA: 4-bit dequantization on every forward and backward; ftune's default 0.30 on 0.75 x 6N"),
}
MFU_DEFAULTS["frozen"] = MFU_DEFAULTS["full"]


def parse_mfu(text: str) -> Interval:
    """`0.35` (expected, with ±0.05 around it) or `0.3-0.5` (a range, expected in the middle); each in (0, 1]."""
    raw = str(text).strip().rstrip("%")
    percent = str(text).strip().endswith("%")
    try:
        parts = [float(p) / (100 if percent else 1) for p in raw.split("-")] if raw.count("-") <= 1 else []
    except ValueError:
        parts = []
    if not parts or any(not (0 < p <= 1) for p in parts) or (len(parts) == 2 and parts[0] > parts[1]):
        raise InputError("time.error.mfu", "time.hint.mfu", value=text)
    if len(parts) == 1:
        value = parts[0]
        return Interval(max(value - 0.05, value * 0.5), value, min(1.0, value + 0.05))
    return Interval(parts[0], (parts[0] + parts[1]) / 2, parts[1])


def expected_longest(percentiles: dict[float, float], shortest: float, longest: float, rows: int,
                     cutoff: int | None = None) -> float:
    """Expected length of the longest of `rows` rows drawn at random: the length distribution's quantile at
    rows / (rows + 1), interpolated through the counted percentiles (min, p50, p90, p95, p99, max); capped at the
    cutoff (rows are truncated to it). An unpacked batch is padded to this length."""
    points = sorted({0.0: shortest, 1.0: longest, **{p / 100 if p > 1 else p: v for p, v in percentiles.items()}}.items())
    q = rows / (rows + 1)
    value = longest
    for (q0, v0), (q1, v1) in zip(points, points[1:], strict=False):
        if q0 <= q <= q1:
            value = v0 if q1 == q0 else v0 + (v1 - v0) * (q - q0) / (q1 - q0)
            break
    return min(value, cutoff) if cutoff else value


def model_rate(tokens_per_step: float, flops_per_token: Interval, peak_flops: float, devices: int,
               mfu: Interval, detail: str, assumptions: tuple = ()):
    """Seconds per optimizer step = tokens per step x FLOPs per token / (peak FLOP/s x devices x MFU)."""
    from trainsteps.timing.estimate import Rate

    work = Interval(tokens_per_step * flops_per_token.low, tokens_per_step * flops_per_token.expected,
                    tokens_per_step * flops_per_token.high)
    capacity = peak_flops * devices
    seconds = Interval(work.low / (capacity * mfu.high), work.expected / (capacity * mfu.expected),
                       work.high / (capacity * mfu.low))
    return Rate(seconds, "model", detail, tokens_per_step=tokens_per_step, mfu=mfu, assumptions=assumptions)


def implied_mfu(step_seconds: Interval, tokens_per_step: float, flops_per_token: float, peak_flops: float,
                devices: int) -> Interval:
    """The MFU a measured step time implies (a faster step is a higher MFU)."""
    work = tokens_per_step * flops_per_token / (peak_flops * devices)
    return Interval(work / step_seconds.high, work / step_seconds.expected, work / step_seconds.low)


PREFERENCE_TRAINERS = {
    # trainer: (policy rows trained per example, extra policy forward rows, reference forward rows) - TRL's passes
    "dpo": (2, 0, 2),      # DPOTrainer: chosen + rejected through the policy; the reference scores both
    "ipo": (2, 0, 2),      # DPOTrainer(loss_type="ipo"): the same passes
    "dpo_reference_free": (2, 0, 0),  # DPOConfig(reference_free=True): the policy alone
    "kto": (1, 1, 2),      # KTOTrainer: the completion, plus a mismatched KL completion (policy no-grad + reference)
    "orpo": (2, 0, 0),     # ORPOTrainer: odds ratio on the policy alone, no reference model
    "simpo": (2, 0, 0),    # CPOTrainer(loss_type="simpo"): reference-free
    "cpo": (2, 0, 0),      # CPOTrainer: reference-free
    "reward": (2, 0, 0),   # RewardTrainer: chosen and rejected through the reward model, no reference
}
"""Passes per example of the preference trainers, in rows of the example's length (TRL's trainers; LLaMA-Factory's
`stage: dpo/kto/rm` call them)."""


@dataclass(frozen=True, slots=True)
class PreferenceCost:
    """FLOPs of one preference example (a chosen/rejected pair, or one KTO completion), or of one of its row tokens."""

    train: Interval
    """Every optimizer-step pass: policy forward + backward, and forwards that are not precomputed."""
    prepare: float
    """Reference forwards done once before training (`precompute_ref_log_probs`): a preparation cost, not per epoch."""
    passes: str
    """What was counted, e.g. `policy 2 rows x 6N, reference 2 rows x 2N`."""
    evaluate: float = 0.0
    """An evaluation's forwards: every row the policy scores and, unless precomputed, the reference (no backward). A
    precomputed reference scores the evaluation set once, before the first evaluation (TRL's DPOTrainer
    get_eval_dataloader), not at every evaluation."""
    trained_rows: int = 1
    """Rows one example puts through the policy's forward and backward (a micro-batch holds this many per example)."""


def preference_per_token(shape: ModelShape, attended: float | None, trainer: str, training: str = "full",
                         precompute_reference: bool = False) -> PreferenceCost:
    """FLOPs per token of one row of a preference example (chosen and rejected taken as equally long): what a step of
    `tokens` row tokens costs is `tokens` x this. A LoRA policy's reference is the same model with the adapters
    disabled: still a forward pass."""
    if trainer not in PREFERENCE_TRAINERS:
        raise InputError("time.error.training", "time.hint.training", value=trainer, known=", ".join(PREFERENCE_TRAINERS))
    trained, policy_forward, reference = PREFERENCE_TRAINERS[trainer]
    per_token = train_flops_per_token(shape, attended, training)
    forward = eval_flops_per_token(shape, attended)
    reference_each_step = 0 if precompute_reference else reference
    extra = (policy_forward + reference_each_step) * forward
    train = Interval(per_token.low * trained + extra, per_token.expected * trained + extra, per_token.high * trained + extra)
    prepare = reference * forward if precompute_reference else 0.0
    passes = f"policy {trained} rows trained" + (f" + {policy_forward} forward" if policy_forward else "") + \
        (f", reference {reference} rows forward" + (" (precomputed once)" if precompute_reference else "") if reference else "")
    return PreferenceCost(train, prepare, passes, (trained + policy_forward + reference_each_step) * forward, trained)


def preference_flops(shape: ModelShape, tokens_per_row: float, trainer: str, training: str = "full",
                     precompute_reference: bool = False, attended: float | None = None) -> PreferenceCost:
    """FLOPs of one example of a preference trainer: `tokens_per_row` is one completion's tokens with its prompt
    (chosen and rejected are taken as equally long; give their mean)."""
    each = preference_per_token(shape, attended or tokens_per_row, trainer, training, precompute_reference)
    return PreferenceCost(each.train.scaled(tokens_per_row), each.prepare * tokens_per_row, each.passes,
                          each.evaluate * tokens_per_row, each.trained_rows)

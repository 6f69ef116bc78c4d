"""Step lines of training loops that print no bar and no dict: one line per logged step, with a loss and a rate.

    [rank0]:[titan] ... - root - INFO - step: 200  loss:  6.1384  memory: 49.66GiB(52.28%)  tps: 5,856     (torchtitan)
    step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec: 529,882               (nanochat)
    iter 97 step 49: loss 10.8259, iter time: 215.37ms (optimizer.step)                                    (LitGPT)
    Epoch 1 | iter 46 step 1 | loss train: 3.724, val: n/a | iter time: 45.73 ms                           (LitGPT)
    Iter 10: Train loss 0.061, ..., It/sec 0.103, Tokens/sec 63.892                                        (MLX)
    INFO:tensorflow:global step 5: loss = 62.5264 (20.205 sec/step)                                        (TF-Slim)
    [Step 120] loss=1.93 lr=2e-5  /  Step 12 | loss 1.2 | 3.1 s/it  /  step 15/300 loss 0.8                 (custom loops)

One rule reads them all: a step marker (`step`, `global step`, `[Step N]`, `Iter N:`; LitGPT's `iter I step S`
counts optimizer steps S) followed by a number, on a line that also carries a training metric (a loss, a rate, a
learning rate). A marker with no metric beside it is prose or a framework message (`Dumping profiler traces at
step 200`), and a validation line (`Iter 50: Val loss ...`) is an evaluation, not a step. The total is the one the
line prints (`step 4/21400`) or the last declared before it in the same unit (`iters: 500` for `Iter N` lines,
`max_steps: N` for step lines).
"""

from __future__ import annotations

import re

from trainsteps.logs.context import ScanContext

# LitGPT: micro-batch iterations and the optimizer step they belong to
_LITGPT = re.compile(r"\biter\s+\d+\s*\|?\s*step\s+(\d+)\b")
# `step: 4`, `step 00004/21400`, `[Step 5]`, `Step 5 |`, `global step 8:`, `global_step: 12`
_STEP = re.compile(r"(?<![\w/.])(?:global[_ ])?[Ss]tep\]?\s*[:=]?\s*\[?\s*(\d{1,12})(?:\s*/\s*(\d{1,12}))?(?![\w.])")
# MLX and similar: `Iter 10: Train loss ...`
_ITER = re.compile(r"(?<![\w/.])[Ii]ter\s+(\d{1,12})\s*:")
_METRIC = re.compile(r"\bloss\b|\blr\b|learning[_ ]rate|\btps\b|tok(?:ens)?/s(?:ec)?|\bdt\s*[:=]|iter time|sec/step|s/it\b"
                     r"|it/s(?:ec)?\b|It/sec|grad_norm|\breward", re.IGNORECASE)
_VALIDATION = re.compile(r"\b(?:[Vv]al(?:idation)?|[Ee]val(?:uation)?)[ _](?:loss|took|accuracy)\b")
# Totals declared before the steps: `max_steps: 300`, `Maximum number of steps set at 33788`, `iters: 500`
_DECLARED = re.compile(r"(?<![\w])(max[_ ]steps|total[_ ]steps|total[_ ]training[_ ]steps|iters)['\"]?\s*[:=]\s*(\d{1,12})\b"
                       r"|Maximum number of steps (?:set at|:)\s*(\d{1,12})")
# Seconds per step printed on the line: `dt: 989.44ms`, `(20.205 sec/step)`, `It/sec 0.141`, `3.1 s/it`
_SECONDS = (
    (re.compile(r"\bdt\s*[:=]\s*([\d.]+)\s*ms\b"), 1e-3),
    (re.compile(r"\(([\d.]+) sec/step\)"), 1.0),
    (re.compile(r"([\d.]+)\s*s/it\b"), 1.0),
)
_PER_SECOND = re.compile(r"\bIt/sec\s+([\d.]+)|([\d.]+)\s*it/s\b")
# torchtitan's step line ends `tps: 7,282  tflops: 0.52  mfu: 0.17%` (components/metrics.py)
_TITAN_MFU = re.compile(r"\btflops:\s*[\d.]+\s+mfu:\s*([\d.]+)%")


def declared_total(line: str, ctx: ScanContext) -> None:
    """Remember a total the loop declares before its steps, in the unit it counts (`iters` for `Iter N` lines)."""
    if "ters" not in line and "teps" not in line:
        return
    match = _DECLARED.search(line)
    if match is None:
        return
    if match.group(3):
        ctx.declared_totals["step"] = int(match.group(3))
        return
    unit = "iter" if match.group(1) == "iters" else "step"
    ctx.declared_totals[unit] = int(match.group(2))


def read(line: str) -> tuple[int, int | None, str] | None:
    """(step, total printed on the line or None, unit) of a step line; None for anything else."""
    if "tep" not in line and "ter" not in line:
        return None
    if _METRIC.search(line) is None or _VALIDATION.search(line):
        return None
    litgpt = _LITGPT.search(line)
    if litgpt is not None:
        return int(litgpt.group(1)), None, "step"
    step = _STEP.search(line)
    if step is not None:
        total = int(step.group(2)) if step.group(2) else None
        return int(step.group(1)), total, "step"
    it = _ITER.search(line)
    if it is not None:
        return int(it.group(1)), None, "iter"
    return None


def reported_mfu(line: str) -> tuple[str, float] | None:
    """(framework, MFU as a fraction) a step line prints itself: torchtitan's `tflops: ... mfu: x%`."""
    if "mfu:" not in line:
        return None
    match = _TITAN_MFU.search(line)
    return None if match is None else ("torchtitan", float(match.group(1)) / 100)


def seconds_per_step(line: str) -> float | None:
    """The time of one step the line prints, when it prints one per optimizer step (LitGPT's `iter time` is one
    micro-batch's, not a step's: it is not read)."""
    if "iter time" in line:
        return None
    for pattern, scale in _SECONDS:
        match = pattern.search(line)
        if match:
            value = float(match.group(1)) * scale
            return value if value > 0 else None
    match = _PER_SECOND.search(line)
    if match:
        rate = float(match.group(1) or match.group(2))
        return 1 / rate if rate > 0 else None
    return None

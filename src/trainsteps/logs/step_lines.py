"""Step lines of training loops that print no bar and no dict: one line per logged step, with a loss and a rate.

    [rank0]:[titan] ... - root - INFO - step: 200  loss:  6.1384  memory: 49.66GiB(52.28%)  tps: 5,856     (torchtitan)
    step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec: 529,882               (nanochat)
    iter 97 step 49: loss 10.8259, iter time: 215.37ms (optimizer.step)                                    (LitGPT)
    Epoch 1 | iter 46 step 1 | loss train: 3.724, val: n/a | iter time: 45.73 ms                           (LitGPT)
    Iter 10: Train loss 0.061, ..., It/sec 0.103, Tokens/sec 63.892                                        (MLX)
    INFO:tensorflow:global step 5: loss = 62.5264 (20.205 sec/step)                                        (TF-Slim)
    [Step 120] loss=1.93 lr=2e-5  /  Step 12 | loss 1.2 | 3.1 s/it  /  step 15/300 loss 0.8                 (custom loops)
    step:5750/20000 train_loss:2.0206 train_time:250140ms step_avg:43.50ms                                  (modded-nanogpt)
    train | step:    180 | steps/sec:    0.1 | output:                                                      (TF Model Garden)
    [train..][epoch: 14, iter: 135,100, lr:(2.000e-04,)] [eta: 3 days, ...] l_pix: 1.2130e-02               (BasicSR)
    Stage [train] iter: [10/500], data_time: 1.0402(1.0402), time: 1.4696(1.4696), loss: 0.0978             (scepter)
    Epoch [1][800/5005]    lr: 1.000e-01, eta: 5 days, 12:03:23, time: 0.173, ...                           (mmcv)
    Epoch: [0/100]  [2300/2502]  eta: 0:02:06  loss: 5.514215 (7.492564)  lr: 0.000092 ...                  (DINO, DeiT)
    Epoch:[0/19](1900/24681) loss:2.744 lr:0.00020000 epoch_Time:87.0min:                                   (minimind)
    Epoch[0] Batch [3080-3100]  Speed: 113.57 samples/sec  acc=0.593750                                 (MXNet Speedometer)

One rule reads them all: a step marker (`step`, `global step`, `[Step N]`, `Iter N:`; LitGPT's `iter I step S`
counts optimizer steps S) followed by a number, on a line that also carries a training metric (a loss, a rate, a
learning rate). A marker with no metric beside it is prose or a framework message (`Dumping profiler traces at
step 200`), and a validation line (`Iter 50: Val loss ...`) is an evaluation, not a step. The total is the one the
line prints (`step 4/21400`) or the last declared before it in the same unit (`iters: 500` for `Iter N` lines,
`max_steps: N` for step lines).

A loop's iteration counter (`iter: 1,700`, `iter: [10/500]`, `Iter [100/100000]`) counts steps over the whole run.
A batch counter inside an epoch (`Epoch [e][i/N]`, `Epoch: [e]  [i/N]`, `Epoch:[e/E](i/N)`) is a step only where the
epoch says how many epochs came before: mmcv and mmengine print `runner.epoch + 1` (so epoch e began after (e-1) x N
steps), while the `Epoch: [e]` printers differ (timm, DeiT and DINO count from 0, others from 1), so there only the
first epoch (e = 0) gives the step; a later one is a position in its epoch, not a step.

JSON step records, one object per logged step, after any prefix (`json_stats: `, a logger's `| train_inner | `):

    {"train/loss_ssl": 0.0416, "train/lr": 0.00039, "step": 1740, "epoch": 0, ...}                        (JSON Lines loggers)
    {"name": "loss", "data": {"epoch": 0.01, "step": 2, "value": 4.4904, ...}}                             (nested)
    json_stats: {"accuracy_cls": 1.0, "eta": "0:21:51", "iter": 55080, "loss": 0.0244, ..., "time": 0.2665} (Detectron)
    {"mode": "train", "epoch": 1, "iter": 100, "lr": 2e-05, ..., "loss": 1.80794, "time": 0.61618}         (mmcv log.json)
    | train_inner | {"epoch": 1, "update": 0.0, "loss": "16.475", ..., "num_updates": "1", "lr": "2e-05", ...}  (fairseq)

`step`, `global_step` and fairseq's `num_updates` count the whole run; `iter`/`iteration` do too unless the record
also names its epoch: mmcv's epoch-based runner writes the iteration within the epoch (`inner_iter + 1`, epochs from 1)
and its iteration-based runner the whole run's, in records of the same shape, so there only the first epoch gives the
step. A record of an evaluation (`valid_*`, `eval_*`, `"mode": "val"`) is not a step; `time` (Detectron's and mmcv's
average iteration time, in seconds) and fairseq's `ups` (updates per second) are the time of a step.
"""

from __future__ import annotations

import functools
import re

from trainsteps.logs.context import ScanContext
from trainsteps.patterns import lazy

# LitGPT: micro-batch iterations and the optimizer step they belong to
_LITGPT = lazy(r"\biter\s+\d+\s*\|?\s*step\s+(\d+)\b")
# `step: 4`, `step 00004/21400`, `[Step 5]`, `Step 5 |`, `global step 8:`, `global_step: 12`
_STEP = lazy(r"(?<![\w/.])(?:global[_ ])?[Ss]tep\]?\s*[:=]?\s*\[?\s*(\d{1,12})(?:\s*/\s*(\d{1,12}))?(?![\w.])")
# MLX and similar: `Iter 10: Train loss ...`
_ITER = lazy(r"(?<![\w/.])[Ii]ter\s+(\d{1,12})\s*:")
# (searched in the lower-cased line: a case-blind alternation is several times slower on a long metrics line)
_METRIC = lazy(r"(?:\b|_)loss\b|steps?/s(?:ec)?\b|\blr\b|learning[_ ]rate|\btps\b|tok(?:ens)?/s(?:ec)?|\bdt\s*[:=]|iter time|sec/step|s/it\b"
               r"|it/s(?:ec)?\b|it/sec|grad_norm|\breward")
# Every match of _METRIC holds one of these (its start is at most one character before it)
_METRIC_WORDS = ("loss", "step/s", "steps/s", "lr", "learning", "tps", "tok", "dt", "iter time", "sec/step", "s/it", "it/s",
                 "grad_norm", "reward")


def _has_metric(line: str) -> bool:
    """A training metric on the line: `_METRIC` searched from just before the first of its words (found with plain
    substring tests), so a long line is scanned by the pattern only where a metric may start."""
    low = line.lower()
    first = len(low)
    for word in _METRIC_WORDS:
        at = low.find(word, 0, first + len(word) - 1)  # only where it starts before the first found so far
        if at >= 0:
            first = at
    return first < len(low) and _METRIC.search(low, max(0, first - 1)) is not None


_VALIDATION = lazy(r"\b(?:[Vv]al(?:idation)?|[Ee]val(?:uation)?)[ _](?:loss|took|accuracy)\b")
# Totals declared before the steps: `max_steps: 300`, `Maximum number of steps set at 33788`, `iters: 500`
_DECLARED = lazy(r"(?<![\w])(max[_ ]steps|total[_ ]steps|total[_ ]training[_ ]steps|iters)['\"]?\s*[:=]\s*(\d{1,12})\b"
                       r"|Maximum number of steps (?:set at|:)\s*(\d{1,12})")
# The ends of the names _DECLARED reads (max_steps, total steps, total_training_steps, iters, Maximum number of steps)
_DECLARED_WORDS = ("x_steps", "x steps", "l_steps", "l steps", "g_steps", "g steps", "iters", "Maximum number of steps")
# Seconds per step printed on the line: `dt: 989.44ms`, `(20.205 sec/step)`, `It/sec 0.141`, `3.1 s/it`
# (words without which it cannot match, pattern, seconds per unit): the words are tested first, far cheaper than a
# search of a long metrics line
_SECONDS = (
    ("dt", lazy(r"\bdt\s*[:=]\s*([\d.]+)\s*ms\b"), 1e-3),
    ("step_avg", lazy(r"\bstep_avg:\s*([\d.]+)\s*ms\b"), 1e-3),
    ("sec/step", lazy(r"\(([\d.]+) sec/step\)"), 1.0),
    ("seconds/step", lazy(r"([\d.]+)\s*seconds/step\b"), 1.0),
    ("s/it", lazy(r"([\d.]+)\s*s/it\b"), 1.0),
)
_DIGIT = lazy(r"\d").search
_PER_SECOND = lazy(r"\bIt/sec\s+([\d.]+)|([\d.]+)\s*it/s\b|\bsteps/sec:\s*([\d.]+)")
# torchtitan's step line ends `tps: 7,282  tflops: 0.52  mfu: 0.17%` (components/metrics.py)
_TITAN_MFU = lazy(r"\btflops:\s*[\d.]+\s+mfu:\s*([\d.]+)%")
# What a JSON step record's counter key may be (a plain substring test before any pattern runs)
_JSON_KEYS = ('"step"', '"global_step"', '"iter"', '"iteration"', 'num_updates"')
# The end line of BasicSR-style loops (basicsr/train.py: `End of training. Time consumed: 0:12:34`)
_LOOP_END = "End of training. Time consumed"
# ... and of the DeiT / MAE / DINO family's main.py, whose `Epoch: [e]  [i/N]` lines give no step after the first epoch:
# `print('Training time {}'.format(total_time_str))` once every epoch is done, the whole line (a logger's timestamp
# before it), so prose that mentions a training time is not one
_TRAINING_TIME_END = lazy(r"^\s*(?:\[[^\]]{1,40}\]\s*)?Training time (?:\d{1,9} days?, )?\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\s*$")


# The counters of custom loops, each compiled on its first use (most logs never reach them; a Trainer banner's
# `Num Epochs` line reaches only the second).
# A whole-run iteration counter: `iter:   1,700,` (BasicSR), `iter: [10/500],` (scepter), `Iter [100/100000]` (mmcv)
_ITER_COUNT = lazy(r"(?<![\w/.])[Ii]ter(?:ation)?\s*:?\s*\[?\s*(\d{1,3}(?:,\d{3})+|\d{1,12})(?:\s*/\s*(\d{1,12}))?\s*\]?"
                   r"(?=[\s,;|\]]|$)")
# A batch counter inside an epoch: `Epoch [1][800/5005]`, `Epoch(train) [1][50/1000]` (mmcv, mmengine: epochs from
# 1), `Epoch: [0]  [ 10/1251]`, `Epoch: [0/100]  [2300/2502]`, `Epoch:[0/19](1900/24681)` (epochs from 0 or from 1)
_EPOCH_BATCH = lazy(r"\bEpoch(\(train\))?\s*(:?)\s*\[\s*(\d{1,9})(?:\s*/\s*\d{1,9})?\s*\]\s*[\[(]\s*(\d{1,12})\s*/\s*(\d{1,12})\s*[\])]")
# What such a line prints beside the counter when it prints no loss (HRNet: `Time: 0.630s ... Speed: 12.7 samples/s`)
_EPOCH_BATCH_METRIC = lazy(r"\beta\b|\btime\b|\bspeed\b", re.IGNORECASE)


@functools.cache
def _speedometer() -> re.Pattern:
    """MXNet's Speedometer callback (mxnet/callback.py): `Epoch[0] Batch [3080-3100]\tSpeed: 113.57 samples/sec` (the
    batches done in the epoch, the last number of a range), older releases and Gluon scripts `Epoch[0] Batch [49]`;
    epochs count from 0. Compiled on first use."""
    return re.compile(r"\bEpoch\[(\d{1,9})\]\s*Batch\s*\[(?:\d{1,12}-)?(\d{1,12})\]")


def _may_validate(line: str) -> bool:
    """The words `_VALIDATION` needs: searching only lines that hold one keeps long metrics lines cheap."""
    return ("val" in line or "Val" in line) and ("loss" in line or "took" in line or "accuracy" in line)


@functools.cache
def _json_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern, re.Pattern, re.Pattern]:
    """A JSON step record's keys, compiled on first use (most logs print none)."""
    counter = re.compile(r'"(step|global_step|iter|iteration|(?:train_)?num_updates)"\s*:\s*"?(\d{1,12})"?(?=\s*[,}])')
    epoch = re.compile(r'"epoch"\s*:\s*"?(\d{1,9})"?(?=\s*[,}])')
    evaluation = re.compile(r'"(?:valid|eval|val|test)[_/]|"mode"\s*:\s*"val')
    seconds = re.compile(r'"time"\s*:\s*"?(\d+(?:\.\d+)?)"?(?=\s*[,}])')
    per_second = re.compile(r'"ups"\s*:\s*"?(\d+(?:\.\d+)?)"?(?=\s*[,}])')
    return counter, epoch, evaluation, seconds, per_second


def declared_total(line: str, ctx: ScanContext) -> None:
    """Remember a total the loop declares before its steps, in the unit it counts (`iters` for `Iter N` lines)."""
    if "ters" not in line and "teps" not in line:
        return
    if not any(words in line for words in _DECLARED_WORDS):  # a banner's "Total optimization steps" is not one
        return
    match = _DECLARED.search(line)
    if match is None:
        return
    if match.group(3):
        ctx.declared_totals["step"] = int(match.group(3))
        return
    unit = "iter" if match.group(1) == "iters" else "step"
    ctx.declared_totals[unit] = int(match.group(2))


def read(line: str) -> tuple[int | None, int | None, str] | None:
    """(step, total printed on the line or None, unit) of a step line; None for anything else. The step is None for
    a batch counter in an epoch that does not say how many steps came before it."""
    if "Epoch" in line and ("[" in line or "(" in line) and _epoch_then_counter(line):  # (`training/epoch:3` is not one)
        counted = _epoch_batch(line)
        if counted is not None:
            return counted
    if "tep" not in line and "ter" not in line or _DIGIT(line) is None:  # every marker is followed by a number
        return None
    if not _has_metric(line) or (_may_validate(line) and _VALIDATION.search(line)):
        return None
    litgpt = _LITGPT.search(line) if "iter" in line else None
    if litgpt is not None:
        return int(litgpt.group(1)), None, "step"
    step = _STEP.search(line)
    if step is not None:
        total = int(step.group(2)) if step.group(2) else None
        return int(step.group(1)), total, "step"
    it = _ITER.search(line) if "ter" in line else None
    if it is not None:
        return int(it.group(1)), None, "iter"
    count = _ITER_COUNT.search(line)
    if count is not None:
        return int(count.group(1).replace(",", "")), int(count.group(2)) if count.group(2) else None, "iter"
    return None


def reported_mfu(line: str) -> tuple[str, float] | None:
    """(framework, MFU as a fraction) a step line prints itself: torchtitan's `tflops: ... mfu: x%`."""
    if "mfu:" not in line:
        return None
    match = _TITAN_MFU.search(line)
    return None if match is None else ("torchtitan", float(match.group(1)) / 100)


def read_json(line: str) -> tuple[int | None, str, float | None] | None:
    """(step, unit, seconds per step or None) of a JSON step record; None for any other line. The step is None for
    an iteration within a later epoch (see the module's docstring)."""
    if '{"' not in line:
        return None
    for key in _JSON_KEYS:
        if key in line:
            break
    else:
        return None
    counter, epoch_key, evaluation, seconds, per_second = _json_patterns()
    match = counter.search(line)
    if match is None or not _has_metric(line) or evaluation.search(line):
        return None
    key, step = match.group(1), int(match.group(2))
    unit = "iter" if key.startswith("iter") else "step"
    epoch = epoch_key.search(line)
    if unit == "iter" and epoch is not None:
        first = 1 if '"mode"' in line else 0  # mmcv writes `runner.epoch + 1`; others count from 0
        step = step if int(epoch.group(1)) == first else None
    return step, unit, _json_seconds(line, seconds, per_second)


def _json_seconds(line: str, seconds: re.Pattern, per_second: re.Pattern) -> float | None:
    match = seconds.search(line)
    if match is not None and 0 < float(match.group(1)) < 86400:  # a step's seconds, not a clock's timestamp
        return float(match.group(1))
    match = per_second.search(line)
    if match is not None and float(match.group(1)) > 0:
        return 1 / float(match.group(1))
    return None


def _epoch_then_counter(line: str) -> bool:
    """Some "Epoch" on the line is followed by what the epoch counters need next (`(train)`, a space, `:` or `[`):
    a banner's `Num Epochs = 3` is not, and the patterns are neither compiled nor searched for it."""
    at = line.find("Epoch")
    while at >= 0:
        after = line[at + 5:at + 6]
        if after and (after in "([:" or after.isspace()):
            return True
        at = line.find("Epoch", at + 5)
    return False


def _epoch_batch(line: str) -> tuple[int | None, None, str] | None:
    match = _EPOCH_BATCH.search(line)
    if match is None and "Batch" in line:
        return _speedometer_batch(line, _EPOCH_BATCH_METRIC)
    if match is None or _VALIDATION.search(line):
        return None
    if not _has_metric(line) and _EPOCH_BATCH_METRIC.search(line) is None:
        return None
    mmcv, colon, epoch, batch, per_epoch = match.group(1), match.group(2), int(match.group(3)), int(match.group(4)), int(match.group(5))
    if batch > per_epoch:
        return None
    if mmcv or not colon:  # mmcv / mmengine: `runner.epoch + 1`
        return ((epoch - 1) * per_epoch + batch if epoch >= 1 else None), None, "step"
    return (batch if epoch == 0 else None), None, "step"


def _speedometer_batch(line: str, epoch_batch_metric: re.Pattern) -> tuple[int | None, None, str] | None:
    """A Speedometer line: the batches done are the step in the first epoch; a later epoch's line is progress only
    (the batches of the epochs before it are not printed)."""
    match = _speedometer().search(line)
    if match is None or _VALIDATION.search(line) or epoch_batch_metric.search(line) is None:
        return None
    return (int(match.group(2)) if int(match.group(1)) == 0 else None), None, "step"


def ends_the_loop(line: str) -> bool:
    """The line a BasicSR-style or DeiT-style loop prints once its last iteration is done."""
    return _LOOP_END in line or ("Training time" in line and _TRAINING_TIME_END.search(line) is not None)


def seconds_per_step(line: str) -> float | None:
    """The time of one step the line prints, when it prints one per optimizer step (LitGPT's `iter time` is one
    micro-batch's, not a step's: it is not read)."""
    if "iter time" in line:
        return None
    for word, pattern, scale in _SECONDS:
        match = pattern.search(line) if word in line else None
        if match:
            value = float(match.group(1)) * scale
            return value if value > 0 else None
    match = _PER_SECOND.search(line) if "it/s" in line or "It/sec" in line or "steps/sec" in line else None
    if match:
        rate = float(match.group(1) or match.group(2) or match.group(3))
        return 1 / rate if rate > 0 else None
    return None

"""Progress lines of the training stacks that the general readers do not see, read as step lines (logs/progress.py):

    {'loss': 0.43, ..., 'iteration': '5/10635', 'elapsed_time': '9m 40s', 'remaining_time': '14d 6h 48m 17s', ...,
     'train_speed(s/it)': 116.095699}                                                    (ms-swift Megatron, one dict a log)
    ... - root - INFO - Trainer is initialized with local batch size 8, global batch size 64, gradient accumulation
        steps 1, sequence length 8192, total steps 1000 (warmup 200)                     (torchtitan: the run's steps)
    - Max train steps: 5000                                                              (NeMo Automodel's Step scheduler block)

ms-swift's dict gives the iteration, the run's iterations and the mean seconds an iteration since this process started
(`swift/megatron/callbacks/print.py`); torchtitan's and Automodel's lines give the total their step lines count to
(`step: 200 loss ...`, `step 8 | epoch 0 | loss ...`, read by logs/step_lines.py). Their normal ends:

    Number of epochs 5 reached, stopping training...                           (litgpt finetune, from 0.5.2)
    Training of 3 epochs has been completed, the training has finished.        (ms-swift Megatron's cyclic iterator)
    Reached max_steps (500), stopping training.                                (LLaMA-Factory v1)
"""

from __future__ import annotations

from trainsteps.patterns import lazy

_SWIFT_ITERATION = lazy(r"'iteration':\s*'(\d{1,12})/(\d{1,12})'")
_SWIFT_SPEED = lazy(r"'train_speed\(s/it\)':\s*([\d.]+)")
_TOTALS = (lazy(r"Trainer is initialized with .*\btotal steps (\d{1,12})"), lazy(r"- Max train steps:\s*(\d{1,12})\b"))
_TITAN_BATCH = lazy(r"Trainer is initialized with local batch size (\d{1,9}), global batch size \d{1,12}, gradient[_ ]accumulation[_ ]"
                          r"steps:? (\d{1,9}), sequence length (\d{1,9})")
_TPS = lazy(r"\btps:\s*([\d,]{1,15})\b")
TOKENS_PER_RANK_STEP = "tokens/rank/step"
"""The key under which a torchtitan start-up line leaves the tokens one rank reads a step (local x accumulation x seq)."""


_SWIFT_TIMES = {name: lazy(rf"'{name}':\s*'([\dhdms ]{{1,40}})'") for name in ("elapsed_time", "remaining_time")}
_DURATION_PART = lazy(r"(\d{1,9})([dhms])")
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def read(line: str) -> tuple[int, int, float | None, float | None, float | None] | None:
    """(iteration, iterations of the run, seconds an iteration, elapsed seconds, remaining seconds; None where the dict
    does not say) of an ms-swift Megatron log dict."""
    match = _SWIFT_ITERATION.search(line)
    if match is None:
        return None
    step, total = int(match.group(1)), int(match.group(2))
    speed = _SWIFT_SPEED.search(line)
    seconds = float(speed.group(1)) if speed else None
    elapsed, remaining = (_duration(_SWIFT_TIMES[name].search(line)) for name in ("elapsed_time", "remaining_time"))
    return step, total, seconds if seconds else None, elapsed, remaining


def _duration(match) -> float | None:
    """ms-swift's `12d 1h 6m 28s` in seconds."""
    if match is None:
        return None
    parts = _DURATION_PART.findall(match.group(1))
    return float(sum(int(value) * _UNIT_SECONDS[unit] for value, unit in parts)) if parts else None


_ENDS = (lazy(r"Number of epochs \d{1,9} reached, stopping training"),
         lazy(r"Training of \d{1,9} epochs has been completed, the training has finished"),
         lazy(r"Reached max_steps \(\d{1,12}\), stopping training"))


def ended(line: str) -> bool:
    """Whether a stack's line says its training loop ended normally."""
    return "training" in line and any(pattern.search(line) for pattern in _ENDS)


def declared_tokens_per_rank_step(line: str) -> int | None:
    """torchtitan's tokens a rank reads a step, from its start-up line: its step lines' `tps` is tokens a second a rank."""
    match = _TITAN_BATCH.search(line) if "Trainer is initialized" in line else None
    return int(match.group(1)) * int(match.group(2)) * int(match.group(3)) if match else None


def seconds_from_tps(line: str, tokens_per_rank_step: int | None) -> float | None:
    """The seconds of a torchtitan step: the tokens a rank reads a step over the `tps` its step line prints."""
    if not tokens_per_rank_step or "tps:" not in line:
        return None
    match = _TPS.search(line)
    tps = int(match.group(1).replace(",", "")) if match else 0
    return tokens_per_rank_step / tps if tps > 0 else None


def declared_total(line: str) -> int | None:
    """The steps a torchtitan or NeMo Automodel run declares before its step lines."""
    if "total steps" not in line and "Max train steps" not in line:
        return None
    for pattern in _TOTALS:
        match = pattern.search(line)
        if match:
            return int(match.group(1))
    return None

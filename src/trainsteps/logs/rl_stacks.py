"""Step lines of the RL stacks users moved to, for `trainsteps explain`: AReaL, open-instruct, prime-rl, ROLL
(slime's perf lines are read with verl's, by logs/rl.py and logs/rl_timing.py).

Lines read (their format strings in each stack's source):

- AReaL: `Epoch {e}/{E} Step {s}/{S} Train step {g}/{G} done.` (areal/utils/stats_logger.py `commit`): G is the LR
  horizon (epochs x steps per epoch), not `total_train_steps`;
- open-instruct: the metrics panel row `training_step: N` and `episode: N` (grpo_fast.py, model_utils.py
  `print_rich_single_line_metrics`), its time row `total: seconds`, and `Saving final model at step N`;
- prime-rl: `Starting training loop (max_steps=N|infinite)` and `Step {n} | {time} | Loss ...` with prime-rl's
  `format_time` (`850ms`, `12.3s`, `2m 5s`, `1h 3m`) (src/prime_rl/trainer/rl/train.py, utils/logger.py);
- ROLL: `pipeline max_steps: {old} to {N}` (roll/configs/base_config.py) and `pipeline step {g} start...` /
  `finished` (roll/pipeline/rlvr/rlvr_pipeline.py; g counts from 0).
"""

from __future__ import annotations

import re

from trainsteps.patterns import lazy
from trainsteps.record import field, record

_AREAL = lazy(r"Epoch (\d+)/(\d+) Step (\d+)/(\d+) Train step (\d+)/(\d+) done\.")
_OI_STEP = lazy(r"\btraining_step: (\d+)")
_OI_EPISODE = lazy(r"\bepisode: (\d+)")
_OI_TIME = lazy(r"\btime\b[^:|]*?\btotal: ([\d.]+)")
_OI_FINAL = lazy(r"Saving final model at step (\d+)")
_PRIME_START = lazy(r"Starting training loop \(max_steps=(\d+|infinite)\)")
_PRIME_STEP = lazy(r"\bStep (\d+) \| +((?:\d+d )?(?:\d+h )?(?:\d+m )?[\d.]+(?:ms|s|m|h)?) \| Loss")
_ROLL_MAX = lazy(r"pipeline max_steps: \S+ to (\d+)")
_ROLL_STEP = lazy(r"pipeline step (\d+) (start|finished)")
_AREAL_TIME = lazy(r"\b(\d{8}-\d{2}:\d{2}:\d{2})(?:\.(\d+))?")  # areal/utils/logging.py DATE_FORMAT
_ROLL_TIME = lazy(r"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\]")  # roll/utils/logging.py datefmt

WORDS = ("Starting training loop", "| Loss", "pipeline ", "Train step", "training_step:", "total:", "Saving final model")
"""Every line `StackObserved.feed` reads holds one of these (the log reader loads this module with the first such line)."""


@record
class StackObserved:
    """What the AReaL / open-instruct / prime-rl / ROLL lines of a log said."""

    framework: str | None = None
    step: int | None = None
    """The last step reached (AReaL: the global step; open-instruct: training_step; prime-rl: Step N; ROLL: steps done)."""
    total: int | None = None
    """The total the log states (AReaL's "Train step g/G"; open-instruct's final save)."""
    epoch: tuple[int, int] | None = None
    """AReaL's epoch e of E."""
    seconds: dict = field(default_factory=dict)
    """Phase -> seconds per step seen (open-instruct time/total, prime-rl's step time)."""
    clock: list = field(default_factory=list)
    """(step, seconds since the epoch) of the step lines that carry a timestamp (AReaL, ROLL): their rate."""

    def feed(self, line: str) -> None:  # its words: WORDS below
        if "Starting training loop" in line or "| Loss" in line:
            self._prime(line)
        elif "pipeline " in line:
            self._roll(line)
        elif "Train step" in line:
            self._areal(line)
        elif "training_step:" in line or "total:" in line or "Saving final model" in line:
            self._open_instruct(line)

    def _prime(self, line: str) -> None:
        match = _PRIME_START.search(line)
        if match:
            self.framework = "prime-rl"
            self.total = None if match.group(1) == "infinite" else int(match.group(1))
        match = _PRIME_STEP.search(line)
        if match:
            self.framework, self.step = "prime-rl", int(match.group(1))
            seconds = _prime_seconds(match.group(2))
            if seconds is not None:
                self.seconds.setdefault("step_time", []).append(seconds)

    def _roll(self, line: str) -> None:
        match = _ROLL_MAX.search(line)
        if match:
            self.framework, self.total = "roll", int(match.group(1))
        match = _ROLL_STEP.search(line)
        if match:  # g counts from 0: step g finished means g + 1 steps are done
            self.framework = "roll"
            done = int(match.group(1)) + (match.group(2) == "finished")
            self.step = max(self.step or 0, done)
            if match.group(2) == "start":
                self._stamp(int(match.group(1)), _ROLL_TIME.search(line), "%Y-%m-%d %H:%M:%S")

    def _areal(self, line: str) -> None:
        match = _AREAL.search(line)
        if match:
            self.framework = "areal"
            self.step, self.total = int(match.group(5)), int(match.group(6))
            self.epoch = (int(match.group(1)), int(match.group(2)))
            self._stamp(self.step, _AREAL_TIME.search(line), "%Y%m%d-%H:%M:%S")

    def _stamp(self, step: int, match, layout: str) -> None:
        if match is None:
            return
        from datetime import datetime, timezone

        try:
            moment = datetime.strptime(match.group(1), layout).replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            return
        fraction = match.group(2) if match.lastindex and match.lastindex >= 2 else None
        self.clock.append((step, moment + (float("0." + fraction) if fraction else 0.0)))

    def _open_instruct(self, line: str) -> None:
        for pattern, what in ((_OI_STEP, "step"), (_OI_FINAL, "total")):
            match = pattern.search(line)
            if match:
                self.framework = "open-instruct"
                setattr(self, what, int(match.group(1)))
        match = _OI_TIME.search(line)
        if match and self.framework == "open-instruct":
            self.seconds.setdefault("step_time", []).append(float(match.group(1)))

    def found_anything(self) -> bool:
        return self.framework is not None and self.step is not None

    def step_seconds(self) -> float | None:
        """Mean seconds of a step: the logged step times, else the timestamps of the first and last step lines."""
        if "step_time" in self.seconds:
            return _mean(self.seconds["step_time"])
        if len(self.clock) >= 2:  # the timestamps of the first and last step lines
            (first_step, first), (last_step, last) = self.clock[0], self.clock[-1]
            if last_step > first_step and last > first:
                return (last - first) / (last_step - first_step)
        return None

    def explanation(self, lang: str = "en") -> list[str]:
        from trainsteps.i18n import message
        from trainsteps.timing.durations import format_duration

        out = [message("stacklog.framework", lang, framework=self.framework)]
        if self.total:
            out.append(message("stacklog.progress", lang, step=f"{self.step:,}", total=f"{self.total:,}",
                               percent=f"{100 * self.step / self.total:.1f}"))
        else:
            out.append(message("stacklog.step", lang, step=f"{self.step:,}"))
        if self.epoch is not None:
            out.append(message("stacklog.areal_epoch", lang, epoch=self.epoch[0], epochs=self.epoch[1]))
        if self.framework == "areal":
            out.append(message("stacklog.areal_total", lang))
        seconds = self.step_seconds()
        if seconds:
            key = "stacklog.rate" if self.seconds else "stacklog.rate_clock"
            out.append(message(key, lang, seconds=f"{seconds:,.1f}"))
            if self.total and self.total > self.step:
                out.append(message("stacklog.left", lang, steps=f"{self.total - self.step:,}",
                                   left=format_duration((self.total - self.step) * seconds, lang)))
        return out

    def to_dict(self, lang: str = "en") -> dict:
        return {"framework": self.framework, "observed": {"step": self.step, "total": self.total, "epoch": self.epoch,
                                                          "step_seconds": self.step_seconds()},
                "explanation": self.explanation(lang)}


def _prime_seconds(text: str) -> float | None:
    """prime-rl's `format_time` back to seconds: `850ms`, `12.3s`, `2m 5s`, `1h 3m`, `1d 2h`."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)(ms|s|m|h|d)", text):
        total += float(number) * units[unit]
    return total or None


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0

"""The rate a log shows: the one reader of timing lines, for `plan/solve --timing-from` and `explain`.

Pure: it reads text lines handed to it (`RateReader.feed`), so any caller that already streams a log can feed it
(e.g. `trainsteps.logs.reader.read_log(..., also=reader.feed)`). What it reads:

- tqdm bars (Hugging Face, verl, LLaMA-Factory consoles): `78/3900 [05:12<4:15:03, 4.00s/it]`, `1.23it/s`;
- the Trainer's notebook bar: `[ 78/3900 05:12 < 4:15:03, 0.25 it/s, Epoch 5.60/300]`;
- the Trainer's summary `{'train_runtime': ..., 'train_steps_per_second': ...}` and `eval_runtime` (also inside
  trainer_state.json's log_history);
- LLaMA-Factory `trainer_log.jsonl`: `"current_steps"`, `"total_steps"`, `"elapsed_time"`, `"remaining_time"`;
- Megatron: `iteration 10/ 1000 | ... | elapsed time per iteration (ms): 1234.5 |`;
- Lightning bars `Epoch 3:  45%|...| 45/100 [00:10<00:12, 4.50it/s, ...]` (they count batches, not optimizer steps).

The rate skips the first steps (warm-up) and the intervals that hold a pause (evaluation, save): an interval much
slower than the median (`PAUSE_FACTOR`) is taken out, and the time it held is reported.
"""

from __future__ import annotations

from trainsteps import bars
from trainsteps.patterns import lazy
from trainsteps.record import field, record
from trainsteps.timing.estimate import MEASURED_SPREAD, Interval, Rate

WARMUP_STEPS = 2
"""Bar positions up to this step are not used for the rate (compile, autotune, the first dataloader fill)."""
PAUSE_FACTOR = 3.0
"""An interval slower than this x the median interval held a pause (evaluation, checkpoint save) and is left out."""
MIN_WINDOW_SECONDS = 30.0
"""A bar's clock prints whole seconds, so over a shorter measured window the rounding alone moves the rate by more than
a few percent (2 steps in `11:38` -> `11:39` read as 0.5 s a step at 1.90 it/s): there the bar's own printed rate
(tqdm's smoothed it/s or s/it) is taken, where it prints one."""
MAX_SAMPLES = 200_000
"""Samples kept per log (a hostile file cannot grow memory without bound)."""

_CLOCK = bars.CLOCK
_NUM = bars.NUMBER
_TQDM = bars.TQDM_TIMED
_NOTEBOOK = bars.NOTEBOOK_TIMED
_LF = lazy(r""""current_steps"\s*:\s*(\d+)\s*,\s*"total_steps"\s*:\s*(\d+)""")
_LF_ELAPSED = lazy(r""""elapsed_time"\s*:\s*"(""" + _CLOCK + r""")\"""")
_LF_REMAINING = lazy(r""""remaining_time"\s*:\s*"(""" + _CLOCK + r""")\"""")
_MEGATRON = lazy(r"iteration\s+(\d+)\s*/\s*(\d+)\s*\|.*?elapsed time per iteration \(ms\):\s*(" + _NUM + ")")
_RUNTIME = lazy(r"""['"]train_runtime['"]\s*:\s*['"]?(""" + _NUM + ")")
_STEPS_PER_SECOND = lazy(r"""['"]train_steps_per_second['"]\s*:\s*['"]?(""" + _NUM + ")")
_EVAL_RUNTIME = lazy(r"""['"]eval_runtime['"]\s*:\s*['"]?(""" + _NUM + ")")
_LIGHTNING = lazy(r"^\s*Epoch\s+\d+\s*:")
_RESUME = lazy(r"(?:Continuing training from global step|global step) (\d+)")
# What `_TQDM` reads as a clock (with numbers small enough for float arithmetic to be exact) and as a rate, each as a
# whole text (see `RateReader.feed_tqdm`).
_WHOLE_CLOCK = lazy(r"(?:\d{1,9}\s+days?,\s*)?\d{1,9}(?::\d{1,2}){1,2}")
_WHOLE_NUM = lazy(r"[0-9]+(?:\.[0-9]+)?")


_DAYS = lazy(r"(\d+)\s+days?,\s*(.*)")


def clock_seconds(text: str) -> float:
    """`05:12` -> 312; `4:15:03` -> 15,303; `1 day, 2:00:00` -> 93,600 (tqdm, timedelta and LLaMA-Factory clocks)."""
    days = 0
    match = _DAYS.match(text) if "day" in text else None
    if match:
        days, text = int(match.group(1)), match.group(2)
    numbers = [int(x) for x in text.split(":")]
    seconds = 0
    for value in numbers:
        seconds = seconds * 60 + value
    return float(seconds + days * 86400)


MAX_TRACKS = 4
"""Clocks followed at once in one bar's lines (see `_intervals`)."""


@record
class Sample:
    """One timing line."""

    kind: str
    """`tqdm`, `notebook`, `llamafactory`, `megatron` or `lightning`."""
    step: int
    """Position: optimizer steps (Lightning: batches of the epoch; Megatron: iterations)."""
    total: int
    """The bar's total (Lightning: batches per epoch)."""
    elapsed: float | None
    """Seconds since the bar (or the run) started."""
    remaining: float | None
    """The framework's own ETA in seconds, when printed."""
    seconds_per_step: float | None
    """The rate the line prints (tqdm's smoothed s/it, Megatron's mean over its log interval)."""
    line_no: int
    """Line number in the log (1-based)."""


@record
class LogTiming:
    """What a log says about speed."""

    rate: Rate | None
    """Seconds per optimizer step (Lightning: per batch, see `per`), warm-up and pauses out; None when no line had timing."""
    per: str = "step"
    """`step` (optimizer step) or `batch` (Lightning bars: multiply by accumulate_grad_batches)."""
    kind: str = ""
    """The line kind the rate came from."""
    last_step: int | None = None
    """The furthest position reached."""
    total: int | None = None
    """The total the bar counts to (may not be where the run really stops)."""
    elapsed_seconds: float | None = None
    """Elapsed seconds at the last timing line."""
    framework_remaining_seconds: float | None = None
    """The framework's own ETA at the last timing line."""
    paused_seconds: float = 0.0
    """Seconds of slow intervals (evaluations, saves) taken out of the rate."""
    eval_seconds: list[float] = field(default_factory=list)
    """Each `eval_runtime` printed."""
    resume_step: int | None = None
    """The global step a resume started from, when the log says."""
    samples: list[Sample] = field(default_factory=list)
    """The timing lines used, in order."""


class RateReader:
    """Feed it lines; `result()` gives the rate. Constant work per line; memory bounded by `MAX_SAMPLES`."""

    def __init__(self, total_hint: int | None = None):
        """total_hint: the run's max_steps when known, to tell the training bar from evaluation bars."""
        self.total_hint = total_hint
        self.samples: list[Sample] = []
        self.eval_seconds: list[float] = []
        self.runtime: float | None = None
        self.steps_per_second: float | None = None
        self.resume_step: int | None = None
        self._line_no = 0
        self._lf_total: tuple[int, int] | None = None

    def feed(self, line: str) -> None:
        self._line_no += 1
        for part in line.split("\r") if "\r" in line else (line,):  # tqdm's in-place updates captured in one line
            try:
                self._one(part)
            except (ValueError, OverflowError):  # a number the patterns let through but Python refuses: not timing
                continue

    def feed_tqdm(self, line: str, slash: int, step: str, total: str, elapsed: str, left: str, rate: str | None,
                  unit: str | None, elapsed_seconds: float | None, left_seconds: float | None) -> None:
        """Feed a tqdm draw that a caller has already parsed (explain's bar reader), without reading it again.

        The caller gives the texts it read from `step/total [elapsed<left, rate unit]`, where its `/` is, and the
        seconds it made of the two clocks. They are taken as they are only when `feed(line)` would read exactly these
        texts (no carriage return, the line's first `/`, whole clocks of at most 9-digit numbers, a whole rate), where
        any reading of a clock gives `clock_seconds`' value. Otherwise the line is read as `feed` reads it. Either way
        the same sample results."""
        if (rate is None or elapsed_seconds is None or "\r" in line or line.find("/") != slash
                or not _WHOLE_CLOCK.fullmatch(elapsed) or not (left == "?" or _WHOLE_CLOCK.fullmatch(left))
                or not _WHOLE_NUM.fullmatch(rate)):
            self.feed(line)
            return
        # `_TQDM` would match at this `/`: the caller's pattern matched there and the texts fit `_TQDM`'s groups.
        self._whole_draw("lightning" if _LIGHTNING.match(line) else "tqdm", step, total, elapsed_seconds,
                         None if left == "?" else left_seconds, rate, unit)

    def feed_bare_tqdm(self, step: str, total: str, elapsed_seconds: float, left_seconds: float | None, rate: str,
                       unit: str) -> None:
        """`feed_tqdm` of a draw that is nothing else (explain's reader checks it whole: digits, whole clocks, a
        whole rate, no description, so not Lightning's); `left_seconds` None for `?`."""
        self._whole_draw("tqdm", step, total, elapsed_seconds, left_seconds, rate, unit)

    def _whole_draw(self, kind: str, step: str, total: str, elapsed_seconds: float | None, left_seconds: float | None,
                    rate: str, unit: str | None) -> None:
        self._line_no += 1
        if len(self.samples) >= MAX_SAMPLES:
            return
        try:
            per_step = float(rate) if unit == "s/it" else _inverse(float(rate))
            self._add(kind, int(step), int(total), elapsed_seconds, left_seconds, per_step)
        except (ValueError, OverflowError):  # as `feed`: a number Python refuses is not timing
            return

    def feed_llamafactory(self, line: str, elapsed: str | None, left: str | None, elapsed_seconds: float | None,
                          left_seconds: float | None) -> None:
        """Feed a trainer_log.jsonl row whose clocks a caller has already read (explain's dict reader), without reading
        them again: the texts of `elapsed_time` and `remaining_time` and the seconds it made of them.

        They are taken as they are only when `feed(line)` would read exactly these texts: no carriage return, no bar,
        each key once (or `remaining_time` absent), written `"key": "text"`, each text a whole clock of at most 9-digit
        numbers (where any reading of a clock gives `clock_seconds`' value). Otherwise the line is read as `feed` reads
        it. Either way the same sample results."""
        if ("\r" in line or ("/" in line and "[" in line and "<" in line) or elapsed is None or elapsed_seconds is None
                or not _given_once(line, "elapsed_time", elapsed) or not _WHOLE_CLOCK.fullmatch(elapsed)
                or ("remaining_time" in line and (left is None or left_seconds is None or not _given_once(line, "remaining_time", left)
                                                  or not _WHOLE_CLOCK.fullmatch(left)))):
            self.feed(line)
            return
        self._line_no += 1
        if len(self.samples) >= MAX_SAMPLES:
            return
        match = _LF.search(line)
        if match is None:
            return
        try:
            self._add("llamafactory", int(match.group(1)), int(match.group(2)), elapsed_seconds,
                      left_seconds if "remaining_time" in line else None, None)
        except (ValueError, OverflowError):  # as `feed`: a number Python refuses is not timing
            return

    def _one(self, line: str) -> None:
        if len(self.samples) >= MAX_SAMPLES:
            return
        if "/" in line and "[" in line and "<" in line:  # both bar patterns need `elapsed<left`
            match = _TQDM.search(line)
            if match:
                step, total, elapsed, left, rate, unit = match.groups()
                per_step = None if rate == "?" else (float(rate) if unit == "s/it" else _inverse(float(rate)))
                kind = "lightning" if _LIGHTNING.match(line) else "tqdm"
                self._add(kind, int(step), int(total), clock_seconds(elapsed),
                          None if left == "?" else clock_seconds(left), per_step)
                return
            match = _NOTEBOOK.search(line)
            if match:
                step, total, elapsed, left, rate = match.groups()
                self._add("notebook", int(step), int(total), clock_seconds(elapsed), clock_seconds(left),
                          _inverse(float(rate)))
                return
        if "current_steps" in line:
            match = _LF.search(line)
            elapsed = _LF_ELAPSED.search(line)
            if match and elapsed:
                left = _LF_REMAINING.search(line)
                self._add("llamafactory", int(match.group(1)), int(match.group(2)), clock_seconds(elapsed.group(1)),
                          clock_seconds(left.group(1)) if left else None, None)
            return
        if "elapsed time per iteration" in line:
            match = _MEGATRON.search(line)
            if match:
                self._add("megatron", int(match.group(1)), int(match.group(2)), None, None,
                          float(match.group(3)) / 1000)
            return
        if "eval_runtime" in line:
            match = _EVAL_RUNTIME.search(line)
            if match:
                self.eval_seconds.append(float(match.group(1)))
        if "train_runtime" in line:
            runtime, per_second = _RUNTIME.search(line), _STEPS_PER_SECOND.search(line)
            if runtime:
                self.runtime = float(runtime.group(1))
            if per_second:
                self.steps_per_second = float(per_second.group(1))
        if "global step" in line:
            match = _RESUME.search(line)
            if match:
                self.resume_step = int(match.group(1))

    def _add(self, kind: str, step: int, total: int, elapsed: float | None, left: float | None,
             per_step: float | None) -> None:
        if total <= 0 or step < 0:
            return
        self.samples.append(Sample(kind, step, total, elapsed, left, per_step, self._line_no))

    # --- the rate -------------------------------------------------------------------------------

    def result(self) -> LogTiming:
        bar = self._main_bar()
        if bar:
            return self._from_bar(bar)
        if self.runtime and self.steps_per_second:
            return self._from_summary()
        return LogTiming(rate=None, eval_seconds=list(self.eval_seconds), resume_step=self.resume_step)

    def _main_bar(self) -> list[Sample]:
        if not self.samples:
            return []
        totals: dict[tuple[str, int], int] = {}
        for s in self.samples:  # only bars that say something about speed
            if s.seconds_per_step or (s.elapsed and s.step):
                totals[(s.kind, s.total)] = totals.get((s.kind, s.total), 0) + 1
        if not totals:
            return []
        if self.total_hint and any(total == self.total_hint for _, total in totals):
            key = max((k for k in totals if k[1] == self.total_hint), key=lambda k: totals[k])
        elif any(kind == "lightning" for kind, _ in totals):
            kind = "lightning"
            return [s for s in self.samples if s.kind == kind]
        else:
            key = max(totals, key=lambda k: (totals[k], k[1]))
        return [s for s in self.samples if (s.kind, s.total) == key]

    def _from_bar(self, bar: list[Sample]) -> LogTiming:
        from statistics import median  # loaded with the first bar: `statistics` costs ~5 ms of start-up

        kind, last = bar[0].kind, bar[-1]
        per = "batch" if kind == "lightning" else "step"
        timing = LogTiming(rate=None, per=per, kind=kind, last_step=max(s.step for s in bar), total=last.total,
                           elapsed_seconds=last.elapsed, framework_remaining_seconds=last.remaining,
                           eval_seconds=list(self.eval_seconds), resume_step=self.resume_step, samples=bar)
        where = f"line {last.line_no}"
        if kind == "megatron":
            values = [s.seconds_per_step for s in bar[1:]] or [bar[0].seconds_per_step]  # the first interval holds warm-up
            mid = median(values)
            kept = [v for v in values if v <= PAUSE_FACTOR * mid]
            timing.rate = Rate(Interval(min(kept), median(kept), max(kept)), "log",
                               f"Megatron elapsed time per iteration, {len(values)} lines, {where}",
                               assumptions=(("time.assume.log_median", {"lines": len(values)}),))
            return timing
        intervals = _intervals(bar, timing.resume_step)
        if intervals:
            rates = [dt / dn for dn, dt in intervals]
            mid = median(rates)
            kept = [(dn, dt) for dn, dt in intervals if dt / dn <= PAUSE_FACTOR * mid]
            timing.paused_seconds = sum(dt - dn * mid for dn, dt in intervals if dt / dn > PAUSE_FACTOR * mid)
            steps, seconds = sum(dn for dn, _ in kept), sum(dt for _, dt in kept)
            printed = [s.seconds_per_step for s in bar[-10:] if s.seconds_per_step]
            if seconds < MIN_WINDOW_SECONDS and printed:
                shown = median(printed)
                timing.rate = Rate.from_step_seconds(shown, "log", f"{kind} bar's own rate, median of its last {len(printed)} "
                                                     f"readings (the {seconds:g} s between its clocks are too few), up to {where}")
                return timing
            kept_rates = sorted(dt / dn for dn, dt in kept)
            expected = seconds / steps
            low = min(expected * MEASURED_SPREAD[0], kept_rates[len(kept_rates) // 10])
            high = max(expected * MEASURED_SPREAD[1], kept_rates[(len(kept_rates) * 9) // 10])
            assumptions = [("time.assume.warmup_skipped", {"steps": WARMUP_STEPS})]
            if timing.paused_seconds > 0:
                assumptions.append(("time.assume.pauses_removed", {"seconds": round(timing.paused_seconds, 1)}))
            timing.rate = Rate(Interval(low, expected, high), "log",
                               f"{kind} bar, {steps:,} {per}s over {len(kept)} intervals, up to {where}",
                               assumptions=tuple(assumptions))
            return timing
        shown = last.seconds_per_step
        if shown is None and last.elapsed and last.step:
            shown = last.elapsed / last.step
        if shown:
            text = f"{shown:.2f}s/it" if shown >= 1 else f"{1 / shown:.2f}it/s"
            timing.rate = Rate.from_step_seconds(shown, "log", f"{kind} bar {last.step}/{last.total} {text}, {where}")
        return timing

    def _from_summary(self) -> LogTiming:
        steps = self.runtime * self.steps_per_second  # the Trainer divides max_steps by the runtime
        done_here = steps - (self.resume_step or 0)
        evals = sum(self.eval_seconds)
        seconds = self.runtime - evals
        notes = [("time.assume.summary_average", {})]
        if evals:
            notes.append(("time.assume.pauses_removed", {"seconds": round(evals, 1)}))
        rate = None
        if done_here > 0 and seconds > 0:
            rate = Rate.from_step_seconds(seconds / done_here, "log",
                                          f"train_runtime {self.runtime:g} s, train_steps_per_second {self.steps_per_second:g}",
                                          assumptions=tuple(notes))
        return LogTiming(rate=rate, kind="summary", last_step=round(steps), total=round(steps),
                         elapsed_seconds=self.runtime, eval_seconds=list(self.eval_seconds), resume_step=self.resume_step)


def _given_once(line: str, key: str, text: str) -> bool:
    """`"key": "text"` is in the line and the key nowhere else: `_LF_ELAPSED` / `_LF_REMAINING` read that text."""
    return line.count(key) == 1 and f'"{key}": "{text}"' in line


def _intervals(bar: list[Sample], resume_step: int | None) -> list[tuple[int, float]]:
    """(steps, seconds) between lines of one bar, after warm-up; a reset (new epoch bar, a restart) starts over.

    Each line is paired with the line before it on its own clock: the kept track whose last step is the highest below
    this line's step (its clock not ahead of this line's). Two trainings writing one file (LLaMA-Factory's
    trainer_log.jsonl under `srun --ntasks=2`) interleave their lines (steps 3010, 3020, 3010, 3030, 3020, ...): each
    line then continues its own writer's track, and the two clocks are never mixed. A line no track can take starts
    a new one, whose first steps are warm-up again. A bar drawn again at the same step stays on its track (the
    interval runs from its first draw)."""
    out: list[tuple[int, float]] = []
    tracks: list[list] = []  # [last sample, first step], most recently used last
    for s in bar:
        if s.elapsed is None:
            continue
        best = None
        for track in tracks:
            last = track[0]
            if last.step <= s.step and last.elapsed <= s.elapsed \
                    and (best is None or (last.step, last.elapsed) > (best[0].step, best[0].elapsed)):
                best = track
        if best is None:
            tracks.append([s, s.step])  # a new bar: its first steps are warm-up again
            del tracks[:-MAX_TRACKS]
            continue
        tracks.remove(best)
        tracks.append(best)
        start, first_step = best
        best[0] = s
        if s.step - first_step <= WARMUP_STEPS and s.step <= WARMUP_STEPS + (resume_step or 0) + first_step:
            continue
        dn, dt = s.step - start.step, s.elapsed - start.elapsed
        if dn > 0 and dt > 0:
            out.append((dn, dt))
        else:
            best[0] = start
    return out


def _inverse(per_second: float) -> float | None:
    return 1 / per_second if per_second > 0 else None

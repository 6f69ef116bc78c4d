"""RL trainers' log lines: verl, EasyR1, OpenRLHF, and Unsloth's batch-size notice.

Lines read (fed one at a time by the log reader, in the same pass as the other parsers):

- verl / EasyR1: `Total training steps: 435`, `Size of train dataloader: 29, ...`, `dataset len: 7473`,
  `filter dataset len: 7000`, metric lines `step:12 - actor/pg_loss:0.1 - training/epoch:0 - ...` (verl's console
  logger), the `Training Progress` / `Running step` bars `12/435`;
- OpenRLHF: `Global step 12: {...}` and the `Episode [1/2]` bar (it counts prompts);
- Unsloth: `We will change the batch size of 3 to the `num_generations` of 8`;
- the Ray driver's prefix (`(TaskRunner pid=...)`, `(main_task pid=...)`: verl; `(Runner pid=...)`: EasyR1), Hydra's
  `Error executing job with overrides` and Ray's `ray.exceptions...` errors (a crash, before the first step when no
  step line came before it), slime's perf dicts (`perf 3: {...}`) and the timing lines read by rl_timing.py.

The explanation says which kind of step each number is: verl's steps are rollout (training) steps and its LR schedule
counts them; OpenRLHF's global step counts rollout batches while its scheduler counts optimizer steps.
"""

from __future__ import annotations

from trainsteps.logs.rl_timing import RLTiming
from trainsteps.patterns import lazy
from trainsteps.record import field, record

_TOTAL = lazy(r"Total training steps:\s*(\d+)")
_LOADER = lazy(r"Size of train dataloader:\s*(\d+)")
_DATASET = lazy(r"(?<!filter )dataset len:\s*(\d+)")
_FILTERED = lazy(r"filter dataset len:\s*(\d+)")
_STEP = lazy(r"(?:^|[\s(])step:(\d+)\s+-\s+\S+:")
_EPOCH = lazy(r"training/epoch:(\d+)")
_BAR = lazy(r"(Training Progress|Running step|Episode \[(\d+)/(\d+)\])[^|]*\|[^|]*\|\s*(\d+)/(\d+)")
_OPENRLHF = lazy(r"Global step (\d+):")
_UNSLOTH = lazy(r"change the batch size of (\d+) to the `num_generations` of (\d+)")
_DRIVER = lazy(r"^\s*\((TaskRunner|main_task|Runner) pid=\d+")
# Hydra's line when verl's main exits with an error; Ray's own errors; a Python traceback
_CRASH = lazy(r"Error executing job with overrides|ray\.exceptions\.\w+|Traceback \(most recent call last\)")
_RL_CRASH = ("Error executing job with overrides", "ray.exceptions.")
_BAR_RATE = lazy(r"(\d+(?:\.\d+)?)(s/it|it/s)\]")
_BAR_ELAPSED = lazy(r"\|\s*\d+/\d+\s*\[(?:(\d+):)?(\d+):(\d+)<")
_SLIME_PERF = lazy(r"\bperf (\d+): \{")
# Each pattern is searched only in lines holding its own words (a plain Trainer banner says "steps" and "batch size" and
# needs none of them): (the words, the pattern, the field a match sets).
_COUNTS = (("Total training steps:", _TOTAL, "total_training_steps"), ("Size of train dataloader:", _LOADER, "loader_length"),
           ("filter dataset len:", _FILTERED, "filtered_len"), ("dataset len:", _DATASET, "dataset_len"),
           ("Global step ", _OPENRLHF, "openrlhf_step"))
_CRASH_WORDS = ("Error executing job with overrides", "ray.exceptions.", "Traceback (most recent call last)")
_BAR_WORDS = ("Training Progress", "Running step", "Episode [")
_TIMING_WORDS = ("timing_s/", "perf/")
WORDS = ("pid=", *_CRASH_WORDS, *(words for words, _, _ in _COUNTS), "step:", "perf ", *_TIMING_WORDS, *_BAR_WORDS,
         "change the batch size of")
"""Every line `RLObserved.feed` reads holds one of these (the log reader loads this module with the first such line)."""


@record
class RLObserved:
    """What the RL lines of a log said (the last value of each)."""

    total_training_steps: int | None = None
    loader_length: int | None = None
    dataset_len: int | None = None
    filtered_len: int | None = None
    last_step: int | None = None
    last_epoch: int | None = None
    bar: tuple[str, int, int] | None = None
    openrlhf_step: int | None = None
    episode: tuple[int, int] | None = None
    unsloth_batch: tuple[int, int] | None = None
    driver: str | None = None
    """The Ray driver whose prefix the lines carry: `TaskRunner` / `main_task` (verl), `Runner` (EasyR1)."""
    crash: tuple[int, str] | None = None
    """(line, text) of the last crash line: Hydra's, Ray's or a traceback."""
    rl_crash: bool = False
    """A crash line only an RL driver prints (Hydra's exit line, a Ray error)."""
    slime_rollout: int | None = None
    bar_seconds: float | None = None
    """Seconds per step the step bar shows at its last draw (`662.94s/it`)."""
    bar_elapsed: float | None = None
    """Seconds the step bar shows as elapsed at its last draw (`0/125 [04:45<?, ?it/s]`)."""
    timing: RLTiming = field(default_factory=RLTiming)
    stated: dict = field(default_factory=dict)
    """`stated_failure` / `stated_interruption` readings from the words around the log (see hear)."""
    lines: dict = field(default_factory=dict)
    """What -> the line number it was last read at."""
    _line_no: int = 0

    def feed(self, line: str) -> None:
        self._line_no += 1
        if "pid=" in line or any(words in line for words in _CRASH_WORDS):
            self._driver_and_crash(line)
        for words, pattern, name in _COUNTS:
            if words in line:
                match = pattern.search(line)
                if match:
                    setattr(self, name, int(match.group(1)))
                    self.lines[name] = self._line_no
        match = _STEP.search(line) if "step:" in line else None
        if match:
            self.last_step = int(match.group(1))
            self.lines["last_step"] = self._line_no
            epoch = _EPOCH.search(line)
            if epoch:
                self.last_epoch = int(epoch.group(1))
        perf = _SLIME_PERF.search(line) if "perf " in line else None
        if perf:
            self.slime_rollout = int(perf.group(1))
        if "timing_s/" in line or "perf/" in line:
            self.timing.feed(line, self._line_no, self.slime_rollout if perf else self.last_step, bool(match or perf))
        if any(words in line for words in _BAR_WORDS):
            self._bar(line)
        if "change the batch size of" in line:
            match = _UNSLOTH.search(line)
            if match:
                self.unsloth_batch = (int(match.group(1)), int(match.group(2)))
                self.lines["unsloth_batch"] = self._line_no

    def skip(self, lines: int) -> None:
        """`lines` lines came before the first one fed (the log reader loads this module with the first line it reads)."""
        self._line_no += lines

    def _bar(self, line: str) -> None:
        match = _BAR.search(line)
        if match:
            self.bar = (match.group(1).split(" [")[0], int(match.group(4)), int(match.group(5)))
            if match.group(2):
                self.episode = (int(match.group(2)), int(match.group(3)))
            rate = _BAR_RATE.search(line, match.start())
            if rate:
                value = float(rate.group(1))
                self.bar_seconds = value if rate.group(2) == "s/it" else (1 / value if value else None)
            elapsed = _BAR_ELAPSED.search(line, match.start())
            if elapsed:
                hours, minutes, seconds = elapsed.groups()
                self.bar_elapsed = int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)

    def _driver_and_crash(self, line: str) -> None:
        if self.driver is None and "pid=" in line:
            driver = _DRIVER.match(line)
            if driver:
                self.driver = driver.group(1)
        if not any(words in line for words in _CRASH_WORDS):
            return
        crash = _CRASH.search(line)
        if crash and not line.lstrip().startswith("#"):  # a post's `# title` naming the error is words, not the program's line
            self.crash = (self._line_no, line.strip()[:200])
            self.rl_crash = self.rl_crash or any(marker in line for marker in _RL_CRASH)

    def status(self) -> str | None:
        """`crashed` when a crash line came after the last step line (or with none); else what the words around the log
        name (a title's `OOM`: crashed; a time limit: interrupted), as for any log that shows no end of its own."""
        if self.crash is not None:
            after = self.lines.get("last_step")
            if after is None or self.crash[0] > after:
                return "crashed"
        if "stated_failure" in self.stated:
            return "crashed"
        return "interrupted" if "stated_interruption" in self.stated else None

    def hear(self, stated: dict) -> None:
        """The words read around the log (logs/stated.py): a failure or a stop they name."""
        self.stated = {k: v for k, v in stated.items() if k in ("stated_failure", "stated_interruption")}

    def step_reached(self) -> int | None:
        """The last step a line shows; 0 when the run crashed before any step line."""
        step = next((v for v in (self.last_step, self.openrlhf_step, self.bar and self.bar[1]) if v is not None and v is not False), None)
        if step is None and self.crash is not None and self.status() == "crashed" and self.found_anything():
            return 0  # the program's own crash line with no step line before it: before the first step
        return step

    def said_step(self) -> int | None:
        """The step the words put a failure at (`successfully run 54 steps then oom`), where no line shows a step or an end."""
        said = self.stated.get("stated_failure")
        if said is None or self.crash is not None or self.step_reached() is not None:
            return None
        return said.note_params.get("step")

    def found_anything(self) -> bool:
        return any(v is not None for v in (self.total_training_steps, self.last_step, self.openrlhf_step, self.unsloth_batch,
                                           self.loader_length, self.driver, self.slime_rollout)) or self.rl_crash or self.timing.found()

    def framework(self) -> str:
        if self.openrlhf_step is not None or self.episode is not None:
            return "openrlhf"
        if self.slime_rollout is not None or self.timing.source == "slime":
            return "slime"
        if (self.bar and self.bar[0] == "Running step") or self.driver == "Runner":
            return "easyr1"
        if self.unsloth_batch and self.total_training_steps is None and self.last_step is None:
            return "unsloth"
        return "verl"

    def explanation(self, lang: str = "en", world: int | None = None) -> list[str]:
        from trainsteps.i18n import message

        out = [message("rllog.framework", lang, framework=self.framework())]
        if world is not None:
            out.append(message("rllog.world", lang, world=world))
        total, loader = self.total_training_steps, self.loader_length
        if self.dataset_len is not None:
            out.append(message("rllog.dataset", lang, rows=f"{self.dataset_len:,}"))
        if self.filtered_len is not None:
            dropped = (self.dataset_len or self.filtered_len) - self.filtered_len
            out.append(message("rllog.filtered", lang, kept=f"{self.filtered_len:,}", dropped=f"{dropped:,}"))
        if total is not None:
            out.append(message("rllog.total", lang, total=f"{total:,}"))
            if loader:
                epochs, rest = divmod(total, loader)
                key = "rllog.total_epochs" if rest == 0 else "rllog.total_override"
                out.append(message(key, lang, loader=loader, epochs=epochs, total=f"{total:,}"))
        if self.last_step is not None:
            out.append(message("rllog.last_step", lang, step=f"{self.last_step:,}"))
            if total:
                out.append(message("rllog.progress", lang, step=f"{self.last_step:,}", total=f"{total:,}",
                                   percent=f"{100 * self.last_step / total:.1f}"))
            if self.last_epoch is not None and loader:
                out.append(message("rllog.epoch", lang, epoch=self.last_epoch + 1, step_in_epoch=self.last_step - self.last_epoch * loader,
                                   loader=loader))
        if self.bar is not None and self.openrlhf_step is None:
            out.append(message("rllog.bar", lang, name=self.bar[0], done=f"{self.bar[1]:,}", total=f"{self.bar[2]:,}"))
        if self.openrlhf_step is not None:
            out.append(message("rllog.openrlhf_step", lang, step=f"{self.openrlhf_step:,}"))
        if self.episode is not None and self.bar is not None:
            out.append(message("rllog.openrlhf_episode", lang, episode=self.episode[0], episodes=self.episode[1],
                               done=f"{self.bar[1]:,}", total=f"{self.bar[2]:,}"))
        if self.unsloth_batch is not None:
            out.append(message("rllog.unsloth", lang, old=self.unsloth_batch[0], new=self.unsloth_batch[1]))
        if self.framework() == "verl":
            out.append(message("rllog.verl_lr", lang))
        return out + self._timing_lines(lang) + self._end_lines(lang)

    def _end_lines(self, lang: str) -> list[str]:
        from trainsteps.i18n import message

        status = self.status()
        if status is None:
            return []
        step = self.step_reached()
        if self.crash is not None and status == "crashed" and (self.lines.get("last_step") is None or self.crash[0] > self.lines["last_step"]):
            line, text = self.crash
            key = "rllog.crashed_before_start" if not step else "rllog.crashed_after"
            return [message(key, lang, step=f"{step or 0:,}", line=line, text=text[:100])]
        reading = self.stated["stated_failure" if status == "crashed" else "stated_interruption"]
        if status == "crashed" and self.said_step() is not None:
            return [message("rllog.stated_crashed_said_step", lang, line=reading.line, text=reading.text[:100], step=f"{self.said_step():,}")]
        return [message("rllog.stated_" + status + ("" if step is not None else "_no_step"), lang, line=reading.line,
                        text=reading.text[:100], step=f"{step:,}" if step is not None else "")]

    def total_steps(self) -> int | None:
        """The run's last step: `Total training steps`, else the total of its step bar."""
        return self.total_training_steps or (self.bar[2] if self.bar else None)

    def seconds_per_step(self) -> tuple[float, str] | None:
        """(seconds, how): the steps' own totals (`steps`), the sum of the phases printed (`phases`, a lower bound) or
        the step bar's rate (`bar`)."""
        timed = self.timing.seconds_per_step()
        if timed is not None:
            return timed[0], "steps" if timed[1] else "phases"
        return (self.bar_seconds, "bar") if self.bar_seconds else None

    def remaining_seconds(self) -> float | None:
        rate, step, total = self.seconds_per_step(), self.step_reached(), self.total_steps()
        if rate is None or step is None or not total or step >= total:
            return None
        return (total - step) * rate[0]

    def _timing_lines(self, lang: str) -> list[str]:
        from trainsteps.i18n import message
        from trainsteps.logs.timing import duration

        rate = self.seconds_per_step()
        if rate is None:
            return []
        seconds, how = rate
        out = [message("rllog.rate_" + how, lang, seconds=f"{seconds:,.1f}", time=duration(seconds, lang),
                       count=len(self.timing.step_seconds), line=self.timing.line, name=self.bar[0] if self.bar else "")]
        shares = self.timing.shares()
        if shares:
            parts = ", ".join(f"{name} {share:.0%} ({value:,.0f} s)" for name, value, share in shares)
            step = self.timing.phases_step
            out.append(message("rllog.phases", lang, step=step, phases=parts) if step is not None
                       else message("rllog.phases_no_step", lang, phases=parts))
        left = self.remaining_seconds()
        if left is not None:
            step, total = self.step_reached(), self.total_steps()
            out.append(message("rllog.remaining", lang, step=f"{step:,}", total=f"{total:,}", left=f"{total - step:,}",
                               time=duration(left, lang), seconds=f"{seconds:,.1f}"))
        return out

    def to_dict(self, lang: str = "en") -> dict:
        keys = ("total_training_steps", "loader_length", "dataset_len", "filtered_len", "last_step", "last_epoch",
                "openrlhf_step", "episode", "unsloth_batch", "bar")
        return {"framework": self.framework(), "observed": {k: getattr(self, k) for k in keys},
                "status": self.status(), "step_reached": self.step_reached(), "said_step": self.said_step(), "total_steps": self.total_steps(),
                "crash": None if self.crash is None else {"line": self.crash[0], "text": self.crash[1]},
                "timing": self.timing.to_dict() if self.timing.found() else None,
                "remaining_seconds": self.remaining_seconds(), "explanation": self.explanation(lang)}

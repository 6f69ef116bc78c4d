"""RL trainers' log lines: verl, EasyR1, OpenRLHF, and Unsloth's batch-size notice.

Lines read (fed one at a time by the log reader, in the same pass as the other parsers):

- verl / EasyR1: `Total training steps: 435`, `Size of train dataloader: 29, ...`, `dataset len: 7473`,
  `filter dataset len: 7000`, metric lines `step:12 - actor/pg_loss:0.1 - training/epoch:0 - ...` (verl's console
  logger), the `Training Progress` / `Running step` bars `12/435`;
- OpenRLHF: `Global step 12: {...}` and the `Episode [1/2]` bar (it counts prompts);
- Unsloth: `We will change the batch size of 3 to the `num_generations` of 8`.

The explanation says which kind of step each number is: verl's steps are rollout (training) steps and its LR schedule
counts them; OpenRLHF's global step counts rollout batches while its scheduler counts optimizer steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOTAL = re.compile(r"Total training steps:\s*(\d+)")
_LOADER = re.compile(r"Size of train dataloader:\s*(\d+)")
_DATASET = re.compile(r"(?<!filter )dataset len:\s*(\d+)")
_FILTERED = re.compile(r"filter dataset len:\s*(\d+)")
_STEP = re.compile(r"(?:^|[\s(])step:(\d+)\s+-\s+\S+:")
_EPOCH = re.compile(r"training/epoch:(\d+)")
_BAR = re.compile(r"(Training Progress|Running step|Episode \[(\d+)/(\d+)\])[^|]*\|[^|]*\|\s*(\d+)/(\d+)")
_OPENRLHF = re.compile(r"Global step (\d+):")
_UNSLOTH = re.compile(r"change the batch size of (\d+) to the `num_generations` of (\d+)")


@dataclass
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
    lines: dict = field(default_factory=dict)
    """What -> the line number it was last read at."""
    _line_no: int = 0

    def feed(self, line: str) -> None:
        self._line_no += 1
        if "step" not in line and "dataset len" not in line and "dataloader" not in line and "batch size" not in line \
                and "Episode" not in line and "Progress" not in line:
            return
        for name, pattern in (("total_training_steps", _TOTAL), ("loader_length", _LOADER), ("filtered_len", _FILTERED),
                              ("dataset_len", _DATASET), ("openrlhf_step", _OPENRLHF)):
            match = pattern.search(line)
            if match:
                setattr(self, name, int(match.group(1)))
                self.lines[name] = self._line_no
        match = _STEP.search(line)
        if match:
            self.last_step = int(match.group(1))
            self.lines["last_step"] = self._line_no
            epoch = _EPOCH.search(line)
            if epoch:
                self.last_epoch = int(epoch.group(1))
        match = _BAR.search(line)
        if match:
            self.bar = (match.group(1).split(" [")[0], int(match.group(4)), int(match.group(5)))
            if match.group(2):
                self.episode = (int(match.group(2)), int(match.group(3)))
        match = _UNSLOTH.search(line)
        if match:
            self.unsloth_batch = (int(match.group(1)), int(match.group(2)))
            self.lines["unsloth_batch"] = self._line_no

    def chain(self, other):
        """A feed that also passes each line to `other` (another collector), when there is one."""
        if other is None:
            return self.feed

        def both(line: str) -> None:
            self.feed(line)
            other(line)
        return both

    def found_anything(self) -> bool:
        return any(v is not None for v in (self.total_training_steps, self.last_step, self.openrlhf_step, self.unsloth_batch,
                                           self.loader_length))

    def framework(self) -> str:
        if self.openrlhf_step is not None or self.episode is not None:
            return "openrlhf"
        if self.bar and self.bar[0] == "Running step":
            return "easyr1"
        if self.unsloth_batch and self.total_training_steps is None and self.last_step is None:
            return "unsloth"
        return "verl"

    def explanation(self, lang: str = "en") -> list[str]:
        from trainsteps.i18n import message

        out = [message("rllog.framework", lang, framework=self.framework())]
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
        return out

    def to_dict(self, lang: str = "en") -> dict:
        keys = ("total_training_steps", "loader_length", "dataset_len", "filtered_len", "last_step", "last_epoch",
                "openrlhf_step", "episode", "unsloth_batch", "bar")
        return {"framework": self.framework(), "observed": {k: getattr(self, k) for k in keys},
                "explanation": self.explanation(lang)}

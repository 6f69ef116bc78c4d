"""Score `explain` on the corpus of logs gathered after the reader was built (tests/fixtures/logs/wild), split into a
tuning half and a held-out half (wild/split.json). Every fact its thread states is a check; the facts the pasted text
itself gives (`in_text`) are also counted apart. `python -m tests.logs.wild_score [tune|held_out]` prints the rates
that docs/explain.md reports."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .corpus_score import expected_world, explain_item, rl_item

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "wild"
CHECKED = ("world", "stopped", "step_reached", "max_steps")


def items(half: str | None = None, batch: int | None = None) -> list[dict]:
    """The items of one half (`tune`, `held_out`; both when None), of one gathering batch when given."""
    split = json.loads((WILD / "split.json").read_text(encoding="utf-8"))
    wanted = set(split[half]) if half else set(split["tune"]) | set(split["held_out"])
    metas = [json.loads((WILD / f"{item_id}.json").read_text(encoding="utf-8")) for item_id in sorted(wanted)]
    return [meta for meta in metas if batch is None or meta["batch"] == batch]


@dataclass
class Read:
    """What `explain` says about one log, in the terms its facts use."""

    found: bool = False
    world: int | None = None
    stopped: str | None = None
    step_reached: int | None = None
    max_steps: int | None = None


def read(meta: dict) -> Read:
    path = WILD / meta["file"]
    obs, inferences, pretrain = explain_item(path)
    rl = rl_item(path)
    out = Read(found=bool(inferences) or pretrain.found_anything() or rl.found_anything())
    worlds = [inf.world_size for inf in inferences if inf.world_size is not None]
    out.world = worlds[-1] if worlds else None
    if out.world is None and "stated_gpus" in obs.stated:
        out.world = obs.stated["stated_gpus"].value
    if inferences:
        last = inferences[-1]
        out.stopped = last.status
        out.step_reached = _step_reached(last)
        out.max_steps = last.planned_end_step
    rl.hear(obs.stated)
    out.stopped = _first(None if out.stopped == "unknown" else out.stopped, rl.status(), out.stopped)  # as the RL answer says
    out.step_reached = _first(out.step_reached, pretrain.iteration, rl.step_reached(), rl.said_step())  # the words' step last, as the answer says it
    out.max_steps = _first(out.max_steps, pretrain.train_iters, rl.total_training_steps, rl.bar and rl.bar[2])
    return out


def _step_reached(inf) -> int | None:
    if inf.end_step is not None:
        return inf.end_step
    run = inf.run
    if run.last_step is not None:
        return int(run.last_step.value)
    bars = [bar for bar in run.progress.bars.values() if bar.kind == "bar"]
    return max((bar.n for bar in bars), default=None) if bars else None


def _first(*values):
    return next((v for v in values if v is not None and v is not False), None)


@dataclass
class Score:
    checks: list = field(default_factory=list)
    """(item id, what, expected, read, in_text)."""

    def rate(self, in_text_only: bool = False) -> tuple[int, int]:
        rows = [row for row in self.checks if row[4] or not in_text_only]
        return sum(row[2] == row[3] for row in rows), len(rows)

    def misses(self) -> list:
        return [row for row in self.checks if row[2] != row[3]]


def score(metas: list[dict]) -> Score:
    out = Score()
    for meta in metas:
        got, facts, in_text = read(meta), meta["facts"], set(meta.get("in_text", []))
        out.checks.append((meta["id"], "found", True, got.found, False))
        expected = {"world": expected_world(facts), "stopped": facts.get("stopped"),
                    "step_reached": facts.get("step_reached"), "max_steps": facts.get("max_steps")}
        for what in CHECKED:
            if expected[what] is not None:
                text_key = "gpus" if what == "world" else what
                out.checks.append((meta["id"], what, expected[what], getattr(got, what), text_key in in_text))
    return out


def main(half: str | None = None, batch: int | None = None) -> None:
    s = score(items(half, batch))
    for label, only in (("checks", False), ("in-text facts", True)):
        right, total = s.rate(only)
        print(f"{label:14s} {right}/{total} = {right / total:.1%}")
    misses = s.misses()
    for row in misses:  # every miss, by item and check, so a report can list them all
        print("  miss", row[0], row[1], "expected", row[2], "read", row[3], "(in text)" if row[4] else "")
    kinds = {}
    for row in misses:
        kinds[row[1]] = kinds.get(row[1], 0) + 1
    print(f"{len(misses)} misses in {len({row[0] for row in misses})} items; by check:",
          ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())) or "none")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None, int(sys.argv[2]) if len(sys.argv) > 2 else None)

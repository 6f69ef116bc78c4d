"""A row of the RL step corpus (tests/fixtures/timing/rl_step_corpus.json) -> the step model's setup, and the score of
the model on a set of rows (median error, share of rows inside the interval). What tools/fit_rl_time.py fits with and
what the tests check the stated held-out figures against. Pure: the caller reads the file."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from trainsteps.timing import rl
from trainsteps.timing.estimate import Interval
from trainsteps.timing.flops import ModelShape
from trainsteps.timing.gpus import find_gpu
from trainsteps.timing.rl import RLStepTime, RolloutShape, own_generate_batch, response_interval, rl_step_time, setup_from_shape


@dataclass(frozen=True, slots=True)
class Scored:
    """One corpus row under the model."""

    row_id: str
    source: str
    measured: float
    """The published seconds per step."""
    modelled: Interval
    """The model's step (low, expected, high)."""

    @property
    def error(self) -> float:
        """|modelled / measured - 1| of the expected step."""
        return abs(self.modelled.expected / self.measured - 1)

    @property
    def held(self) -> bool:
        return self.modelled.low <= self.measured <= self.modelled.high


def modelled_step(row: dict, models: dict) -> Interval:
    """The model's step for a corpus row, with the lengths a user would give: the stated mean response, else the cap."""
    return modelled_time(row, models).step


def modelled_time(row: dict, models: dict) -> RLStepTime:
    """The model's step and its parts for a corpus row (modelled_step's lengths)."""
    facts = models[row["model"]]
    shape = ModelShape(facts.get("active_params", facts["params"]), facts["params"], layers=facts["layers"],
                       attention_width=facts["attention_width"], source=row["model"], active_params=facts.get("active_params"),
                       kv_width=facts.get("kv_width"))
    engine = rollout_engine(row)
    rollouts = row["prompts_per_step"] * row["samples_per_prompt"]
    rollout = RolloutShape(framework=framework(row), training_steps=1, prompts_per_step=row["prompts_per_step"],
                           samples_per_prompt=row["samples_per_prompt"], max_response_length=row["response_cap"],
                           asynchronous=row["asynchronous"], gpus=row["gpus"], rollout_gpus=row["rollout_gpus"],
                           rollout_tp=row["rollout_tp"], rollout_ep=row.get("rollout_ep") or 1, reference=row["reference"], critic=row["critic"], turns=turns(row),
                           ppo_epochs=ppo_epochs(row),
                           weight_sync=engine, rollout_engine=engine, max_num_seqs=256 if engine else own_generate_batch(rollouts, row["gpus"]))
    stated = row["response_tokens"]
    response, _ = response_interval(None if stated is None else Interval.exact(stated), row["response_cap"])
    setup = setup_from_shape(rollout, shape, find_gpu(row["gpu"]), prompt_tokens=row["prompt_tokens"], response_tokens=response,
                             training=training(row))
    return rl_step_time(setup)


STACKS = ["NeMo", "verl", "OpenRLHF", "DeepSpeed-Chat", "EasyR1", "AReaL", "slime", "vime", "Miles", "SkyRL", "TRL", "open-r1", "R1-V",
          "Relax", "RLinf", "rllm", "open-instruct", "ms-swift"]
"""The stack a row ran on: the first of these its source names as a word (case-insensitive), else its setup or quote,
else other; forks and wrappers count as the stack they run (open-r1 and R1-V on TRL, vime and Miles on slime)."""
STACK_OF = {"open-r1": "TRL", "R1-V": "TRL", "vime": "slime", "Miles": "slime", "DeepSpeed-Chat": "OpenRLHF"}


def stack(row: dict) -> str:
    return _stack_named(row["source"], row.get("setup_from", ""), row.get("quote", ""))


def framework(row: dict) -> str:
    """The step model's framework name: the stack lower-cased; Unsloth's patched TRL trainer is `trl-unsloth` (TRL's
    level, Unsloth's rollout engine)."""
    return _framework_named(row["source"], row.get("setup_from", ""), row.get("quote", ""))


@functools.cache
def _stack_named(source: str, setup_from: str, quote: str) -> str:
    """stack() by the row's texts, cached: a fit scores every row thousands of times, and the search is most of a score."""
    texts = [source, " ".join((setup_from, quote))]
    found = next((name for text in texts for name in STACKS if re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text, re.I)), "other")
    return STACK_OF.get(found, found)


@functools.cache
def _framework_named(source: str, setup_from: str, quote: str) -> str:
    name = _stack_named(source, setup_from, quote).lower()
    unsloth = re.search(r"(?i)unsloth", " ".join((source, setup_from)))
    return "trl-unsloth" if name == "trl" and unsloth else name


def rollout_engine(row: dict) -> bool:
    """Whether a rollout engine decodes a row's responses: False for a TRL row whose `use_vllm` is false or null (TRL's
    default: the trainer generates, copies nothing, and decodes its own batch), once the model has a fitted
    transformers-generate step (rl.HF_GENERATE_STEP); other stacks always run an engine."""
    if not rl.HF_GENERATE_STEP or stack(row) != "TRL":
        return True
    return bool(row.get("use_vllm"))


def turns(row: dict) -> int:
    """Assistant turns of a row's rollouts: absent or null (the source does not say) reads as one, as a plan is made."""
    return row.get("turns") or 1


def ppo_epochs(row: dict) -> int:
    """Passes of a row's update over its step's responses: absent (the source states one, or does not say) reads as one,
    as a plan that names no `ppo_epochs` is made."""
    return row.get("ppo_epochs") or 1


def training(row: dict) -> str:
    """What a row's update trains: `lora` true is LoRA adapters (QLoRA with `base_quant` 4bit); false, null or absent
    (the source does not say) is full-parameter, as a plan that names no method is made."""
    if not row.get("lora"):
        return "full"
    return "qlora" if row.get("base_quant") == "4bit" else "lora"


def score(rows: list[dict], models: dict) -> list[Scored]:
    return [Scored(r["id"], r["source"], r["step_seconds"], modelled_step(r, models)) for r in rows]


def summary(scored: list[Scored]) -> dict:
    """Median error of the expected step and the share of measured steps inside the interval."""
    errors = sorted(s.error for s in scored)
    middle = len(errors) // 2
    median = errors[middle] if len(errors) % 2 else (errors[middle - 1] + errors[middle]) / 2
    return {"median_error": round(median, 3), "interval_holds": round(sum(s.held for s in scored) / len(scored), 3),
            "runs": len(scored)}

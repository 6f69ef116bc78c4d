"""Fit the RL step model (src/trainsteps/timing/rl_fit.py) on the calibration sources of
tests/fixtures/timing/rl_step_corpus.json, choose its structure by leave-one-source-out over calibration only, and
score the held-out sources it never saw once, when writing.

What is fitted, in this order:
- the weight copy's bandwidth (variants with a fitted copy): the median of all bytes / published seconds over the
  corpus's `sync_rows`, with an interval that holds all of them;
- the mean response used when only the cap is known: a typical length fitted through the step times of the rows that
  state only their cap (the former default), the median mean of the rows that state one, or the median share of the
  cap those rows reach;
- the decode bandwidth share, the training engine's efficiency, the fixed step overhead and the decode half batch, by
  coordinate descent on the mean over sources of each source's median |log(modelled / measured)|;
- the interval, widened from x/÷ 1.5 until it holds 80% of the rows fitted on.

Structure variants, each added alone to the base (fitted factors + fixed step overhead + async streaming): an engine
switch that scales with the weight bytes a colocated engine releases and reloads (with a smaller fixed part); reward
scoring per response; the decode tail (how far toward the cap the longest response runs, fitted); a floor under the
decode step (a small model is launch bound, not bandwidth bound); decode bandwidth that grows with the rollout batch;
the copy per training GPU; the generation and update parts fitted on the rows that log them (each part right, not only
their sum). Then the response defaults. Added one at a time to CHOSEN (`loso(replace(CHOSEN, ...), data)`): multi-turn rounds
(`turns`: each extra turn of a row's `turns` re-prefills the grown context and waits a fitted TURN_SECONDS) and a stack's own
level (`stack_levels`: the step x a factor fitted on that stack's steps). Leave-one-source-out: for every calibration source with step times, fit on the
others and score its rows; the summary is over all rows so scored.

The rule, fixed before any run: a variant's score is its LOSO median error over the calibration rows; a variant whose
interval holds fewer than MIN_HOLDS of them is out. A feature is kept only if it lowers the median error by at least
MIN_GAIN below the structure without it (else the simpler structure wins); the features that pass alone are added in
the order of their gain, each kept only if it passes the same test in the combination; the response default is then
chosen by the same test against the current one. A knob that changes only the interval (the response interval fitted
apart) is kept if the pooled hold stays >= MIN_HOLDS and it narrows the median interval of the steps that state their
mean response; `loso` prints the error and hold by response stated / cap only, by size class and by stack.

    python tools/fit_rl_time.py            # in-sample fit of CHOSEN, calibration rows only
    python tools/fit_rl_time.py --loso     # applies the rule (every candidate's leave-one-source-out score, calibration only)
    python tools/fit_rl_time.py --write    # rewrites src/trainsteps/timing/rl_fit.py from CHOSEN, scoring the untouched HELD_OUT_SPLIT once (when present)
    python tools/fit_rl_time.py --write --no-held-out   # the same, recording HELD_OUT None without scoring any split but calibration
    python tools/fit_rl_time.py --loso-one NAME         # one candidate of CANDIDATES by leave-one-source-out, its error split by group
    python tools/fit_rl_time.py --score SPLIT   # also scores the fitted model on another split (once, after the final fit)
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from trainsteps.timing import rl, rl_fit  # noqa: E402
from trainsteps.timing.estimate import Interval  # noqa: E402
from trainsteps.timing.gpus import find_gpu  # noqa: E402
from trainsteps.timing.rl_corpus import modelled_time, score, stack, summary, training  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "timing" / "rl_step_corpus.json"
OUT = ROOT / "src" / "trainsteps" / "timing" / "rl_fit.py"
HOLD_TARGET = 0.82
"""The share of the calibration rows the fitted interval holds in sample. 0.8 until the 261-step fit; there, with
expert-parallel rollouts read, 0.8 held 68.6 % of the steps left out (under MIN_HOLDS), 0.82 held 71.3 % and 0.84
77.4 % at the same error (docs/time.md, "The fit on 141 calibration sources")."""
MIN_SPREAD = 1.5
"""The interval is at least x/÷ this: a fit on a few sources that lands on its own rows says little about others."""
DECODE_GRID = [x / 100 for x in range(4, 101, 2)]
UPDATE_GRID = [x / 100 for x in range(20, 201, 5)]
"""Up to 2x the training MFU of timing.flops (0.7 expected): beyond it a factor stands for a missing part, not an engine."""
OVERHEAD_GRID = [0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0]
HALF_BATCH_GRID = [0, 1, 2, 4, 8, 16, 32, 64, 128]
SWITCH_GRID = [0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 50.0]
"""GB/s per GPU of a sleep and wake-up (host offload over PCIe: 10-25 GB/s at best; slower with allocator work)."""
REWARD_GRID = [0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
"""Milliseconds of reward scoring per response (rule-based scoring through a worker pool: a few ms)."""
PER_GPU_GRID = [0.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 400.0]
"""Milliseconds per response per GPU of handling outside the engines (reward, tokenizing, padding, moving batches)."""
TRAIN_FLOOR_GRID = [0.0, 5.0, 10.0, 20.0, 40.0, 80.0, 120.0, 160.0, 240.0, 320.0]
"""Microseconds per token per GPU of one forward (10-300: 3k-100k tokens/s/GPU, a small model's forward throughput)."""
TAIL_GRID = [0.0, 0.1, 0.25, 0.5, 0.75, 1.0]
FLOOR_GRID = [0.0, 0.002, 0.004, 0.006, 0.01, 0.015, 0.02, 0.03, 0.05]
"""Seconds per decode step (CUDA-graph decode of a small model: a few ms; eager or CPU-bound sampling: tens of ms)."""
TURN_GRID = [0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 50.0, 80.0, 120.0, 200.0]
"""Seconds per extra turn (a retrieval call: under a second; a sandboxed command or a video tool: tens of seconds)."""
LEVEL_GRID = [x / 10 for x in range(5, 41)]
"""A stack's level: its steps x 0.5 to 4 (TRL's GRPO ran ~1.6x slower than the model in sample)."""
SMALL_SETUP_GRID = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]
"""Exponent of (GPUs / 8) on the fixed costs below one node (1: one GPU pays an eighth of a node's)."""
MOE_TRAIN_GRID = [x / 20 for x in range(2, 21)]
"""A mixture of experts' share of the dense training efficiency (0.1 to 1)."""
LIGHT_CARD_GRID = [1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0]
"""Multiples of the training efficiency tried on compute-light cards."""
ONE_GPU_DECODE_GRID = [1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]
"""The one-GPU decode share as a multiple of the fitted share (4.5 x 0.22: the whole bandwidth)."""
HF_STEP_GRID = [0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5]
"""Seconds per token of transformers generate (a small model eager on one GPU: ~20-30 ms; ZeRO-3 gathers: far more)."""
DEFAULT_TYPICAL = 1000
SHARE_GRID = [x / 100 for x in range(5, 81, 5)]
RESPONSE_FLOOR_GRID = [0, 200, 400, 600, 800, 1000, 1500]
RESPONSE_CEILING_GRID = [None, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 12000]
"""Tokens: the mean response when only the cap is known stays between a floor (short math answers under a large cap) and
a ceiling (a 32K cap is room for long chains, not their mean)."""
MIN_GAIN = 0.02
"""A feature must lower the LOSO median error by at least this (two points) to be kept."""
MIN_HOLDS = 0.70
"""A variant whose pooled LOSO interval holds fewer than this share of the calibration rows is out (the target on unseen
runs)."""


@dataclass(frozen=True)
class Variant:
    name: str
    overhead: bool = False
    batch: bool = False
    streaming: bool = False
    copy: bool = False
    copy_per_gpu: bool = False
    copy_separate: bool = False
    switch: bool = False
    reward: bool = False
    tail: bool = False
    floor: bool = False
    parts: bool = False
    reward_per_gpu: bool = False
    train_floor: bool = False
    response: str = "typical via steps"
    """typical via steps | median mean | share of cap | share of cap, bounded"""
    response_spread: bool = False
    """The step interval fitted on the steps that state their mean response, the response interval (x/÷) on those that
    state only the cap: narrow when the mean is stated, wide when it is not."""
    turns: bool = False
    """Multi-turn rollouts: each extra turn re-prefills the grown context and waits a fitted TURN_SECONDS, fitted on the
    steps that state more than one turn."""
    stack_levels: tuple[str, ...] = ()
    """Stacks (corpus stack names) given their own level: the step x a factor fitted on that stack's steps."""
    lora_copy: bool = False
    """LoRA runs copy what their stack sends each step: the merged weights (TRL), nothing (Unsloth), the adapters (verl,
    ms-swift) (rl.LORA_COPY)."""
    local_copy: bool = False
    """A one-GPU run copies its weights inside its own memory, at its HBM bandwidth (rl.LOCAL_COPY)."""
    one_gpu_decode: bool = False
    """A one-GPU run decodes at a fitted multiple of the decode share (rl.ONE_GPU_DECODE), fitted on one-GPU steps."""
    quant_decode: bool = False
    """QLoRA runs decode from the 4-bit base: half a byte per parameter read (rl.QUANT_DECODE)."""
    small_setup: bool = False
    """The step overhead and the weight copy of a setup under one 8-GPU node scale by (GPUs / 8) ** an exponent fitted on
    those setups' steps (rl.SMALL_SETUP_EXPONENT)."""
    hf_generate: bool = False
    """TRL rows whose `use_vllm` is off generate with the trainer's model: no copy, their own batch, and a decode step of at
    least a fitted HF_GENERATE_STEP (rl_corpus.rollout_engine)."""
    one_gpu_spread: bool = False
    """A one-GPU step's interval widened by a factor of its own (rl.ONE_GPU_SPREAD) until it holds HOLD_TARGET of the
    one-GPU steps fitted on: the expected step does not move."""
    moe_train: bool = False
    """A mixture of experts' forwards and updates run at a share of the dense efficiency fitted on its steps
    (rl.MOE_TRAIN_SHARE)."""
    one_epoch: bool = False
    """Every row read as one PPO epoch, its stated `ppo_epochs` dropped: the corpus as it was read before the field."""
    light_card: bool = False
    """On a compute-light card (rl.light_card: H20, L20, L4, RTX 4090) the forwards and updates run at a multiple of the
    training efficiency fitted on those cards' steps (rl.LIGHT_CARD_TRAIN)."""


BASE = Variant("factors + step overhead + async streaming", overhead=True, streaming=True)
"""The structure chosen before these candidates (fixed 40 s overhead, streaming async engines)."""
FEATURES = [
    ("engine switch ~ weight bytes", {"switch": True}),
    ("reward per response", {"reward": True}),
    ("per-response handling per GPU", {"reward": True, "reward_per_gpu": True}),
    ("training throughput floor", {"train_floor": True}),
    ("decode tail fitted", {"tail": True}),
    ("decode step floor", {"floor": True}),
    ("decode batch", {"batch": True}),
    ("copy per training GPU", {"copy": True, "copy_per_gpu": True}),
    ("parts fitted on logged parts", {"parts": True}),
]
"""Each is added alone to BASE and scored; those that pass the rule are then combined in the order of their gain."""
RESPONSES = ["typical via steps", "median mean", "share of cap"]
CHOSEN = replace(BASE, name=f"{BASE.name} + copy per training GPU + parts fitted on logged parts + decode step floor"
                 " + response interval fitted apart + TRL level + LoRA copy by stack + QLoRA 4-bit decode + one-GPU spread"
                 " + light-card training", copy=True, copy_per_gpu=True, parts=True, floor=True, response="median mean",
                 response_spread=True, stack_levels=("TRL",), lora_copy=True, quant_decode=True, one_gpu_spread=True, light_card=True)
"""What the rule chose at the last `--loso` on the current calibration split (docs/time.md has the table): `--write`
fits this, so a rewrite needs no LOSO run; `--loso` prints whether the rule still chooses it."""
CHOSEN_LOSO = {"median_error": 0.549, "interval_holds": 0.828, "runs": 431}
"""CHOSEN's pooled leave-one-source-out score at that run: what the plan states for runs the model was not fitted on
while no held-out split has been scored (`--write` records it as rl_fit.LOSO)."""


@dataclass
class Params:
    decode: float = 0.5
    update: float = 1.0
    overhead: float = 0.0
    half_batch: int = 0
    spread: float = 1.0
    typical: int = DEFAULT_TYPICAL
    share_of_cap: float | None = None
    streaming: bool = False
    copy: float | None = None
    copy_spread: float = 1.5
    copy_per_gpu: bool = False
    copy_separate: bool = False
    switch: float | None = None
    reward: float = 0.0
    tail: float = 0.5
    floor: float = 0.0
    parts: bool = False
    reward_per_gpu: bool = False
    train_floor: float = 0.0
    response_floor: int = 0
    response_ceiling: int | None = None
    response_spread: float = 3.0
    turn_seconds: float = 0.0
    stack_levels: dict = field(default_factory=dict)
    lora_copy: bool = False
    quant_decode: bool = False
    local_copy: bool = False
    one_gpu_decode: float = 1.0
    small_setup: float = 0.0
    moe_train: float = 1.0
    hf_step: float = 0.0
    one_gpu_spread: float = 1.0
    light_card: float = 1.0


def corpus() -> dict:
    return json.loads(CORPUS.read_text())


def rows(data: dict, split: str) -> list[dict]:
    sources = set(data["split"][split])
    return [r for r in data["rows"] if r["source"] in sources]


def apply(p: Params) -> None:
    """Set the model's fitted constants (the modules' attributes) for a trial."""
    rl.DECODE_BANDWIDTH_SHARE = Interval(p.decode / p.spread, p.decode, min(p.decode * p.spread, 1.0))
    rl.UPDATE_EFFICIENCY = Interval(p.update / p.spread, p.update, p.update * p.spread)
    rl.STEP_OVERHEAD = Interval(p.overhead / p.spread, p.overhead, p.overhead * p.spread)
    rl.DECODE_HALF_BATCH = p.half_batch
    rl.ASYNC_STREAMING = p.streaming
    rl.SYNC_PER_TRAINING_GPU = p.copy_per_gpu
    rl.SYNC_SEPARATE_ONLY = p.copy_separate
    rl.SYNC_COPY_GB_PER_S = None if p.copy is None else Interval(p.copy / p.copy_spread, p.copy, p.copy * p.copy_spread)
    rl_fit.TYPICAL_RESPONSE = p.typical
    rl_fit.RESPONSE_SHARE_OF_CAP = p.share_of_cap
    rl_fit.RESPONSE_FLOOR = p.response_floor
    rl_fit.RESPONSE_CEILING = p.response_ceiling
    rl.TYPICAL_RESPONSE_SPREAD = p.response_spread
    rl.ENGINE_SWITCH_GB_PER_S = None if not p.switch else Interval(p.switch / p.spread, p.switch, p.switch * p.spread)
    rl.REWARD_SECONDS_PER_ROLLOUT = p.reward / 1000
    rl.DECODE_TAIL_SHARE = p.tail
    rl.DECODE_STEP_FLOOR = p.floor
    rl.REWARD_PER_GPU = p.reward_per_gpu
    rl.TRAIN_TOKEN_FLOOR = p.train_floor / 1e6
    rl.TURN_SECONDS = p.turn_seconds
    rl.STACK_LEVELS = {name.lower(): level for name, level in p.stack_levels.items()}
    rl.LORA_COPY = p.lora_copy
    rl.QUANT_DECODE = p.quant_decode
    rl.LOCAL_COPY = p.local_copy
    rl.ONE_GPU_DECODE = p.one_gpu_decode
    rl.SMALL_SETUP_EXPONENT = p.small_setup
    rl.MOE_TRAIN_SHARE = p.moe_train
    rl.HF_GENERATE_STEP = p.hf_step
    rl.ONE_GPU_SPREAD = p.one_gpu_spread
    rl.LIGHT_CARD_TRAIN = p.light_card


def loss(part: list[dict], models: dict, parts: bool = False) -> float:
    """Mean over sources of each source's median |log(modelled / measured)|: every source weighs the same. With
    `parts`, a row that logs its parts scores the mean of its step's and each logged part's |log| error."""
    by_source: dict[str, list[float]] = {}
    for row in part:
        by_source.setdefault(row["source"], []).append(_row_loss(row, models, parts))
    per_source = [sorted(v)[len(v) // 2] for v in by_source.values()]
    return sum(per_source) / len(per_source)


def _row_loss(row: dict, models: dict, parts: bool) -> float:
    time = modelled_time(row, models)
    errors = [abs(math.log(time.step.expected / row["step_seconds"]))]
    if parts:
        errors += [abs(math.log(time.parts[name].expected / seconds)) for name, seconds in row.get("parts", {}).items()
                   if name in time.parts and seconds and time.parts[name].expected > 0]
    return sum(errors) / len(errors)


def fit_copy(sync_rows: list[dict], models: dict, per_gpu: bool) -> tuple[float, float]:
    """Median copy bandwidth (GB/s of all the policy's bf16 bytes, or of each training GPU's share) and the factor that
    holds HOLD_TARGET of the published copies."""
    rates = sorted(2 * models[r["model"]]["params"] / (r["gpus"] if per_gpu else 1) / 1e9 / r["sync_seconds"] for r in sync_rows)
    median = rates[len(rates) // 2] if len(rates) % 2 else math.sqrt(rates[len(rates) // 2 - 1] * rates[len(rates) // 2])
    factors = sorted(max(rate / median, median / rate) for rate in rates)
    spread = max(factors[math.ceil(HOLD_TARGET * len(factors)) - 1], MIN_SPREAD)
    return round(median, 3), round(spread, 2)


def fit_response(variant: Variant, stated: list[dict]) -> tuple[int, float | None]:
    """The typical mean response and share of the cap from the rows that state both (the step-time route is fitted
    later, with the other factors)."""
    means = sorted(r["prompt_tokens"] + r["response_tokens"] for r in stated if r["response_cap"])
    shares = sorted((r["prompt_tokens"] + r["response_tokens"]) / (r["prompt_tokens"] + r["response_cap"]) for r in stated if r["response_cap"])
    if variant.response == "median mean" and means:
        return round(means[len(means) // 2], -1), None
    if variant.response.startswith("share of cap") and shares:
        return DEFAULT_TYPICAL, round(shares[len(shares) // 2], 2)
    return DEFAULT_TYPICAL, None


def fit(variant: Variant, train: list[dict], sync_rows: list[dict], models: dict) -> Params:
    """The variant's constants fitted on `train` (step rows) and `sync_rows`."""
    stated = [r for r in train if r["response_tokens"] is not None]
    capped = [r for r in train if r["response_tokens"] is None]
    p = Params(streaming=variant.streaming, copy_per_gpu=variant.copy_per_gpu, copy_separate=variant.copy_separate, parts=variant.parts,
               reward_per_gpu=variant.reward_per_gpu, lora_copy=variant.lora_copy, quant_decode=variant.quant_decode,
               local_copy=variant.local_copy)
    if variant.copy and sync_rows:
        p.copy, p.copy_spread = fit_copy(sync_rows, models, variant.copy_per_gpu)
    p.typical, p.share_of_cap = fit_response(variant, stated)
    if variant.hf_generate:
        p.hf_step = HF_STEP_GRID[2]
    grids = {"decode": DECODE_GRID, "update": UPDATE_GRID}
    if variant.overhead:
        grids["overhead"] = OVERHEAD_GRID
    if variant.batch:
        grids["half_batch"] = HALF_BATCH_GRID
    if variant.switch:
        p.switch = 5.0
        grids["switch"] = SWITCH_GRID
    if variant.reward:
        grids["reward"] = PER_GPU_GRID if variant.reward_per_gpu else REWARD_GRID
    if variant.train_floor:
        grids["train_floor"] = TRAIN_FLOOR_GRID
    if variant.tail:
        grids["tail"] = TAIL_GRID
    if variant.floor:
        grids["floor"] = FLOOR_GRID
    p = _descend(p, grids, stated or train, models)
    if variant.response == "typical via steps" and capped:
        p = _descend(p, {"typical": list(range(200, 8001, 100))}, capped, models)
    multi_turn = [r for r in train if (r.get("turns") or 1) > 1]
    if variant.turns and multi_turn:
        p = _descend(p, {"turn_seconds": TURN_GRID}, multi_turn, models)
    if variant.small_setup:
        p = _descend(p, {"small_setup": SMALL_SETUP_GRID}, [r for r in train if total_gpus(r) < rl.ONE_NODE], models)
    if variant.one_gpu_decode:
        p = _descend(p, {"one_gpu_decode": ONE_GPU_DECODE_GRID}, [r for r in train if total_gpus(r) == 1], models)
    if variant.hf_generate:
        p = _descend(p, {"hf_step": HF_STEP_GRID}, [r for r in train if stack(r) == "TRL" and not r.get("use_vllm")], models)
    if variant.moe_train:
        p = _descend(p, {"moe_train": MOE_TRAIN_GRID}, [r for r in train if "active_params" in models[r["model"]]], models)
    if variant.light_card:
        p = _descend(p, {"light_card": LIGHT_CARD_GRID}, [r for r in train if rl.light_card(find_gpu(r["gpu"]))], models)
    for name in variant.stack_levels:
        split = f"{name} 1 GPU" in variant.stack_levels or name.endswith(" 1 GPU")
        p = _fit_level(p, name, [r for r in train if (level_key(r) if split else stack(r)) == name], models)
    if variant.response == "share of cap, bounded" and capped:
        p = _descend(p, {"share_of_cap": SHARE_GRID, "response_floor": RESPONSE_FLOOR_GRID, "response_ceiling": RESPONSE_CEILING_GRID},
                     capped, models)
    p = _widen(p, "spread", stated if variant.response_spread and stated else train, models)
    if variant.response_spread and capped:
        p = _widen(replace(p, response_spread=1.0), "response_spread", capped, models)
    if variant.one_gpu_spread and (one_gpu := [r for r in train if total_gpus(r) == 1]):
        p = _widen(p, "one_gpu_spread", one_gpu, models)
    return p


def total_gpus(row: dict) -> int:
    """The GPUs a corpus row's run holds: training and a separate rollout server's (rl.RLStepSetup.total_gpus)."""
    return row["gpus"] + (row["rollout_gpus"] or 0)


def level_key(row: dict) -> str:
    """The stack level a row is fitted under: `TRL 1 GPU` for a one-GPU run of a stack with such a level, else its stack."""
    return f"{stack(row)} 1 GPU" if total_gpus(row) == 1 else stack(row)


def _fit_level(p: Params, name: str, part: list[dict], models: dict) -> Params:
    """The level of stack `name` (the step x a factor) that fits its own steps best; 1 when it has none."""
    best, best_loss = 1.0, _trial(replace(p, stack_levels={**p.stack_levels, name: 1.0}), part, models) if part else 0.0
    for level in LEVEL_GRID if part else []:
        trial_loss = _trial(replace(p, stack_levels={**p.stack_levels, name: level}), part, models)
        if trial_loss < best_loss - 1e-9:
            best, best_loss = level, trial_loss
    return replace(p, stack_levels={**p.stack_levels, name: best})


def _widen(p: Params, name: str, part: list[dict], models: dict) -> Params:
    """The factor `name` widened from MIN_SPREAD (1.0 for the response) until the interval holds HOLD_TARGET of `part`."""
    p = replace(p, **{name: MIN_SPREAD if name == "spread" else 1.0})
    while True:
        apply(p)
        if summary(score(part, models))["interval_holds"] >= HOLD_TARGET or getattr(p, name) > 6:
            return replace(p, **{name: round(getattr(p, name), 2)})
        p = replace(p, **{name: getattr(p, name) + 0.05})


def _descend(p: Params, grids: dict, part: list[dict], models: dict) -> Params:
    """Coordinate descent: each factor in turn to its best grid value, the others fixed, until nothing moves."""
    best = _trial(p, part, models)
    for _ in range(6):
        moved = False
        for name, grid in grids.items():
            for value in grid:
                trial = replace(p, **{name: value})
                trial_loss = _trial(trial, part, models)
                if trial_loss < best - 1e-9:
                    best, p, moved = trial_loss, trial, True
        if not moved:
            return p
    return p


def _trial(p: Params, part: list[dict], models: dict) -> float:
    apply(replace(p, spread=1.0))
    return loss(part, models, p.parts)


def loso(variant: Variant, data: dict) -> tuple[dict, dict[str, float]]:
    """Leave one calibration source out: fit on the rest, score its rows; summary over all left-out rows (with the
    median width high / low of their intervals and the error by group), and each source's median error."""
    if variant.one_epoch:
        data = {**data, "rows": [{k: v for k, v in r.items() if k != "ppo_epochs"} for r in data["rows"]]}
    calibration = rows(data, "calibration")
    sync_rows = data.get("sync_rows", [])
    scored, per_source, spreads = [], {}, []
    for source in dict.fromkeys(r["source"] for r in calibration):
        left_out = [r for r in calibration if r["source"] == source]
        p = fit(variant, [r for r in calibration if r["source"] != source], sync_rows, data["models"])
        apply(p)
        these = score(left_out, data["models"])
        scored += these
        spreads.append(p.spread)
        per_source[source] = summary(these)["median_error"]
    widths = sorted(math.sqrt(s.modelled.high / s.modelled.low) for s in scored)
    return {**summary(scored), "width": sorted(spreads)[len(spreads) // 2], "row_width": round(widths[len(widths) // 2], 2),
            "every_source_once": round(statistics.median(per_source.values()), 3), "groups": groups(scored, calibration, data["models"])}, per_source


def groups(scored: list, calibration: list[dict], models: dict) -> dict[str, dict]:
    """The left-out rows' summary by whether the mean response is stated, by turns (one, several, not stated), by model
    size, by RL stack, by what the update trains (full, LoRA, QLoRA) and by GPU count."""
    by_id = {r["id"]: r for r in calibration}
    keys = {"response": lambda r: "stated" if r["response_tokens"] is not None else "cap only",
            "turns": lambda r: "single-turn" if r.get("turns") == 1 else "not stated" if r.get("turns") is None else "multi-turn",
            "size": lambda r: size_class(models[r["model"]]["params"]), "stack": stack, "training": training,
            "GPUs": lambda r: gpu_class(total_gpus(r))}
    out: dict[str, dict] = {}
    for kind, key in keys.items():
        members: dict[str, list] = {}
        for s in scored:
            members.setdefault(key(by_id[s.row_id]), []).append(s)
        out[kind] = {name: summary(these) for name, these in sorted(members.items())}
    return out


def gpu_class(gpus: int) -> str:
    """1, 2-8 (one node) or > 8 GPUs, training and rollout together."""
    return "1 GPU" if gpus == 1 else "2-8 GPUs" if gpus <= 8 else "> 8 GPUs"


def size_class(params: float) -> str:
    return "< 3B" if params < 3e9 else "3-15B" if params < 15e9 else "15-80B" if params < 80e9 else ">= 80B"


def choose(data: dict, verbose: bool) -> Variant:
    """The rule of the module docstring: each feature alone on BASE, then those that pass combined in the order of their
    gain, then the response default; every step scored by leave-one-source-out over calibration only."""
    scores: dict[Variant, tuple[float, float]] = {}

    def run(v: Variant) -> tuple[float, float]:
        if v not in scores:
            result, per_source = loso(v, data)
            scores[v] = (result["median_error"], result["interval_holds"])
            if verbose:
                print(f"LOSO {v.name:<70} {v.response:<18} median error {result['median_error']:.0%}  "
                      f"interval holds {result['interval_holds']:.0%}  width x/÷ {result['width']:.2f}  ({result['runs']} rows)", flush=True)
                print("     " + ", ".join(f"{_short(s)} {e:.0%}" for s, e in per_source.items()), flush=True)
                print_groups(result)
        return scores[v]

    def better(trial: Variant, current: Variant) -> bool:
        (error, holds), (current_error, _) = run(trial), run(current)
        return holds >= MIN_HOLDS and error <= current_error - MIN_GAIN - 1e-9

    best = BASE
    alone = [replace(BASE, name=f"{BASE.name} + {name}", **features) for name, features in FEATURES]
    passing = sorted((v for v in alone if better(v, BASE)), key=lambda v: run(v)[0])
    for feature in passing:
        flags = {k: True for k in ("switch", "reward", "reward_per_gpu", "train_floor", "tail", "floor", "batch", "copy", "copy_per_gpu",
                                   "parts") if getattr(feature, k)}
        trial = replace(best, name=best.name + feature.name.removeprefix(BASE.name), **flags)
        if better(trial, best):
            best = trial
    for response in RESPONSES:
        trial = replace(best, response=response)
        if response != best.response and better(trial, best):
            best = trial
    return best


def print_groups(result: dict) -> None:
    print(f"     median row width x/÷ {result['row_width']:.2f}; median error, every source once {result['every_source_once']:.1%}", flush=True)
    for kind, members in result["groups"].items():
        print(f"     by {kind}: " + "; ".join(f"{name} {m['median_error']:.0%}/{m['interval_holds']:.0%} ({m['runs']})"
                                             for name, m in members.items()), flush=True)


def _copy_name(per_gpu: bool, separate: bool) -> str:
    return "copy per training GPU" if per_gpu else "copy bandwidth, separate engines only" if separate else "copy bandwidth"


def _short(source: str) -> str:
    """`NeMo RL v0.4`, `verl fully_async`: a source's name short enough for a table."""
    if "(v" in source:
        return "NeMo RL " + source.split("(")[1].rstrip(")")
    return source.replace("verl docs: ", "verl ").split(" (")[0]


HELD_OUT_SPLIT = "fresh17"
"""The held-out split gathered while the shipped fit was chosen, which `--write` scores and records when the corpus has
it (else it records None): fresh17, scored once by the write of the fit on 251 sources; the earlier ones (fresh16 last)
joined the calibration once scored, and fresh17 joins at the next refit, which names the next untouched split here. `--write
--no-held-out` records None without scoring it (a refit while the split is still being gathered, or before the one
scoring write)."""


def held_out_score(data: dict, argv: list[str]) -> dict | None:
    """The fitted model's score on HELD_OUT_SPLIT, or None when it is absent or `--no-held-out` says not to look."""
    if "--no-held-out" in argv or HELD_OUT_SPLIT not in data["split"]:
        return None
    return summary(score(rows(data, HELD_OUT_SPLIT), data["models"]))


def split_to_score(argv: list[str]) -> str | None:
    """The split named by `--score SPLIT` (e.g. `fresh5`, the sources gathered while the fit was chosen: scored only when asked, so
    that looking at them is a deliberate act, never a side effect of refitting)."""
    if "--score" not in argv:
        return None
    index = argv.index("--score") + 1
    known = json.loads(CORPUS.read_text())["split"]
    if index >= len(argv) or argv[index] not in known or argv[index] == "calibration":
        others = [k for k in known if k != "calibration"]
        hint = f"one of {', '.join(others)}" if others else "the corpus holds no split but calibration now"
        print(f"--score needs a split of {CORPUS.name} other than calibration; hint: {hint}", file=sys.stderr)
        sys.exit(2)
    return argv[index]


_BEFORE = replace(CHOSEN, name=CHOSEN.name.removesuffix(" + light-card training"), light_card=False)
CANDIDATES = {"before": _BEFORE,
              "light-card training": CHOSEN,
              "every row one PPO epoch": replace(CHOSEN, name=CHOSEN.name + ", every row one PPO epoch", one_epoch=True),
              "TRL level by GPU count": replace(CHOSEN, name=CHOSEN.name + " + TRL one-GPU level", stack_levels=("TRL", "TRL 1 GPU")),
              "fixed costs by setup size": replace(CHOSEN, name=CHOSEN.name + " + fixed costs by setup size", small_setup=True),
              "MoE training share": replace(CHOSEN, name=CHOSEN.name + " + MoE training share", moe_train=True),
              "one-GPU local copy": replace(CHOSEN, name=CHOSEN.name + " + one-GPU local copy", local_copy=True),
              "one-GPU decode share": replace(CHOSEN, name=CHOSEN.name + " + one-GPU decode share", one_gpu_decode=True),
              "use_vllm": replace(CHOSEN, name=CHOSEN.name + " + TRL use_vllm (transformers generate step)", hf_generate=True),
              "per-response cost": replace(CHOSEN, name=CHOSEN.name + " + per-response handling per GPU", reward=True, reward_per_gpu=True)}
"""Variants of CHOSEN scored one at a time by `--loso-one NAME` (docs/time.md, "The fit on 107 calibration sources")."""


def loso_one(name: str, data: dict) -> None:
    """One candidate's leave-one-source-out score over calibration only, with its error split by group."""
    if name not in CANDIDATES:
        print(f"--loso-one needs a candidate name; hint: one of {', '.join(CANDIDATES)}", file=sys.stderr)
        sys.exit(2)
    result, per_source = loso(CANDIDATES[name], data)
    print(f"LOSO {name}: every source once {result['every_source_once']:.1%}; pooled median error {result['median_error']:.1%}, "
          f"interval holds {result['interval_holds']:.1%}, width x/÷ {result['width']:.2f} ({result['runs']} rows)", flush=True)
    print("     " + ", ".join(f"{_short(s)} {e:.0%}" for s, e in per_source.items()), flush=True)
    print_groups(result)


def main() -> None:
    extra = split_to_score(sys.argv)
    data = corpus()
    if "--loso-one" in sys.argv:
        index = sys.argv.index("--loso-one") + 1
        loso_one(sys.argv[index] if index < len(sys.argv) else "", data)
        return
    variant = CHOSEN
    if "--loso" in sys.argv:
        variant = choose(data, verbose=True)
        print(f"the rule chooses: {variant.name}, response default {variant.response}"
              + ("" if variant == CHOSEN else f" (CHOSEN is {CHOSEN.name}, {CHOSEN.response}: update it)"))
    calibration = rows(data, "calibration")
    p = fit(variant, calibration, data.get("sync_rows", []), data["models"])
    apply(p)
    scored = score(calibration, data["models"])
    print(f"chosen: {variant.name}, response default {variant.response}")
    print(f"calibration (in sample): {summary(scored)}")
    for s in scored:
        print(f"  {s.row_id:<42} measured {s.measured:>7.1f}  modelled {s.modelled.expected:>7.1f} "
              f"({s.modelled.low:.0f}-{s.modelled.high:.0f})  error {s.error:.0%}{'' if s.held else '  outside'}")
    print(f"fitted: {p}")
    if extra:
        print(f"{extra}: {summary(score(rows(data, extra), data['models']))}")
    if "--write" not in sys.argv:
        return
    held = held_out_score(data, sys.argv)
    print(f"{HELD_OUT_SPLIT} (held out, scored once, on writing): {held}" if held else f"{HELD_OUT_SPLIT}: not scored (HELD_OUT None)")
    sources = ", ".join(data["split"]["calibration"])
    OUT.write_text(f'"""Generated by tools/fit_rl_time.py from the calibration sources of tests/fixtures/timing/rl_step_corpus.json '
                   f'({sources}); structure chosen by leave-one-source-out: {variant.name}, response default {variant.response}. '
                   f'Do not edit."""\n\n'
                   f"DECODE_SHARE = {p.decode}\nUPDATE_EFFICIENCY = {p.update}\nSPREAD = {p.spread}\nTYPICAL_RESPONSE = {p.typical}\n"
                   f"STEP_OVERHEAD = {p.overhead}\nDECODE_HALF_BATCH = {p.half_batch}\nSYNC_GB_PER_S = {p.copy}\n"
                   f"SYNC_SPREAD = {p.copy_spread}\nSYNC_PER_TRAINING_GPU = {p.copy_per_gpu}\nSYNC_SEPARATE_ONLY = {p.copy_separate}\n"
                   f"RESPONSE_SHARE_OF_CAP = {p.share_of_cap}\nASYNC_STREAMING = {p.streaming}\nSWITCH_GB_PER_S = {p.switch}\n"
                   f"REWARD_MS_PER_ROLLOUT = {p.reward}\nDECODE_TAIL_SHARE = {p.tail}\nDECODE_STEP_FLOOR = {p.floor}\n"
                   f"REWARD_PER_GPU = {p.reward_per_gpu}\nTRAIN_TOKEN_FLOOR_US = {p.train_floor}\n"
                   f"RESPONSE_FLOOR = {p.response_floor}\nRESPONSE_CEILING = {p.response_ceiling}\nRESPONSE_SPREAD = {p.response_spread}\n"
                   f"TURN_SECONDS = {p.turn_seconds}\nLORA_COPY = {p.lora_copy}\nQUANT_DECODE = {p.quant_decode}\nLOCAL_COPY = {p.local_copy}\nONE_GPU_DECODE = {p.one_gpu_decode}\n"
                   f"SMALL_SETUP_EXPONENT = {p.small_setup}\nMOE_TRAIN_SHARE = {p.moe_train}\nHF_GENERATE_STEP = {p.hf_step}\nONE_GPU_SPREAD = {p.one_gpu_spread}\nLIGHT_CARD_TRAIN = {p.light_card}\nSTACK_LEVELS = {({k.lower(): v for k, v in p.stack_levels.items()})!r}\n"
                   f"HELD_OUT_SPLIT = {HELD_OUT_SPLIT!r}\nHELD_OUT = {held!r}\nLOSO = {CHOSEN_LOSO!r}\n")


if __name__ == "__main__":
    main()

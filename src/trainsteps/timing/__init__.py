"""The time model: how long a run takes in hours, its GPU-hours and cost, and a right ETA. One home for every
surface (plan, solve, explain, the callbacks, the web page). Pure: no torch, no I/O, no CLI imports.

API (import from `trainsteps.timing`):

- `Interval(low, expected, high)`: `.exact(x)`, `.spread(x, lo_factor, hi_factor)`, `.scaled(k)`, `.inverse(n)`,
  `a + b`, `.to_dict()` -> {low, expected, high}, `.describe(lang)` -> `4 h 20 min (4 h 7 min – 4 h 46 min)`.
- `Rate(step_seconds: Interval, origin: "flag"|"log"|"model", detail, tokens_per_step, mfu, assumptions)`;
  `.source` -> "measured"|"model"; `.tokens_per_second`; constructors `Rate.from_step_seconds(4.0, origin, detail)`,
  `Rate.from_tokens_per_second(tps_total, tokens_per_step, ...)`, `Rate.from_samples_per_second(sps, samples_per_step)`.
- `RunCounts(optimizer_steps, eval_count, save_count, warmup_steps, tokens_per_step, samples_per_step, start_step)`;
  `RunCounts.from_schedule(schedule, after_step=None)` counts the steps/evals/saves after a step (default: the resume).
- `estimate(counts, rate, *, eval_seconds=None, save_seconds=None, prepare_seconds=None, gpus=None,
  price_per_gpu_hour=None, currency="USD", notes=None) -> TimeEstimate` (per-event eval/save Intervals).
- `remaining(rate, current_step, final_step, *, evals_left=0, saves_left=0, **same_keywords) -> TimeEstimate`.
- `TimeEstimate`: wall_seconds, train/eval/save/prepare (Interval or None = left out), step_seconds, source, rate,
  tokens_per_second, mfu, gpus, gpu_hours, cost, currency, left_out, notes [(msg_id, params)], derivation;
  `.to_dict(lang)` is the JSON `time` object (docs/json.md).
- `parse_duration("1h30m" | "4" | "2.5m" | "1-12:00:00", option) -> seconds` (InputError on bad/zero/negative);
  `format_duration(15600, lang) -> "4 h 20 min"` / `"4 小时 20 分"`; `Spoken(s)` formats itself in a message's language.
- `check_positive(value, option)`: the one check for rates (InputError `time.error.rate_positive`).

Beyond the core (import from the submodules):
- `timing.measure.StepClock(warmup_steps=2, min_steps=3)`: `.rebase(step, now)`, `.step(step, now)`,
  `.pause(kind, seconds)`, `.rate() -> Rate | None`, `.event_seconds(kind)`, `.eta(final, evals_left, saves_left)`.
- `timing.log_rates.RateReader(total_hint=None)`: `.feed(line)` any log line (tqdm/notebook bars, train_runtime,
  eval_runtime, LLaMA-Factory trainer_log, Megatron iterations, Lightning bars), `.feed_tqdm(line, slash, texts...,
  clock seconds)` a tqdm draw a caller already parsed (taken as parsed when `.feed` would read the same texts),
  `.result() -> LogTiming` with
  `.rate`, `.per` (step/batch), `.last_step`, `.total`, `.elapsed_seconds`, `.framework_remaining_seconds`,
  `.paused_seconds`, `.resume_step`, `.samples`. `clock_seconds("4:15:03")`.
- `timing.architectures`: `shape_from_config(dict)` (per-family rules, MoE active/total, sliding windows), `ModelShape`.
- `timing.flops`: `shape_from_params(n)`, `train_flops_per_token(shape, s, kind)`,
  `eval_flops_per_token`, `MFU_DEFAULTS`, `parse_mfu("0.3-0.5")`, `model_rate(...)`, `implied_mfu(...)`.
- `timing.gpus`: `GPUS`, `find_gpu(name)` (did-you-mean), `Gpu.peak(dtype)`, `custom_gpu(tflops)` (`--peak-tflops`).
- `timing.efficiency`: `SetupFacts(method, stack, checkpointing, dtype, tokens_per_micro_batch, active_params, moe, gpu,
  gpus, ..., pretraining, packed)`, `estimate_mfu(facts) -> MfuEstimate(mfu, unknown, similar, stack_spread)`, `stack_of(framework, config)`.
- `timing.flops.preference_flops(shape, tokens_per_row, trainer, training, precompute_reference) -> PreferenceCost`.
- `timing.overheads`: `checkpoint_bytes`, `save_seconds`, `load_seconds` (stated parts when nothing was measured).
- `timing.model_files.read_model_shape(path)`: config.json or a model folder.
- `timing.request.estimate_for_plan(plan_json, request)`: what `plan --step-time ...` computes, from a plan's JSON and
  the option values (the web page's entry point); `timing.report.render_time(estimate, lang)`: the "Time" section.
- `timing.budget.fit_budget(budget_seconds, rate, ...) -> BudgetFit` (`solve --time-budget`).
"""

from trainsteps.timing.durations import Spoken, format_duration, parse_duration
from trainsteps.timing.estimate import (
    MEASURED_SPREAD,
    PARTS,
    Interval,
    Rate,
    RunCounts,
    TimeEstimate,
    check_positive,
    estimate,
    remaining,
)

__all__ = [
    "MEASURED_SPREAD", "PARTS", "Interval", "Rate", "RunCounts", "Spoken", "TimeEstimate", "check_positive", "estimate",
    "format_duration", "parse_duration", "remaining",
]

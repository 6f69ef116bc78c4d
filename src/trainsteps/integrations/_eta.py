"""The ETA both callbacks log: `timing.measure.StepClock` fed with the framework's events.

Steps are measured from step end to step end. When an evaluation or a checkpoint save runs between two steps, the
time from the step's end to the next step's start is a pause: it is taken out of the step rate and kept as the cost
of one evaluation (or save), split at the moments the framework reports them. The remaining evaluations and saves
come from the schedule (the plan) and are added at their measured cost. Pure Python: no torch.
"""

from __future__ import annotations

import time

from trainsteps.timing.measure import StepClock


class EtaState:
    """Measures the rate in a running job and gives `eta_seconds`, `tokens_per_second` and `mfu`."""

    def __init__(self, warmup_steps: int = 2, min_steps: int = 3, now=time.perf_counter):
        self.clock = StepClock(warmup_steps, min_steps)
        self.now = now
        self.final_step: int | None = None
        """Where the run really ends (the plan's optimizer steps, else the framework's max_steps)."""
        self.eval_steps: list[int] = []
        """Steps after which an evaluation runs (from the plan)."""
        self.save_steps: list[int] = []
        """Steps after which a checkpoint is saved (from the plan)."""
        self.flops_per_token: float | None = None
        """Training FLOPs per token (6N + attention, or 4N for adapters), when the model's shape is known."""
        self.peak_flops: float | None = None
        """Peak FLOP/s of one device, when known (`gpu=` or `peak_tflops=`)."""
        self.devices = 1
        self.estimate = None
        """The latest `TimeEstimate` of the remaining time (None: unknown, still warming up)."""
        self.base_step = 0
        self._gap_start: float | None = None
        self._events: list[tuple[str, float]] = []
        self._done: dict[str, int] = {}  # kind -> the step whose evaluation/save has already run

    def begin(self, step: int) -> None:
        """Train begin, or a resume at `step`: measure from here on."""
        self.base_step = int(step)
        self.clock.rebase(step, self.now())
        self._gap_start, self._events = None, []

    def step_begin(self) -> None:
        self._close_gap(self.now())

    def step_end(self, step: int) -> None:
        now = self.now()
        self._close_gap(now)
        self.clock.step(step, now)
        self._gap_start = now

    def event(self, kind: str) -> None:
        """An evaluation (`eval`) or save (`save`) has just finished (or, for a save, is under way)."""
        if self._gap_start is not None:
            self._events.append((kind, self.now()))
        self._done[kind] = self.clock.last_step

    def _close_gap(self, now: float) -> None:
        if self._events and self._gap_start is not None:
            previous = self._gap_start
            for kind, at in self._events:
                self.clock.pause(kind, at - previous)
                previous = at
            if now > previous:  # what followed the last event (writing a checkpoint, logging) belongs to it
                kind = self._events[-1][0]
                self.clock.pauses[kind][-1] += now - previous
                self.clock.pause_extra(now - previous)
        self._gap_start, self._events = None, []

    def metrics(self, step: int, tokens_seen: int | None = None) -> dict:
        """Values for the framework's logs; empty while the rate is still unknown."""
        final = self.final_step
        if not final:
            return {}
        # an evaluation/save at this very step is still ahead when the log comes first (the Trainer logs, then
        # evaluates, then saves)
        evals_left = sum(1 for s in self.eval_steps if s > step or (s == step and self._done.get("eval") != step))
        saves_left = sum(1 for s in self.save_steps if s > step or (s == step and self._done.get("save") != step))
        done = step - self.base_step
        tokens_per_step = tokens_seen / done if tokens_seen and done > 0 else None
        self.estimate = self.clock.eta(final, evals_left, saves_left, tokens_per_step)
        if self.estimate is None:
            return {}
        out = {"eta_seconds": round(self.estimate.wall_seconds.expected, 2)}
        tps = self.estimate.tokens_per_second
        if tps is not None:
            out["tokens_per_second"] = round(tps.expected, 2)
            if self.flops_per_token and self.peak_flops:
                out["mfu"] = float(f"{tps.expected * self.flops_per_token / (self.peak_flops * self.devices):.6g}")
        return out


def model_flops_per_token(model, seq_length: float | None = None) -> float | None:
    """Training FLOPs per token of a transformers/torch model: from its config.json-like `config` when it has one,
    else 6 x its parameters; 4N when most weights are frozen (adapters)."""
    from trainsteps.timing.flops import shape_from_config, shape_from_params, train_flops_per_token

    try:
        params = [(p.numel(), p.requires_grad) for p in model.parameters()]
    except Exception:  # noqa: BLE001 - not a torch module
        return None
    total = sum(n for n, _ in params)
    trainable = sum(n for n, grad in params if grad)
    if not total:
        return None
    config = getattr(model, "config", None)
    shape = None
    if config is not None and hasattr(config, "to_dict"):
        try:
            shape = shape_from_config(config.to_dict(), source="model.config")
        except Exception:  # noqa: BLE001 - a config without the sizes: count parameters instead
            shape = None
    if shape is None:
        shape = shape_from_params(total)
    kind = "full" if trainable >= 0.99 * total else "lora" if trainable <= 0.05 * total else "frozen"
    return train_flops_per_token(shape, seq_length, kind).expected

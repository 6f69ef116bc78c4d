"""Real CPU training with TrainstepsCallback: how right is its ETA, against the Trainer's own tqdm ETA?

    python tests/live/eta_worker.py OUT_DIR SCENARIOS_JSON

A scenario: {"name", "n", "bs", "max_steps", "step_sleep", "first_step_sleep", "eval_every", "eval_sleep",
"save_every", "resume_at"}. The tiny model really trains (forward, backward, AdamW); `*_sleep` stretch its forward so
the run has the shape of a real one on a slow accelerator: a slow first step (compilation), slow evaluations.
With `resume_at`, the run is stopped there (a checkpoint is saved) and a second Trainer resumes it to the end; the
figures are those of the resumed process.

Writes OUT_DIR/rank-0.json: per scenario, at 10/25/50 % of the steps this process runs, the remaining seconds
predicted by trainsteps and by the Trainer's tqdm bar, and the remaining seconds that really followed.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import Trainer, TrainerCallback, TrainingArguments  # noqa: E402

from tests.live.tiny import MapRows, TinyLM, collate  # noqa: E402
from trainsteps.integrations.hf import TrainstepsCallback  # noqa: E402


class SlowLM(TinyLM):
    """TinyLM whose forward also waits: `step_sleep` per training forward, more on the very first one, and
    `eval_sleep` per evaluation forward."""

    def __init__(self, step_sleep: float, first_step_sleep: float, eval_sleep: float):
        super().__init__()
        self.step_sleep, self.first_step_sleep, self.eval_sleep = step_sleep, first_step_sleep, eval_sleep
        self.forwards = 0

    def forward(self, *args, **kwargs):
        if self.training:
            self.forwards += 1
            time.sleep(self.step_sleep + (self.first_step_sleep if self.forwards == 1 else 0.0))
        else:
            time.sleep(self.eval_sleep)
        return super().forward(*args, **kwargs)


class Probe(TrainerCallback):
    """After every step: trainsteps' remaining-time estimate and the tqdm bar's (the ProgressCallback runs first)."""

    def __init__(self, ours: TrainstepsCallback, trainer_ref: list):
        self.ours, self.trainer_ref, self.rows = ours, trainer_ref, []

    def on_step_end(self, args, state, control, **kwargs):
        bar = None
        for cb in self.trainer_ref[0].callback_handler.callbacks:
            if type(cb).__name__ == "ProgressCallback":
                bar = cb.training_bar
        tqdm_eta = None
        if bar is not None:
            info = bar.format_dict
            rate = info.get("rate") or (info["n"] / info["elapsed"] if info.get("elapsed") else None)
            if rate:
                tqdm_eta = (info["total"] - info["n"]) / rate
        estimate = self.ours.eta.clock.eta(self.ours.eta.final_step,
                                           sum(1 for s in self.ours.eta.eval_steps if s >= state.global_step),
                                           sum(1 for s in self.ours.eta.save_steps if s >= state.global_step))
        self.rows.append({"step": state.global_step, "t": time.perf_counter(), "tqdm": tqdm_eta,
                          "trainsteps": None if estimate is None else estimate.wall_seconds.expected,
                          "trainsteps_low": None if estimate is None else estimate.wall_seconds.low,
                          "trainsteps_high": None if estimate is None else estimate.wall_seconds.high})


def make_args(sc: dict, out: str, max_steps: int) -> TrainingArguments:
    evals = {"eval_strategy": "steps", "eval_steps": sc["eval_every"]} if sc.get("eval_every") else {"eval_strategy": "no"}
    saves = {"save_strategy": "steps", "save_steps": sc["save_every"]} if sc.get("save_every") else {"save_strategy": "no"}
    return TrainingArguments(output_dir=out, per_device_train_batch_size=sc["bs"], max_steps=max_steps, logging_steps=1,
                             report_to=[], use_cpu=True, disable_tqdm=False, remove_unused_columns=False, seed=0,
                             per_device_eval_batch_size=sc["bs"], **evals, **saves)


def run(sc: dict) -> dict:
    torch.manual_seed(0)
    out = tempfile.mkdtemp()
    model = SlowLM(sc["step_sleep"], sc.get("first_step_sleep", 0.0), sc.get("eval_sleep", 0.0))
    data, eval_data = MapRows(sc["n"]), MapRows(sc.get("eval_rows", 2 * sc["bs"]))
    if sc.get("resume_at"):  # first process: run to the resume point and save there
        first = {**sc, "save_every": sc["resume_at"]}
        Trainer(model=model, args=make_args(first, out, sc["resume_at"]), train_dataset=data, eval_dataset=eval_data,
                data_collator=collate).train()
        model = SlowLM(sc["step_sleep"], sc.get("first_step_sleep", 0.0), sc.get("eval_sleep", 0.0))
    ours = TrainstepsCallback()
    ref: list = []
    probe = Probe(ours, ref)
    trainer = Trainer(model=model, args=make_args(sc, out, sc["max_steps"]), train_dataset=data,
                      eval_dataset=eval_data if sc.get("eval_every") else None, data_collator=collate,
                      callbacks=[ours, probe])
    ref.append(trainer)
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=f"{out}/checkpoint-{sc['resume_at']}" if sc.get("resume_at") else None)
    end = time.perf_counter()
    rows = probe.rows
    first_step = rows[0]["step"] - 1
    run_steps = sc["max_steps"] - first_step
    points = {}
    for share in (10, 25, 50):
        target = first_step + max(1, round(run_steps * share / 100))
        row = next(r for r in rows if r["step"] >= target)
        actual = end - row["t"]
        points[str(share)] = {
            "step": row["step"], "actual_remaining": actual, "trainsteps": row["trainsteps"], "tqdm": row["tqdm"],
            "trainsteps_error": None if row["trainsteps"] is None else (row["trainsteps"] - actual) / actual,
            "tqdm_error": None if row["tqdm"] is None else (row["tqdm"] - actual) / actual,
            "inside_interval": None if row["trainsteps"] is None else row["trainsteps_low"] <= actual <= row["trainsteps_high"],
        }
    logged = [e for e in trainer.state.log_history if "eta_seconds" in e]
    return {"name": sc["name"], "transformers": transformers.__version__, "torch": torch.__version__,
            "scenario": sc, "wall_seconds": end - start, "points": points,
            "logged_keys": sorted({k for e in logged for k in e if k in ("eta_seconds", "tokens_per_second", "mfu")}),
            "logged_first_step": logged[0]["step"] if logged else None,
            "eval_pauses": ours.eta.clock.pauses.get("eval", []), "global_step": trainer.state.global_step}


def main() -> None:
    out, scenarios = Path(sys.argv[1]), json.loads(sys.argv[2])
    results = [run(sc) for sc in scenarios]
    out.mkdir(parents=True, exist_ok=True)
    (out / "rank-0.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

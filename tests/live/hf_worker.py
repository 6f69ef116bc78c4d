"""Run Trainer scenarios with TrainstepsCallback and write what the model really received, per rank.

    python tests/live/hf_worker.py OUT_DIR SCENARIOS_JSON
    python -m torch.distributed.run --nproc_per_node 2 tests/live/hf_worker.py OUT_DIR SCENARIOS_JSON

A scenario: {"name", "n", "bs", "ga", "max_steps" | "epochs", "iterable", "drop_last", "dispatch_batches",
"fault": null | "hook" | "log" | "begin", "fault_rank"}. Each rank writes OUT_DIR/rank-<r>.json.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import transformers  # noqa: E402
from transformers import Trainer, TrainingArguments  # noqa: E402

from tests.live.tiny import MapRows, StreamRows, TinyLM, close_process_group, collate  # noqa: E402
from trainsteps.integrations.hf import TrainstepsCallback  # noqa: E402


class EpochEnds(transformers.TrainerCallback):
    """global_step at every on_epoch_end: for a stream, the end of each pass."""

    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_epoch_end(self, args, state, control, **kwargs):
        self.steps.append(state.global_step)


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record) -> None:
        self.lines.append(record.getMessage())


def run(scenario: dict, rank: int) -> dict:
    capture = Capture()
    logging.getLogger("transformers.trainsteps").addHandler(capture)
    model = TinyLM()
    n = scenario["n"]
    dataset = StreamRows(n) if scenario.get("iterable") else MapRows(n)
    cb = TrainstepsCallback(dataset_size=n if scenario.get("iterable") else None)
    fault = scenario.get("fault")
    if fault and rank == scenario.get("fault_rank", 0):
        def boom(*a, **k):
            raise RuntimeError("injected fault")
        if fault == "hook":
            original = cb._train_begin  # noqa: SLF001 - the test reaches inside on purpose

            def begin(*a, **k):
                original(*a, **k)
                cb._counter.add = boom
            cb._train_begin = begin
        elif fault == "log":
            cb._log = boom
        elif fault == "begin":
            cb._check_plan = boom
    accel = {}
    if scenario.get("dispatch_batches") is not None:
        accel = {"accelerator_config": {"dispatch_batches": scenario["dispatch_batches"]}}
    args = TrainingArguments(
        output_dir=tempfile.mkdtemp(), per_device_train_batch_size=scenario["bs"], gradient_accumulation_steps=scenario["ga"],
        max_steps=scenario.get("max_steps", -1), num_train_epochs=scenario.get("epochs", 1), logging_steps=1,
        dataloader_drop_last=scenario.get("drop_last", False), report_to=[], save_strategy="no", use_cpu=True,
        disable_tqdm=True, remove_unused_columns=False, seed=0, **accel,
    )
    ends = EpochEnds()
    trainer = Trainer(model=model, args=args, train_dataset=dataset, data_collator=collate, callbacks=[cb, ends])
    trainer.train()
    logging.getLogger("transformers.trainsteps").removeHandler(capture)
    s = cb.schedule
    return {
        "name": scenario["name"],
        "transformers": transformers.__version__,
        "model_rows": model.rows_seen,
        "model_tokens": model.tokens_seen,
        "model_ids": model.ids_seen,
        "callback_samples": cb.samples_seen,
        "callback_tokens": cb.tokens_seen,
        "callback_enabled": cb.enabled,
        "global_step": trainer.state.global_step,
        "max_steps": trainer.state.max_steps,
        "state_epoch": trainer.state.epoch,
        "epoch_end_steps": ends.steps,
        "log_history": trainer.state.log_history,
        "warnings": capture.lines,
        "plan": None if s is None else {
            "samples_seen": s.run.samples_seen, "optimizer_steps": s.run.optimizer_steps, "max_steps": s.run.max_steps,
            "equivalent_epochs": s.run.equivalent_epochs, "epochs_completed": s.run.epochs_completed,
            "warnings": [t.code for t in s.warnings],
        },
    }


def main() -> None:
    out, scenarios = Path(sys.argv[1]), json.loads(sys.argv[2])
    rank = int(os.environ.get("RANK", "0"))
    results = [run(sc, rank) for sc in scenarios]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"rank-{rank}.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main()
    close_process_group()

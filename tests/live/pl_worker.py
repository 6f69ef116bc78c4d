"""Run Lightning scenarios with TrainstepsLightningCallback; write what the model really received, per rank.

    python tests/live/pl_worker.py OUT_DIR SCENARIOS_JSON
    python -m torch.distributed.run --nproc_per_node 2 tests/live/pl_worker.py OUT_DIR SCENARIOS_JSON

A scenario: {"name", "n", "bs", "accumulate", "epochs" | "max_steps", "iterable", "fault": null | "count" | "publish",
"fault_rank"}. Each rank writes OUT_DIR/rank-<r>.json.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import lightning  # noqa: E402
import torch  # noqa: E402

from tests.live.tiny import MapRows, StreamRows, TinyLM, close_process_group, collate  # noqa: E402
from trainsteps.integrations.lightning import TrainstepsLightningCallback  # noqa: E402


class Module(lightning.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.lm = TinyLM()

    def training_step(self, batch, batch_idx):
        return self.lm(**batch)["loss"]

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record) -> None:
        self.lines.append(record.getMessage())


def run(sc: dict, rank: int, world: int) -> dict:
    capture = Capture()
    logging.getLogger("trainsteps.lightning").addHandler(capture)
    n = sc["n"]
    dataset = StreamRows(n) if sc.get("iterable") else MapRows(n)
    loader = torch.utils.data.DataLoader(dataset, batch_size=sc["bs"], collate_fn=collate)
    cb = TrainstepsLightningCallback(dataset_size=n if sc.get("iterable") else None, log_every_n_batches=1)
    if sc.get("fault") and rank == sc.get("fault_rank", 0):
        def boom(*a, **k):
            raise RuntimeError("injected fault")
        if sc["fault"] == "count":
            cb._counter.add = boom  # noqa: SLF001 - the test reaches inside on purpose
            original = cb._train_start

            def start(trainer):
                original(trainer)
                cb._counter.add = boom
            cb._train_start = start
        else:
            cb._publish = boom
    module = Module()
    trainer = lightning.Trainer(
        accelerator="cpu", devices=world, strategy="ddp" if world > 1 else "auto", max_epochs=sc.get("epochs", -1),
        max_steps=sc.get("max_steps", -1), accumulate_grad_batches=sc.get("accumulate", 1), callbacks=[cb],
        logger=lightning.pytorch.loggers.CSVLogger(tempfile.mkdtemp()), enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, log_every_n_steps=1, use_distributed_sampler=True,
    )
    trainer.fit(module, loader)
    logging.getLogger("trainsteps.lightning").removeHandler(capture)
    logged = {k: float(v) for k, v in trainer.logged_metrics.items() if k in ("samples_seen", "tokens_seen", "equivalent_epoch")}
    return {
        "name": sc["name"], "lightning": lightning.__version__, "model_rows": module.lm.rows_seen, "model_tokens": module.lm.tokens_seen,
        "callback_samples": cb.samples_seen, "callback_tokens": cb.tokens_seen, "callback_enabled": cb.enabled,
        "logged": logged, "global_step": trainer.global_step, "warnings": capture.lines,
    }


def main() -> None:
    out, scenarios = Path(sys.argv[1]), json.loads(sys.argv[2])
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    results = [run(sc, rank, world) for sc in scenarios]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"rank-{rank}.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main()
    close_process_group()

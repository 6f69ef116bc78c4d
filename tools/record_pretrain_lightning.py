"""Record Lightning's step counting on CPU: one process, and two gloo ranks under torchrun.

Run through tools/record_pretrain.py (`... record_pretrain.py lightning`); needs `lightning==2.6.6 torch==2.13.0`.
Each case trains a 1-parameter model and reads what Lightning itself reports: num_training_batches,
estimated_stepping_batches (at on_train_start), global_step and current_epoch at the end, and the
training batches actually run (counted per rank).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

CASES = [
    dict(n=100, bs=4, acc=8, max_epochs=1, max_steps=-1, limit=1.0),
    dict(n=100, bs=4, acc=8, max_epochs=3, max_steps=-1, limit=1.0),
    dict(n=100, bs=4, acc=8, max_epochs=3, max_steps=7, limit=1.0),
    dict(n=100, bs=4, acc=8, max_epochs=2, max_steps=-1, limit=0.5),
    dict(n=100, bs=4, acc=8, max_epochs=2, max_steps=-1, limit=10),
    dict(n=100, bs=4, acc=1, max_epochs=2, max_steps=-1, limit=1.0),
    dict(n=99, bs=4, acc=8, max_epochs=1, max_steps=-1, limit=1.0),
    dict(n=99, bs=4, acc=8, max_epochs=1, max_steps=-1, limit=1.0, drop_last=True),
    dict(n=103, bs=4, acc=8, max_epochs=2, max_steps=-1, limit=1.0, drop_last=True),
    dict(n=20, bs=4, acc=8, max_epochs=3, max_steps=-1, limit=1.0),
    dict(n=100, bs=4, acc=8, max_epochs=2, max_steps=-1, limit=0.3),
    dict(n=1000, bs=4, acc=7, max_epochs=None, max_steps=20, limit=1.0),
    dict(n=37, bs=5, acc=3, max_epochs=4, max_steps=10, limit=1.0),
    dict(n=64, bs=8, acc=3, max_epochs=5, max_steps=-1, limit=0.75),
    dict(n=100, bs=4, acc=8, max_epochs=0, max_steps=-1, limit=1.0),  # the fit loop is done before it starts
]
DDP_CASES = [
    dict(n=99, bs=4, acc=8, max_epochs=2, max_steps=-1, limit=1.0, world=2),
    dict(n=101, bs=3, acc=4, max_epochs=3, max_steps=-1, limit=1.0, world=2, drop_last=True),
    dict(n=50, bs=4, acc=2, max_epochs=None, max_steps=9, limit=1.0, world=2),
]


def run_case(case: dict) -> dict:
    import lightning as L
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    class Tiny(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(1))
            self.batches = 0
            self.rows = 0
            self.estimated = None

        def on_train_start(self):
            self.estimated = self.trainer.estimated_stepping_batches

        def training_step(self, batch, _):
            self.batches += 1
            self.rows += len(batch[0])
            return (self.w * batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.0)

        def train_dataloader(self):
            data = TensorDataset(torch.ones(case["n"], 1))
            return DataLoader(data, batch_size=case["bs"], drop_last=case.get("drop_last", False))

    model = Tiny()
    trainer = L.Trainer(accelerator="cpu", devices=case.get("world", 1), strategy="ddp" if case.get("world", 1) > 1 else "auto",
                        max_epochs=case["max_epochs"], max_steps=case["max_steps"], accumulate_grad_batches=case["acc"],
                        limit_train_batches=case["limit"], logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, num_sanity_val_steps=0)
    trainer.fit(model)
    started = model.estimated is not None  # on_train_start never runs when the fit loop is done before it begins
    estimated = model.estimated if started else trainer.estimated_stepping_batches
    return {**case, "training_started": started, "num_training_batches": _whole(trainer.num_training_batches),
            "estimated_stepping_batches": _whole(estimated),
            "global_step": int(trainer.global_step), "current_epoch": int(trainer.current_epoch), "batches_run": model.batches,
            "rows_seen_all_ranks": model.rows * case.get("world", 1),  # every rank reads the same count (DistributedSampler pads)
            "rank": int(trainer.global_rank)}


def _whole(value) -> int | None:
    """int, or None for Lightning's `inf` (a loader it has not sized)."""
    return None if value == float("inf") else int(value)


def record_lightning(out_dir: Path) -> None:
    import lightning

    results = [run_case(case) for case in CASES]
    for case in DDP_CASES:
        with tempfile.NamedTemporaryFile("w+", suffix=".json", delete=False) as tmp:
            path = tmp.name
        torchrun = str(Path(sys.executable).with_name("torchrun"))
        subprocess.run([torchrun, "--nproc_per_node", str(case["world"]), "--master_port", "29533", __file__, "--worker", json.dumps(case), path],
                       check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        results.append(json.loads(Path(path).read_text()))
        os.unlink(path)
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {"_regenerate": "regenerate: see the docstring of tools/record_pretrain.py", "framework": "lightning",
               "version": lightning.__version__, "cases": results}
    (out_dir / "lightning.json").write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {out_dir / 'lightning.json'}")


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--worker":
    result = run_case(json.loads(sys.argv[2]))
    if result["rank"] == 0:
        Path(sys.argv[3]).write_text(json.dumps(result))

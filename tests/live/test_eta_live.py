"""The callbacks' ETA in real CPU training: logged next to the other numbers, unknown until warmed up, and close to
the time that really followed, with slow evaluations (HF Trainer) and slow validations (Lightning)."""

from __future__ import annotations

import time

import pytest

from .conftest import needs, run_worker

pytestmark = pytest.mark.live
needs("torch", "transformers", "lightning")

HF_SCENARIO = {"name": "slow_first_step_and_evaluations", "n": 2000, "bs": 4, "max_steps": 60, "step_sleep": 0.05,
               "eval_rows": 16, "eval_every": 15, "eval_sleep": 0.02, "first_step_sleep": 3.0}


def test_hf_eta_is_not_fooled_by_a_slow_first_step_and_leaves_evaluations_out_of_the_rate(tmp_path):
    (result,) = run_worker("eta_worker.py", [HF_SCENARIO], tmp_path)[0]
    assert result["logged_keys"] == ["eta_seconds", "tokens_per_second"]  # no GPU peak given: no mfu
    assert result["logged_first_step"] == 5  # 2 warm-up steps skipped, 3 measured: unknown before
    early, half = result["points"]["10"], result["points"]["50"]
    assert abs(early["trainsteps_error"]) < abs(early["tqdm_error"])  # the bar's rate still holds the 3 s step
    assert abs(half["trainsteps_error"]) < 0.25
    assert len(result["eval_pauses"]) == 3  # evaluations at 15, 30 and 45 (the one at 60 ends the run)


def test_lightning_eta_leaves_validation_out_of_the_rate():
    import lightning
    import torch

    from trainsteps.integrations.lightning import TrainstepsLightningCallback

    from .tiny import MapRows, TinyLM, collate

    class Module(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.lm = TinyLM()

        def training_step(self, batch, batch_idx):
            time.sleep(0.03)
            return self.lm(**batch)["loss"]

        def validation_step(self, batch, batch_idx):
            time.sleep(0.2)
            return self.lm(**batch)["loss"]

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    seen: list[tuple[int, float, float | None]] = []

    class Probe(lightning.Callback):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            estimate = cb.eta.estimate
            seen.append((trainer.global_step, time.perf_counter(), None if estimate is None else estimate.wall_seconds.expected))

    cb = TrainstepsLightningCallback(log_every_n_batches=1)
    loader = torch.utils.data.DataLoader(MapRows(240), batch_size=4, collate_fn=collate)
    val = torch.utils.data.DataLoader(MapRows(16), batch_size=4, collate_fn=collate)
    trainer = lightning.Trainer(max_epochs=2, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                                enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                                val_check_interval=20, callbacks=[cb, Probe()])
    trainer.fit(Module(), loader, val)
    end = time.perf_counter()
    assert cb.eta.eval_steps == [20, 40, 60, 80, 100, 120]
    assert "eta_seconds" in cb.metrics and "tokens_per_second" in cb.metrics
    step, at, predicted = next(row for row in seen if row[0] >= 60)
    actual = end - at
    assert predicted is not None
    assert abs(predicted - actual) / actual < 0.3

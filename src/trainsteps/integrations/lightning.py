"""A Lightning `Callback` that tracks progress in data: rows, non-padding tokens and equivalent epochs.

    from trainsteps.integrations.lightning import TrainstepsLightningCallback
    trainer = lightning.Trainer(..., callbacks=[TrainstepsLightningCallback(dataset_size=1_000_000)])

Every `log_every_n_steps` batches it logs `samples_seen`, `tokens_seen` and `equivalent_epoch`
(samples seen / dataset size) through `LightningModule.log`, so every logger shows them. Rows and
tokens are counted from the batch handed to `training_step` on each rank and summed over ranks.
Under DDP Lightning shards map-style datasets with a DistributedSampler, but it does not split an
IterableDataset: unless the dataset splits itself by rank, every rank reads the whole stream and
the counts say so.

It also logs `eta_seconds` (the remaining time to the last optimizer step, with the validations still ahead at
their measured cost), `tokens_per_second`, and `mfu` when the device's peak is known (`gpu=` or `peak_tflops=`).
The rate skips the first optimizer steps after a (re)start, leaves out validation and checkpoint pauses, and
re-bases on a resume; until it has warmed up the ETA is unknown and not logged.

It never breaks a run: any internal error becomes one warning and the callback switches itself off
on every rank at once. Works with `lightning` and `pytorch_lightning`, imported on first use.
"""

from __future__ import annotations

from trainsteps.integrations._counting import Counter, FaultGuard, RankSync, get_logger
from trainsteps.integrations._counting import dataset_length as _length

__all__ = ["TrainstepsLightningCallback"]  # noqa: F822 - built on first access, see __getattr__

logger = get_logger("trainsteps.lightning")


class _Tracker(FaultGuard):
    """The callback's behaviour; mixed into Lightning's `Callback` on first use."""

    _logger = logger

    def __init__(self, dataset_size: int | None = None, dataset_tokens: int | None = None, log_every_n_batches: int | None = None,
                 eta: bool = True, gpu: str | None = None, peak_tflops: float | None = None, eta_warmup_steps: int = 2):
        """
        dataset_size: rows in one pass over the training data; needed for iterable datasets
            (a sized dataset's `len()` is used otherwise).
        dataset_tokens: tokens in one pass (gives `equivalent_epoch` from tokens when the size in rows is unknown).
        log_every_n_batches: how often to sum and log; defaults to the Trainer's `log_every_n_steps`.
        eta: log `eta_seconds` and `tokens_per_second` (and `mfu` with `gpu` or `peak_tflops`).
        gpu: accelerator name from trainsteps' table (e.g. "h100-sxm"), for `mfu`; or `peak_tflops` of one device.
        eta_warmup_steps: optimizer steps after a (re)start that the rate does not use.
        """
        self.dataset_size = dataset_size
        self.dataset_tokens = dataset_tokens
        self.every = log_every_n_batches
        self.enabled = True
        self.samples_seen = 0
        self.tokens_seen = 0
        self._counter = Counter()
        self._sync = RankSync.__new__(RankSync)
        self._sync.active, self._sync.world = False, 1
        self._batches = 0
        self._size = dataset_size
        self.eta_enabled = eta
        self._gpu, self._peak_tflops = gpu, peak_tflops
        from trainsteps.integrations._eta import EtaState

        self.eta = EtaState(warmup_steps=eta_warmup_steps)
        """The ETA's state; `eta.estimate` is the latest remaining-time estimate (None while unknown)."""
        self._last_step = 0
        self._val_steps: list[int] = []

    # --- events ---------------------------------------------------------------------------------

    def on_train_start(self, trainer, pl_module):
        self._sync = RankSync()  # first: every rank must know whether to take part in sums
        self._guard(self._train_start, trainer)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self.enabled:
            self._guard(self._counter.add, batch)
            if self.eta_enabled:
                self._guard(self.eta.step_begin)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self.enabled and self.eta_enabled and trainer.global_step != self._last_step:
            self._last_step = trainer.global_step
            self._guard(self.eta.step_end, trainer.global_step)
        self._batches += 1
        if self._batches % (self.every or 1) == 0:
            self._guard(self._publish, trainer, pl_module, True, collective=True)

    def on_validation_end(self, trainer, pl_module):
        if self.enabled and self.eta_enabled and not trainer.sanity_checking:
            self._val_steps.append(trainer.global_step)
            self._guard(self.eta.event, "eval")

    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        if self.enabled and self.eta_enabled:
            self._guard(self.eta.event, "save")

    def on_train_end(self, trainer, pl_module):
        self._guard(self._publish, trainer, pl_module, False, collective=True)

    # --- work -------------------------------------------------------------------------------------

    def _train_start(self, trainer) -> None:
        self._counter = Counter()
        self._batches = 0
        if self.every is None:
            self.every = max(1, int(getattr(trainer, "log_every_n_steps", 50) or 1))
        if self._size is None:
            self._size = _length(getattr(getattr(trainer, "train_dataloader", None), "dataset", None))
        if trainer.is_global_zero:
            logger.info("trainsteps: Lightning plans %s optimizer steps; dataset size %s", trainer.estimated_stepping_batches,
                        "unknown" if self._size is None else f"{self._size:,}")
        if self.eta_enabled:
            self._start_eta(trainer)

    def _start_eta(self, trainer) -> None:
        eta = self.eta
        self._last_step = trainer.global_step
        eta.begin(trainer.global_step)
        total = trainer.estimated_stepping_batches
        eta.final_step = int(total) if total and total != float("inf") else None
        eta.eval_steps = _validation_steps(trainer, eta.final_step)
        eta.devices = max(1, int(getattr(trainer, "world_size", 1) or 1))
        from trainsteps.integrations._eta import model_flops_per_token

        eta.flops_per_token = model_flops_per_token(trainer.lightning_module)
        if self._peak_tflops:
            eta.peak_flops = float(self._peak_tflops) * 1e12
        elif self._gpu:
            from trainsteps.timing.gpus import find_gpu

            eta.peak_flops = find_gpu(self._gpu).peak("bf16")

    def _publish(self, trainer, pl_module, log: bool) -> None:
        ok = self.enabled
        values = list(self._counter.local()) if ok else [0, 0]
        device = self._counter.tokens.device if self._counter.tokens is not None else None
        (samples, tokens), everyone_ok = self._sync.sum(values, ok, device)
        if not everyone_ok:
            self._switch_off(RuntimeError("another rank switched its counting off"), collective=False)
            return
        self.samples_seen, self.tokens_seen = samples, tokens
        metrics = {"samples_seen": samples, "tokens_seen": tokens}
        if self.eta_enabled:
            metrics.update(self.eta.metrics(trainer.global_step, tokens or None))
        if self._size:
            metrics["equivalent_epoch"] = samples / self._size
        elif self.dataset_tokens:
            metrics["equivalent_epoch"] = tokens / self.dataset_tokens
        self.metrics = metrics
        if log:
            import torch

            for name, value in metrics.items():
                pl_module.log(name, torch.tensor(value, dtype=torch.float64), on_step=True, on_epoch=False, prog_bar=False,
                              logger=True, sync_dist=False)



def _validation_steps(trainer, final_step: int | None) -> list[int]:
    """Optimizer steps after which Lightning validates: every `val_check_batch` batches of an epoch (default: at
    each epoch's end) in every `check_val_every_n_epoch`-th epoch; [] without validation."""
    try:
        if not final_step or not getattr(trainer, "enable_validation", False) or not trainer.num_val_batches or \
                not any(trainer.num_val_batches):
            return []
        batches = int(trainer.num_training_batches)
        every_epoch = int(trainer.check_val_every_n_epoch or 1)
        check = trainer.val_check_batch
        accumulate = int(getattr(trainer, "accumulate_grad_batches", 1) or 1)
    except Exception:  # noqa: BLE001 - an unusual loop: no validations projected
        return []
    if not batches or batches == float("inf") or not isinstance(check, int) or check <= 0:
        return []
    steps_per_epoch = max(1, batches // accumulate) if batches % accumulate == 0 else batches // accumulate + 1
    out, epoch = [], 0
    while epoch * steps_per_epoch < final_step and len(out) < 100_000:
        if (epoch + 1) % every_epoch == 0:
            for b in range(check, batches + 1, check):
                out.append(min(final_step, epoch * steps_per_epoch + -(-b // accumulate)))
        epoch += 1
    return out


_CLASS = None


def _callback_base():
    try:
        from lightning.pytorch import Callback
    except ImportError:
        from pytorch_lightning import Callback
    return Callback


def __getattr__(name: str):
    global _CLASS
    if name != "TrainstepsLightningCallback":
        raise AttributeError(name)
    if _CLASS is None:
        class TrainstepsLightningCallback(_Tracker, _callback_base()):
            __doc__ = (_Tracker.__init__.__doc__ or "")

        TrainstepsLightningCallback.__module__ = __name__
        _CLASS = TrainstepsLightningCallback
    return _CLASS

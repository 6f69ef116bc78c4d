"""A Lightning `Callback` that tracks progress in data: rows, non-padding tokens and equivalent epochs.

    from trainsteps.integrations.lightning import TrainstepsLightningCallback
    trainer = lightning.Trainer(..., callbacks=[TrainstepsLightningCallback(dataset_size=1_000_000)])

Every `log_every_n_steps` batches it logs `samples_seen`, `tokens_seen` and `equivalent_epoch`
(samples seen / dataset size) through `LightningModule.log`, so every logger shows them. Rows and
tokens are counted from the batch handed to `training_step` on each rank and summed over ranks.
Under DDP Lightning shards map-style datasets with a DistributedSampler, but it does not split an
IterableDataset: unless the dataset splits itself by rank, every rank reads the whole stream and
the counts say so.

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

    def __init__(self, dataset_size: int | None = None, dataset_tokens: int | None = None, log_every_n_batches: int | None = None):
        """
        dataset_size: rows in one pass over the training data; needed for iterable datasets
            (a sized dataset's `len()` is used otherwise).
        dataset_tokens: tokens in one pass (gives `equivalent_epoch` from tokens when the size in rows is unknown).
        log_every_n_batches: how often to sum and log; defaults to the Trainer's `log_every_n_steps`.
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

    # --- events ---------------------------------------------------------------------------------

    def on_train_start(self, trainer, pl_module):
        self._sync = RankSync()  # first: every rank must know whether to take part in sums
        self._guard(self._train_start, trainer)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self.enabled:
            self._guard(self._counter.add, batch)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self._batches += 1
        if self._batches % (self.every or 1) == 0:
            self._guard(self._publish, trainer, pl_module, True, collective=True)

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

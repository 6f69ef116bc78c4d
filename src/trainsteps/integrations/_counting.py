"""What the training callbacks share: counting rows and tokens, summing them over ranks, and
switching off instead of breaking a run. Imports torch only inside the functions that need it.

Rows and tokens are counted from the inputs of the model's own forward call (a forward
pre-hook for the Trainer, the batch handed to `training_step` for Lightning): that is the data
the model really receives on each rank, after dataloader workers, accelerate's dispatching and
any collator. Tokens are the non-padding ones (non-zero entries of a 2-D `attention_mask`) when
such a mask is present, else every element of `input_ids` (4-D masks of packed batches included).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

ROW_KEYS = ("input_ids", "inputs_embeds", "attention_mask", "labels", "pixel_values", "input_values", "input_features")


class Counter:
    """Rows and tokens seen by this process; tokens stay a device tensor until they are summed."""

    def __init__(self) -> None:
        self.rows = 0
        self.tokens = None  # a tensor on the batch's device, so counting never forces a device sync
        self.tokens_int = 0  # tokens counted without a tensor (plain lists)

    def add(self, batch) -> None:
        tensors = _named_tensors(batch)
        first = next((tensors[k] for k in ROW_KEYS if k in tensors), None)
        if first is None:
            first = next(iter(tensors.values()), None)
        if first is None or not hasattr(first, "shape") or len(first.shape) == 0:
            return
        self.rows += int(first.shape[0])
        mask, ids = tensors.get("attention_mask"), tensors.get("input_ids")
        if mask is not None and len(mask.shape) == 2:
            # != 0, not sum(): packed batches may number their sequences 1, 2, 3 ... in the mask
            self._add_tokens((mask != 0).sum())
        elif ids is not None:
            self.tokens_int += int(ids.numel())

    def _add_tokens(self, value) -> None:
        value = value.detach().to(dtype=_int64())
        self.tokens = value if self.tokens is None else self.tokens + value

    def local(self) -> tuple[int, int]:
        tokens = self.tokens_int + (int(self.tokens.item()) if self.tokens is not None else 0)
        return self.rows, tokens


def _int64():
    import torch

    return torch.int64


def _named_tensors(batch) -> dict:
    """The tensors of a batch by name: a mapping, a (input_ids, ...) tuple, or one tensor."""
    if isinstance(batch, Mapping):
        return {k: v for k, v in batch.items() if hasattr(v, "shape")}
    if isinstance(batch, (list, tuple)):
        return {("input_ids" if i == 0 else f"_{i}"): v for i, v in enumerate(batch) if hasattr(v, "shape")}
    if hasattr(batch, "shape"):
        return {"input_ids": batch}
    if hasattr(batch, "keys") and hasattr(batch, "__getitem__"):  # BatchEncoding and friends
        return {k: batch[k] for k in batch.keys() if hasattr(batch[k], "shape")}
    return {}


class RankSync:
    """Sums a few numbers over ranks with one all_reduce. Every rank calls it at the same points
    (the framework's log events), so a rank whose counting failed still takes part and tells the
    others with ok=0; then every rank switches off together and no rank is left waiting."""

    def __init__(self) -> None:
        self.active = False
        self.world = 1
        try:
            import torch.distributed as dist

            if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
                self.active, self.world = True, dist.get_world_size()
        except Exception:  # noqa: BLE001 - no distributed support: one rank
            self.active = False

    def sum(self, values: list[int], ok: bool, device=None) -> tuple[list[int], bool]:
        """(values summed over ranks, every rank ok)."""
        if not self.active:
            return values, ok
        import torch
        import torch.distributed as dist

        if device is None:
            device = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else torch.device("cpu")
        t = torch.tensor([*values, 1 if ok else 0], dtype=torch.int64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        out = [int(x) for x in t.tolist()]
        return out[:-1], out[-1] == self.world


class Clock:
    """Wall-clock triggers (evaluate / save every N minutes)."""

    def __init__(self, minutes: float | None) -> None:
        self.seconds = None if not minutes else float(minutes) * 60.0
        self.last = time.monotonic()

    def due(self) -> bool:
        return self.seconds is not None and time.monotonic() - self.last >= self.seconds

    def reset(self) -> None:
        self.last = time.monotonic()


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(name)


def dataset_length(dataset) -> int | None:
    """Rows in a training dataset, or None for a stream (an IterableDataset, or anything without a length)."""
    if dataset is None:
        return None
    try:
        import torch.utils.data

        if isinstance(dataset, torch.utils.data.IterableDataset):
            return None
        return len(dataset)
    except Exception:  # noqa: BLE001 - no length: a stream
        return None


class FaultGuard:
    """Mixin of both callbacks: callback work runs guarded, so an internal error switches the callback off (on every
    rank together) with one warning instead of breaking training. Needs `enabled`, `_sync` (RankSync) and `_logger`."""

    def _guard(self, fn, *args, collective: bool = False):
        if not self.enabled and not (collective and self._sync.active):
            return None
        try:
            if not self.enabled:  # still take part in the ranks' sums, with ok=0, so nobody waits forever
                self._sync.sum([0, 0], False)
                self._sync.active = False
                return None
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - an internal error must not stop training
            self._switch_off(exc)
            return None

    def _switch_off(self, exc: BaseException, collective: bool = True) -> None:
        if self.enabled:
            from trainsteps.i18n import message

            self._logger.warning(message("integration.disabled", "en", error=f"{type(exc).__name__}: {exc}"))
        self.enabled = False
        if not collective:
            self._sync.active = False
        self._on_switch_off()

    def _on_switch_off(self) -> None:
        """Undo what the callback installed (the HF callback removes its forward hook)."""

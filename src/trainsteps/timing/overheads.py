"""Overheads as stated parts of the wall time, when no measured time is given: checkpoint saves (bytes written) and
the model load before the first step (bytes read). Pure: sizes from the model's shape, speeds as stated intervals.

    checkpoint bytes = weights (2 bytes a parameter: bf16 safetensors)
                     + optimizer states (AdamW's two fp32 moments: 8 bytes a trained parameter) unless save_only_model
    save seconds     = bytes / write bandwidth          (0.5 / 1.5 / 4 GB/s: network filesystem ... local NVMe)
    load seconds     = weights bytes / read bandwidth    (0.5 / 2 / 5 GB/s) + 20 / 45 / 120 s of start-up

A LoRA run saves its adapter and the adapter's optimizer states: about 1 % of the parameters (rank 8-64 on the
attention and MLP projections). The bandwidths are assumptions, not measurements: `--save-time` and `--prepare-time`
replace them, and the output says which were used.
"""

from __future__ import annotations

from trainsteps.timing.architectures import ModelShape
from trainsteps.timing.estimate import Interval

WRITE_GBPS = Interval(0.5, 1.5, 4.0)
READ_GBPS = Interval(0.5, 2.0, 5.0)
START_SECONDS = Interval(20.0, 45.0, 120.0)
"""Process start, imports, distributed init and dataloader workers before the first step."""
ADAPTER_SHARE = 0.01
"""Trained parameters of a LoRA / QLoRA run, as a share of the model: what a save writes and an RL step copies where its
stack sends only the adapters (assumed: rank 16-64 on every projection of a 7B model is 0.5-2 %)."""


def checkpoint_bytes(shape: ModelShape, training: str = "full", save_only_model: bool = False) -> float:
    """Bytes one checkpoint save writes, over all ranks (sharded optimizer states add up to the same total)."""
    trained = shape.total_params * (ADAPTER_SHARE if training in ("lora", "qlora") else 1.0)
    weights = 2 * trained
    optimizer = 0 if save_only_model else 8 * trained
    return weights + optimizer


def save_note(training: str, save_only_model: bool = False) -> str:
    """The message id that says what one save writes: the whole model, its weights only, or a LoRA adapter."""
    if save_only_model:
        return "time.assume.save_bytes_model_only"
    return "time.assume.save_bytes_adapter" if training in ("lora", "qlora") else "time.assume.save_bytes"


def save_seconds(shape: ModelShape, training: str = "full", save_only_model: bool = False) -> Interval:
    """Seconds of one checkpoint save."""
    return WRITE_GBPS.inverse(checkpoint_bytes(shape, training, save_only_model) / 1e9)


def modelled_save(shape: ModelShape, training: str = "full", save_only_model: bool = False,
                  models: int = 1) -> tuple[Interval, tuple[str, dict]]:
    """Seconds of one save of `models` models of this shape (an RL run with a critic saves two), and the note that says
    what it writes."""
    gigabytes = models * checkpoint_bytes(shape, training, save_only_model) / 1e9
    return (save_seconds(shape, training, save_only_model).scaled(models),
            (save_note(training, save_only_model), {"gb": f"{gigabytes:,.1f}", "share": f"{ADAPTER_SHARE:.0%}"}))


def load_gigabytes(shape: ModelShape) -> str:
    """The weights a start reads (2 bytes a parameter), as the load notes print them."""
    return f"{2 * shape.total_params / 1e9:,.1f}"


def load_seconds(shape: ModelShape) -> Interval:
    """Seconds before the first step: reading the weights (2 bytes a parameter) and starting up."""
    return READ_GBPS.inverse(2 * shape.total_params / 1e9) + START_SECONDS

"""The `***** Running training *****` banner, line for line as each release prints it."""

from __future__ import annotations

from trainsteps.record import record

HEADER = "***** Running training *****"
TOTAL_BATCH_LABEL = "Total train batch size (w. parallel, distributed & accumulation)"


@record(frozen=True)
class BannerValues:
    num_examples: int
    num_epochs: int
    update_steps_per_epoch: int
    per_device_batch: int
    loader_batch: int
    total_batch: int
    grad_accum: int
    max_steps: int
    trainable_parameters: int | None


def banner_lines(layout: str, v: BannerValues) -> list[tuple[str, str]]:
    """(label, printed value) pairs in print order. Every number but the accumulation steps has a
    thousands separator; "Number of trainable parameters" only when the parameter count is known."""
    lines = [("Num examples", f"{v.num_examples:,}"), ("Num Epochs", f"{v.num_epochs:,}")]
    if layout == "v5.3":
        lines.append(("Num update steps per epoch", f"{v.update_steps_per_epoch:,}"))
    if layout == "v4.30":
        lines.append(("Instantaneous batch size per device", f"{v.loader_batch:,}"))
    else:
        lines.append(("Instantaneous batch size per device", f"{v.per_device_batch:,}"))
        if v.per_device_batch != v.loader_batch:
            lines.append(("Training with DataParallel so batch size has been adjusted to", f"{v.loader_batch:,}"))
    lines += [
        (TOTAL_BATCH_LABEL, f"{v.total_batch:,}"),
        ("Gradient Accumulation steps", f"{v.grad_accum}"),
        ("Total optimization steps", f"{v.max_steps:,}"),
    ]
    if v.trainable_parameters is not None:
        lines.append(("Number of trainable parameters", f"{v.trainable_parameters:,}"))
    return lines


_SEPARATORS = {"Training with DataParallel so batch size has been adjusted to": ": "}


def render_banner(pairs: list[tuple[str, str]]) -> list[str]:
    sep = _SEPARATORS
    return [HEADER] + [f"  {label}{sep.get(label, ' = ')}{value}" for label, value in pairs]

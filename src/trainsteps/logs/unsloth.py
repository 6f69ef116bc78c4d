"""Unsloth's own banner (it replaces the Trainer's), old and new layouts:

    ==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1
       \\\\   /|    Num examples = 1,000 | Num Epochs = 1 | Total steps = 60
    O^O/ \\_/ \\    Batch size per device = 2 | Gradient accumulation steps = 4
    \\        /    Data Parallel GPUs = 1 | Total batch size (2 x 4 x 1) = 8
     "-____-"     Trainable parameters = 39,976,960 of 8,000,000,000 (0.50% trained)

The numbers are the Trainer's own (`num_examples`, `num_train_epochs`, `max_steps`).
"""

from __future__ import annotations

from trainsteps.logs.context import ScanContext
from trainsteps.logs.text import letters, parse_int
from trainsteps.patterns import lazy

LABELS = {
    "numgpus": "unsloth_num_gpus",
    "numgpusused": "unsloth_num_gpus",
    "numexamples": "num_examples",
    "numepochs": "num_epochs",
    "totalsteps": "max_steps",
    "batchsizeperdevice": "per_device_batch",
    "gradientaccumulationsteps": "grad_accum",
    "dataparallelgpus": "unsloth_dp_gpus",
    "totalbatchsize": "total_batch",
    "trainableparameters": "trainable_parameters",
    "numberoftrainableparameters": "trainable_parameters",
}
_BY_LENGTH = sorted(LABELS, key=len, reverse=True)
_PARENS = lazy(r"\([^()]*\)")
BANNER_LINES = 5


_LOADING_GPUS = lazy(r"Num GPUs\s*=\s*(\d+)\.")


WORDS = ("Num GPUs",)
"""`scan` reads nothing before a line holding one of these: both of Unsloth's banners print it, and the lines after its
training banner are read only once that banner started a run (the log reader loads this module with the first such line)."""


def scan(line: str, ctx: ScanContext) -> bool:
    if "Num GPUs" in line and "Unsloth" not in line:
        # the model-loading banner: `\\   /|    NVIDIA L4. Num GPUs = 1. Max memory: 22.161 GB. Platform: Linux.`
        match = _LOADING_GPUS.search(line)
        if match and "Max memory" in line:
            ctx.wrapper_value("unsloth_num_gpus", ctx.reading(int(match.group(1))))
            return True
    if "Unsloth" in line and "Num GPUs" in line:
        run = ctx.start_run("unsloth")
        run.header_line = ctx.line_no
        _pairs(line, ctx)
        return True
    run = ctx.current
    if run is None or run.kind != "unsloth" or run.header_line is None or ctx.line_no - run.header_line >= BANNER_LINES:
        return False
    if "=" not in line:
        return False
    return _pairs(line, ctx)


def _pairs(line: str, ctx: ScanContext) -> bool:
    found = False
    for segment in line.split("|"):
        label, sep, rest = segment.partition("=")
        if not sep:
            continue
        flat = letters(_PARENS.sub("", label))
        key = next((LABELS[k] for k in _BY_LENGTH if flat.endswith(k)), None)
        parsed = parse_int(rest)
        if key is None or parsed is None:
            continue
        reading = ctx.reading(parsed[0])
        if key.startswith("unsloth_"):
            ctx.current.wrapper[key] = reading
        else:
            ctx.current.banner[key] = reading
            ctx.current.banner_order.append(key)
        found = True
    return found

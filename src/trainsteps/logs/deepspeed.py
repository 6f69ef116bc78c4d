"""DeepSpeed's config print, which states the batch arithmetic from its side:

    [INFO] [config.py:1003:print]   train_batch_size ............. 256
    [INFO] [config.py:1003:print]   train_micro_batch_size_per_gpu  8
    [INFO] [config.py:1003:print]   gradient_accumulation_steps .. 8

train_batch_size = micro batch x accumulation x data-parallel ranks, so it gives the number of processes too.
"""

from __future__ import annotations

from trainsteps.logs.context import ScanContext
from trainsteps.patterns import lazy

_KEYS = {"train_batch_size": "deepspeed_train_batch_size", "train_micro_batch_size_per_gpu": "deepspeed_micro_batch",
         "gradient_accumulation_steps": "deepspeed_grad_accum"}
_LINE = lazy(r"(?:config\.py|\.{3,}|print\]).*?\b(train_batch_size|train_micro_batch_size_per_gpu|gradient_accumulation_steps)\b[\s.]*?(\d+)\s*$"
                   r"|\b(train_batch_size|train_micro_batch_size_per_gpu|gradient_accumulation_steps)\s*\.{2,}\s*(\d+)\s*$")


def scan(line: str, ctx: ScanContext) -> bool:
    if "batch_size" not in line and "gradient_accumulation_steps" not in line:
        return False
    match = _LINE.search(line)
    if not match:
        return False
    name = match.group(1) or match.group(3)
    value = int(match.group(2) or match.group(4))
    ctx.wrapper_value(_KEYS[name], ctx.reading(value))
    return True

"""LLaMA-Factory (and `datasets`/TRL progress bars): how many raw rows went in before packing or filtering.

    Converting format of dataset (num_proc=16): 100%|████| 348979/348979 [00:01<00:00, ...]
    Running tokenizer on dataset (num_proc=16): 100%|████| 348979/348979 [00:08<00:00, ...]
    Tokenizing train dataset: 100%|██████████| 324892/324892 [02:39<00:00, ...]     (TRL)
    Packing train dataset: 100%|██████████| 324892/324892 [01:23<00:00, ...]        (TRL)

The bars count rows before packing, so `Num examples` below them means packing or filtering.
LLaMA-Factory's trainer_log.jsonl lines (`"current_steps"`, `"total_steps"`) are read by hf.py.
"""

from __future__ import annotations

from trainsteps.logs.context import ScanContext
from trainsteps.patterns import lazy

_BAR = lazy(r"^(?P<what>[A-Za-z][\w ]*?(?:dataset|Dataset))\b[^:|]*:\s*\d+%\|[^|]*\|\s*(?P<done>\d+)/(?P<total>\d+)")
_KINDS = (("tokeniz", "raw_examples"), ("converting format", "raw_examples_converted"), ("packing", "packing_bar"))


def scan(line: str, ctx: ScanContext) -> bool:
    if "%|" not in line or "/" not in line:
        return False
    match = _BAR.search(line.strip())
    if not match:
        return False
    what = match.group("what").lower()
    for needle, key in _KINDS:
        if needle in what:
            ctx.wrapper_value(key, ctx.reading(int(match.group("total"))))
            return True
    return False

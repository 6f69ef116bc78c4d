"""How many processes the user meant to start, from launcher command lines and environment prints:
`torchrun --nproc_per_node 4`, `accelerate launch --num_processes=8`, `CUDA_VISIBLE_DEVICES=0,1,2,3`,
LLaMA-Factory's `GPU number: 8`. Compared with the processes the banner implies."""

from __future__ import annotations

import re

from trainsteps.logs.context import ScanContext

_PATTERNS = (
    re.compile(r"--nproc[_-]per[_-]node[= ](\d+)"),
    re.compile(r"--num[_-]processes[= ](\d+)"),
    re.compile(r"\bGPU number:\s*(\d+)"),
)
_VISIBLE = re.compile(r"CUDA_VISIBLE_DEVICES=([\d,]+)")


def scan(line: str, ctx: ScanContext) -> bool:
    if "nproc" not in line and "num_processes" not in line and "num-processes" not in line \
            and "GPU number" not in line and "CUDA_VISIBLE_DEVICES" not in line:
        return False
    for pattern in _PATTERNS:
        match = pattern.search(line)
        if match:
            ctx.wrapper_value("devices_hint", ctx.reading(int(match.group(1))))
            return True
    match = _VISIBLE.search(line)
    if match:
        count = len([d for d in match.group(1).split(",") if d])
        ctx.wrapper_value("devices_hint", ctx.reading(count))
        return True
    return False

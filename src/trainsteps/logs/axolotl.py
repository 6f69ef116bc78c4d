"""Axolotl's own step estimate, which it passes to the Trainer as max_steps (v0.10+):

    [2025-09-11 10:38:27,268] [INFO] [axolotl.utils.trainer.calculate_total_num_steps:481] [PID:428] [RANK:0] data_loader_len: 14
    ... total_num_steps: 14
    ... total_num_tokens: 8_487_290
    ... Maximum number of steps set at 14
    ... sample_packing_eff_est across ranks: [0.9783]      (the packing efficiency it plans with)
"""

from __future__ import annotations

from trainsteps.logs.context import ScanContext
from trainsteps.logs.text import parse_int
from trainsteps.patterns import lazy

_KEYS = {
    "total_num_steps": "axolotl_total_num_steps",
    "data_loader_len": "axolotl_data_loader_len",
    "total_num_tokens": "axolotl_total_num_tokens",
    "total_supervised_tokens": "axolotl_total_supervised_tokens",
}
_LINE = lazy(r"\b(total_num_steps|data_loader_len|total_num_tokens|total_supervised_tokens)`?\s*[:=]\s*")
_MAXIMUM = lazy(r"Maximum number of steps set at\s+")
_EFFICIENCY = lazy(r"(?:sample_packing_eff_est|packing_efficiency_estimate)[^:=\d]*[:=]\s*\[?\s*([0-9]*\.[0-9]+|1)\b")


def scan(line: str, ctx: ScanContext) -> bool:
    if "sample_packing_eff_est" in line or "packing_efficiency_estimate" in line:
        # the packing efficiency Axolotl estimates and uses in its step estimate (`sample_packing_eff_est: 0.77`)
        match = _EFFICIENCY.search(line)
        if match:
            ctx.wrapper_value("axolotl_packing_efficiency", ctx.reading(float(match.group(1))))
            return True
    if "_num_" not in line and "data_loader_len" not in line and "total_supervised" not in line and "Maximum number" not in line:
        return False
    # searched from the first of its keys: a long metrics line (verl's) is not scanned by the pattern from its start
    starts = [at for at in map(line.find, _KEYS) if at >= 0]
    match = (_LINE.search(line, min(starts)) if starts else None) or _MAXIMUM.search(line)
    if not match:
        return False
    parsed = parse_int(line[match.end():])
    if parsed is None:
        return False
    key = _KEYS.get(match.group(1)) if match.re is _LINE.compiled else "axolotl_max_steps"
    ctx.wrapper_value(key, ctx.reading(parsed[0]))
    return True

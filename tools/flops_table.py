"""Score the FLOPs model against published training throughputs (tests/fixtures/timing/published_throughput.json).

For each measurement, the FLOPs model predicts tokens/s per GPU = peak x MFU / FLOPs per token with the default MFU
range of the setup, and the table shows the model's error against the published figure. Where a publication gives
TFLOP/s per GPU instead of tokens/s, tokens/s is that divided by the FLOPs model's FLOPs per token.

    python tools/flops_table.py            # markdown table for docs/time.md
    python tools/flops_table.py --json     # the rows, as tests/timing/test_flops_table.py reads them
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from trainsteps.timing.flops import MFU_DEFAULTS, ModelShape, train_flops_per_token  # noqa: E402
from trainsteps.timing.gpus import find_gpu  # noqa: E402

DATA = ROOT / "tests" / "fixtures" / "timing" / "published_throughput.json"


def rows() -> list[dict]:
    out = []
    for m in json.loads(DATA.read_text())["measurements"]:
        shape = ModelShape(m["params"], m["params"], m["layers"], m["width"], m["name"])
        per_token = train_flops_per_token(shape, m["seq"], "full").expected
        peak = find_gpu(m["gpu"]).peak("bf16")
        mfu = MFU_DEFAULTS[m["setup"]].mfu
        measured = m.get("tokens_per_second_per_gpu") or m["tflops_per_gpu"] * 1e12 / per_token
        predicted = peak * mfu.expected / per_token
        low, high = peak * mfu.low / per_token, peak * mfu.high / per_token
        out.append({
            "name": m["name"], "gpu": m["gpu"], "gpus": m["gpus"], "seq": m["seq"], "settings": m["settings"],
            "source": m["source"], "measured_tokens_per_second_per_gpu": round(measured, 1),
            "predicted_tokens_per_second_per_gpu": round(predicted, 1), "predicted_low": round(low, 1),
            "predicted_high": round(high, 1), "error": round(predicted / measured - 1, 4),
            "inside_range": low <= measured <= high, "implied_mfu": round(measured * per_token / peak, 4),
            "published_mfu": m["published_mfu"],
        })
    return out


def markdown(table: list[dict]) -> str:
    lines = ["| Run | Hardware | Seq | Settings | Measured tok/s/GPU | Model tok/s/GPU (range) | Error | In range | "
             "MFU (ours / published) | Source |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['name']} | {r['gpus']:,} x {r['gpu']} | {r['seq']:,} | {r['settings']} | "
                     f"{r['measured_tokens_per_second_per_gpu']:,.0f} | {r['predicted_tokens_per_second_per_gpu']:,.0f} "
                     f"({r['predicted_low']:,.0f}-{r['predicted_high']:,.0f}) | {r['error']:+.1%} | "
                     f"{'yes' if r['inside_range'] else 'no'} | {r['implied_mfu']:.3f} / {r['published_mfu']:.3f} | "
                     f"{r['source']} |")
    errors = sorted(abs(r["error"]) for r in table)
    median = errors[len(errors) // 2] if len(errors) % 2 else (errors[len(errors) // 2 - 1] + errors[len(errors) // 2]) / 2
    inside = sum(r["inside_range"] for r in table)
    lines.append("")
    lines.append(f"Median absolute error {median:.1%}; {inside} of {len(table)} measurements inside the model's range.")
    return "\n".join(lines)


if __name__ == "__main__":
    table = rows()
    print(json.dumps(table, indent=1) if "--json" in sys.argv else markdown(table))

"""Record how right the callbacks' ETA is in real CPU training, against the Trainer's own tqdm ETA.

    bash tools/setup_live_env.sh /tmp/venv-live            # torch 2.13.0 (CPU), transformers (5.23.0 pinned below)
    python tools/record_eta.py --python /tmp/venv-live/bin/python [--repeats 3]

Runs tests/live/eta_worker.py (a tiny model really training with TrainstepsCallback and the Trainer's progress bar)
for each scenario below, `--repeats` times, and writes tests/fixtures/timing/eta_live.json: for 10 %, 25 % and 50 % of
the steps each process runs, the remaining seconds trainsteps and tqdm predicted, the seconds that really followed,
and the median absolute errors. tests/timing/test_eta_recorded.py asserts the recorded figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "timing" / "eta_live.json"
TRANSFORMERS = "5.23.0"

# A step is ~0.05 s of sleep + a real forward/backward/AdamW step; an evaluation of 16 rows in batches of 4.
BASE = {"n": 2000, "bs": 4, "max_steps": 100, "step_sleep": 0.05, "eval_rows": 16}
SCENARIOS = [
    {**BASE, "name": "slow_evaluations", "eval_every": 20, "eval_sleep": 0.3},
    {**BASE, "name": "slow_first_step", "first_step_sleep": 3.0},
    {**BASE, "name": "resume", "resume_at": 50, "save_every": 25},
    {**BASE, "name": "all_together", "first_step_sleep": 3.0, "eval_every": 20, "eval_sleep": 0.3, "save_every": 25},
]


def run(python: str, scenarios: list[dict]) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "OMP_NUM_THREADS": "1",
               "HF_HUB_OFFLINE": "1", "WANDB_DISABLED": "true", "TOKENIZERS_PARALLELISM": "false"}
        done = subprocess.run([python, str(ROOT / "tests" / "live" / "eta_worker.py"), tmp, json.dumps(scenarios)],
                              env=env, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-4000:])
        return json.loads((Path(tmp) / "rank-0.json").read_text())


def summary(results: list[dict]) -> dict:
    out = {}
    for share in ("10", "25", "50"):
        ours = [abs(r["points"][share]["trainsteps_error"]) for r in results if r["points"][share]["trainsteps_error"] is not None]
        theirs = [abs(r["points"][share]["tqdm_error"]) for r in results if r["points"][share]["tqdm_error"] is not None]
        out[share] = {"trainsteps_median_abs_error": round(statistics.median(ours), 4) if ours else None,
                      "tqdm_median_abs_error": round(statistics.median(theirs), 4) if theirs else None,
                      "trainsteps_unknown": sum(r["points"][share]["trainsteps"] is None for r in results),
                      "runs": len(results)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True, help="python of a venv made by tools/setup_live_env.sh")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results = [r for _ in range(args.repeats) for r in run(args.python, SCENARIOS)]
    if results[0]["transformers"] != TRANSFORMERS:
        raise SystemExit(f"record with transformers {TRANSFORMERS}, not {results[0]['transformers']}")
    by_name = {sc["name"]: summary([r for r in results if r["name"] == sc["name"]]) for sc in SCENARIOS}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"transformers": results[0]["transformers"], "torch": results[0]["torch"],
                               "repeats": args.repeats, "scenarios": SCENARIOS, "summary": by_name,
                               "overall": summary(results), "runs": results}, indent=1) + "\n")
    print(json.dumps({"overall": summary(results), "by_scenario": by_name}, indent=1))


if __name__ == "__main__":
    main()

"""Record what the real Trainer feeds the model from an iterable dataset, per release.

    python tools/record_stream.py --python /tmp/stream-live/bin/python [--python /tmp/venv-449/bin/python]

Each interpreter needs torch==2.13.0 and a transformers release (tools/setup_live_env.sh makes one;
TRANSFORMERS=4.49.0 for an older release). Every case runs the tiny model of tests/live/tiny.py on
CPU, 2-rank cases under torchrun (gloo); the model itself counts the rows and tokens it receives.
Writes tests/fixtures/stream/transformers-<version>.json, checked by tests/test_stream.py.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BS, GA = 4, 2
CASES = [
    # name, rows, ranks, settings
    ("n50_w1_ms13", 50, 1, {"ga": GA, "max_steps": 13}),
    ("n50_w1_ga3_ms10_droplast", 50, 1, {"ga": 3, "max_steps": 10, "drop_last": True}),
    ("n51_w2_ms9_dispatch", 51, 2, {"ga": GA, "max_steps": 9}),
    ("n51_w2_ms9_dispatch_droplast", 51, 2, {"ga": GA, "max_steps": 9, "drop_last": True}),
    ("n51_w2_ms9_shard", 51, 2, {"ga": GA, "max_steps": 9, "dispatch_batches": False}),
    ("n30_w2_ga1_ms10_shard_droplast", 30, 2, {"ga": 1, "max_steps": 10, "dispatch_batches": False, "drop_last": True}),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(python: str, ranks: int, scenarios: list[dict]) -> list[list[dict]]:
    out = Path(tempfile.mkdtemp())
    worker = str(ROOT / "tests" / "live" / "hf_worker.py")
    launch = [python, worker] if ranks == 1 else [python, "-m", "torch.distributed.run", f"--nproc_per_node={ranks}",
                                                  f"--master_port={free_port()}", worker]
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    subprocess.run([*launch, str(out), json.dumps(scenarios)], check=True, env=env, capture_output=True, text=True)
    return [json.loads((out / f"rank-{r}.json").read_text()) for r in range(ranks)]


def record(python: str) -> Path:
    runs = []
    for ranks in (1, 2):
        cases = [(name, n, s) for name, n, r, s in CASES if r == ranks]
        scenarios = [{"name": name, "n": n, "bs": BS, "iterable": True, **s} for name, n, s in cases]
        per_rank = run(python, ranks, scenarios)
        for i, (name, n, settings) in enumerate(cases):
            ranks_results = [rank[i] for rank in per_rank]
            first = ranks_results[0]
            runs.append({
                "case": name,
                "inputs": {"num_examples": n, "per_device_train_batch_size": BS, "gradient_accumulation_steps": settings["ga"],
                           "world_size": ranks, "max_steps": settings["max_steps"],
                           "dataloader_drop_last": settings.get("drop_last", False),
                           "dispatch_batches": settings.get("dispatch_batches")},
                "rows_fed": sum(r["model_rows"] for r in ranks_results),
                "tokens_fed": sum(r["model_tokens"] for r in ranks_results),
                "rows_fed_per_rank": [r["model_rows"] for r in ranks_results],
                "final_global_step": first["global_step"],
                "state_epoch": first["state_epoch"],
                "epoch_end_steps": first["epoch_end_steps"],
            })
            version = first["transformers"]
    path = ROOT / "tests" / "fixtures" / "stream" / f"transformers-{version}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"transformers": version, "regenerate": f"python tools/record_stream.py --python <venv with transformers=={version}>/bin/python",
            "model": "tests/live/tiny.py TinyLM (counts rows and non-padding tokens in its forward)", "runs": runs}
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", required=True, help="interpreter with torch and transformers (repeatable)")
    for python in parser.parse_args().python:
        print(record(python))


if __name__ == "__main__":
    main()

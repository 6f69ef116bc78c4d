#!/usr/bin/env python3
"""Record what the REAL Hugging Face transformers Trainer prints and does, per release.

Runs the cases of tools/hf_cases.py with tools/hf_worker.py inside a virtualenv that holds one
transformers release (plus torch 2.13.0 CPU and a matching accelerate), and writes
``<out>/transformers-<version>.json``.  This script itself needs only the standard library.

  python tools/record_hf.py --setup 4.44.2                      # create /tmp/hfenv/4.44.2
  python tools/record_hf.py --python /tmp/hfenv/4.44.2/bin/python --out tests/fixtures/hf/
  python tools/record_hf.py --python ... --out - --cases n1047_b10_g8_e3,n7_b8_g4_e3
  python tools/record_hf.py --list-cases

Cases are grouped by world size: all world-size-1 cases run in one worker process, and each
world size W > 1 runs in one ``python -m torch.distributed.run --nproc_per_node W`` job (CPU,
gloo, a free port per job).  A case that hangs is killed after --case-timeout seconds without
progress, recorded as an error, and the remaining cases are run in a new job.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hf_cases  # noqa: E402
import hf_envs  # noqa: E402

WORKER = HERE / "hf_worker.py"
RUN_KEYS = [
    "case", "inputs", "banner", "banner_lines", "log_text", "max_steps", "final_global_step", "state_epoch",
    "epoch_end_steps", "log_steps", "eval_steps", "save_steps", "warmup_steps", "real_optimizer_updates",
    "samples_seen", "forward_calls_rank0", "trainable_parameters", "error", "epoch_end_state_epochs", "eval_losses",
]
NOTES = {
    "model": "torch.nn.Module with one nn.Linear(1,1); forward(x, labels) returns {'loss': mse}; 2 trainable parameters",
    "data": "map-style torch Dataset of num_examples dict rows {'x': [float], 'labels': [float]}; streaming=True uses a "
            "torch IterableDataset yielding the same rows; evaluation (when eval_strategy != 'no') uses a 6-row map-style dataset",
    "trainer_args": "output_dir=<temp dir>, report_to='none', disable_tqdm=True, seed=42, use_cpu=True (no_cuda=True where "
                    "use_cpu does not exist), prediction_loss_only=True, ddp_backend='gloo' when world_size > 1; "
                    "save_strategy='no' unless the case sets it (a harness choice, not the Trainer default); every other "
                    "argument is the release's default unless the case sets it. inputs: the case's values, else the "
                    "release's TrainingArguments field default (null when the field does not exist in the release)",
    "split_batches": "passed as accelerator_config={'split_batches': True}; releases without accelerator_config skip "
                     "the case (listed in 'skipped')",
    "eval_strategy": "passed as evaluation_strategy in releases without an eval_strategy field",
    "multi_rank": "python -m torch.distributed.run --nproc_per_node W (CPU, gloo, one machine); the whole banner/log is "
                  "rank 0's; samples_seen sums the training rows forwarded on all ranks; forward_calls_rank0 and "
                  "real_optimizer_updates are rank 0's",
    "resume": "resume_from_step=K: the same configuration is first trained to the end with save_strategy='steps', "
              "save_steps=K (not recorded), then a fresh Trainer (same output_dir) runs "
              "train(resume_from_checkpoint='<output_dir>/checkpoint-K'); everything recorded is from that resumed run "
              "(real_optimizer_updates/samples_seen count only the resumed run's work)",
    "warmup_steps": "read from the LR scheduler the Trainer built: the first step s in 0..max_steps where "
                    "scheduler.lr_lambdas[0](s) >= 1.0 (the LR peak); null if there is no scheduler or it never peaks",
    "real_optimizer_updates": "count of torch optimizer step() calls that really ran (global torch optimizer step "
                              "post-hook), rank 0",
    "log_steps": "state.global_step at each on_log whose logs contain 'loss'",
    "eval_steps/save_steps/epoch_end_steps": "state.global_step at each on_evaluate / on_save / on_epoch_end callback",
    "epoch_end_state_epochs": "state.epoch at each on_epoch_end callback (what epoch-strategy evaluation compares eval_delay with)",
    "eval_losses": "metrics['eval_loss'] passed to each on_evaluate callback (which evaluations improve metric_for_best_model='loss')",
    "log_text": "every record of the 'transformers' logger hierarchy on rank 0 at INFO verbosity, formatted as "
                "'[%(levelname)s|%(filename)s:%(lineno)s] >> %(message)s' (the HF explicit format without the time); "
                "the temporary directory holding each case's output_dir is written as <workdir>",
    "banner_lines": "the '***** Running training *****' message and the consecutive messages after it that start with "
                    "two spaces (so resume lines are included); banner maps 'label' -> 'value' for lines 'label = value'",
    "error": "'<ExceptionType>: <message>' of what train() or the Trainer/TrainingArguments constructor raised; "
             "'harness: ...' errors are the recorder's own guards (forward-pass/epoch limits, a killed hang); "
             "traceback_tail holds the last frames",
    "harness_patches": "listed per run when used: torch.load is wrapped so that map_location 'cpu:N' (passed as "
                       "args.device by releases that load the optimizer state that way, when resuming under "
                       "torch.distributed on CPU; torch 2.13 rejects it with \"don't know how to restore data location\") "
                       "becomes 'cpu'; it does not touch the Trainer's step bookkeeping",
    "env": "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, OMP_NUM_THREADS=1, CUDA_VISIBLE_DEVICES='' in the recorded processes",
}


def log(msg: str) -> None:
    print(f"[record_hf {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_env() -> dict:
    env = dict(os.environ)
    env.update({
        "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1", "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "",
        "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    })
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "PYTHONPATH"):
        env.pop(k, None)
    return env


def probe(python: str) -> dict:
    r = subprocess.run([python, str(WORKER), "--probe"], capture_output=True, text=True, env=worker_env())
    if r.returncode != 0:
        raise SystemExit(f"cannot import the Trainer with {python}:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _read_jsonl(p: Path) -> list[dict]:
    if not p.exists():
        return []
    out = []
    for line in p.read_text().splitlines():
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def run_group(python: str, cases: list[dict], world: int, tmp: Path, case_timeout: float) -> dict[str, dict]:
    """Run cases (all of world size `world`) and return {case_id: merged record}."""
    results: dict[str, dict] = {}
    pending = list(cases)
    attempt = 0
    while pending:
        attempt += 1
        job = tmp / f"w{world}_job{attempt}"
        job.mkdir(parents=True)
        spec = job / "spec.json"
        spec.write_text(json.dumps({"cases": pending, "workdir": str(job / "work")}))
        if world == 1:
            cmd = [python, str(WORKER), "--spec", str(spec), "--results-dir", str(job)]
        else:
            cmd = [python, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", str(world),
                   "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
                   str(WORKER), "--spec", str(spec), "--results-dir", str(job)]
        log(f"W={world}: {len(pending)} case(s), job {attempt}")
        with open(job / "worker.log", "w") as wlog:
            proc = subprocess.Popen(cmd, stdout=wlog, stderr=subprocess.STDOUT, env=worker_env(),
                                    start_new_session=True, cwd=str(job))
            last_progress, n_done = time.time(), 0
            killed = False
            while proc.poll() is None:
                time.sleep(1.0)
                done_now = len(_read_jsonl(job / "rank0.jsonl"))
                if done_now != n_done:
                    n_done, last_progress = done_now, time.time()
                    log(f"W={world}: {n_done}/{len(pending)} done")
                elif time.time() - last_progress > case_timeout:
                    log(f"W={world}: no progress for {case_timeout:.0f}s, killing job {attempt}")
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    proc.wait()
                    killed = True
        per_rank = [_read_jsonl(job / f"rank{r}.jsonl") for r in range(world)]
        by_rank = [{d["case"]: d for d in recs} for recs in per_rank]
        for rec in per_rank[0]:
            cid = rec["case"]
            if "skipped" in rec:
                results[cid] = rec
                continue
            total = 0
            for r in range(world):
                other = by_rank[r].get(cid)
                if other is not None:
                    total += other.get("samples_seen", 0) or 0
            rec["samples_seen"] = total
            missing = [r for r in range(world) if cid not in by_rank[r]]
            if missing:
                rec["samples_seen_missing_ranks"] = missing
            results[cid] = rec
        done_ids = {d["case"] for d in per_rank[0]}
        rest = [c for c in pending if c["id"] not in done_ids]
        if rest:
            stuck = rest[0]
            tail = (job / "worker.log").read_text(errors="replace")[-2000:]
            why = (f"harness: no result within {case_timeout:.0f}s, job killed" if killed
                   else f"harness: worker exited with code {proc.returncode} before finishing this case")
            log(f"W={world}: case {stuck['id']} failed: {why}\n{tail}")
            results[stuck["id"]] = {"case": stuck["id"], "harness_failure": why, "worker_log_tail": tail}
            rest = rest[1:]
        pending = rest
    return results


_SITE_RE = re.compile(r'File "[^"]*?/site-packages/')


def tidy(rec: dict, inputs_fallback: dict) -> dict:
    out = {k: rec.get(k) for k in RUN_KEYS}
    if out["inputs"] is None:
        out["inputs"] = inputs_fallback
    for k in ("epoch_end_steps", "log_steps", "eval_steps", "save_steps", "banner_lines"):
        if out[k] is None:
            out[k] = []
    if out["banner"] is None:
        out["banner"] = {}
    if out["log_text"] is None:
        out["log_text"] = ""
    if rec.get("traceback_tail"):
        tb = _SITE_RE.sub('File "<site-packages>/', rec["traceback_tail"])
        out["traceback_tail"] = tb.replace(str(WORKER), "tools/hf_worker.py")
    if rec.get("harness_failure"):
        out["error"] = rec["harness_failure"]
        out["worker_log_tail"] = rec.get("worker_log_tail")
    if rec.get("harness_patches"):
        out["harness_patches"] = rec["harness_patches"]
    if rec.get("samples_seen_missing_ranks"):
        out["samples_seen_missing_ranks"] = rec["samples_seen_missing_ranks"]
    return out


def record(python: str, case_ids: list[str] | None, case_timeout: float, keep_tmp: bool) -> dict:
    info = probe(python)
    version = info["transformers"]
    log(f"{python}: transformers {version}, accelerate {info['accelerate']}, torch {info['torch']}")
    cases = hf_cases.CASES
    if case_ids:
        unknown = [c for c in case_ids if c not in hf_cases.CASE_IDS]
        if unknown:
            raise SystemExit(f"unknown case id(s): {', '.join(unknown)} (see --list-cases)")
        cases = [c for c in cases if c["id"] in case_ids]
    tmp = Path(tempfile.mkdtemp(prefix=f"record_hf_{version}_"))
    results: dict[str, dict] = {}
    try:
        for world in sorted({c.get("world_size", 1) for c in cases}):
            group = [c for c in cases if c.get("world_size", 1) == world]
            results.update(run_group(python, group, world, tmp, case_timeout))
    finally:
        if not keep_tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            log(f"kept {tmp}")
    runs, skipped = [], {}
    for c in cases:
        rec = results.get(c["id"])
        if rec is None:
            continue
        if "skipped" in rec:
            skipped[c["id"]] = rec["skipped"]
            continue
        fallback = {k: v for k, v in c.items() if k != "id"}
        runs.append(tidy(rec, fallback))
    pins = hf_envs.PINS.get(version)
    header = {
        "transformers": version,
        "accelerate": info.get("accelerate"),
        "torch": info.get("torch"),
        "python": ".".join(info.get("python", "").split(".")[:2]),
        "recorded_on": _dt.date.today().isoformat(),
        "regenerate": f"python tools/record_hf.py --setup {version} && "
                      f"python tools/record_hf.py --python /tmp/hfenv/{version}/bin/python --out tests/fixtures/hf/",
        "packages": info,
        "pip_requirements": [hf_envs.TORCH_PIN, f"transformers=={version}"] + (pins or []),
        "notes": NOTES,
        "skipped": skipped,
        "runs": runs,
    }
    return header


def merge_into(path: Path, new: dict) -> dict:
    """Update an existing fixture with the runs in `new` (same case ids replaced, order = case list)."""
    if not path.exists():
        return new
    old = json.loads(path.read_text())
    if old.get("transformers") != new["transformers"]:
        return new
    runs = {r["case"]: r for r in old.get("runs", [])}
    runs.update({r["case"]: r for r in new["runs"]})
    skipped = dict(old.get("skipped", {}))
    skipped.update(new["skipped"])
    for cid in list(skipped):
        if cid in {r["case"] for r in new["runs"]}:
            skipped.pop(cid)
    for cid in new["skipped"]:
        runs.pop(cid, None)
    order = {cid: i for i, cid in enumerate(hf_cases.CASE_IDS)}
    merged = dict(new)
    merged["skipped"] = skipped
    merged["runs"] = sorted(runs.values(), key=lambda r: order.get(r["case"], 10 ** 6))
    return merged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", help="interpreter of a virtualenv with transformers, accelerate and torch")
    ap.add_argument("--out", help="output directory for transformers-<version>.json, or '-' for stdout")
    ap.add_argument("--cases", help="comma-separated case ids (default: all)")
    ap.add_argument("--list-cases", action="store_true", help="print the case ids and inputs, then exit")
    ap.add_argument("--setup", metavar="VERSION", action="append",
                    help="create the virtualenv for a transformers release (repeatable; 'all' = every pinned release)")
    ap.add_argument("--pin", action="append", help="with --setup: extra/replacement pip requirement(s)")
    ap.add_argument("--root", default=str(hf_envs.DEFAULT_ROOT), help="where --setup puts venvs (default %(default)s)")
    ap.add_argument("--case-timeout", type=float, default=600.0,
                    help="seconds without a finished case before a job is killed (default %(default)s)")
    ap.add_argument("--keep-tmp", action="store_true", help="keep the per-job work directories and worker logs")
    a = ap.parse_args(argv)

    if a.list_cases:
        for c in hf_cases.CASES:
            print(c["id"], json.dumps({k: v for k, v in c.items() if k != "id"}))
        return 0
    if a.setup:
        versions = list(hf_envs.PINS) if "all" in a.setup else a.setup
        for v in versions:
            log(f"setting up transformers {v} in {Path(a.root) / v}")
            py = hf_envs.setup_version(v, Path(a.root), extra=a.pin)
            log(f"ready: {py}")
        if not a.python:
            return 0
    if not a.python or not a.out:
        ap.error("--python and --out are required (unless --list-cases or --setup)")
    ids = [s.strip() for s in a.cases.split(",") if s.strip()] if a.cases else None
    data = record(a.python, ids, a.case_timeout, a.keep_tmp)
    if a.out == "-":
        json.dump(data, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"transformers-{data['transformers']}.json"
    if ids:
        data = merge_into(path, data)
    path.write_text(json.dumps(data, indent=1) + "\n")
    errors = [r["case"] for r in data["runs"] if r.get("error")]
    log(f"wrote {path}: {len(data['runs'])} run(s), {len(errors)} with an error, {len(data['skipped'])} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())

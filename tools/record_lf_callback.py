"""Record `TrainstepsCallback` inside real LLaMA-Factory SFT runs, into tests/fixtures/integrations/llamafactory_callback.json.

LLaMA-Factory's own Python entry point is called the way docs/integrations.md tells users to:
`llamafactory.train.tuner.run_exp(args, callbacks=[TrainstepsCallback()])`, on CPU, with the tiny Llama model and
word-level tokenizer that tools/record_wrappers.py builds, on a local alpaca-format dataset of the repository
(tests/fixtures/wrappers/lf_e2e/sft_plain/data). Two launches: one process, and two processes started with
`torchrun --nproc_per_node 2` (gloo). A script that calls `run_exp` is launched by torchrun itself:
`FORCE_TORCHRUN` / `NPROC_PER_NODE` only act in `llamafactory-cli train`, which re-launches LLaMA-Factory's own
launcher, not the calling script.

For each launch the fixture keeps the versions, the config, the Trainer's banner lines and the trainsteps lines as
printed, the Trainer's `log_history` (with the callback's samples_seen / tokens_seen / equivalent_epoch), and an
independent count of what the model received: `LlamaForCausalLM.forward` is wrapped by this recorder (not by the
callback) and notes, for every training forward on every rank, the rows of `input_ids`, its non-padding tokens
(`input_ids != pad_token_id`) and the sum of `attention_mask`; a marker callback notes how many forwards each rank
had run when each optimizer step ended.

Regenerate (LLaMA-Factory 0.9.5 environment of tools/record_wrappers.py, about a minute on 2 CPU cores):
    python -m venv /tmp/lfenv && /tmp/lfenv/bin/pip install llamafactory==0.9.5 torch==2.13.0
    /tmp/lfenv/bin/pip uninstall -y torchvision torchaudio      # no builds for torch 2.13.0; an empty stand-in is used
    /tmp/lfenv/bin/pip install --no-deps -e .
    /tmp/lfenv/bin/python tools/record_lf_callback.py
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "integrations" / "llamafactory_callback.json"
DATA = ROOT / "tests" / "fixtures" / "wrappers" / "lf_e2e" / "sft_plain" / "data"
REGENERATE = "/tmp/lfenv/bin/python tools/record_lf_callback.py   (see the module docstring for the environment)"

# LLaMA-Factory's own option names; model, data and output folders are filled in per run
CONFIG = {
    "stage": "sft", "do_train": True, "finetuning_type": "full", "template": "default",
    "dataset": "alpaca_a", "max_samples": 120, "val_size": 0.1, "cutoff_len": 64,
    "per_device_train_batch_size": 4, "gradient_accumulation_steps": 3, "num_train_epochs": 2.0,
    "learning_rate": 1.0e-4, "logging_steps": 2,
    "eval_strategy": "steps", "eval_steps": 5, "per_device_eval_batch_size": 4,  # evaluation forwards must not be counted
    "save_strategy": "no", "report_to": "none", "bf16": False, "fp16": False,
    "overwrite_output_dir": True, "overwrite_cache": True,
}
SEVERAL_RANKS = {"ddp_backend": "gloo"}  # CPU ranks talk over gloo; on one process the option breaks device setup
LAUNCHES = (1, 2)
BANNER_KEYS = ("Num examples", "Num Epochs", "Instantaneous batch size per device",
               "Total train batch size (w. parallel, distributed & accumulation)", "Gradient Accumulation steps",
               "Total optimization steps")


# ---- inside each rank ----------------------------------------------------------------------------------------------


def run_rank(config_file: pathlib.Path, out_dir: pathlib.Path) -> None:
    """One rank: count every training forward, run LLaMA-Factory's run_exp with the callback, write what was seen."""
    from llamafactory.train.tuner import run_exp
    from transformers import LlamaForCausalLM, TrainerCallback

    from trainsteps.integrations.hf import TrainstepsCallback

    config = json.loads(config_file.read_text())
    pad_id = json.loads((pathlib.Path(config["model_name_or_path"]) / "config.json").read_text())["pad_token_id"]
    forwards: list[list] = []  # per training forward: rows, input_ids != pad, attention_mask sum
    original = LlamaForCausalLM.forward

    def counted_forward(self, *args, **kwargs):
        if self.training:
            ids = kwargs["input_ids"] if "input_ids" in kwargs else args[0]
            mask = kwargs.get("attention_mask")
            forwards.append([int(ids.shape[0]), int((ids != pad_id).sum()), None if mask is None else int(mask.sum())])
        return original(self, *args, **kwargs)

    LlamaForCausalLM.forward = counted_forward

    class StepMarks(TrainerCallback):
        """Notes the number of training forwards of this rank at the end of every optimizer step."""

        def __init__(self):
            self.marks, self.state = [], None

        def on_step_end(self, args, state, control, **kwargs):
            self.marks.append([state.global_step, len(forwards)])
            self.state = state

    callback, marks = TrainstepsCallback(), StepMarks()
    run_exp(config, callbacks=[callback, marks])

    rank = int(os.environ.get("RANK", "0"))
    schedule = callback.schedule
    (out_dir / f"rank{rank}.json").write_text(json.dumps({
        "rank": rank, "forwards": forwards, "step_marks": marks.marks,
        "log_history": marks.state.log_history if marks.state is not None else None,
        "callback": {"samples_seen": callback.samples_seen, "tokens_seen": callback.tokens_seen, "dataset_size": callback._size,
                     "planned_steps": None if schedule is None else schedule.run.optimizer_steps},
    }))


# ---- the recorder --------------------------------------------------------------------------------------------------


def _environment(work: pathlib.Path) -> dict:
    stubs = work / "stubs"
    (stubs / "torchaudio").mkdir(parents=True, exist_ok=True)
    (stubs / "torchaudio" / "__init__.py").write_text("")  # LLaMA-Factory imports torchaudio at module level; no audio is used
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(stubs), str(ROOT / "src")]), CUDA_VISIBLE_DEVICES="",
                DISABLE_VERSION_CHECK="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1",
                HF_DATASETS_CACHE=str(work / "datasets_cache"), HF_HUB_OFFLINE="1")


def _parse_banner(log: str) -> dict:
    section = log[log.index("***** Running training *****"):]
    banner = {}
    for key in BANNER_KEYS:
        match = re.search(re.escape(key) + r" = ([\d,]+)", section)
        banner[key] = match.group(1) if match else None
    return banner


def _banner_lines(log: str) -> list[str]:
    start = log.index("***** Running training *****")
    lines = log[start:].splitlines()
    return [line for line in lines[:12] if " = " in line or "Running training" in line]


def _merge(out_dir: pathlib.Path, world: int) -> dict:
    ranks = [json.loads((out_dir / f"rank{r}.json").read_text()) for r in range(world)]
    steps = [step for step, _ in ranks[0]["step_marks"]]
    per_step = []
    for i, step in enumerate(steps):  # cumulative over ranks, as of the end of each optimizer step
        rows = tokens = mask = 0
        for rank in ranks:
            done = rank["forwards"][: rank["step_marks"][i][1]]
            rows += sum(f[0] for f in done)
            tokens += sum(f[1] for f in done)
            mask += sum(f[2] for f in done)
        per_step.append({"step": step, "rows": rows, "non_pad_tokens": tokens, "attention_mask_sum": mask})
    return {
        "forwards_per_rank": [len(r["forwards"]) for r in ranks],
        "rows": sum(f[0] for r in ranks for f in r["forwards"]),
        "non_pad_tokens": sum(f[1] for r in ranks for f in r["forwards"]),
        "attention_mask_sum": sum(f[2] for r in ranks for f in r["forwards"]),
        "per_step": per_step,
    }, ranks


def record_launch(world: int, work: pathlib.Path, model: pathlib.Path) -> dict:
    run_dir = work / f"world{world}"
    run_dir.mkdir()
    config = dict(CONFIG, **(SEVERAL_RANKS if world > 1 else {}), model_name_or_path=str(model), dataset_dir=str(DATA), output_dir=str(run_dir / "out"))
    (run_dir / "config.json").write_text(json.dumps(config))
    me = [str(pathlib.Path(__file__).resolve()), "rank", str(run_dir / "config.json"), str(run_dir)]
    if world == 1:
        command = [sys.executable, *me]
    else:
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(world), "--master_port", "29653", *me]
    proc = subprocess.run(command, env=_environment(work), capture_output=True, text=True, timeout=1500)
    log = proc.stdout + "\n" + proc.stderr
    (run_dir / "log.txt").write_text(log)
    if proc.returncode:
        raise RuntimeError(log[-4000:])
    counted, ranks = _merge(run_dir, world)
    return {
        "launch": "python script.py" if world == 1 else f"torchrun --nproc_per_node {world} script.py",
        "world_size": world,
        "banner": _parse_banner(log),
        "banner_lines": _banner_lines(log),
        "trainsteps_lines": [line for line in log.splitlines() if "trainsteps" in line and "Traceback" not in line],
        "log_history": ranks[0]["log_history"],
        "callback_last": [r["callback"] for r in ranks],
        "counted_in_forward": counted,
    }


def record() -> dict:
    sys.path.insert(0, str(ROOT / "tools"))
    from record_wrappers import _vocabulary, build_tiny_model

    result = {
        "generated_by": REGENERATE,
        "what": "TrainstepsCallback passed to LLaMA-Factory run_exp(args, callbacks=[...]) in real SFT runs on CPU; "
                "counted_in_forward is counted by the recorder inside LlamaForCausalLM.forward (training forwards only)",
        "llamafactory": importlib.metadata.version("llamafactory"),
        "transformers": importlib.metadata.version("transformers"),
        "torch": importlib.metadata.version("torch"),
        "accelerate": importlib.metadata.version("accelerate"),
        "dataset": str(DATA.relative_to(ROOT)),
        "config": dict(CONFIG),
        "config_several_ranks": SEVERAL_RANKS,
        "runs": [],
    }
    with tempfile.TemporaryDirectory(prefix="lf_callback_") as tmp:
        work = pathlib.Path(tmp)
        build_tiny_model(work / "tiny", _vocabulary([DATA.parent]))
        result["pad_token_id"] = json.loads((work / "tiny" / "config.json").read_text())["pad_token_id"]
        for world in LAUNCHES:
            print(f"run: {world} process(es)", file=sys.stderr)
            result["runs"].append(record_launch(world, work, work / "tiny"))
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="part")
    rank = sub.add_parser("rank", help="internal: one rank of a recorded run")
    rank.add_argument("config", type=pathlib.Path)
    rank.add_argument("out_dir", type=pathlib.Path)
    a = ap.parse_args()
    if a.part == "rank":
        run_rank(a.config, a.out_dir)
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(record(), indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()

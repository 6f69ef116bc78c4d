"""Record RL fixtures from the frameworks' own code, at pinned releases, into tests/fixtures/rl/.

verl (tools/rl_verl_worker.py does the work inside a virtualenv that sees the release):

    python3.11 -m venv /tmp/rl-verl
    echo /tmp/trainsteps-live/lib/python3.11/site-packages > /tmp/rl-verl/lib/python3.11/site-packages/_trainsteps_torch.pth
    /tmp/rl-verl/bin/pip install torch==2.13.0 omegaconf hydra-core torchdata "tensordict<=0.10.0,>=0.8.0,!=0.9.0" \
        codetiming dill pylatexenc ray peft pillow cachetools uvicorn fastapi
    for v in 0.3.0.post1 0.4.1 0.5.0 0.6.1 0.7.1 0.8.0 0.9.1; do
        pip download --no-deps -d /tmp/rl-dl/verl-$v verl==$v; mkdir -p /tmp/rl-verl/v/$v; (cd /tmp/rl-verl/v/$v && unzip -qo /tmp/rl-dl/verl-$v/*.whl); done
    # releases before 0.9 call tokenizer.apply_chat_template the transformers 4 way: they run against 4.57.6
    /tmp/rl-verl/bin/pip install --no-deps --target /tmp/rl-verl/tf4 transformers==4.57.6 tokenizers==0.22.1 \
        huggingface_hub==0.36.0 datasets==4.0.0
    python3.11 tools/record_rl.py verl

(/tmp/trainsteps-live is the live-check virtualenv: torch 2.13.0, transformers, datasets, pyarrow.)

TRL PPO and KTO (tools/rl_trl_worker.py; PPO was removed after trl 1.0.0, so that release is run from its wheel):

    pip download --no-deps -d /tmp/rl-dl/trl-1.0.0 trl==1.0.0; mkdir -p /tmp/rl-dl/src/trl-1.0.0
    (cd /tmp/rl-dl/src/trl-1.0.0 && unzip -qo /tmp/rl-dl/trl-1.0.0/*.whl)
    python3.11 tools/record_rl.py trl --trl-root /tmp/rl-dl/src/trl-1.0.0 --python /tmp/trainsteps-live/bin/python

OpenRLHF (tools/rl_openrlhf_worker.py; no vLLM, DeepSpeed or GPU: the wheel's source is put on the path):

    pip download --no-deps -d /tmp/rl-dl/openrlhf openrlhf==0.11.2; mkdir -p /tmp/rl-dl/src/openrlhf
    (cd /tmp/rl-dl/src/openrlhf && unzip -qo /tmp/rl-dl/openrlhf/*.whl)
    python3.11 tools/record_rl.py openrlhf --python /tmp/rl-verl/bin/python

The prompts of the filtering case are written to tests/fixtures/rl/data/ with the chat template, so the tests count the
same file with the same tokenizer.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "rl"
TOKENIZER = ROOT / "tests" / "assets" / "tiny_tokenizer.json"
VERL_RELEASES = ("0.3.0.post1", "0.4.1", "0.5.0", "0.6.1", "0.7.1", "0.8.0", "0.9.1")


V1_CASES = [
    ("v1_gsm8k_quickstart", 7473, 8, {"data.train_batch_size": 256, "actor_rollout_ref.actor.ppo_mini_batch_size": 64,
                                      "actor_rollout_ref.rollout.n": 5, "trainer.total_epochs": 15,
                                      "data.filter_overlong_prompts": False}),
    ("v1_gen_batch", 250, 2, {"data.train_batch_size": 16, "data.gen_batch_size": 48, "actor_rollout_ref.actor.ppo_mini_batch_size": 16,
                              "actor_rollout_ref.rollout.n": 4, "trainer.total_epochs": 2, "data.filter_overlong_prompts": False}),
    ("v1_override", 100, 2, {"data.train_batch_size": 8, "actor_rollout_ref.actor.ppo_mini_batch_size": 4,
                             "actor_rollout_ref.rollout.n": 2, "trainer.total_epochs": 3, "trainer.total_training_steps": 7,
                             "data.filter_overlong_prompts": False}),
    ("v1_separate_async", 300, 2, {"data.train_batch_size": 32, "actor_rollout_ref.actor.ppo_mini_batch_size": 8,
                                   "actor_rollout_ref.rollout.n": 2, "trainer.total_epochs": 2, "trainer.v1.trainer_mode": "separate_async",
                                   "data.filter_overlong_prompts": False}),
    ("v1_colocate_async_max_samples", 250, 4, {"data.train_batch_size": 32, "data.train_max_samples": 150,
                                                "actor_rollout_ref.actor.ppo_mini_batch_size": 16, "actor_rollout_ref.rollout.n": 8,
                                                "trainer.total_epochs": 3, "trainer.v1.trainer_mode": "colocate_async",
                                                "data.filter_overlong_prompts": False}),
]
"""Inputs of the v1 trainer's cases (0.9+): every expected number comes from verl's `_init_dataloader`."""


FSDP_SFT_CASES = [
    ("fsdp_sft_gsm8k", 7473, 8, {"data.train_batch_size": 256, "data.micro_batch_size_per_gpu": 4, "trainer.total_epochs": 3}),
    ("fsdp_sft_uneven", 1003, 4, {"data.train_batch_size": 64, "data.micro_batch_size_per_gpu": 2, "trainer.total_epochs": 2}),
    ("fsdp_sft_small_batch", 300, 2, {"data.train_batch_size": 8, "data.micro_batch_size_per_gpu": 4, "trainer.total_epochs": 1}),
]
"""fsdp_sft_trainer inputs (rows, data-parallel ranks, settings): the loader is verl's own."""


def verl_cases(version: str) -> list[dict]:
    """Inputs only; every expected number comes from verl's code. Keys a release does not have are left out for it."""
    minor = tuple(int(x) for x in version.split(".")[:2])
    sched_key = "lr_scheduler_type" if minor >= (0, 6) else "warmup_style"
    optim = "actor_rollout_ref.actor.optim"

    def case(name, prompts, dp, **settings):
        overrides = [f"++{k}={v}" for k, v in settings.items()] + [f"++trainer.n_gpus_per_node={dp}"]
        return {"name": name, "prompts": prompts, "n_gpus_per_node": dp, "overrides": overrides, "settings": settings}

    cases = [
        case("gsm8k_quickstart", 7473, 8, **{"data.train_batch_size": 256, "actor_rollout_ref.actor.ppo_mini_batch_size": 64,
             "actor_rollout_ref.rollout.n": 5, "actor_rollout_ref.actor.ppo_epochs": 1, "trainer.total_epochs": 15,
             "data.filter_overlong_prompts": False}),
        case("filter_overlong", 300, 2, **{"data.train_batch_size": 16, "actor_rollout_ref.actor.ppo_mini_batch_size": 8,
             "actor_rollout_ref.rollout.n": 4, "trainer.total_epochs": 2, "data.filter_overlong_prompts": True,
             "data.max_prompt_length": 90}),
        case("override_shorter_cosine", 100, 2, **{"data.train_batch_size": 8, "actor_rollout_ref.actor.ppo_mini_batch_size": 4,
             "actor_rollout_ref.rollout.n": 2, "trainer.total_epochs": 3, "trainer.total_training_steps": 7,
             "data.filter_overlong_prompts": False, f"{optim}.lr_warmup_steps_ratio": 0.3, f"{optim}.{sched_key}": "cosine"}),
        case("override_longer", 100, 2, **{"data.train_batch_size": 8, "actor_rollout_ref.actor.ppo_mini_batch_size": 8,
             "actor_rollout_ref.rollout.n": 2, "trainer.total_epochs": 2, "trainer.total_training_steps": 40,
             "data.filter_overlong_prompts": False, f"{optim}.lr_warmup_steps": 3}),
        case("ppo_epochs_uneven_mini", 200, 2, **{"data.train_batch_size": 48, "actor_rollout_ref.actor.ppo_mini_batch_size": 32,
             "actor_rollout_ref.rollout.n": 2, "actor_rollout_ref.actor.ppo_epochs": 2, "trainer.total_epochs": 1,
             "data.filter_overlong_prompts": False}),
    ]
    if minor >= (0, 4):
        cases.append(case("gen_batch", 250, 2, **{"data.train_batch_size": 16, "data.gen_batch_size": 48,
                          "actor_rollout_ref.actor.ppo_mini_batch_size": 16, "actor_rollout_ref.rollout.n": 4,
                          "trainer.total_epochs": 2, "data.filter_overlong_prompts": False}))
    if minor < (0, 7):  # fsdp_sft_trainer, removed in 0.7
        for name, rows, dp, settings in FSDP_SFT_CASES:
            overrides = [f"++{k}={v}" for k, v in settings.items()] + ["data.train_files=train", "data.val_files=val"]
            cases.append({"name": name, "prompts": rows, "n_gpus_per_node": dp, "overrides": overrides, "settings": settings,
                          "trainer": "fsdp_sft"})
    if minor >= (0, 9):  # the v1 trainer (trainer.use_v1, main_ppo's default from 0.9)
        for name, prompts, dp, settings in V1_CASES:
            cases.append({**case(name, prompts, dp, **settings), "trainer": "v1"})
    if minor >= (0, 6):
        cases.append(case("train_max_samples", 250, 4, **{"data.train_batch_size": 32, "data.train_max_samples": 150,
                          "actor_rollout_ref.actor.ppo_mini_batch_size": 16, "actor_rollout_ref.rollout.n": 8,
                          "trainer.total_epochs": 3, "data.filter_overlong_prompts": False}))
    return cases


def record_verl(args) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    data_dir = OUT / "data"
    data_dir.mkdir(exist_ok=True)
    for version in args.versions or VERL_RELEASES:
        root = pathlib.Path(args.root) / "v" / version
        cases = verl_cases(version)
        work = pathlib.Path(args.work) / version
        work.mkdir(parents=True, exist_ok=True)
        case_file = work / "cases.json"
        case_file.write_text(json.dumps(cases))
        extra = [] if version.startswith("0.9") else [str(pathlib.Path(args.root) / "tf4")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), *extra]), "PYTHONWARNINGS": "ignore"}
        proc = subprocess.run([str(pathlib.Path(args.root) / "bin" / "python"), str(ROOT / "tools" / "rl_verl_worker.py"),
                               str(case_file), str(root), str(TOKENIZER), str(work)], env=env, capture_output=True, text=True)
        records = [json.loads(line[len("RLCASE "):]) for line in proc.stdout.splitlines() if line.startswith("RLCASE ")]
        if not records:
            sys.exit(f"verl {version}: no case ran\n{proc.stderr[-3000:]}")
        by_name = {c["name"]: c for c in cases}
        for record in records:
            spec = by_name[record["name"]]
            record["inputs"] = {"prompts": spec["prompts"], "n_gpus_per_node": spec["n_gpus_per_node"], **spec["settings"]}
        fixture = {"framework": "verl", "version": version, "tokenizer": "tests/assets/tiny_tokenizer.json",
                   "recorded_with": "tools/record_rl.py verl (RayPPOTrainer._create_dataloader, v1 PPOTrainer._init_dataloader from 0.9, the actor's mini-batch "
                                    "iteration, FSDPEngine._build_lr_scheduler where the release has it)",
                   "cases": records}
        (OUT / f"verl-{version}.json").write_text(json.dumps(fixture, indent=1) + "\n")
        print(f"verl {version}: " + ", ".join(f"{r['name']}={r.get('total_training_steps', r.get('error'))}" for r in records))
    # the filtering case's prompts, so the tests count the same rows with the same tokenizer and template
    src = pathlib.Path(args.work) / VERL_RELEASES[-1] / "filter_overlong_train.parquet"
    if src.exists():
        (data_dir / "filter_overlong_train.parquet").write_bytes(src.read_bytes())
    sys.path.insert(0, str(ROOT / "tools"))
    from rl_verl_worker import CHAT_TEMPLATE

    (data_dir / "tokenizer_config.json").write_text(json.dumps({"chat_template": CHAT_TEMPLATE}, indent=1) + "\n")


TRL_CASES = [
    {"name": "ga1_mini2_epochs2", "rows": 24, "args": {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 1,
                                                         "num_mini_batches": 2, "num_ppo_epochs": 2, "num_train_epochs": 1}},
    {"name": "ga4_mini2_one_pass", "rows": 40, "args": {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 4,
                                                          "num_mini_batches": 2, "num_ppo_epochs": 3, "num_train_epochs": 1}},
    {"name": "ga3_mini1_two_passes", "rows": 14, "args": {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 3,
                                                            "num_mini_batches": 1, "num_ppo_epochs": 1, "num_train_epochs": 2}},
    {"name": "total_episodes", "rows": 20, "args": {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 2,
                                                      "num_mini_batches": 4, "num_ppo_epochs": 1, "total_episodes": 30}},
    {"name": "kto_unpair", "pairs": 7},
]
"""TRL inputs only (rows of the train set, PPOConfig fields); every expected number comes from TRL's run."""


def run_worker(command: list[str], env: dict, cases: list[dict], what: str) -> list[dict]:
    """Run a worker script; its `RLCASE {json}` lines, each with the inputs of its case."""
    proc = subprocess.run(command, env={**os.environ, "PYTHONWARNINGS": "ignore", "TOKENIZERS_PARALLELISM": "false", **env},
                          capture_output=True, text=True)
    records = [json.loads(line[len("RLCASE "):]) for line in proc.stdout.splitlines() if line.startswith("RLCASE ")]
    if not records:
        sys.exit(f"{what}: no case ran\n{proc.stderr[-3000:]}")
    by_name = {c["name"]: c for c in cases}
    for record in records:
        record["inputs"] = by_name[record["name"]]
    return records


def record_trl(args) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    case_file = work / "trl_cases.json"
    case_file.write_text(json.dumps(TRL_CASES))
    records = run_worker([args.python, str(ROOT / "tools" / "rl_trl_worker.py"), str(case_file), str(TOKENIZER)],
                         {"PYTHONPATH": args.trl_root}, TRL_CASES, "trl")
    version = records[0]["trl"]
    fixture = {"framework": "trl", "version": version, "recorded_with": "tools/record_rl.py trl (PPOTrainer.train() on tiny "
               "random Llama models, CPU; maybe_unpair_preference_dataset)", "cases": records}
    (OUT / f"trl-{version}.json").write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"trl {version}: " + ", ".join(f"{r['name']}={r.get('optimizer_steps', r.get('rows', r.get('error')))}" for r in records))


OPENRLHF_CASES = [
    {"name": "partial_last_batch", "prompts": 250, "train_batch_size": 64, "rollout_batch_size": 96, "n": 4, "num_episodes": 2,
     "max_epochs": 1},
    {"name": "max_samples", "prompts": 150, "max_samples": 70, "train_batch_size": 16, "rollout_batch_size": 20, "n": 2,
     "num_episodes": 1, "max_epochs": 2},
]
"""OpenRLHF inputs only; max_steps and the global steps come from its code."""


def record_openrlhf(args) -> None:
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    case_file = work / "openrlhf_cases.json"
    case_file.write_text(json.dumps(OPENRLHF_CASES))
    records = run_worker([args.python, str(ROOT / "tools" / "rl_openrlhf_worker.py"), str(case_file), args.purelib, str(work / "orl")],
                         {}, OPENRLHF_CASES, "openrlhf")
    fixture = {"framework": "openrlhf", "version": args.version, "recorded_with": "tools/record_rl.py openrlhf (prepare_datasets "
               "from the release's source with blending_datasets/PromptDataset; SamplesGenerator.generate_samples with vLLM "
               "replaced by one stand-in sample per response)", "cases": records}
    (OUT / f"openrlhf-{args.version}.json").write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"openrlhf {args.version}: " + ", ".join(f"{r['name']}={r.get('global_steps', r.get('error'))}" for r in records))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    verl = sub.add_parser("verl")
    verl.add_argument("--root", default="/tmp/rl-verl")
    verl.add_argument("--work", default="/tmp/rl-work/record")
    verl.add_argument("--versions", nargs="*")
    trl = sub.add_parser("trl")
    trl.add_argument("--trl-root", default="/tmp/rl-dl/src/trl-1.0.0")
    trl.add_argument("--python", default="/tmp/trainsteps-live/bin/python")
    trl.add_argument("--work", default="/tmp/rl-work/record")
    orl = sub.add_parser("openrlhf")
    orl.add_argument("--version", default="0.11.2")
    orl.add_argument("--purelib", default="/tmp/rl-dl/src/openrlhf/openrlhf-0.11.2.data/purelib")
    orl.add_argument("--python", default="/tmp/rl-verl/bin/python")
    orl.add_argument("--work", default="/tmp/rl-work/record")
    args = parser.parse_args()
    {"verl": record_verl, "trl": record_trl, "openrlhf": record_openrlhf}[args.what](args)


if __name__ == "__main__":
    main()

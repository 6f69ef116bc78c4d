"""Write the small made-up datasets under examples/ (deterministic; rerun to regenerate).

    python tools/make_example_data.py          # examples/
    python tools/make_example_data.py --e2e    # the LLaMA-Factory cases of tests/fixtures/wrappers/lf_e2e/
"""

from __future__ import annotations

import json
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parents[1] / "examples"
WORDS = "the model learns to count steps epochs batches tokens rows packing cutoff sample data".split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def alpaca(n: int, seed: int, broken: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = [{"instruction": sentence(rng, rng.randint(5, 40)), "input": "", "output": sentence(rng, rng.randint(10, 200))} for _ in range(n)]
    for i in rng.sample(range(n), broken):
        rows[i]["output"] = None  # LLaMA-Factory drops rows whose response is not a string
    return rows


def sharegpt(n: int, seed: int, broken: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        turns = []
        for _ in range(rng.randint(1, 2)):
            turns += [{"from": "human", "value": sentence(rng, rng.randint(5, 40))}, {"from": "gpt", "value": sentence(rng, rng.randint(10, 60))}]
        rows.append({"conversations": turns})
    for i in rng.sample(range(n), broken):
        rows[i]["conversations"] = rows[i]["conversations"][:-1]  # odd message count: "Invalid message count"
    return rows


def main() -> None:
    data = ROOT / "llamafactory" / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "demo_alpaca.json").write_text(json.dumps(alpaca(1047, 1), ensure_ascii=False, separators=(",", ":")))
    with (data / "demo_chat.jsonl").open("w") as f:
        for row in sharegpt(2500, 2, broken=7):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (data / "demo_corpus.jsonl").open("w") as f:
        rng = random.Random(3)
        for _ in range(2500):
            f.write(json.dumps({"text": sentence(rng, rng.randint(30, 150))}) + "\n")
    info = {
        "demo_alpaca": {"file_name": "demo_alpaca.json"},
        "demo_chat": {"file_name": "demo_chat.jsonl", "formatting": "sharegpt", "columns": {"messages": "conversations"}},
        "demo_corpus": {"file_name": "demo_corpus.jsonl", "columns": {"prompt": "text"}},
        "demo_hub": {"hf_hub_url": "someone/some-dataset"},
    }
    (data / "dataset_info.json").write_text(json.dumps(info, indent=2) + "\n")


if __name__ == "__main__" and "--e2e" not in __import__("sys").argv:
    main()


E2E_CASES = {
    "sft_plain": {
        "data": {"alpaca_a": ("alpaca", 300, 4)},
        "config": {"stage": "sft", "dataset": "alpaca_a", "max_samples": 250, "val_size": 0.1, "cutoff_len": 128,
                   "per_device_train_batch_size": 4, "gradient_accumulation_steps": 3, "num_train_epochs": 2.0},
    },
    "sft_mix_sharegpt": {
        "data": {"alpaca_b": ("alpaca", 120, 0), "chat_b": ("sharegpt", 200, 3)},
        "config": {"stage": "sft", "dataset": "alpaca_b,chat_b", "val_size": 0.2, "cutoff_len": 128,
                   "per_device_train_batch_size": 2, "gradient_accumulation_steps": 4, "num_train_epochs": 1.0},
    },
    "sft_interleave": {
        "data": {"alpaca_c": ("alpaca", 150, 0), "chat_c": ("sharegpt", 90, 0)},
        "config": {"stage": "sft", "dataset": "alpaca_c,chat_c", "mix_strategy": "interleave_under", "interleave_probs": "0.3,0.7",
                   "cutoff_len": 128, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 2, "num_train_epochs": 1.0},
    },
    "sft_packing": {
        "data": {"chat_d": ("sharegpt", 400, 0)},
        "config": {"stage": "sft", "dataset": "chat_d", "packing": True, "cutoff_len": 96,
                   "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2, "num_train_epochs": 1.0},
        "record": {"lengths_run": {"packing": False, "cutoff_len": 95}},
    },
    "pt_blocks": {
        "data": {"corpus_e": ("text", 600, 0)},
        "config": {"stage": "pt", "dataset": "corpus_e", "cutoff_len": 128, "preprocessing_batch_size": 250,
                   "per_device_train_batch_size": 4, "gradient_accumulation_steps": 2, "num_train_epochs": 1.0},
        "record": {"lengths_run": {"packing": False, "cutoff_len": 100000}},
    },
    "sft_two_ranks": {
        "data": {"alpaca_f": ("alpaca", 301, 3)},
        "config": {"stage": "sft", "dataset": "alpaca_f", "val_size": 0.1, "cutoff_len": 128, "ddp_backend": "gloo",
                   "per_device_train_batch_size": 4, "gradient_accumulation_steps": 3, "num_train_epochs": 2.0},
        "record": {"nproc_per_node": 2},
    },
}


def write_e2e_cases() -> None:
    import yaml

    base = ROOT.parent / "tests" / "fixtures" / "wrappers" / "lf_e2e"
    for seed, (name, case) in enumerate(E2E_CASES.items(), 10):  # append new cases at the end: the seeds of the others stay
        folder = base / name
        (folder / "data").mkdir(parents=True, exist_ok=True)
        info = {}
        for dataset, (kind, n, broken) in case["data"].items():
            if kind == "alpaca":
                rows = alpaca(n, seed, broken)
                info[dataset] = {"file_name": f"{dataset}.json"}
            elif kind == "sharegpt":
                rows = sharegpt(n, seed, broken)
                info[dataset] = {"file_name": f"{dataset}.json", "formatting": "sharegpt"}
            else:
                rng = random.Random(seed)
                rows = [{"text": sentence(rng, rng.randint(5, 120))} for _ in range(n)]
                info[dataset] = {"file_name": f"{dataset}.json", "columns": {"prompt": "text"}}
            (folder / "data" / f"{dataset}.json").write_text(json.dumps(rows, separators=(",", ":")))
        (folder / "data" / "dataset_info.json").write_text(json.dumps(info, indent=2) + "\n")
        config = {"model_name_or_path": "tiny-llama", "do_train": True, "finetuning_type": "full", "template": "default",
                  "dataset_dir": "data", "output_dir": "out", "logging_steps": 1, "learning_rate": 1.0e-4, **case["config"]}
        (folder / "config.yaml").write_text("# LLaMA-Factory case recorded by tools/record_wrappers.py llamafactory\n" + yaml.safe_dump(config, sort_keys=False))
        if "record" in case:
            (folder / "record.json").write_text(json.dumps(case["record"]) + "\n")


if __name__ == "__main__" and "--e2e" in __import__("sys").argv:
    write_e2e_cases()

"""Write the small made-up datasets under examples/ (deterministic; rerun to regenerate).

    python tools/make_example_data.py
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


if __name__ == "__main__":
    main()

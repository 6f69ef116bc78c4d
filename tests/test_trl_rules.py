"""TRL's SFT packing and GRPO sampling, against TRL's own code (tools/record_wrappers.py trl)."""

import json

import pytest

from trainsteps.frameworks import trl

from .conftest import FIXTURES

RECORDINGS = {p.stem.removeprefix("trl_functions_"): json.loads(p.read_text()) for p in sorted((FIXTURES / "wrappers").glob("trl_functions_*.json"))}
PACK_CASES = [(version, case) for version, rec in RECORDINGS.items() for case in rec["pack"]]
GRPO_CASES = [case for rec in RECORDINGS.values() for case in rec["grpo"]]


def effective(version: str, strategy: str) -> str:
    """What the strategy name meant in that release: "bfd" split long rows in 0.27-0.28."""
    return trl.PACKING.at(version) if strategy == "bfd" else strategy


@pytest.mark.parametrize("version, case", PACK_CASES, ids=lambda x: x if isinstance(x, str) else f"{x['name']}-{x['strategy']}-p{x['num_proc']}")
def test_packed_rows_match_trl_pack_dataset_of_each_release(version, case):
    assert trl.packed_rows(case["lengths"], case["max_length"], effective(version, case["strategy"]), case["num_proc"]) == case["rows"]


def test_the_release_matters_for_rows_longer_than_max_length():
    mixed = {v: c["rows"] for v, c in PACK_CASES if c["name"] == "mixed" and c["strategy"] == "bfd"}
    assert mixed["0.27.0"] > mixed["0.24.0"]  # 0.27 splits the 3000-token row, 0.24 truncates it


@pytest.mark.parametrize("case", GRPO_CASES, ids=lambda c: f"N{c['prompts']}-g{c['num_generations']}-bs{c['per_device_train_batch_size']}")
def test_grpo_micro_batches_per_epoch_match_the_repeat_sampler(case):
    generation_batch, loader_len = trl.grpo_steps_per_epoch(case["prompts"], case["num_generations"], case["per_device_train_batch_size"],
                                                            case["world_size"], case["steps_per_generation"], case["num_iterations"])
    assert generation_batch == case["generation_batch_size"]
    assert loader_len == case["loader_len"]


def test_steps_per_generation_defaults_to_the_accumulation_steps():
    for case in GRPO_CASES:
        assert case["steps_per_generation"] == case["gradient_accumulation_steps"]


def test_the_default_packing_changed_across_releases():
    assert trl.PACKING.at("0.14.0") == "constant_length"
    assert trl.PACKING.at("0.18.2") == "wrapped"
    assert trl.PACKING.at("0.27.1") == "bfd_split"
    assert trl.PACKING.at(trl.NEWEST) == "bfd"


# --- DPO/KTO drop rows whose prompt alone fills max_length (TRL >= 1.9.0), recorded by tools/record_trl_prompt_drop.py


def _prompt_drop_recordings():
    import json
    from pathlib import Path

    folder = Path(__file__).parent / "fixtures" / "rl"
    return [json.loads(path.read_text()) for path in sorted(folder.glob("prompt-drop-trl-*.json"))]


@pytest.mark.parametrize("recording", _prompt_drop_recordings(), ids=lambda r: r["trl"])
def test_dpo_and_kto_keep_the_rows_trl_kept_once_prompts_that_fill_max_length_are_dropped(run_cli, tmp_path, recording):
    import json
    from pathlib import Path

    tokenizer = str(Path(__file__).parent / "assets" / "tiny_tokenizer.json")
    with open(tmp_path / "pairs.jsonl", "w") as f:
        for prompt in recording["prompts"]:
            f.write(json.dumps({"prompt": prompt, "chosen": " yes it does", "rejected": " no it does not"}) + "\n")
    for i, case in enumerate(recording["cases"]):
        settings = case["settings"]
        lines = ["dataset_name: pairs.jsonl", "per_device_train_batch_size: 2",
                 f"max_length: {'null' if settings['max_length'] is None else settings['max_length']}",
                 "use_weighting: true" if case["trainer"] == "dpo" else "desirable_weight: 1.0"]
        if "truncation_mode" in settings:
            lines.append(f"truncation_mode: {settings['truncation_mode']}")
        config = tmp_path / f"case{i}.yaml"
        config.write_text("\n".join(lines) + "\n")
        code, out, err = run_cli("plan", str(config), "--tokenizer", tokenizer, "--framework-version", recording["trl"],
                                 "--format", "json")
        assert code == 0, err
        assert json.loads(out)["inputs"]["num_examples"] == case["rows_kept"], (recording["trl"], case)


def test_a_kto_yaml_launched_by_trl_kto_is_unpaired_without_weight_keys(run_cli, tmp_path, monkeypatch):
    rows = [{"prompt": f"question {i}", "chosen": " yes", "rejected": " no"} for i in range(10)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "kto.yaml").write_text("dataset_name: pairs.jsonl\nper_device_train_batch_size: 2\nbeta: 0.1\n")
    monkeypatch.chdir(tmp_path)
    for launch, expected in (("trl kto --config kto.yaml", 20), ("accelerate launch -m trl kto --config kto.yaml", 20),
                             ("trl dpo --config kto.yaml", 10)):
        code, out, err = run_cli("plan", "--launch", launch, "--format", "json")
        assert code == 0, err
        assert json.loads(out)["inputs"]["num_examples"] == expected, launch


def test_a_dpo_plan_without_a_tokenizer_says_newer_trl_drops_rows_it_cannot_count(run_cli, tmp_path, monkeypatch):
    rows = [{"prompt": "question " * (3 * i + 1), "chosen": " yes", "rejected": " no"} for i in range(12)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "dpo.yaml").write_text("dataset_name: pairs.jsonl\nmax_length: 20\nuse_weighting: true\n")
    monkeypatch.chdir(tmp_path)
    tokenizer = str(FIXTURES.parent / "assets" / "tiny_tokenizer.json")

    def codes(*args):
        code, out, err = run_cli("plan", "dpo.yaml", *args, "--format", "json")
        assert code == 0, err
        return {note["code"] for note in json.loads(out)["config"]["notes"]}

    assert "TRL_PROMPT_DROP_UNCOUNTED" in codes("--framework-version", "1.9.0")
    assert "TRL_PROMPT_DROP_UNCOUNTED" not in codes("--framework-version", "1.8.0")
    counted = codes("--framework-version", "1.9.0", "--tokenizer", tokenizer)
    assert "TRL_PROMPT_DROP_UNCOUNTED" not in counted and "TRL_PROMPT_FILLS_MAX_LENGTH" in counted

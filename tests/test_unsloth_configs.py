"""Unsloth applied to the configs and scripts that use it: its rewritten TRL defaults and its GRPO batch override
(rules read from unsloth/models/rl.py of 2026.10.9, frameworks/unsloth.py), and where they do not apply."""

import json

from trainsteps.configs import import_run
from trainsteps.frameworks import unsloth

from .conftest import ROOT

EX = ROOT / "examples"

GRPO = """from unsloth import FastLanguageModel
from trl import GRPOConfig
args = GRPOConfig(per_device_train_batch_size={bs}, gradient_accumulation_steps=1, num_generations=6, max_steps=250,
                  output_dir=f"out/{{1}}")
"""


def _plan(run_cli, *args):
    code, out, err = run_cli("plan", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _codes(data):
    return [note["code"] for note in data["config"]["notes"]]


def test_grpo_script_importing_unsloth_gets_its_batch_override_and_defaults(run_cli):
    data = _plan(run_cli, EX / "trl" / "grpo_unsloth.py", "--num-examples", 7473)
    per_device = int(data["banner"]["Instantaneous batch size per device"])
    assert per_device == unsloth.grpo_batch(1, 1, 1, 6) == 6  # 1 x 1 x 1 is not a multiple of 6
    codes = _codes(data)
    assert "UNSLOTH_GRPO_BATCH" in codes and "UNSLOTH_RELEASE_ASSUMED" in codes
    changed = [n["message"] for n in data["config"]["notes"] if n["code"] == "UNSLOTH_DEFAULT"]
    assert any("logging_steps = 1" in m for m in changed) and any("warmup_steps = 0.1" in m for m in changed)
    assert not any("gradient_accumulation_steps" in m or "per_device_train_batch_size" in m for m in changed)  # set by the script


def test_a_batch_that_divides_num_generations_is_kept(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(GRPO.format(bs=3))
    run = import_run([script], flags={"num_examples": 100, "world_size": 2})
    assert run.spec.per_device_train_batch_size == 3 == unsloth.grpo_batch(3, 1, 2, 6)  # 3 x 2 ranks is a multiple of 6
    script.write_text(GRPO.format(bs=4))
    run = import_run([script], flags={"num_examples": 100})
    assert run.spec.per_device_train_batch_size == 6
    assert run.settings.origin("per_device_train_batch_size") == "Unsloth 2026.10.9 GRPOConfig"


def test_sft_defaults_apply_only_to_what_the_script_did_not_set(tmp_path):
    script = tmp_path / "sft.py"
    script.write_text("import unsloth\nfrom trl import SFTConfig\nSFTConfig(per_device_train_batch_size=2, num_train_epochs=1)\n")
    run = import_run([script], flags={"num_examples": 1000})
    assert run.spec.per_device_train_batch_size == 2 and run.settings.origin("per_device_train_batch_size") == "sft.py:3"
    defaults = unsloth.DEFAULTS.at(unsloth.NEWEST)
    assert run.spec.gradient_accumulation_steps == defaults["gradient_accumulation_steps"]
    assert run.settings.origin("gradient_accumulation_steps") == f"Unsloth {unsloth.NEWEST} default"
    assert run.spec.warmup_steps == defaults["warmup"]  # transformers 5: warmup_steps below 1 is a fraction
    run = import_run([script], flags={"num_examples": 1000, "transformers": "4.57.1"})
    assert run.spec.warmup_ratio == defaults["warmup"] and not run.spec.warmup_steps


def test_config_imported_from_trl_before_unsloth_keeps_trls_defaults(tmp_path):
    script = tmp_path / "sft.py"
    script.write_text("from trl import SFTConfig\nfrom unsloth import FastLanguageModel\nSFTConfig(num_train_epochs=1)\n")
    run = import_run([script], flags={"num_examples": 1000})
    assert run.spec.per_device_train_batch_size == unsloth.PLAIN["per_device_train_batch_size"]
    assert [code for code, _, _ in run.notes][0] == "UNSLOTH_IMPORT_ORDER"
    script.write_text("import trl\nfrom unsloth import FastLanguageModel\ntrl.SFTConfig(num_train_epochs=1)\n")  # looked up at call time
    assert import_run([script], flags={"num_examples": 1000}).spec.per_device_train_batch_size == 4


def test_transformers_arguments_are_not_rewritten(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("from unsloth import FastLanguageModel\nfrom transformers import TrainingArguments\n"
                      "TrainingArguments(num_train_epochs=2, output_dir='o')\n")
    run = import_run([script], flags={"num_examples": 100})
    assert run.framework == "hf" and run.spec.per_device_train_batch_size == 8
    assert "UNSLOTH_NOT_TRL" in [code for code, _, _ in run.notes]


def test_unsloth_option_applies_to_a_trl_yaml_and_typed_options_win(run_cli):
    plain = _plan(run_cli, EX / "trl" / "sft_packing.yaml", "--num-examples", 1000)
    data = _plan(run_cli, EX / "trl" / "sft_packing.yaml", "--num-examples", 1000, "--unsloth", unsloth.NEWEST)
    assert "UNSLOTH_DEFAULT" not in _codes(plain)
    assert "UNSLOTH_DEFAULT" in _codes(data) and data["run"]["warmup_steps"] != plain["run"]["warmup_steps"]
    typed = _plan(run_cli, EX / "trl" / "sft_packing.yaml", "--num-examples", 1000, "--unsloth", unsloth.NEWEST, "--warmup-steps", 3)
    assert typed["run"]["warmup_steps"] == 3


def test_llamafactory_use_unsloth_keeps_transformers_defaults_and_says_why(run_cli):
    data = _plan(run_cli, EX / "llamafactory" / "sft_lora_unsloth.yaml", "--unsloth", unsloth.NEWEST)
    assert "UNSLOTH_LF" in _codes(data) and "UNSLOTH_DEFAULT" not in _codes(data)
    assert data["banner"]["Instantaneous batch size per device"] == "8"
    code, out, _ = run_cli("plan", EX / "llamafactory" / "sft_lora_unsloth.yaml", "--lang", "zh")
    assert code == 0 and "不生效" in out


def test_scripts_are_parsed_never_run(run_cli, tmp_path):
    marker = tmp_path / "ran"
    script = tmp_path / "train.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('x')\nfrom trl import SFTConfig\nSFTConfig(num_train_epochs=1, seed=len('ab'))\n")
    data = _plan(run_cli, script, "--num-examples", 10)
    assert not marker.exists() and "SCRIPT_NOT_READ" in _codes(data)
    script.write_text("def broken(:\n")
    code, _, err = run_cli("plan", script)
    assert code == 2 and "train.py:1" in err and "Traceback" not in err
    script.write_text("print('no config here')\n")
    code, _, err = run_cli("plan", script, "--num-examples", 10)
    assert code == 2 and "no config call" in err


def test_an_unsloth_release_older_than_the_rules_is_refused(run_cli):
    code, _, err = run_cli("plan", EX / "trl" / "grpo.yaml", "--num-examples", 10, "--unsloth", "2024.1")
    assert code == 2 and unsloth.NEWEST in err
    code, _, err = run_cli("plan", "--num-examples", 10, "--unsloth", "2024.1")
    assert code == 2 and "Traceback" not in err

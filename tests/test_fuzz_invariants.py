"""Invariants every planner keeps on generated settings (hypothesis, a bounded budget: five cases per planner, about 20 s):

- the Python API, the command line and the web route give the same numbers;
- the human report says the JSON's step count; the English and Chinese reports open with the same figures;
- steps never fall when rows or epochs grow, where that is the framework's rule.

A refusal is allowed (exit 2, one line), as long as every surface refuses the same settings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trainsteps
from trainsteps.api import plan_config
from trainsteps.errors import TrainstepsError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# planner -> (config files, fixed settings, {setting: (low, high)} varied, the rows setting, the epochs setting, JSON key of the steps)
PLANNERS = {
    "hf": ((), {}, {"num_examples": (1, 10**6), "per_device_train_batch_size": (1, 64), "gradient_accumulation_steps": (1, 16),
                    "num_train_epochs": (1, 50)}, "num_examples", "num_train_epochs", "optimizer_steps"),
    "neox": ((), {"framework": "neox", "seq_length": 128}, {"train_tokens": (10**5, 10**9), "train_batch_size": (1, 64),
                                                             "train_epochs": (1, 5)}, "train_tokens", "train_epochs", "optimizer_steps"),
    "megatron": ((), {"framework": "megatron", "seq_length": 128, "micro_batch_size": 1},
                 {"train_tokens": (10**5, 10**9), "global_batch_size": (1, 64), "train_iters": (1, 10**5)}, None, None, "optimizer_steps"),
    "deepspeed": ((), {"framework": "deepspeed"}, {"micro_batch_size": (1, 8), "gradient_accumulation_steps": (1, 8), "world_size": (1, 8)},
                  None, None, None),
    "lightning": ((), {"framework": "lightning"}, {"num_examples": (1, 10**6), "per_device_train_batch_size": (1, 64),
                                                   "max_epochs": (1, 50)}, "num_examples", "max_epochs", "optimizer_steps"),
    "verl": ((), {"framework": "verl"}, {"num_examples": (1, 10**6)}, "num_examples", None, "training_steps"),
    "openrlhf": ((), {"framework": "openrlhf"}, {"num_examples": (1, 10**6)}, "num_examples", None, "training_steps"),
    "easyr1": ((), {"framework": "easyr1"}, {"num_examples": (1, 10**6)}, "num_examples", None, "training_steps"),
    "trl-ppo": ((), {"framework": "trl-ppo"}, {"num_examples": (1, 10**6), "per_device_train_batch_size": (1, 16)},
                "num_examples", None, "training_steps"),
    "automodel": ((EXAMPLES / "automodel" / "llama3_2_1b_squad.yaml",), {"framework": "automodel"}, {"num_examples": (64, 10**6)},
                  "num_examples", None, "optimizer_steps"),
    "llamafactory-v1": ((EXAMPLES / "llamafactory_v1" / "sft.yaml",), {"framework": "llamafactory-v1"},
                        {"num_examples": (32, 10**6), "max_steps": (1, 10**5)}, None, None, "optimizer_steps"),
    "config (TrainingArguments)": ((EXAMPLES / "hf" / "training_args.yaml",), {"transformers": "5.14.0"},
                                   {"num_examples": (1, 10**6), "num_train_epochs": (1, 20)}, "num_examples", "num_train_epochs",
                                   "optimizer_steps"),
    "torchtitan (.toml)": ((EXAMPLES / "torchtitan" / "llama3_8b.toml",), {}, {"num_examples": (1, 10**6), "train_tokens": (10**6, 10**10)},
                           None, None, "optimizer_steps"),
}
# the config readers: each example file, its rows varied (the files' own data is replaced by --num-examples)
READERS = {"llamafactory/sft_lora.yaml": "optimizer_steps", "llamafactory/pt_packing.yaml": "optimizer_steps",
           "axolotl/lora_chat.yml": "optimizer_steps", "trl/grpo.yaml": "optimizer_steps", "trl/kto.yaml": "optimizer_steps",
           "trl/sft_packing.yaml": "optimizer_steps", "trl/ppo.yaml": "training_steps", "verl/dapo.yaml": "training_steps",
           "easyr1/config.yaml": "training_steps", "hf/trainer_state.json": "optimizer_steps", "hf/ds_zero2.json": "optimizer_steps"}
PLANNERS.update({f"config: {name}": ((EXAMPLES / name,), {}, {"num_examples": (1, 10**6)}, "num_examples", None, key)
                 for name, key in READERS.items()})
LAUNCHES = {"swift/sft.sh": "optimizer_steps", "openrlhf/reinforce_ray.sh": "training_steps", "verl/gsm8k_grpo.sh": "training_steps"}
PLANNERS.update({f"launch: {name}": ((), {"launch": "".join((EXAMPLES / name).read_text().splitlines(keepends=True)[1:])},
                                     {"num_examples": (1, 10**6)}, "num_examples", None, key) for name, key in LAUNCHES.items()})
BUDGET = settings(max_examples=5, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _argv(paths, values: dict) -> list[str]:
    return [*map(str, paths), *[x for name, value in values.items() for x in (f"--{name.replace('_', '-')}", str(value))]]


def _cli(run_cli, paths, values: dict, *extra: str):
    return run_cli("plan", *_argv(paths, values), *extra)


def _api(paths, values: dict):
    try:
        return plan_config(*paths, **values)
    except TrainstepsError:
        return None


def _steps(data: dict, key: str | None):
    return data["run"][key] if key else data


def _settings(planner: str):
    _, fixed, ranges, *_ = PLANNERS[planner]
    return st.fixed_dictionaries({name: st.integers(low, high) for name, (low, high) in ranges.items()}).map(lambda v: {**fixed, **v})


def _check_surfaces_agree(run_cli, planner: str, values: dict) -> bool:
    """True when the settings were planned, False when every surface refused them."""
    paths, _, _, _, _, key = PLANNERS[planner]
    code, out, err = _cli(run_cli, paths, values, "--format", "json")
    data = _api(paths, values)
    assert code in (0, 2) and "internal error" not in err, err
    assert (code == 0) == (data is not None), (code, err)  # the API refuses exactly what the CLI refuses
    if code == 2:
        assert len(err.strip().splitlines()) == 1
        return False
    cli_data = json.loads(out)
    assert _steps(cli_data, key) == _steps(data, key) and cli_data.get("run") == data.get("run")
    if not paths and key and "launch" not in values:  # the web page plans from settings (it takes no server paths)
        from trainsteps.web.routes import answer_query

        status, body = answer_query("/api/plan", urlencode(values))
        assert status == 200 and body["run"] == data["run"], body.get("error")
    code, human, _ = _cli(run_cli, paths, values)
    _, chinese, _ = _cli(run_cli, paths, values, "--lang", "zh")
    if key:
        assert f"{_steps(data, key):,}" in human  # the report says the JSON's count
    assert FIGURE.findall(human.splitlines()[0]) == FIGURE.findall(chinese.splitlines()[0]), (human, chinese)
    return True


@pytest.mark.parametrize("planner", sorted(PLANNERS))
def test_api_cli_web_json_human_and_both_languages_agree_on_every_planner(run_cli, monkeypatch, planner):
    monkeypatch.chdir(EXAMPLES)  # where the launch lines' relative data paths resolve
    planned = []

    @BUDGET
    @given(_settings(planner))
    def check(values):
        planned.append(_check_surfaces_agree(run_cli, planner, values))

    check()
    assert any(planned), f"{planner}: every generated case was refused, so no invariant was checked"


MONOTONE = sorted(name for name, spec in PLANNERS.items() if spec[3] or spec[4])


@pytest.mark.parametrize("planner", MONOTONE)
def test_steps_never_fall_when_rows_or_epochs_grow(run_cli, monkeypatch, planner):
    monkeypatch.chdir(EXAMPLES)
    paths, _, _, rows, epochs, key = PLANNERS[planner]

    compared = []

    @BUDGET
    @given(_settings(planner), st.sampled_from([name for name in (rows, epochs) if name]), st.integers(1, 1000))
    def check(values, grown, more):
        before = _api(paths, values)
        after = _api(paths, {**values, grown: values[grown] + more})
        if before is None or after is None:
            return  # a refusal (e.g. a batch larger than the rows) is checked by the surfaces test
        compared.append(grown)
        assert _steps(after, key) >= _steps(before, key), (grown, values)

    check()
    assert compared, f"{planner}: no generated pair was planned twice"


def test_the_trainer_api_object_and_its_json_agree(run_cli):
    schedule = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=300,
                               transformers="4.49.0")
    code, out, _ = run_cli("plan", "--num-examples", "1047", "--per-device-train-batch-size", "10", "--gradient-accumulation-steps",
                           "8", "--num-train-epochs", "300", "--transformers", "4.49.0", "--format", "json")
    assert code == 0 and json.loads(out)["run"] == json.loads(json.dumps(schedule.to_dict()["run"]))

"""A bad number in a config file is one line naming the file and line, exit 2; never an internal error.

Every numeric key of each example config is replaced in turn by 0, a negative number and a word.
"""

import shutil

import pytest
import yaml

from .conftest import ROOT

EX = ROOT / "examples"
CONFIGS = {  # example file -> extra arguments it needs to plan
    "llamafactory/sft_lora.yaml": (),
    "trl/grpo.yaml": ("--num-examples", "1000"),
    "axolotl/lora_chat.yml": (),
    "hf/training_args.yaml": ("--num-examples", "1000", "--transformers", "4.56.2"),
}
BAD = (0, -3, "many")


def _numeric_keys(path):
    data = yaml.safe_load(path.read_text())
    return [k for k, v in data.items() if isinstance(v, int | float) and not isinstance(v, bool)]


CASES = [(name, key, bad) for name in CONFIGS for key in _numeric_keys(EX / name) for bad in BAD]


@pytest.mark.parametrize(("name", "key", "bad"), CASES, ids=[f"{n.split('/')[0]}-{k}={b}" for n, k, b in CASES])
def test_a_bad_number_in_a_config_is_reported_not_crashed_on(run_cli, tmp_path, name, key, bad):
    source = EX / name
    shutil.copytree(source.parent, tmp_path / "cfg")
    path = tmp_path / "cfg" / source.name
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
    lines[number] = f"{key}: {bad}"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli("plan", path, *CONFIGS[name], cwd=tmp_path / "cfg")
    assert code in (0, 2), err
    assert "internal error" not in err, err
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err
        if f"{key} " in err or f"{key} =" in err:  # an error about this key says where it was written
            assert f"{source.name}:{number + 1}:" in err, err


@pytest.mark.parametrize("value", ["true", "7", "some/path.jsonl", "{path: a.jsonl}"])
def test_axolotl_datasets_that_are_not_a_list_are_one_line(run_cli, tmp_path, value):
    source = EX / "axolotl/lora_chat.yml"
    data = yaml.safe_load(source.read_text())
    data.pop("datasets")
    path = tmp_path / "cfg.yml"
    path.write_text(yaml.safe_dump(data) + f"datasets: {value}\n")
    code, _, err = run_cli("plan", path, cwd=tmp_path)
    assert code == 2 and "not a list of datasets" in err and "internal" not in err

"""A plan composes its config file once, however many readers look at it (what kind it is, the planner, the import)."""

from pathlib import Path
from unittest import mock

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _composed(run_cli, *args, cwd=None) -> tuple[int, int]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    original = loader.get_single_node
    calls = []

    def counted(self):
        calls.append(1)
        return original(self)

    with mock.patch.object(loader, "get_single_node", counted):
        code, _, err = run_cli("plan", *args, cwd=cwd)
    assert code == 0, err
    return len(calls)


@pytest.mark.parametrize("config", ["llamafactory/sft_lora.yaml", "axolotl/lora_chat.yml", "trl/grpo.yaml", "verl/dapo.yaml",
                                    "hf/training_args.yaml"])
def test_a_config_file_is_composed_once_per_plan(run_cli, tmp_path, config):
    copy = tmp_path / Path(config).name
    copy.write_text((EXAMPLES / config).read_text() + f"# {tmp_path.name}\n")  # bytes no earlier test parsed
    extra = ["--transformers", "5.14.0"] if config.startswith("hf/") else []
    assert _composed(run_cli, copy, "--num-examples", "5000", *extra, cwd=EXAMPLES / Path(config).parent) == 1


def test_a_config_edited_between_plans_is_read_again(run_cli, tmp_path):
    import json

    config = tmp_path / "args.yaml"
    for batch in (2, 4):  # same size, same name: the bytes decide
        config.write_text(f"output_dir: o\nper_device_train_batch_size: {batch}\n")
        code, out, err = run_cli("plan", config, "--num-examples", "100", "--format", "json")
        assert code == 0 and json.loads(out)["banner"]["Instantaneous batch size per device"] == str(batch), err

"""Which framework a config file is read as: the file's own keys decide, never a key two frameworks share."""

import json

from trainsteps.configs import import_run

AXOLOTL_WITHOUT_OUTPUT_DIR = """\
base_model: NousResearch/Meta-Llama-3-8B
load_in_4bit: true
adapter: qlora
datasets:
  - path: tatsu-lab/alpaca
    type: alpaca
sequence_len: 4096
sample_packing: false
micro_batch_size: 2
gradient_accumulation_steps: 4
num_epochs: 4
bf16: auto
"""
"""Axolotl's examples/llama-3/qlora.yml without `output_dir` (Axolotl defaults it to ./model-out)."""


def test_an_axolotl_yaml_with_bf16_auto_and_no_output_dir_is_read_as_axolotl(tmp_path):
    path = tmp_path / "qlora.yml"
    path.write_text(AXOLOTL_WITHOUT_OUTPUT_DIR)
    run = import_run([path], flags={"num_examples": 1000})
    assert run.framework == "axolotl"
    assert (run.spec.per_device_train_batch_size, run.spec.num_train_epochs) == (2, 4)


def test_a_deepspeed_json_with_only_its_bf16_section_is_still_read_as_deepspeed(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"bf16": {"enabled": "auto"}, "gradient_accumulation_steps": 4}))
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"per_device_train_batch_size": 2, "gradient_accumulation_steps": 4, "output_dir": "out"}))
    run = import_run([args, path], flags={"num_examples": 1000})
    assert any(name.endswith("(deepspeed)") for name in run.files)


def test_with_an_efficiency_estimate_the_trainers_epochs_come_from_the_packed_bins_not_the_raw_rows(run_cli, tmp_path):
    """Axolotl sets max_steps from tokens / eff_est, and the Trainer's loader is its multipack sampler: HF's Num Epochs is
    the YAML's num_epochs again (the last one cut a little short), never a fraction of one epoch of raw rows."""
    path = tmp_path / "qlora.yml"
    path.write_text(AXOLOTL_WITHOUT_OUTPUT_DIR.replace("sample_packing: false", "sample_packing: true")
                    + "flash_attention: true\nsample_packing_eff_est: 0.96\ntotal_num_tokens: 9800000\noutput_dir: out\n")
    code, out, err = run_cli("plan", path, "--num-examples", 52002, "--gpus", 2, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["banner"]["Num Epochs"] == "4"
    assert 3 < data["run"]["epochs_completed"] <= 4
    code, out, _ = run_cli("plan", path, "--num-examples", 52002, "--gpus", 2)
    assert f"{data['inputs']['num_examples']:,} packed rows" in out.splitlines()[0]  # the sampler's rows, not the 52,002 raw ones

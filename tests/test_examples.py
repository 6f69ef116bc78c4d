"""Every file under examples/ is planned by `trainsteps plan` and its key numbers are checked."""

import json

import pytest

from .conftest import ROOT

EX = ROOT / "examples"

RUNS = {
    "lf_sft_lora": (["llamafactory/sft_lora.yaml", "--transformers", "4.49.0"], "llamafactory"),
    "lf_packing": (["llamafactory/sft_packing_mix.yaml", "--launch", "FORCE_TORCHRUN=1 NPROC_PER_NODE=4 llamafactory-cli train x.yaml"], "llamafactory"),
    "hf_args": (["hf/training_args.yaml", "hf/trainer_state.json", "--num-examples", "26280", "--gpus", "4", "--transformers", "4.56.2"], "hf"),
    "axolotl_plain": (["axolotl/lora_chat.yml", "axolotl/accelerate_2gpu.yaml"], "axolotl"),
    "axolotl_packed": (["axolotl/packed_pretrain.yml"], "axolotl"),
    "trl_grpo": (["trl/grpo.yaml", "--num-examples", "1000"], "trl"),
    "trl_sft": (["trl/sft_packing.yaml", "--launch", "accelerate launch --num_processes 2 -m trl.cli sft"], "trl"),
    "swift_line": ([], "swift"),
    "lf_pt_stream": (["llamafactory/pt_streaming.yaml", "--launch", "NPROC_PER_NODE=4 llamafactory-cli train x.yaml"], "llamafactory"),
    "lf_pt_packing": (["llamafactory/pt_packing.yaml"], "llamafactory"),
    "verl_gsm8k": (["--num-examples", "7473"], "verl"),
    "verl_dapo": (["--framework", "verl", "verl/dapo.yaml", "--num-examples", "17917"], "verl"),
    "openrlhf_reinforce": (["--num-examples", "30000"], "openrlhf"),
    "easyr1": (["--framework", "easyr1", "easyr1/config.yaml", "--num-examples", "7500"], "easyr1"),
    "trl_ppo": (["--framework", "trl-ppo", "trl/ppo.yaml", "--num-examples", "5000"], "trl-ppo"),
    "trl_kto": (["trl/kto.yaml"], "trl"),
    "trl_grpo_unsloth": (["trl/grpo_unsloth.py", "--num-examples", "7473"], "trl"),
    "lf_sft_unsloth": (["llamafactory/sft_lora_unsloth.yaml"], "llamafactory"),
}
LAUNCH_SCRIPTS = {"verl_gsm8k": "verl/gsm8k_grpo.sh", "openrlhf_reinforce": "openrlhf/reinforce_ray.sh"}


def plan(run_cli, name):
    args, _ = RUNS[name]
    if name == "swift_line":
        args = ["--launch", (EX / "swift" / "sft.sh").read_text().split("\n", 1)[1]]  # as `$(tail -n +2 sft.sh)` passes it
    if name in LAUNCH_SCRIPTS:  # RL launch scripts, passed the same way
        args = ["--launch", (EX / LAUNCH_SCRIPTS[name]).read_text().split("\n", 1)[1], *args]
    code, out, err = run_cli("plan", *args, "--format", "json", cwd=EX)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_example_plans_with_its_framework(run_cli, name):
    assert plan(run_cli, name)["config"]["framework"] == RUNS[name][1]


def test_seed_001_shape_gives_the_banner_of_its_public_log(run_cli):
    # /work/shared/seeds/001: LLaMA-Factory, 1,047 examples, batch 10, accumulation 8, 300 epochs, transformers of March 2025
    data = plan(run_cli, "lf_sft_lora")
    assert data["banner"]["Num examples"] == "1,047"
    assert data["banner"]["Total optimization steps"] == "3,900"


def test_packing_without_a_tokenizer_is_an_estimate_with_a_range(run_cli):
    data = plan(run_cli, "lf_packing")
    low, high = data["config"]["estimate"]["num_examples"]
    n = int(data["banner"]["Num examples"].replace(",", ""))
    assert low <= n <= high and low < high
    ends = data["config"]["estimate"]["at_ends"]
    assert ends["low"]["max_steps"] <= data["run"]["max_steps"] <= ends["high"]["max_steps"]
    assert data["inputs"]["world_size"] == 4


def test_axolotl_hands_its_own_step_count_to_the_trainer(run_cli):
    data = plan(run_cli, "axolotl_plain")
    steps = next(s for s in data["config"]["derivation"] if s["key"] == "axolotl.total_num_steps")
    assert data["banner"]["Total optimization steps"] == f"{steps['value']:,}"
    assert data["inputs"]["world_size"] == 2


def test_axolotl_packing_steps_are_an_estimate(run_cli):
    data = plan(run_cli, "axolotl_packed")
    low, high = data["config"]["max_steps_estimate"]
    assert low <= data["run"]["max_steps"] <= high and low < high


def test_grpo_prints_prompts_but_steps_over_every_generation(run_cli):
    data = plan(run_cli, "trl_grpo")
    assert data["banner"]["Num examples"] == "1,000"
    prompts_per_step = 8 * 4 // 8  # per-device batch x accumulation / num_generations (one process)
    assert data["run"]["max_steps"] == 1000 // prompts_per_step


def test_swift_drops_the_rows_that_do_not_divide_across_ranks(run_cli):
    data = plan(run_cli, "swift_line")
    n = int(data["banner"]["Num examples"].replace(",", ""))
    used = next(s for s in data["config"]["derivation"] if s["key"] == "rows_used")["value"]
    assert used == n - n % data["inputs"]["world_size"]
    assert any(note["code"] == "SWIFT_MAX_EPOCHS_STOP" for note in data["config"]["notes"])


def test_streaming_shows_max_steps_times_the_total_batch_and_no_real_epoch_count(run_cli):
    data = plan(run_cli, "lf_pt_stream")
    total_batch = 8 * 6 * 4
    assert data["banner"]["Num examples"] == f"{1500 * total_batch:,}"
    assert data["banner"]["Num Epochs"] == "9,223,372,036,854,775,807"


def test_pretraining_packs_by_default_and_says_so(run_cli):
    data = plan(run_cli, "lf_pt_packing")
    assert any(note["code"] == "LF_PT_PACKS" for note in data["config"]["notes"])
    assert data["config"]["estimate"] is not None


def test_verl_quickstart_example_equals_verls_recorded_run(run_cli):
    data = plan(run_cli, "verl_gsm8k")
    fixture = json.loads((ROOT / "tests" / "fixtures" / "rl" / "verl-0.9.1.json").read_text())
    recorded = next(c for c in fixture["cases"] if c["name"] == "gsm8k_quickstart")
    assert f"Total training steps: {data['printed']['Total training steps']}" in recorded["printed"]
    assert data["run"]["optimizer_steps"] == recorded["actor_updates_per_step"] * data["run"]["training_steps"]


def test_kto_example_trains_on_both_completions_of_each_pair(run_cli):
    data = plan(run_cli, "trl_kto")
    pairs = len((EX / "trl" / "data" / "pairs.jsonl").read_text().splitlines())
    assert data["banner"]["Num examples"] == f"{2 * pairs:,}"

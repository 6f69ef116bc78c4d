"""litgpt's finetune and pretrain loops against its own code, run at 0.4.13 and 0.5.13 (tools/record_litgpt.py ->
tests/fixtures/pretrain/litgpt.json), and `trainsteps plan` reading its YAML and launch line."""

import json
from pathlib import Path

import pytest

from trainsteps.errors import InputError
from trainsteps.frameworks.litgpt import LitgptSpec, plan_litgpt

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "pretrain" / "litgpt.json").read_text())["releases"]
EXAMPLES = ROOT / "examples" / "litgpt"


def _finetune_cases():
    return [pytest.param(r["version"], c, id=f"{r['version']}-finetune-{i}") for r in RECORDED for i, c in enumerate(r["finetune"])]


def _pretrain_cases():
    return [pytest.param(r["version"], c, id=f"{r['version']}-pretrain-{i}") for r in RECORDED for i, c in enumerate(r["pretrain"])]


def _spec(release, case, script) -> LitgptSpec:
    train = dict(case["train"])
    given = frozenset({*train, "global_batch_size", "micro_batch_size"})
    rows = case["rows"] if script != "pretrain" else case["blocks"]
    return LitgptSpec(script=script, num_examples=rows, devices=case["devices"], num_nodes=case["num_nodes"],
                      global_batch_size=case["global_batch_size"], micro_batch_size=case["micro_batch_size"],
                      max_seq_length=case.get("max_seq_length"), eval_interval=case["eval_interval"], given=given, release=release,
                      **train)


def test_both_releases_were_recorded():
    assert sorted(r["version"] for r in RECORDED) == ["0.4.13", "0.5.13"]


@pytest.mark.parametrize("release, case", _finetune_cases())
def test_finetune_steps_horizon_evaluations_and_saves_match_litgpt(release, case):
    s = plan_litgpt(_spec(release, case, "lora"))
    assert s.run.batches_per_epoch == case["train_dataloader_len"]
    assert s.inputs["gradient_accumulation_steps"] == case["gradient_accumulation_iters"]
    assert (s.run.optimizer_steps, s.inputs["horizon"], s.run.warmup_steps) == (
        case["optimizer_steps"], case["lr_max_steps"], case["warmup_steps"])
    assert s.run.eval_steps == case["eval_steps"]
    assert s.run.save_steps == sorted({*case["save_steps"], case["optimizer_steps"]})  # and the final save (main)
    assert s.banner_lines[0].split(" | loss")[0] == case["step_lines"][-1].split(" | loss")[0]
    assert s.banner_lines[1:] == case["stop_lines"]


@pytest.mark.parametrize("release, case", _pretrain_cases())
def test_pretrain_iterations_steps_warmup_and_saves_match_litgpt(release, case):
    s = plan_litgpt(_spec(release, case, "pretrain"))
    assert s.inputs["iterations"] == case["max_iters"]
    assert s.run.optimizer_steps == case["optimizer_steps"]
    assert s.inputs["warmup_iters"] == case["warmup_iters"]
    assert s.run.batches_per_epoch == case["train_dataloader_len"]
    assert s.run.eval_steps == case["eval_steps"]
    assert s.run.save_steps == sorted({*case["save_steps"], case["optimizer_steps"]})
    assert s.banner_lines[0].split(" | loss")[0] == case["step_lines"][-1].split(" | loss")[0]


@pytest.mark.parametrize("release", ["0.4.13", "0.5.13"])
def test_a_partial_accumulation_window_runs_past_the_lr_horizon_and_is_warned(release):
    case = next(c for r in RECORDED if r["version"] == release for c in r["finetune"] if c["rows"] == 10)
    assert case["optimizer_steps"] > case["lr_max_steps"]  # litgpt's own loop steps past its schedule
    lrs = case["lr_after_each_step"]
    assert lrs[-1] > min(lrs)  # and its own scheduler's learning rate climbs again
    s = plan_litgpt(_spec(release, case, "lora"))
    assert "LITGPT_PAST_LR_HORIZON" in [t.code for t in s.warnings]


def test_before_0_5_2_the_loop_trains_one_micro_batch_of_the_next_epoch():
    old, new = ({c["rows"]: c for c in r["finetune"]} for r in sorted(RECORDED, key=lambda r: r["version"]))
    assert old[103]["step_lines"][-1].startswith("Epoch 4 | iter 79 ")  # 3 epochs of 26, plus one
    assert new[103]["step_lines"][-1].startswith("Epoch 3 | iter 78 ")


def test_before_0_5_8_nodes_do_not_divide_the_batch_and_it_is_warned():
    old, new = ({c["num_nodes"]: c for c in r["finetune"]} for r in sorted(RECORDED, key=lambda r: r["version"]))
    assert (old[2]["gradient_accumulation_iters"], new[2]["gradient_accumulation_iters"]) == (4, 2)
    s = plan_litgpt(_spec("0.4.13", old[2], "lora"))
    assert [t.code for t in s.warnings if t.code == "LITGPT_NODES_IGNORED"] == ["LITGPT_NODES_IGNORED"]


@pytest.mark.parametrize("release", ["0.4.13", "0.5.13"])
def test_pretrain_max_steps_is_refused_before_0_5_13_and_ignored_with_a_warning_after(release):
    check = next(c for r in RECORDED if r["version"] == release for c in r["pretrain_checks"] if "max_steps" in c["train"])
    spec = LitgptSpec(script="pretrain", max_tokens=10**6, max_seq_length=128, max_steps=10, release=release)
    if check["refused"]:
        assert check["refused"] == ["max_steps"]
        with pytest.raises(InputError):
            plan_litgpt(spec)
    else:
        assert check["warned"]
        assert [t.code for t in plan_litgpt(spec).warnings] == ["LITGPT_PRETRAIN_MAX_STEPS_IGNORED"]


@pytest.mark.parametrize("release", ["0.4.13", "0.5.13"])
def test_pretrain_refuses_epochs_as_litgpt_does(release):
    check = next(c for r in RECORDED if r["version"] == release for c in r["pretrain_checks"] if "epochs" in c["train"])
    assert check["refused"] == ["epochs"]
    with pytest.raises(InputError):
        plan_litgpt(LitgptSpec(script="pretrain", max_tokens=10**6, max_seq_length=128, epochs=2, release=release))


def test_plan_reads_the_example_lora_yaml(run_cli):
    code, out, err = run_cli("plan", "--framework", "litgpt", str(EXAMPLES / "lora.yaml"), "--num-examples", "2000", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["framework"], data["inputs"]["script"], data["run"]["optimizer_steps"]) == ("litgpt", "lora", 500)
    assert data["inputs"]["from"]["epochs"].startswith("lora.yaml")


def test_a_launch_line_names_the_script_and_its_flags_win_over_the_yaml(run_cli):
    line = f"litgpt finetune_full --config {EXAMPLES / 'lora.yaml'} --train.epochs 3 --devices 2"
    code, out, err = run_cli("plan", "--launch", line, "--num-examples", "2000", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["inputs"]["script"], data["inputs"]["epochs"], data["run"]["optimizer_steps"]) == ("full", 3, 750)


def test_the_pretrain_example_plans_tokens_per_step(run_cli):
    code, out, err = run_cli("plan", "--framework", "litgpt", str(EXAMPLES / "pretrain.yaml"), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["run"]["tokens_per_step"]["tokens"] == 512 * 2048


def test_a_batch_litgpt_asserts_on_gets_one_line(run_cli):
    code, out, err = run_cli("plan", "--framework", "litgpt", "--num-examples", "100", "--gpus", "32")
    assert code == 2 and out == "" and err.count("\n") == 1 and "16" in err


def test_before_0_5_2_that_extra_micro_batch_can_complete_one_more_step():
    old, new = ({c["rows"]: c for c in r["finetune"]} for r in sorted(RECORDED, key=lambda r: r["version"]))
    assert (old[11]["optimizer_steps"], new[11]["optimizer_steps"]) == (3, 2)


@pytest.mark.parametrize("key", ["epochs", "global_batch_size", "micro_batch_size"])
def test_a_null_that_litgpt_requires_gets_one_line(run_cli, key):
    code, out, err = run_cli("plan", "--framework", "litgpt", str(EXAMPLES / "lora.yaml"), "--num-examples", "100",
                             "--set", f"train.{key}=null")
    assert code == 2 and out == "" and err.count("\n") == 1 and key in err


@pytest.mark.parametrize("config, framework", [("litgpt/lora.yaml", "litgpt"), ("litgpt/pretrain.yaml", "litgpt"),
                                               ("megatron_bridge/sft.yaml", "megatron-bridge"),
                                               ("automodel/llama3_2_1b_squad.yaml", "automodel")])
def test_a_stack_s_yaml_is_planned_by_its_stack_without_framework(run_cli, config, framework):
    code, out, err = run_cli("plan", str(EXAMPLES.parent / config), "--num-examples", "1000", "--gpus", "8", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["framework"] == framework

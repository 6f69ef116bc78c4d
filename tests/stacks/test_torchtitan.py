"""torchtitan's rules against its own code, run at 0.2.2 and 0.3.0 (tools/record_torchtitan.py ->
tests/fixtures/pretrain/torchtitan.json), and `trainsteps plan` reading its .toml and flags."""

import importlib.util
import json
from pathlib import Path

import pytest

from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.frameworks.torchtitan import (
    TitanSpec,
    gradient_accumulation,
    lr_horizon,
    plan_torchtitan,
    rank_shards,
    samples_of_documents,
    save_steps,
    startup_line,
)
from trainsteps.frameworks.torchtitan import eval_steps as validation_steps

ROOT = Path(__file__).resolve().parents[2]


def _load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "pretrain" / "torchtitan.json").read_text())["releases"]
EXAMPLE = ROOT / "examples" / "torchtitan" / "llama3_8b.toml"


def _cases(kind):
    return [pytest.param(release["version"], case, id=f"{release['version']}-{i}") for release in RECORDED
            for i, case in enumerate(release[kind])]


def test_both_releases_were_recorded():
    assert sorted(r["version"] for r in RECORDED) == ["0.2.2", "0.3.0"]


@pytest.mark.parametrize("release, case", _cases("batches"))
def test_gradient_accumulation_and_the_startup_line_match_the_trainer(release, case):
    spec = TitanSpec(dp=case["dp"], local_batch_size=case["local_batch_size"], global_batch_size=case["global_batch_size"],
                     seq_len=case["seq_len"], steps=case["steps"], warmup_steps=case["warmup_steps"], release=release)
    if "error" in case:
        with pytest.raises(InputError):
            gradient_accumulation(spec, Derivation())
        return
    global_batch, ga = gradient_accumulation(spec, Derivation())
    assert ga == case["gradient_accumulation_steps"]
    assert startup_line(spec, global_batch, ga) == case["printed"]


@pytest.mark.parametrize("release, case", _cases("lr"))
def test_warmup_decay_and_stable_steps_match_build_lr_schedulers(release, case):
    spec = TitanSpec(steps=case["steps"], warmup_steps=case["warmup_steps"], decay_ratio=case["decay_ratio"],
                     lr_total_steps=case["total_steps"], release=release)
    lr = lr_horizon(spec, Derivation())
    assert (lr["warmup"], lr["decay"], lr["stable"]) == (case["warmup_used"], case["decay_used"], case["stable_used"])


@pytest.mark.parametrize("release, case", _cases("saves"))
def test_checkpoint_steps_match_should_save(release, case):
    spec = TitanSpec(steps=case["steps"], checkpoint_enable=True, checkpoint_interval=case["interval"],
                     first_step_checkpoint=case["first_step"], release=release)
    assert save_steps(spec, 0) == case["save_steps"]


@pytest.mark.parametrize("release, case", _cases("evals"))
def test_validation_steps_match_should_validate(release, case):
    spec = TitanSpec(steps=case["steps"], validation_enable=True, validation_freq=case["freq"], release=release)
    assert validation_steps(spec, 0) == case["eval_steps"]


@pytest.mark.parametrize("release, case", _cases("windows"))
def test_samples_per_rank_match_the_dataset_sharded_and_windowed(release, case):
    shards = rank_shards(case["documents"] * case["passes"], case["dp"])
    assert [len(s) for s in shards] == [r["documents"] for r in case["per_rank"]]
    assert [samples_of_documents(s, case["seq_len"], release) for s in shards] == [r["samples"] for r in case["per_rank"]]


def test_the_plan_of_one_pass_follows_the_release_as_the_recorded_datasets_do():
    recorded = {r["version"]: next(c for c in r["windows"] if c["dp"] == 1 and c["seq_len"] == 8) for r in RECORDED}
    planned = {}
    for release, case in recorded.items():
        spec = TitanSpec(seq_len=8, steps=1, warmup_steps=0, dataset_tokens=sum(case["documents"]),
                         documents=len(case["documents"]), release=release)
        planned[release] = plan_torchtitan(spec).run.samples_per_epoch
    assert planned == {release: case["per_rank"][0]["samples"] for release, case in recorded.items()}
    assert planned["0.2.2"] != planned["0.3.0"]


def test_equivalent_epochs_count_the_tokens_a_one_rank_run_reads_against_the_recorded_pass():
    case = next(c for r in RECORDED if r["version"] == "0.3.0" for c in r["windows"] if c["dp"] == 1 and c["passes"] == 1
                and c["seq_len"] == 16)
    per_pass = case["per_rank"][0]["samples"]
    spec = TitanSpec(local_batch_size=per_pass, seq_len=16, steps=3, warmup_steps=0, dataset_tokens=sum(case["documents"]),
                     documents=len(case["documents"]), release="0.3.0")
    s = plan_torchtitan(spec)
    assert s.run.samples_per_epoch == per_pass
    assert 2.9 < s.run.equivalent_epochs <= 3.0
    assert [t.code for t in s.warnings] == ["TORCHTITAN_RELOOPED"]


def test_a_warmup_longer_than_the_run_is_clipped_and_warned():
    s = plan_torchtitan(TitanSpec(steps=100))
    assert s.run.warmup_steps == 100
    assert "warmup 200" in s.banner_lines[0]
    assert [t.code for t in s.warnings] == ["TORCHTITAN_WARMUP_CLIPPED"]


def test_a_resumed_run_makes_the_remaining_steps_and_saves_only_after_its_checkpoint():
    s = plan_torchtitan(TitanSpec(steps=1000, resume_from_step=500, checkpoint_enable=True, checkpoint_interval=300))
    assert s.run.optimizer_steps == 500
    assert s.run.save_steps == [600, 900, 1000]
    assert s.banner_lines[1] == "Training starts at step 501"


def test_plan_reads_the_example_toml_with_its_sections(run_cli):
    code, out, err = run_cli("plan", str(EXAMPLE), "--gpus", "8", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["framework"] == "torchtitan" and data["version"] == "0.2.2"
    assert data["inputs"]["from"]["steps"] == "llama3_8b.toml [training]"
    assert data["banner_lines"][0].startswith("Trainer is initialized with local batch size 1, global batch size 8,")


def test_flags_and_overrides_win_over_the_toml(run_cli):
    code, out, err = run_cli("plan", str(EXAMPLE), "--gpus", "8", "--set", "training.steps=40", "--max-steps", "30",
                             "--format", "json")
    assert code == 0, err
    assert json.loads(out)["run"]["optimizer_steps"] == 30


def test_a_toml_with_torchtitan_0_3_0_is_refused_in_one_line(run_cli):
    code, out, err = run_cli("plan", str(EXAMPLE), "--framework-version", "0.3.0")
    assert code == 2 and out == "" and err.count("\n") == 1 and "reads no .toml" in err


@pytest.mark.parametrize("text, words", [
    ("[training]\nsteps = 'many'\n", "[training] steps"),
    ("[training\nsteps = 3\n", "not valid TOML"),
])
def test_a_bad_toml_gets_one_line(run_cli, tmp_path, text, words):
    path = tmp_path / "job.toml"
    path.write_text(text)
    code, out, err = run_cli("plan", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err


def test_a_global_batch_torchtitan_refuses_is_refused_with_its_arithmetic(run_cli):
    code, out, err = run_cli("plan", "--framework", "torchtitan", "--gpus", "4", "--micro-batch-size", "8",
                             "--global-batch-size", "100")
    assert code == 2 and "multiple of local batch size x data-parallel degree (8 x 4)" in err


def test_gpu_hours_count_every_gpu_not_only_the_data_parallel_ranks(run_cli):
    code, out, err = run_cli("plan", "--framework", "torchtitan", "--gpus", "8", "--tensor-parallel-size", "2", "--step-time", "1",
                             "--max-steps", "100", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["time"]["gpus"] == 8


# --- the model a .toml names: [model] name and flavor (tools/record_torchtitan_flavors.py) --------------------------

FLAVORS = json.loads((ROOT / "src" / "trainsteps" / "data" / "torchtitan_flavors.json").read_text())


@pytest.mark.parametrize("name, flavor, published", [
    ("llama3", "8B", 8.03e9), ("llama3", "70B", 70.6e9), ("llama3", "405B", 405.9e9),
    ("qwen3", "8B", 8.19e9), ("qwen3", "32B", 32.8e9), ("qwen3", "30B-A3B", 30.5e9), ("qwen3", "235B-A22B", 235.1e9)])
def test_a_recorded_flavor_has_its_models_published_parameter_count(name, flavor, published):
    """Each flavor's arguments as the release's own __init__.py writes them, with its args dataclass's defaults,
    through torchtitan's FFN rule: the model cards' counts (Llama 3 and 3.1, Qwen3) within 0.5 %."""
    from trainsteps.frameworks.torchtitan_models import flavor_config
    from trainsteps.timing.architectures import shape_from_config

    config, source = flavor_config(name, flavor)
    assert shape_from_config(config, source).total_params == pytest.approx(published, rel=0.005)
    assert source == f"torchtitan 0.2.2 torchtitan/models/{name}/__init__.py: {name} {flavor}"


SOURCE = """
@dataclass
class MoEArgs:
    num_experts: int = 8
    num_shared_experts: int = 1
    score_func: Literal["softmax", "sigmoid"] = "sigmoid"
    num_expert_groups: int | None = None
    layers: list = field(default_factory=list)

toy_args = {
    "tiny": ToyArgs(dim=256, n_layers=2, rope_theta=1e6),
    "tiny_moe": ToyArgs(dim=256, moe_enabled=True, moe_args=MoEArgs(num_experts=4, top_k=2)),
}
"""


def test_the_recorder_reads_flavor_tables_and_dataclass_defaults_as_written():
    """tools/record_torchtitan_flavors.py reads the release's source with `ast`: a flavor's keywords (a nested
    `MoEArgs(...)` as a dict) and a dataclass's literal defaults (a factory or a missing default left out)."""
    recorder = _load_tool("record_torchtitan_flavors")
    assert recorder.flavors(SOURCE, "toy_args") == {
        "tiny": {"dim": 256, "n_layers": 2, "rope_theta": 1e6},
        "tiny_moe": {"dim": 256, "moe_enabled": True, "moe_args": {"num_experts": 4, "top_k": 2}}}
    assert recorder.dataclass_defaults(SOURCE, "MoEArgs") == {"num_experts": 8, "num_shared_experts": 1,
                                                              "score_func": "sigmoid", "num_expert_groups": None}
    with pytest.raises(SystemExit, match="no flavor table"):
        recorder.flavors(SOURCE, "other_args")


def test_a_moe_flavor_takes_what_its_moe_args_leave_out_from_the_recorded_moe_args_defaults(monkeypatch):
    import copy

    from trainsteps.frameworks import torchtitan_models

    assert FLAVORS["release"] == "0.2.2" and FLAVORS["moe_args"]["file"] == "torchtitan/models/moe/moe.py"
    written = FLAVORS["models"]["qwen3"]["flavors"]["30B-A3B"]["moe_args"]
    config, _ = torchtitan_models.flavor_config("qwen3", "30B-A3B")
    assert (config["num_experts"], config["num_experts_per_tok"]) == (written["num_experts"], written["top_k"])
    assert config["shared_expert_intermediate_size"] == written["num_shared_experts"] * config["moe_intermediate_size"]

    # a flavor that leaves num_shared_experts out takes the table's recorded default (2 here, to tell it from a guess)
    without_shared = copy.deepcopy(FLAVORS)
    del without_shared["models"]["qwen3"]["flavors"]["30B-A3B"]["moe_args"]["num_shared_experts"]
    without_shared["moe_args"]["defaults"]["num_shared_experts"] = 2
    monkeypatch.setattr(torchtitan_models, "_table", lambda: without_shared)
    config, _ = torchtitan_models.flavor_config("qwen3", "30B-A3B")
    assert config["shared_expert_intermediate_size"] == 2 * config["moe_intermediate_size"]


def test_a_toml_naming_its_model_gives_hours_with_a_gpu_alone_on_the_fsdp_stack(run_cli):
    code, out, err = run_cli("plan", str(EXAMPLE), "--gpus", "8", "--gpu", "h100", "--format", "json")
    assert code == 0, err
    time = json.loads(out)["time"]
    assert time["wall_seconds"]["expected"] > 0
    assert any("torchtitan 0.2.2 torchtitan/models/llama3/__init__.py: llama3 8B" in note for note in time["notes"])
    assert any("stack fsdp" in note for note in time["notes"])


def test_params_given_win_over_the_tomls_flavor_and_an_unknown_flavor_is_refused_naming_the_known(run_cli):
    code, out, err = run_cli("plan", str(EXAMPLE), "--gpus", "8", "--gpu", "h100", "--params", "7e9", "--format", "json")
    assert code == 0, err
    assert not any("llama3 8B" in note for note in json.loads(out)["time"]["notes"])
    code, out, err = run_cli("plan", str(EXAMPLE), "--gpus", "8", "--gpu", "h100", "--set", "model.flavor=9B")
    assert code == 2 and "no flavor '9B'" in err and "8B_flex" in err and "Traceback" not in err


def test_a_toml_naming_a_model_without_recorded_flavors_still_plans_its_steps_and_hours_need_the_model(run_cli, tmp_path):
    path = tmp_path / "dsv3.toml"
    path.write_text('[model]\nname = "deepseek_v3"\nflavor = "16B"\n[training]\nlocal_batch_size = 8\nseq_len = 4096\nsteps = 100\n')
    code, out, err = run_cli("plan", str(path), "--gpus", "8", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["run"]["optimizer_steps"] == 100
    code, out, err = run_cli("plan", str(path), "--gpus", "8", "--gpu", "h100")
    assert code == 2 and "deepseek_v3" in err and "--params" in err
    code, out, err = run_cli("plan", str(path), "--gpus", "8", "--gpu", "h100", "--params", "16e9")
    assert code == 0, err

"""Record the step rules of slime, AReaL and open-instruct by running their own code on CPU.

None of the three can be imported without GPUs, Ray or vLLM, so this runs their *pure* parts, cut out of the real
source at a given commit (ast, by function or statement name) and executed with stand-ins for Ray and the engines:

- slime: `train.py train` (the loop: evaluations and saves), `create_rollout_manager` with
  `RolloutManager.get_num_rollout_per_epoch` (the horizon from --num-epoch), `should_run_periodic_action`, the
  `--num-steps-per-rollout` block of the argument checks, `build_dp_schedule` (optimizer steps per rollout) and the
  `train_iters` / `lr_decay_iters` lines of the scheduler;
- AReaL: torch's DistributedSampler and DataLoader as `create_dataloader` builds them (loader length),
  `FinetuneSpec` (the LR horizon), and `Saver.save` / `Evaluator.evaluate` with `EpochStepTimeFreqCtl` (the events);
- open-instruct: the `num_training_steps`, `num_scheduler_steps` and warmup lines, the mini-batch split of `train`, and
  the evaluation and save conditions of the loop.

- TRL AsyncGRPOTrainer: the samples-per-step and max_steps statements of `__init__`, read from each release's wheel;
- prime-rl: `validate_scheduler` and the trainer loop's checkpoint condition;
- ROLL: `PPOConfig.set_max_steps`, `do_checkpoint`'s condition and the RLVR pipeline's evaluation condition.

Usage (a CPU venv with torch==2.13.0; clones of the three repositories; `pip download --no-deps trl==X` wheels):

    python tools/record_rl_stacks.py --slime ~/src/slime --areal ~/src/AReaL --open-instruct ~/src/open-instruct \
        --trl-wheels ~/wheels --prime-rl ~/src/prime-rl --roll ~/src/ROLL

Writes tests/fixtures/rl_stacks/{slime,areal,open_instruct}.json: for each commit and case, the settings and what the
code did. tests/test_rl_stacks.py asserts the planners give the same numbers.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import types
from argparse import Namespace
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "rl_stacks"
COMMITS = {
    "slime": ["624b824a898ab0ec1fcb4d373004c7f3852bf515", "2418a7844abe4d490a1676dcf88fc3401adab362"],  # main 2026-08-21, v0.2.2
    "areal": ["4aef98d8d818af55b43621aaadba047ae10f4e77", "37d6c6400e99a05fa3409d6a067762a44df40d3b"],  # main 2026-05-21, v1.0.4
    "open_instruct": ["e6c3044aa6201c8bfa4573c1b03142af599e730d", "8dfe8f21def5b32449bce2ad5fd0d002e76f7b1d"],  # 2026-08-20, 02-19
}


def show(repo: Path, commit: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout


def cut(source: str, name: str) -> str:
    """The source of the function (or method) `name` (`Class.method` for one class's), dedented to module level."""
    import textwrap

    if "." in name:
        owner, name = name.split(".", 1)
        source = "class _Owner:\n" + textwrap.indent(cut(source, owner), "    ")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return textwrap.dedent(ast.get_source_segment(source, node))
    raise KeyError(name)


def statements(source: str, function: str, contains: str) -> list[str]:
    """Statements of `function`'s own body (and of its `with`/`try` blocks, not of its branches or loops) whose first
    line contains `contains`: the assignment or `if` as the function runs it."""
    import textwrap

    text = textwrap.dedent(cut(source, function))
    found = []

    def visit(body):
        for node in body:
            if isinstance(node, (ast.With, ast.Try)):
                visit(node.body)
            elif isinstance(node, (ast.Assign, ast.If)) and contains in (ast.get_source_segment(text, node) or "").split("\n")[0]:
                found.append(textwrap.dedent(ast.get_source_segment(text, node)))

    visit(ast.parse(text).body[0].body)
    return found


def run(code: str, names: dict) -> dict:
    exec(compile(code, "<cut>", "exec"), names)
    return names


# --- slime -------------------------------------------------------------------------------------------------------

class _Remote:
    """`obj.method.remote(...)` calls the method now (ray.get is the identity)."""

    def __init__(self, target):
        self.target = target

    def __getattr__(self, name):
        method = getattr(self.target, name)
        return types.SimpleNamespace(remote=method)


def slime_case(repo: Path, commit: str, settings: dict, prompts: int) -> dict:
    train_src, misc_src = show(repo, commit, "train.py"), show(repo, commit, "slime/utils/misc.py")
    pg_src, rollout_src = show(repo, commit, "slime/ray/placement_group.py"), show(repo, commit, "slime/ray/rollout.py")
    args_src = show(repo, commit, "slime/utils/arguments.py")
    model_src = show(repo, commit, "slime/backends/megatron_utils/model.py")
    args = Namespace(num_rollout=None, num_epoch=None, start_rollout_id=0, eval_interval=None, skip_eval_before_train=False,
                     save_interval=None, n_samples_per_prompt=1, global_batch_size=None, num_steps_per_rollout=None,
                     rollout_global_dataset=True, use_critic=False, num_critic_only_steps=0, offload_rollout=False,
                     offload_train=False, release_train=False, check_weight_update_equal=False, lr_decay_iters=None,
                     rollout_data_transport="object-store")
    for key, value in settings.items():
        setattr(args, key, value)
    # the --num-steps-per-rollout block of the argument checks
    for block in statements(args_src, "slime_validate_args", "if args.num_steps_per_rollout is not None"):
        run(block, {"args": args})
    # the horizon: create_rollout_manager with RolloutManager.get_num_rollout_per_epoch
    per_epoch_src = cut(rollout_src, "get_num_rollout_per_epoch")
    manager_ns = run(per_epoch_src, {})

    class Source(list):  # len(data_source) (2026-08) and len(data_source.dataset) (v0.2.2) both count the prompts
        @property
        def dataset(self):
            return self

    manager = types.SimpleNamespace(args=args, data_source=Source([None] * prompts))
    fake_ray = types.SimpleNamespace(get=lambda x: x)
    rollout_module = types.ModuleType("rollout")
    rollout_module.RolloutManager = types.SimpleNamespace(
        options=lambda **kw: types.SimpleNamespace(remote=lambda a, pg: types.SimpleNamespace(
            get_num_rollout_per_epoch=types.SimpleNamespace(remote=lambda: manager_ns["get_num_rollout_per_epoch"](manager)))))
    sys.modules["_slime_rollout"] = rollout_module
    create_src = cut(pg_src, "create_rollout_manager").replace("from .rollout import RolloutManager",
                                                               "from _slime_rollout import RolloutManager")
    ns = run(create_src, {"ray": fake_ray, "add_default_ray_env_vars": lambda: {}, "RolloutManager": rollout_module.RolloutManager})
    events = {"eval": [], "save": [], "train": [], "generated": set()}

    class Manager:
        def eval(self, rollout_id):  # before rollout_id is generated: after step rollout_id (0: before training)
            events["eval"].append(rollout_id + (rollout_id in events["generated"]))

        def generate(self, rollout_id):
            events["generated"].add(rollout_id)
            return rollout_id

        def save(self, rollout_id):
            pass

        def dispose(self):
            pass

        def onload_weights(self):
            pass

        def onload_kv(self):
            pass

        def offload(self):
            pass

    class Model:
        def update_weights(self):
            pass

        def async_train(self, rollout_id, ref, external_data=None):
            events["train"].append(rollout_id)

        def save_model(self, rollout_id, force_sync=False):
            events["save"].append(rollout_id + 1)

        def clear_memory(self):
            pass

    _, num_rollout_per_epoch = ns["create_rollout_manager"](args, None)

    def placement(*a, **k):
        return {"rollout": None, "actor": None, "critic": None}

    def manager_factory(a, pg):
        return _Remote(Manager()), num_rollout_per_epoch

    names = {"ray": fake_ray, "configure_logger": lambda: None, "init_tracking": lambda a: None, "finish_tracking": lambda a: None,
             "create_placement_groups": placement, "create_rollout_manager": manager_factory,
             "create_training_models": lambda a, p, r: (Model(), None), "should_run_periodic_action": None}
    names.update(run(cut(misc_src, "should_run_periodic_action"), {}))
    run(cut(train_src, "train"), names)["train"](args)
    # optimizer steps per rollout: build_dp_schedule where it exists (one sample per rollout)
    per_rollout = args.rollout_batch_size * args.n_samples_per_prompt // args.global_batch_size
    try:
        dp_src = show(repo, commit, "slime/utils/dp_schedule.py")
        for module in [m for m in sys.modules if m == "slime" or m.startswith("slime.")]:
            del sys.modules[module]  # each commit imports its own tree
        sys.path.insert(0, str(_slime_tree(repo, commit)))
        import importlib

        dp = importlib.import_module("slime.utils.dp_schedule")
        sys.path.pop(0)
        samples = args.rollout_batch_size * args.n_samples_per_prompt
        _, _, _, sizes = dp.build_dp_schedule(Namespace(micro_batch_size=1, use_dynamic_batch_size=False, max_tokens_per_gpu=None,
                                                        balance_data=False, balance_by_flops=False),
                                              {"dp_size": 1, "cp_size": 1, "vpp_size": 1, "microbatch_group_size_per_vp_stage": 1},
                                              [8] * samples, global_batch_size=args.global_batch_size, rollout_indices=list(range(samples)))
        per_rollout = len(sizes)
        del dp_src
    except subprocess.CalledProcessError:
        pass  # releases before the dp schedule: num_local_samples // num_local_gbs (backends/megatron_utils/data.py)
    # the scheduler lines
    sched = Namespace(**vars(args))
    for line in statements(model_src, "get_optimizer_param_scheduler", "args.train_iters ="):
        run(line, {"args": sched})
    for line in statements(model_src, "get_optimizer_param_scheduler", "if args.lr_decay_iters is None"):
        run(line, {"args": sched})
    return {"num_rollout": args.num_rollout, "num_rollout_per_epoch": num_rollout_per_epoch, "global_batch_size": args.global_batch_size,
            "rollouts_trained": len(events["train"]), "eval_after_steps": events["eval"], "save_after_steps": events["save"],
            "optimizer_steps_per_rollout": per_rollout, "train_iters": sched.train_iters, "lr_decay_iters": sched.lr_decay_iters}


_TREES: dict = {}


def _slime_tree(repo: Path, commit: str) -> Path:
    """slime/utils (dp_schedule and the modules it imports) extracted at `commit`, importable without the rest."""
    if commit in _TREES:
        return _TREES[commit]
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="slime-"))
    (root / "slime" / "utils").mkdir(parents=True)
    (root / "slime" / "__init__.py").write_text("")
    (root / "slime" / "utils" / "__init__.py").write_text("")
    for name in ("dp_schedule", "seqlen_balancing", "flops_utils"):
        (root / "slime" / "utils" / f"{name}.py").write_text(show(repo, commit, f"slime/utils/{name}.py"))
    _TREES[commit] = root
    return root


SLIME_CASES = [
    ("qwen3_4b", {"rollout_batch_size": 32, "n_samples_per_prompt": 8, "global_batch_size": 256, "num_rollout": 30,
                  "eval_interval": 20, "save_interval": 20}, 17398),
    ("num_epoch", {"rollout_batch_size": 32, "n_samples_per_prompt": 8, "num_steps_per_rollout": 4, "num_epoch": 2,
                   "eval_interval": 5, "save_interval": 7}, 300),
    ("trailing", {"rollout_batch_size": 16, "n_samples_per_prompt": 6, "global_batch_size": 40, "num_rollout": 9,
                  "eval_interval": 4, "skip_eval_before_train": True}, 1000),
    ("both_set", {"rollout_batch_size": 8, "n_samples_per_prompt": 4, "global_batch_size": 32, "num_rollout": 5, "num_epoch": 3,
                  "save_interval": 2}, 100),
    ("resumed", {"rollout_batch_size": 8, "n_samples_per_prompt": 2, "global_batch_size": 8, "num_epoch": 3, "start_rollout_id": 20,
                 "eval_interval": 10, "save_interval": 10}, 100),
]


# --- AReaL -------------------------------------------------------------------------------------------------------

def areal_case(repo: Path, commit: str, settings: dict) -> dict:
    import torch
    from torch.utils.data import DataLoader, DistributedSampler

    io_src, time_src = show(repo, commit, "areal/api/io_struct.py"), show(repo, commit, "areal/utils/timeutil.py")
    saver_src, eval_src = show(repo, commit, "areal/utils/saver.py"), show(repo, commit, "areal/utils/evaluator.py")
    prompts, bs, dp = settings["prompts"], settings["batch_size"], settings["dp"]
    dataset = list(range(prompts))
    lengths = []
    for rank in range(dp):  # create_dataloader: batch_size // world_size per rank, sampler drop_last=True, loader drop_last
        sampler = DistributedSampler(dataset, num_replicas=dp, rank=rank, shuffle=True, drop_last=True)
        lengths.append(len(DataLoader(dataset, batch_size=bs // dp, sampler=sampler, drop_last=settings.get("drop_last", True))))
    steps_per_epoch = lengths[0]
    ns = run("from dataclasses import dataclass\n@dataclass\n" + cut(io_src, "FinetuneSpec"), {"__name__": __name__})
    spec = ns["FinetuneSpec"](total_train_epochs=settings["epochs"], dataset_size=steps_per_epoch * bs, train_batch_size=bs)
    fake_torch = types.SimpleNamespace(tensor=torch.tensor)
    timens = run("import dataclasses\nfrom datetime import datetime\nimport threading\n" + cut(time_src, "FrequencyControl") + "\n"
                 + "@dataclasses.dataclass\n" + cut(time_src, "EpochStepTimeFreqCtl"),
                 {"__name__": __name__, "dist": types.SimpleNamespace(is_initialized=lambda: False, ProcessGroup=object),
                  "torch": fake_torch, "current_platform": None})
    timeutil = types.SimpleNamespace(EpochStepTimeFreqCtl=timens["EpochStepTimeFreqCtl"])

    def controls(prefix: str, initial: bool = False):
        return timens["EpochStepTimeFreqCtl"](freq_epoch=settings.get(f"{prefix}_freq_epochs"), freq_step=settings.get(f"{prefix}_freq_steps"),
                                              freq_sec=None, initial_epoch_value=initial)

    saver_check = _check_call(saver_src, "save")
    eval_check = _check_call(eval_src, "evaluate")
    saves, evals = [], []
    save_ctl, eval_ctl = controls("save"), controls("eval", settings.get("eval_before_train", False))
    max_steps = settings["epochs"] * steps_per_epoch
    for global_step in range(settings.get("start_step", 0), max_steps):  # rl_trainer.py RLTrainer.train
        if settings.get("total_train_steps") is not None and global_step >= settings["total_train_steps"]:
            break
        step = global_step % steps_per_epoch
        if eval(saver_check, {"self": types.SimpleNamespace(freq_ctl=save_ctl, ft_spec=spec), "step": step}):
            saves.append(global_step + 1)
        if eval(eval_check, {"self": types.SimpleNamespace(freq_ctl=eval_ctl, ft_sepc=spec, ft_spec=spec), "step": step}):
            evals.append(global_step + 1)
    del timeutil
    return {"loader_length_per_rank": lengths, "total_train_steps": spec.total_train_steps, "steps_per_epoch": spec.steps_per_epoch,
            "save_steps": saves, "eval_steps": evals, "torch": torch.__version__}


def _check_call(source: str, method: str) -> str:
    """The `self.freq_ctl.check(...)` expression of Saver.save / Evaluator.evaluate."""
    for node in ast.walk(ast.parse(cut(source, method))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "check":
            return ast.unparse(node)
    raise KeyError(method)


AREAL_CASES = [
    ("gsm8k_grpo", {"prompts": 7473, "batch_size": 256, "dp": 4, "epochs": 10, "save_freq_epochs": 1, "eval_freq_epochs": 1}),
    ("uneven_ranks", {"prompts": 1001, "batch_size": 24, "dp": 8, "epochs": 3, "save_freq_steps": 5, "eval_freq_steps": 7,
                      "eval_freq_epochs": 2, "eval_before_train": True}),
    ("benchmark_cap", {"prompts": 5000, "batch_size": 64, "dp": 2, "epochs": 4, "total_train_steps": 100, "save_freq_steps": 30}),
    ("no_drop_last", {"prompts": 1000, "batch_size": 96, "dp": 3, "epochs": 2, "drop_last": False, "save_freq_epochs": 1}),
]


# --- open-instruct -----------------------------------------------------------------------------------------------

def open_instruct_case(repo: Path, commit: str, settings: dict) -> dict:
    import math

    src = show(repo, commit, "open_instruct/grpo_fast.py")
    args = Namespace(total_episodes=100000, num_epochs=1, num_mini_batches=1, warmup_ratio=0.0, warm_up_steps=0, local_eval_every=100,
                     save_freq=200, eval_on_step_0=False)
    for key, value in settings.items():
        setattr(args, key, value)
    streaming = Namespace(num_unique_prompts_rollout=settings["prompts_per_step"], num_samples_per_prompt_rollout=settings["n"])
    main_fn = next(name for name in ("setup_runtime_variables", "main") if f"def {name}(" in src and
                   statements(src, name, "args.num_training_steps ="))
    for line in statements(src, main_fn, "args.num_training_steps ="):
        run(line, {"args": args, "streaming_config": streaming, "args_streaming": streaming})
    names = {"args": args, "math": math}
    for line in statements(src, "from_pretrained", "num_scheduler_steps ="):
        run(line, names)
    for key in ("warm_up_steps =", "warmup_steps =", "if args.warmup_ratio > 0.0"):
        for line in statements(src, "from_pretrained", key):
            run(line, names)
    warmup = names.get("warmup_steps", names.get("warm_up_steps"))
    updates = {}
    for sequences in settings.get("sequences", ()):
        split = {"math": math, "self": Namespace(num_mini_batches=args.num_mini_batches), "num_samples": sequences}
        for line in statements(src, "step", "accumulation_steps = max("):
            run(line, split)
        kept = sequences - sequences % split["accumulation_steps"]
        updates[sequences] = kept // split["accumulation_steps"]
    eval_test = next(ast.unparse(node.test) for node in ast.walk(ast.parse(src))
                     if isinstance(node, ast.If) and "local_eval_every" in ast.unparse(node.test) and "training_step" in ast.unparse(node.test))
    save_test = next(ast.unparse(node.test) for node in ast.walk(ast.parse(cut(src, "maybe_save_checkpoint")))
                     if isinstance(node, ast.If) and "save_freq" in ast.unparse(node.test))
    steps = range(1, args.num_training_steps + 1)
    evals = [s for s in steps if eval(eval_test, {"args": args, "training_step": s, "eval_data_loader": object()})]
    saves = [s for s in steps if eval(save_test, {"args": args, "training_step": s})]
    return {"num_training_steps": args.num_training_steps, "num_scheduler_steps": names["num_scheduler_steps"], "warmup_steps": warmup,
            "updates_per_pass": {str(k): v for k, v in updates.items()}, "eval_steps": evals, "periodic_save_steps": saves}


OI_CASES = [
    ("qwen7b", {"prompts_per_step": 48, "n": 16, "total_episodes": 5000000 // 100, "local_eval_every": 30, "save_freq": 40,
                "lr_scheduler_type": "linear"}),
    ("mini_batches", {"prompts_per_step": 16, "n": 4, "total_episodes": 6400, "num_mini_batches": 4, "num_epochs": 2,
                      "warmup_ratio": 0.1, "local_eval_every": 25, "save_freq": 50, "eval_on_step_0": True, "sequences": [16, 5, 3, 7, 9]}),
    ("warm_up_steps", {"prompts_per_step": 8, "n": 8, "total_episodes": 1000, "warm_up_steps": 4, "local_eval_every": 3, "save_freq": 5}),
]


# --- TRL AsyncGRPOTrainer ---------------------------------------------------------------------------------------

TRL_RELEASES = ("1.0.0", "1.8.0", "1.9.0", "1.16.0")
ASYNC_CASES = [
    ("gsm8k_4gpu", {"prompts": 7473, "per_device_train_batch_size": 16, "gradient_accumulation_steps": 1, "num_processes": 4,
                    "num_generations": 8, "num_train_epochs": 1.0, "max_steps": -1}),
    ("tools_2_epochs", {"prompts": 1000, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 2, "num_processes": 2,
                        "num_generations": 4, "num_train_epochs": 2.5, "max_steps": -1, "max_tool_calling_iterations": 3}),
    ("max_steps", {"prompts": 1000, "per_device_train_batch_size": 8, "gradient_accumulation_steps": 1, "num_processes": 1,
                   "num_generations": 8, "num_train_epochs": 3.0, "max_steps": 50}),
]


def async_grpo_case(wheels: Path, release: str, settings: dict) -> dict:
    """`AsyncGRPOTrainer.__init__`'s samples-per-step and max_steps statements, run with the release's own code."""
    import logging
    import math
    import zipfile

    with zipfile.ZipFile(wheels / f"trl-{release}-py3-none-any.whl") as wheel:
        src = wheel.read("trl/experimental/async_grpo/async_grpo_trainer.py").decode()
        config = wheel.read("trl/experimental/async_grpo/async_grpo_config.py").decode()
    args = Namespace(**{k: v for k, v in settings.items() if k not in ("prompts", "num_processes")})
    args.max_tool_calling_iterations = settings.get("max_tool_calling_iterations")
    trainer = Namespace(args=args, accelerator=Namespace(num_processes=settings["num_processes"]))
    names = {"self": trainer, "train_dataset": [None] * settings["prompts"], "math": math, "logger": logging.getLogger("trl")}
    for key in ("samples_per_step = (", "if self.args.max_steps <= 0"):
        for line in statements(src, "AsyncGRPOTrainer.__init__", key):
            run(line, names)
    lr_default = "constant" if "lr_scheduler_type: str = field(" in config else "linear (TrainingArguments)"
    return {"max_steps": args.max_steps, "epoch_stop_groups": getattr(trainer, "_epoch_stop_groups", None),
            "samples_per_step": names["samples_per_step"], "lr_scheduler_default": lr_default}


# --- prime-rl and ROLL ------------------------------------------------------------------------------------------

PRIME_COMMITS = {"559b44772e471d1538537b8805cc77f3824a5e64": "packages/prime-rl-configs/src/prime_rl/configs/trainer.py",
                 "5a6ab4a9688b472ca3c264c3693493cd0926c5a8": "src/prime_rl/configs/trainer.py"}  # 2026-08-21, 2026-02-28
PRIME_SCHEDULERS = [("constant", 10, 10, 20), ("linear", 0, 0, 20), ("linear", 15, 10, 20), ("linear", 10, 10, 20),
                    ("linear", 5, 0, None), ("linear", 5, 3, None), ("cosine", 20, 0, 20), ("cosine", 10, 0, 20), ("cosine", 1, 0, None)]
PRIME_CKPT = [(20, 5, 1), (20, 5, 8), (20, None, 1), (7, 3, 1)]  # max_steps, ckpt.interval, start step


def prime_case(repo: Path, commit: str) -> dict:
    """`validate_scheduler` (where the release has it) and the checkpoint condition of the trainer loop."""
    schedulers = {}
    config_src = show(repo, commit, PRIME_COMMITS[commit])
    if "def validate_scheduler(" in config_src:
        classes = {name: type(name, (), {}) for name in ("LinearSchedulerConfig", "CosineSchedulerConfig", "ConstantSchedulerConfig")}
        check = run(cut(config_src, "validate_scheduler"), {**classes, "SchedulerConfig": object})["validate_scheduler"]
        for kind, warmup, decay, max_steps in PRIME_SCHEDULERS:
            scheduler = classes[f"{kind.capitalize()}SchedulerConfig"]()
            scheduler.warmup_steps, scheduler.decay_steps = warmup, decay
            try:
                check(scheduler, max_steps)
                outcome = "ok"
            except ValueError as exc:
                outcome = str(exc)
            schedulers[f"{kind} warmup={warmup} decay={decay} max_steps={max_steps}"] = outcome
    train_src = show(repo, commit, "src/prime_rl/trainer/rl/train.py")
    test = next(ast.unparse(node.test) for node in ast.walk(ast.parse(cut(train_src, "train")))
                if isinstance(node, ast.If) and "ckpt.interval" in ast.unparse(node.test) and "progress.step %" in ast.unparse(node.test))
    ckpts = {}
    for max_steps, interval, start in PRIME_CKPT:
        config = Namespace(max_steps=max_steps, ckpt=Namespace(interval=interval))
        saved = [step for step in range(start, max_steps + 1)
                 if eval(test, {"config": config, "is_last_step": step == max_steps, "progress": Namespace(step=step),
                                "ckpt_manager": object(), "is_first_step": step == start})]  # is_first_step: 2026-02 only
        ckpts[f"max_steps={max_steps} interval={interval} start={start}"] = saved  # periodic: the final one is written after the loop
    return {"validate_scheduler": schedulers or None, "checkpoint_steps": ckpts}


ROLL_COMMITS = ("8eb27cc2dc34c4d1310b169d9b86d339004d811a", "97447137e5bae911ff09792ec5a296ab39ed37f1")  # 2026-08-19, 2026-01-28
ROLL_CASES = [
    ("rlvr_7b", {"max_steps": 500, "rollout_batch_size": 128, "n": 8, "ppo_epochs": 1, "per_device_train_batch_size": 1,
                 "gradient_accumulation_steps": 64, "eval_steps": 10, "save_steps": 100}),
    ("uneven", {"max_steps": 10, "rollout_batch_size": 100, "n": 3, "ppo_epochs": 2, "per_device_train_batch_size": 7,
                "gradient_accumulation_steps": 1, "eval_steps": 4, "save_steps": 3}),
]


def roll_case(repo: Path, commit: str, settings: dict) -> dict:
    """`PPOConfig.set_max_steps`, `do_checkpoint`'s condition and the pipeline's evaluation condition."""
    import logging

    config_src = show(repo, commit, "roll/configs/base_config.py")
    pipeline_src, base_src = show(repo, commit, "roll/pipeline/rlvr/rlvr_pipeline.py"), show(repo, commit, "roll/pipeline/base_pipeline.py")
    training = Namespace(per_device_train_batch_size=settings["per_device_train_batch_size"],
                         gradient_accumulation_steps=settings["gradient_accumulation_steps"], max_steps=None)
    config = Namespace(max_steps=settings["max_steps"], rollout_batch_size=settings["rollout_batch_size"], ppo_epochs=settings["ppo_epochs"],
                       async_pipeline=False,
                       eval_steps=settings["eval_steps"], save_steps=settings["save_steps"],
                       actor_train=Namespace(training_args=training),
                       critic=Namespace(training_args=Namespace(per_device_train_batch_size=1, gradient_accumulation_steps=1, max_steps=None)),
                       actor_infer=Namespace(generating_args=Namespace(num_return_sequences=settings["n"])))
    run(cut(config_src, "PPOConfig.set_max_steps"), {"logger": logging.getLogger("roll")})["set_max_steps"](config, settings["max_steps"])
    save_test = next(ast.unparse(node.test) for node in ast.walk(ast.parse(cut(base_src, "do_checkpoint")))
                     if isinstance(node, ast.If) and "save_steps" in ast.unparse(node.test))
    run_tree = ast.parse(cut(pipeline_src, "RLVRPipeline.run"))
    flags = [ast.unparse(node.value) for node in ast.walk(run_tree)  # January 2026: `should_eval = ...` then `if should_eval`
             if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "should_eval" for t in node.targets)]
    eval_test = flags[0] if flags else next(ast.unparse(node.test) for node in ast.walk(run_tree) if isinstance(node, ast.If)
                                            and "eval_steps" in ast.unparse(node.test) and "val_dataset" in ast.unparse(node.test))
    pipeline = Namespace(pipeline_config=config, val_dataset=[None])
    steps = range(settings["max_steps"])
    return {"actor_max_steps_without_dp": training.max_steps,
            "save_after_global_steps": [g for g in steps if eval(save_test, {"self": pipeline, "global_step": g})],
            "eval_at_global_steps": [g for g in steps if eval(eval_test, {"self": pipeline, "global_step": g})]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slime", type=Path)
    parser.add_argument("--areal", type=Path)
    parser.add_argument("--open-instruct", type=Path)
    parser.add_argument("--trl-wheels", type=Path, help="a folder with trl-{1.0.0,1.8.0,1.9.0,1.16.0}-py3-none-any.whl")
    parser.add_argument("--prime-rl", type=Path)
    parser.add_argument("--roll", type=Path)
    opts = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    jobs = [("slime", opts.slime, lambda repo, c: {name: {"settings": s, "prompts": p, "recorded": slime_case(repo, c, s, p)}
                                                   for name, s, p in SLIME_CASES}),
            ("areal", opts.areal, lambda repo, c: {name: {"settings": s, "recorded": areal_case(repo, c, s)} for name, s in AREAL_CASES}),
            ("open_instruct", opts.open_instruct,
             lambda repo, c: {name: {"settings": s, "recorded": open_instruct_case(repo, c, s)} for name, s in OI_CASES})]
    if opts.trl_wheels is not None:
        out = {"source": f"tools/record_rl_stacks.py on the TRL wheels {', '.join(TRL_RELEASES)} (PyPI)",
               "releases": {release: {name: {"settings": s, "recorded": async_grpo_case(opts.trl_wheels, release, s)}
                                      for name, s in ASYNC_CASES} for release in TRL_RELEASES}}
        (OUT / "trl_async_grpo.json").write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {OUT / 'trl_async_grpo.json'}")
    if opts.prime_rl is not None:
        out = {"source": f"tools/record_rl_stacks.py on prime-rl at {', '.join(PRIME_COMMITS)}",
               "commits": {commit: prime_case(opts.prime_rl, commit) for commit in PRIME_COMMITS}}
        (OUT / "prime_rl.json").write_text(json.dumps(out, indent=1) + "\n")
    if opts.roll is not None:
        out = {"source": f"tools/record_rl_stacks.py on ROLL at {', '.join(ROLL_COMMITS)}",
               "commits": {commit: {name: {"settings": s, "recorded": roll_case(opts.roll, commit, s)} for name, s in ROLL_CASES}
                           for commit in ROLL_COMMITS}}
        (OUT / "roll.json").write_text(json.dumps(out, indent=1) + "\n")
    for name, repo, record in jobs:
        if repo is None:
            continue
        out = {"source": f"tools/record_rl_stacks.py on {name} at {', '.join(COMMITS[name])}",
               "commits": {commit: record(repo, commit) for commit in COMMITS[name]}}
        (OUT / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {OUT / f'{name}.json'}")


if __name__ == "__main__":
    main()

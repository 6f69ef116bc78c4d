"""Record ms-swift's Megatron iteration arithmetic (`megatron sft/pt/rlhf`) by running its own code, at two releases.

    pip download --no-deps ms-swift==3.12.6 ms-swift==4.6.0   (unzip each wheel into its own folder)
    /tmp/lgvenv/bin/python tools/record_swift_megatron.py /tmp/sw/3.12.6 /tmp/sw/4.6.0 > tests/fixtures/pretrain/swift_megatron.json

What runs is ms-swift's: at 4.x `MegatronArguments.init_iters` (swift/megatron/arguments/megatron_args.py), at 3.x the
`initialize_megatron` wrapper that `BaseMegatronTrainer._get_iters` installs (swift/megatron/trainers/base.py), each
on an object with the argument fields they read, a dataset of N rows and Megatron's data-parallel size given by a stub
`mpu`. Those files import megatron-core (GPUs); the functions are taken from the release's source and run as they are.
"""

from __future__ import annotations

import ast
import sys
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import per_release  # tools/ is this script's own folder, first on sys.path

CASES = [  # rows, micro batch, dp, global batch, epochs, save_strategy, rlhf_type, num_generations
    (7144, 1, 8, 64, 1, "steps", None, 8),
    (1700, 1, 8, 64, 1, "steps", None, 8),  # packed rows of modelscope/ms-swift#7381: 26 iterations
    (1000, 2, 4, 16, 3, "epoch", None, 8),
    (1003, 1, 3, 12, 2, "steps", None, 8),
    (500, 1, 4, 32, 2, "epoch", "grpo", 8),  # GRPO: every prompt counted num_generations times
]
GIVEN_TRAIN_ITERS = {1: 7}
"""train_iters given beside the epochs in some cases (case index -> value): the epochs' count replaces it."""


def _function(path: Path, dotted: str, namespace: dict):
    tree = ast.parse(path.read_text())
    owner, _, name = dotted.partition(".")
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == owner:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    module = ast.Module(body=[item], type_ignores=[])
                    exec(compile(ast.fix_missing_locations(module), str(path), "exec"), namespace)
                    return namespace[name]
    raise LookupError(dotted)


def _args(case: tuple, epochs_name: str, save_name: str, train_iters: int | None) -> SimpleNamespace:
    rows, micro, dp, global_batch, epochs, strategy, rlhf, generations = case
    args = SimpleNamespace(micro_batch_size=micro, global_batch_size=global_batch, save_strategy=strategy, rlhf_type=rlhf,
                           num_generations=generations, train_iters=train_iters, eval_iters=-1, save_retain_interval=None)
    setattr(args, epochs_name, epochs)
    setattr(args, save_name, 500 if strategy == "steps" else 1)
    setattr(args, save_name.replace("save", "eval"), getattr(args, save_name))
    return args


def record_one(root: str) -> dict:
    version = next(Path(root).glob("ms_swift-*.dist-info")).name.split("-")[1].removesuffix(".dist")
    logger = SimpleNamespace(info=lambda *a, **k: None, warning=lambda *a, **k: None)
    out = []
    for index, case in enumerate(CASES):
        rows, dp, given = case[0], case[2], GIVEN_TRAIN_ITERS.get(index)
        mpu = SimpleNamespace(get_data_parallel_world_size=lambda dp=dp: dp)
        namespace = {"mpu": mpu, "logger": logger, "contextmanager": contextmanager}
        train, val = list(range(rows)), None
        if version.startswith("3."):
            args = _args(case, "max_epochs", "save_interval", given)
            namespace.update(get_args=lambda args=args: args,
                             training=SimpleNamespace(initialize_megatron=lambda *a, **k: None),
                             initialize=SimpleNamespace(validate_args=None))
            get_iters = _function(Path(root) / "swift/megatron/trainers/base.py", "BaseMegatronTrainer._get_iters", namespace)
            trainer = SimpleNamespace(patched_validate_args=None)
            with get_iters(trainer, train, val):
                namespace["training"].initialize_megatron()
            save, evals = args.save_interval, args.eval_interval
        else:
            args = _args(case, "num_train_epochs", "save_steps", given)
            init_iters = _function(Path(root) / "swift/megatron/arguments/megatron_args.py", "MegatronArguments.init_iters", namespace)
            init_iters(args, train, val)
            save, evals = args.save_steps, args.eval_steps
        out.append({"case": list(case), "train_iters_given": given, "train_iters": args.train_iters, "save_steps": save, "eval_steps": evals,
                    "eval_iters": args.eval_iters})
    return {"version": version, "cases": out}


if __name__ == "__main__":
    per_release.main(__file__, record_one, sys.argv[1:])

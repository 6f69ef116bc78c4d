"""Record Megatron-Bridge's iteration arithmetic by running its own code, at two releases.

    git -C MIRROR archive v0.5.1 src/megatron/bridge/data/samplers.py src/megatron/bridge/data/loaders.py \\
        src/megatron/bridge/training/config.py | tar -x -C /tmp/mb/v0.5.1      (the same for v0.6.0)
    /tmp/lgvenv/bin/python tools/record_megatron_bridge.py /tmp/mb/v0.5.1 /tmp/mb/v0.6.0 > tests/fixtures/pretrain/megatron_bridge.json

What runs is Megatron-Bridge's: `TrainingConfig.finalize` (one of train_iters / train_samples / num_epochs, ramp-up
refused with the last two), `ConfigContainer._resolve_num_epochs`, `_validate_training_scheduler_compatibility` and
`_calculate_scheduler_steps` (LR decay and warmup in samples), `get_train_valid_test_num_samples` (the dataset target sizes), `cyclic_iter`, and the
`MegatronPretrainingBatchSampler` of every data-parallel rank iterated for the whole run. Those functions are taken
from the release's source files (config.py and loaders.py import megatron-core and need GPUs to import; the functions
themselves are pure) and run on plain objects with the fields they read. The one line of the loader builder that
chooses drop_last (`False if cfg.train.num_epochs is not None else cfg.dataset.drop_last`, data/loaders.py) is the only
rule restated here.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import math
import sys
import warnings
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import per_release  # tools/ is this script's own folder, first on sys.path

CASES = [  # rows, global batch, micro batch, dp, horizon, dataset drop_last, eval interval, eval iters, scheduler
    (1000, 64, 1, 8, {"num_epochs": 3}, True, 10, 2, {"lr_warmup_iters": 5}),  # 15.6 batches: padded last batch
    (1000, 64, 1, 8, {"train_iters": 47}, True, 10, 2, {"lr_warmup_iters": 5}),  # 15 batches an epoch, 40 rows dropped
    (7144, 64, 2, 4, {"num_epochs": 1.5}, True, 5, 1, {"lr_warmup_fraction": 0.1}),
    (500, 32, 4, 2, {"train_samples": 1000}, True, 0, 1, {"lr_warmup_fraction": 0.05}),
    (500, 32, 4, 2, {"train_samples": 1000}, True, 0, 1, {"lr_warmup_iters": 2}),  # refused: warmup in samples here
    (130, 16, 1, 4, {"train_iters": 20}, False, 7, 3, {"lr_warmup_iters": 40}),  # drop_last False: padded; warmup capped
    (300, 32, 2, 2, {"num_epochs": 2}, True, 4, 1, {"lr_warmup_iters": 1, "max_steps": 30}),
]


def _functions(path: Path, wanted: dict[str, str], namespace: dict) -> dict:
    """The named functions (`Class.method` or `function`) of a source file, compiled into `namespace`."""
    tree = ast.parse(path.read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in wanted.values():
            found[node.name] = node
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and f"{node.name}.{item.name}" in wanted.values():
                    found[f"{node.name}.{item.name}"] = item
    out = {}
    for name, dotted in wanted.items():
        if dotted not in found:
            continue
        node = found[dotted]
        node.decorator_list = []
        module = ast.Module(body=[node], type_ignores=[])
        exec(compile(ast.fix_missing_locations(module), str(path), "exec"), namespace)
        out[name] = namespace[node.name]
    return out


def _config(case: tuple) -> SimpleNamespace:
    rows, global_batch, micro, dp, horizon, drop_last, eval_interval, eval_iters, scheduler = case
    train = SimpleNamespace(**{"train_iters": None, "train_samples": None, "num_epochs": None, "global_batch_size": global_batch,
                               "micro_batch_size": micro, "rampup_batch_size": None, "_train_iters_from_num_epochs": False, **horizon})
    sched = SimpleNamespace(max_steps=None, lr_decay_iters=None, lr_wsd_decay_iters=None, lr_decay_style="cosine",
                            lr_warmup_fraction=None, lr_warmup_iters=0, lr_decay_samples=None, lr_wsd_decay_samples=None,
                            lr_warmup_samples=0, lr_decay_steps=None, lr_warmup_steps=None, wd_incr_steps=None, wsd_decay_steps=None)
    for key, value in scheduler.items():
        setattr(sched, key, value)
    return SimpleNamespace(train=train, scheduler=sched, dataset=SimpleNamespace(drop_last=drop_last, dataloader_type="batch"),
                           validation=SimpleNamespace(eval_interval=eval_interval, eval_iters=eval_iters, eval_global_batch_size=None))


def record_case(case: tuple, code: dict, sampler_class) -> dict:
    rows, global_batch, micro, dp, horizon = case[:5]
    cfg = _config(case)
    if "num_epochs" in horizon and "resolve_num_epochs" not in code:
        return {"case": list(case[:5]), "not_in_release": "num_epochs"}
    printed = io.StringIO()
    with redirect_stdout(printed), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code["finalize"](cfg.train)
        try:
            code["compatible"](cfg)
        except AssertionError as error:
            return {"case": list(case[:5]), "scheduler": case[8], "refused": str(error)}
        cfg._calculate_scheduler_steps = lambda: code["scheduler_steps"](cfg)
        if cfg.train.num_epochs is not None:
            code["resolve_num_epochs"](cfg, rows)
        else:
            code["scheduler_steps"](cfg)
    train_iters = cfg.train.train_iters
    drop_last = False if cfg.train.num_epochs is not None else cfg.dataset.drop_last  # data/loaders.py
    samplers = [_sampler(sampler_class, rows, global_batch, micro, dp, rank, drop_last) for rank in range(dp)]
    per_epoch = len(samplers[0])
    streams = [code["cyclic_iter"](s) for s in samplers]
    padded = real = 0
    seen = set()
    for _ in range(train_iters):
        for stream in streams:
            batch = next(stream)
            padded += sum(1 for i in batch if i < 0)
            real += sum(1 for i in batch if i >= 0)
            seen.update(i for i in batch if i >= 0)
    train_samples, valid_samples, _test = code["num_samples"](cfg)
    return {"case": list(case[:5]), "drop_last": drop_last, "eval_interval": cfg.validation.eval_interval,
            "eval_iters": cfg.validation.eval_iters, "scheduler": case[8], "train_iters": train_iters,
            "global_batches_per_epoch": per_epoch, "padded_samples": padded, "real_samples": real, "distinct_rows": len(seen),
            "lr_decay_iters": cfg.scheduler.lr_decay_iters, "lr_decay_steps": cfg.scheduler.lr_decay_steps,
            "lr_warmup_steps": cfg.scheduler.lr_warmup_steps, "target_train_samples": train_samples,
            "target_valid_samples": valid_samples, "printed": [line for line in printed.getvalue().splitlines() if line],
            "warned": [str(w.message) for w in caught]}


def _sampler(sampler_class, rows, global_batch, micro, dp, rank, drop_last):
    import inspect

    kwargs = {"total_samples": rows, "consumed_samples": 0, "micro_batch_size": micro, "global_batch_size": global_batch,
              "data_parallel_rank": rank, "data_parallel_size": dp, "drop_last": drop_last,
              "pad_samples_to_global_batch_size": not drop_last, "shuffle": False}
    names = inspect.signature(sampler_class).parameters
    return sampler_class(**{k: v for k, v in kwargs.items() if k in names})


def record_one(root: str) -> dict:
    base = Path(root) / "src" / "megatron" / "bridge"
    spec = importlib.util.spec_from_file_location("bridge_samplers", base / "data" / "samplers.py")
    samplers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(samplers)
    namespace = {"math": math, "warnings": warnings, "print_rank_0": print, "Iterable": object, "Iterator": object,
                 "ConfigContainer": object}
    code = _functions(base / "training" / "config.py", {
        "finalize": "TrainingConfig.finalize", "resolve_num_epochs": "ConfigContainer._resolve_num_epochs",
        "scheduler_steps": "ConfigContainer._calculate_scheduler_steps",
        "compatible": "ConfigContainer._validate_training_scheduler_compatibility"}, namespace)
    code.update(_functions(base / "data" / "loaders.py", {"cyclic_iter": "cyclic_iter", "num_samples": "get_train_valid_test_num_samples"},
                           namespace))
    release = (Path(root) / "RELEASE").read_text().strip().lstrip("v")
    return {"version": release, "cases": [record_case(case, code, samplers.MegatronPretrainingBatchSampler) for case in CASES]}


if __name__ == "__main__":
    per_release.main(__file__, record_one, sys.argv[1:])

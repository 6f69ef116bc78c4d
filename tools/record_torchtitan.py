"""Record torchtitan's step arithmetic by running its own code on CPU, at two releases.

    python3 -m venv /tmp/ttvenv && /tmp/ttvenv/bin/pip install torch==2.13.0 datasets tyro
    pip download --no-deps -d /tmp/tt torchtitan==0.2.2 torchtitan==0.3.0   (unzip each wheel into its own folder)
    /tmp/ttvenv/bin/python tools/record_torchtitan.py /tmp/tt/022 /tmp/tt/030 > tests/fixtures/pretrain/torchtitan.json

What runs is torchtitan's: the batch-size checks and gradient accumulation of `Trainer.__init__` and its start-up
line (the statements are taken from train.py / trainer.py with `ast` and executed with the settings, since the
Trainer itself needs a process group), `build_lr_schedulers` (warmup clipping, decay and stable steps),
`CheckpointManager._should_save`, `BaseValidator.should_validate`, and `HuggingFaceTextDataset` sharding, packing and
windowing a small corpus (`split_dataset_by_node` over a `datasets.Dataset`, a word tokenizer adding bos and eos).
"""

from __future__ import annotations

import ast
import pathlib
import sys
from types import SimpleNamespace

import per_release  # tools/ is this script's own folder, first on sys.path

BATCH_CASES = [  # (local batch, global batch, dp, seq_len, steps, warmup)
    (8, -1, 1, 2048, 10000, 200), (8, 64, 2, 2048, 1000, 200), (4, 96, 8, 8192, 3000, 2000), (2, 16, 8, 4096, 100, 200),
    (8, 100, 4, 2048, 10, 2),
]
LR_CASES = [  # (training steps, warmup, decay_ratio, total_steps)
    (10000, 200, None, None), (100, 200, None, None), (1000, 100, 0.2, None), (1000, 900, 0.5, None), (1000, 10, None, 600),
    (50, 0, 0.1, None),
]
SAVE_CASES = [(100, 30, False), (1000, 500, False), (7, 10, True), (45, 15, False)]  # (steps, interval, first step)
EVAL_CASES = [(35, 10), (100, 50), (5, 10)]  # (steps, freq)
DOCS = [3, 17, 40, 1, 250, 9, 64, 128, 7, 31, 0, 12, 500, 2, 77]
DATA_CASES = [(8, 1, 1), (16, 1, 1), (33, 1, 3), (16, 2, 1), (16, 3, 1), (64, 4, 2), (2048, 1, 1)]  # (seq_len, dp, passes)


def _init_statements(source: str, first_target: str, last_target: str):
    """The statements of Trainer.__init__ from the assignment to `first_target` to the assert after `last_target`."""
    tree = ast.parse(source)
    init = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "__init__"
                and any(isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == first_target for s in n.body))
    body = init.body
    start = next(i for i, s in enumerate(body) if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == first_target)
    stop = next(i for i, s in enumerate(body) if i > start and isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == last_target)
    block = body[start:stop + 2]  # the assignment of GA and the assert after it
    banner = next(n for n in ast.walk(init) if isinstance(n, ast.Call) and ast.unparse(n.func) == "logger.info"
                  and "Trainer is initialized" in ast.unparse(n.args[0]))
    return compile(ast.Module(block, []), "trainer", "exec"), compile(ast.Expression(banner.args[0]), "banner", "eval")


def _batches(root: pathlib.Path):
    trainer = root / "torchtitan" / ("trainer.py" if (root / "torchtitan" / "trainer.py").exists() else "train.py")
    source = trainer.read_text()
    config_name = "job_config" if "job_config.training.local_batch_size" in source else "config"
    block, banner = _init_statements(source, "global_batch_size", "self.gradient_accumulation_steps")
    out = []
    for lbs, gbs, dp, seq, steps, warmup in BATCH_CASES:
        config = SimpleNamespace(training=SimpleNamespace(local_batch_size=lbs, global_batch_size=gbs, seq_len=seq, steps=steps),
                                 lr_scheduler=SimpleNamespace(warmup_steps=warmup))
        scope = {config_name: config, "batch_degree": dp, "self": SimpleNamespace()}
        row = {"local_batch_size": lbs, "global_batch_size": gbs, "dp": dp, "seq_len": seq, "steps": steps, "warmup_steps": warmup}
        try:
            exec(block, scope)
            row.update(gradient_accumulation_steps=scope["self"].gradient_accumulation_steps, printed=eval(banner, scope))
        except AssertionError as exc:
            row["error"] = str(exc)
        out.append(row)
    return out


def _lr(root: pathlib.Path):
    import torch

    if (root / "torchtitan" / "components" / "optimizer" / "lr_scheduler.py").exists():
        from torchtitan.components.optimizer import lr_scheduler as module

        config_cls = module.LRSchedulersContainer.Config

        def build(steps, **kw):
            return config_cls(**kw).build(optimizers=None, training_steps=steps)
    else:
        from torchtitan.components import lr_scheduler as module
        from torchtitan.config.job_config import LRScheduler as config_cls

        def build(steps, **kw):
            return module.build_lr_schedulers(None, config_cls(**kw), steps)
    module.LRSchedulersContainer = lambda optimizers, lr_lambda: lr_lambda  # keep the schedule function it builds
    out = []
    for steps, warmup, decay_ratio, total in LR_CASES:
        fn = build(steps, warmup_steps=warmup, decay_ratio=decay_ratio, total_steps=total)
        horizon = total or steps
        factors = [round(fn(step), 6) for step in range(horizon + 1)]
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, fn)  # as LRSchedulersContainer builds it
        used = []
        for _ in range(min(steps, 5)):
            used.append(round(optimizer.param_groups[0]["lr"], 6))
            optimizer.step()
            scheduler.step()
        out.append({"steps": steps, "warmup_steps": warmup, "decay_ratio": decay_ratio, "total_steps": total,
                    "warmup_used": fn.keywords["warmup_steps"], "decay_used": fn.keywords["decay_steps"],
                    "stable_used": fn.keywords["stable_steps"], "factor_first": factors[0], "factor_last": factors[-1],
                    "lr_of_first_steps": used})
    return out


def _saves_and_evals(root: pathlib.Path):
    try:
        from torchtitan.components.checkpointer.dcp import CheckpointManager
    except ImportError:
        from torchtitan.components.checkpoint import CheckpointManager
    from torchtitan.components.validate import BaseValidator

    saves = []
    for steps, interval, first in SAVE_CASES:
        me = SimpleNamespace(enable=True, load_only=False, interval=interval, enable_first_step_checkpoint=first)
        saves.append({"steps": steps, "interval": interval, "first_step": first,
                      "save_steps": [s for s in range(1, steps + 1) if CheckpointManager._should_save(me, s, last_step=s == steps)]})
    evals = []
    for steps, freq in EVAL_CASES:
        me = SimpleNamespace(config=SimpleNamespace(freq=freq), job_config=SimpleNamespace(validation=SimpleNamespace(freq=freq)))
        evals.append({"steps": steps, "freq": freq, "eval_steps": [s for s in range(1, steps + 1) if BaseValidator.should_validate(me, s)]})
    return saves, evals


class _WordTokenizer:
    """One id per word, bos 1 and eos 2 as the real tokenizers add them."""

    def encode(self, text, add_bos=False, add_eos=False):
        return [1] * add_bos + [7] * len(text.split()) + [2] * add_eos


def _windows(root: pathlib.Path):
    from datasets import Dataset
    from torchtitan.hf_datasets import text_datasets

    out = []
    for seq, dp, passes in DATA_CASES:
        rows = [{"text": "w " * n} for n in DOCS] * passes  # a pass repeated: the token buffer carries over, as on re-loop
        text_datasets._validate_dataset = lambda name, path, rows=rows: (path, lambda _p: Dataset.from_list(rows), lambda s: s["text"])
        per_rank = []
        for rank in range(dp):
            ds = text_datasets.HuggingFaceTextDataset("tiny", None, _WordTokenizer(), seq_len=seq, dp_rank=rank, dp_world_size=dp)
            per_rank.append({"documents": len(ds._data), "samples": sum(1 for _ in ds)})
        out.append({"seq_len": seq, "dp": dp, "passes": passes, "documents": DOCS, "per_rank": per_rank})
    return out


KERNELS = {"torchtitan.models.moe.kernels": ("generate_permute_indices",),
           "torchtitan.distributed.minimal_async_ep.kernels": (
               "copy_full_counts_to_peers_kernel", "copy_rows_to_peers_kernel", "expand_topk_grad_kernel",
               "fill_combine_metadata_kernel", "fill_dispatch_metadata_kernel", "invert_flat_indices_kernel",
               "reduce_topk_slots_kernel", "topk_scores_grad_kernel")}


def _stub_triton() -> None:
    """Both releases import Triton kernels (MoE, expert parallel) at package import; none of them runs here, so stub modules stand in for
    them (a stub `triton` would mislead torch itself)."""
    import types

    for name, names in KERNELS.items():
        kernels = types.ModuleType(name)
        for attribute in names:
            setattr(kernels, attribute, None)
        sys.modules.setdefault(name, kernels)


def record_one(root: str) -> dict:
    root_path = pathlib.Path(root)
    sys.path.insert(0, str(root_path))
    _stub_triton()
    import logging

    logging.disable(logging.WARNING)
    version = next(root_path.glob("torchtitan-*.dist-info")).name.split("-")[1].removesuffix(".dist")
    saves, evals = _saves_and_evals(root_path)
    return {"version": version, "batches": _batches(root_path), "lr": _lr(root_path), "saves": saves, "evals": evals,
            "windows": _windows(root_path)}


if __name__ == "__main__":
    per_release.main(__file__, record_one, sys.argv[1:])

"""Record litgpt's step arithmetic by running its own `main` and `fit` (finetune/lora.py, pretrain.py), at two releases.

    python -m venv /tmp/lgvenv && /tmp/lgvenv/bin/pip install torch==2.13.0 lightning torchmetrics "jsonargparse[signatures]"
    pip download --no-deps litgpt==0.4.13 litgpt==0.5.13   (unzip each wheel into its own folder)
    /tmp/lgvenv/bin/python tools/record_litgpt.py /tmp/lg/0.4.13 /tmp/lg/0.5.13 > tests/fixtures/pretrain/litgpt.json

What runs is litgpt's: `finetune/lora.py main` (the LR horizon from len(train_dataloader), the real
`get_lr_scheduler`, a tiny LoRA GPT on CPU) and its `fit` loop (CycleIterator, the accumulation counter, the epoch and
max_steps stops, eval and save intervals); `pretrain.py fit` (max_iters from max_tokens, warmup iterations, the log
line with its remaining time) and both scripts' `validate_args`. The train loader is built as litgpt's data modules
build it (batch_size=micro_batch_size, shuffle, its SFT collate function) and distributed as Fabric's
`setup_dataloaders` does it (`Fabric._get_distributed_sampler`: DistributedSampler, drop_last=False). Replaced by stubs:
the Fabric process group (rank 0 of `devices x num_nodes`), the backward pass, checkpoint writing, text generation
and the validation loss.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import per_release  # tools/ is this script's own folder, first on sys.path

FINETUNE = [  # rows, devices, nodes, global batch, micro batch, TrainArgs given
    (168, 1, 1, 16, 1, {}),  # the script's defaults: 5 epochs, warmup 100
    (10, 1, 1, 4, 1, {"epochs": 5, "lr_warmup_steps": 2}),  # L = 10, GA = 4: 12 steps against a horizon of 10
    (103, 2, 1, 16, 2, {"epochs": 3, "lr_warmup_steps": 3, "save_interval": 5}),
    (200, 1, 1, 8, 2, {"epochs": 4, "max_steps": 30, "lr_warmup_steps": 5, "save_interval": 10}),
    (97, 3, 1, 12, 1, {"epochs": 2, "lr_warmup_steps": 1, "save_interval": 4}),
    (64, 2, 2, 16, 2, {"epochs": 2, "lr_warmup_steps": 2}),  # two nodes: before 0.5.8 accumulation ignores them
    (11, 1, 1, 4, 1, {"epochs": 1, "lr_warmup_steps": 1}),  # before 0.5.2 the twelfth micro-batch completes a third step
]
FINETUNE_EVAL = {1: 3, 2: 4, 4: 5}
"""eval.interval of some cases (case index -> interval); the others keep the script's 100."""
PRETRAIN = [  # blocks in the loader, devices, nodes, global batch, micro batch, seq length, TrainArgs given
    (64, 1, 1, 8, 2, 16, {"max_tokens": 4096, "lr_warmup_steps": 3, "save_interval": 5}),
    (10, 2, 1, 8, 1, 8, {"max_tokens": 3000, "lr_warmup_fraction": 0.5, "lr_warmup_steps": None, "save_interval": None}),
    (40, 1, 1, 4, 4, 8, {"max_tokens": 1000, "lr_warmup_steps": 2, "save_interval": 3}),
]
PRETRAIN_CHECKS = [  # TrainArgs given to pretrain.py's validate_args
    {"max_tokens": 1000, "max_norm": 1.0, "max_steps": 10},
    {"max_tokens": 1000, "max_norm": 1.0, "epochs": 2},
]


class StubFabric:
    """Rank 0 of a `world`-process run: what litgpt's loops call on Fabric, without a process group."""

    def __init__(self, world: int):
        import torch

        self.world_size, self.global_rank, self.device = world, 0, torch.device("cpu")
        self.lines: list[str] = []
        self.strategy = type("Strategy", (), {"precision": None})()

    def print(self, *args, **kwargs):
        self.lines.append(" ".join(str(a) for a in args))

    def no_backward_sync(self, module, enabled=True):
        return contextlib.nullcontext()

    def init_module(self, **kwargs):
        return contextlib.nullcontext()

    def rank_zero_first(self, **kwargs):
        return contextlib.nullcontext()

    def backward(self, loss, **kwargs):
        pass

    def clip_gradients(self, *args, **kwargs):
        pass

    def log_dict(self, *args, **kwargs):
        pass

    def barrier(self, *args, **kwargs):
        pass

    def all_reduce(self, tensor, **kwargs):
        return tensor

    def seed_everything(self, seed):
        import torch

        torch.manual_seed(seed)

    def setup_module(self, module):
        return module

    def setup_optimizers(self, optimizer):
        return optimizer

    def setup_dataloaders(self, *loaders):
        """As Fabric: a DistributedSampler in place of the loader's sampler when there is more than one process."""
        import lightning as L
        from lightning.fabric.utilities.data import _update_dataloader

        if self.world_size > 1:
            loaders = [_update_dataloader(dl, L.Fabric._get_distributed_sampler(dl, num_replicas=self.world_size, rank=0))
                       for dl in loaders]
        return loaders if len(loaders) > 1 else loaders[0]


class StubThroughput:
    """ThroughputMonitor measures time; the steps do not depend on it."""

    def __init__(self, *args, **kwargs):
        pass

    def update(self, **kwargs):
        pass

    def compute(self):
        return {}

    def compute_and_log(self, **kwargs):
        return {}


def _sft_rows(count: int):
    import torch

    rows = []
    for i in range(count):
        ids = torch.arange(4 + i % 5) % 60 + 1
        rows.append({"input_ids": ids, "labels": ids.clone(), "token_counts": {"raw": len(ids), "raw_plus_prompt_template": len(ids)}})
    return rows


def _kwargs_for(function, **available):
    names = inspect.signature(function).parameters
    return {name: value for name, value in available.items() if name in names}


def record_finetune(lora, case: tuple, eval_interval: int | None) -> dict:
    import torch
    from litgpt.args import EvalArgs, TrainArgs
    from litgpt.data.base import get_sft_collate_fn
    from litgpt.lora import Config
    from torch.utils.data import DataLoader

    rows, devices, nodes, global_batch, micro, given = case
    fabric = StubFabric(devices * nodes)
    steps, evals, saves, lrs, horizon = [0], [], [], [], {}
    train_loader = DataLoader(_sft_rows(rows), batch_size=micro, shuffle=True, generator=torch.Generator().manual_seed(42),
                              collate_fn=get_sft_collate_fn())
    val_loader = DataLoader(_sft_rows(4), batch_size=micro, shuffle=False, collate_fn=get_sft_collate_fn())
    loaders = {}

    def get_dataloaders(fabric_, data, tokenizer, train):
        loaders["train"], loaders["val"] = fabric_.setup_dataloaders(train_loader, val_loader)
        return loaders["train"], loaders["val"]

    real_scheduler = lora.get_lr_scheduler

    def get_lr_scheduler(optimizer, warmup_steps, max_steps):
        horizon.update(warmup=warmup_steps, max_steps=max_steps)
        scheduler = real_scheduler(optimizer, warmup_steps=warmup_steps, max_steps=max_steps)
        real_step = optimizer.step

        def step(*args, **kwargs):
            steps[0] += 1
            return real_step(*args, **kwargs)

        optimizer.step = step
        real_sched_step = scheduler.step

        def sched_step(*args, **kwargs):
            real_sched_step(*args, **kwargs)
            lrs.append(round(scheduler.get_last_lr()[0], 9))

        scheduler.step = sched_step
        return scheduler

    def validate(fabric_, model, val_dataloader, eval_args, verbose=True):
        if verbose and not loaders.get("done"):
            evals.append(steps[0])
        return torch.tensor(1.0)

    def save_checkpoint(fabric_, model, path):
        if not loaders.get("done"):
            saves.append(steps[0])

    stubs = {"get_dataloaders": get_dataloaders, "get_lr_scheduler": get_lr_scheduler, "validate": validate,
             "save_lora_checkpoint": save_checkpoint, "Tokenizer": lambda *a, **k: None,
             "generate_example": lambda *a, **k: None, "load_checkpoint": lambda *a, **k: None,
             "copy_config_files": lambda *a, **k: None, "save_hyperparameters": lambda *a, **k: None,
             "save_prompt_style": lambda *a, **k: None, "merge_lora": lambda *a, **k: None,
             "get_longest_seq_length": lambda data: (8, 0), "ThroughputMonitor": StubThroughput}
    real_fit = lora.fit

    def fit(*args, **kwargs):
        result = real_fit(*args, **kwargs)
        loaders["done"] = True
        return result

    stubs["fit"] = fit
    saved = {name: getattr(lora, name) for name in stubs if hasattr(lora, name)}
    for name, stub in stubs.items():
        setattr(lora, name, stub)
    train = TrainArgs(save_interval=1000, log_interval=1, global_batch_size=global_batch, micro_batch_size=micro,
                      lr_warmup_steps=100, epochs=5, max_seq_length=None)
    for key, value in given.items():
        setattr(train, key, value)
    eval_args = EvalArgs(interval=eval_interval or 100, max_new_tokens=100, max_iters=100)
    config = Config(name="tiny", block_size=32, vocab_size=64, padded_vocab_size=64, n_layer=1, n_head=2, n_embd=16,
                    lora_r=2, lora_alpha=4, lora_query=True)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            lora.main(**_kwargs_for(lora.main, fabric=fabric, devices=devices, num_nodes=nodes, seed=1337, config=config,
                                    data=SimpleNamespace(prompt_style=None), checkpoint_dir=Path("/nonexistent"), out_dir=Path("/tmp/litgpt_record_out"),
                                    train=train, eval=eval_args, optimizer="AdamW", precision=None))
    finally:
        for name, value in saved.items():
            setattr(lora, name, value)
    return {"rows": rows, "devices": devices, "num_nodes": nodes, "global_batch_size": global_batch, "micro_batch_size": micro,
            "train": given, "eval_interval": eval_args.interval, "train_dataloader_len": len(loaders["train"]),
            "gradient_accumulation_iters": _accumulation(train, devices, nodes), "lr_max_steps": horizon["max_steps"],
            "warmup_steps": horizon["warmup"], "optimizer_steps": steps[0], "eval_steps": evals, "save_steps": saves,
            "lr_after_each_step": lrs, "stop_lines": [line for line in fabric.lines if "reached" in line],
            "step_lines": [line for line in fabric.lines if line.startswith("Epoch ")][-3:]}


def _accumulation(train, devices: int, nodes: int) -> int:
    """TrainArgs.gradient_accumulation_iters as the release defines it (num_nodes from 0.5.8)."""
    if "num_nodes" in inspect.signature(train.gradient_accumulation_iters).parameters:
        return train.gradient_accumulation_iters(devices, nodes)
    return train.gradient_accumulation_iters(devices)


def record_pretrain(pretrain, case: tuple) -> dict:
    import torch
    from litgpt.args import EvalArgs, TrainArgs
    from litgpt.config import Config
    from litgpt.model import GPT
    from torch.utils.data import DataLoader

    blocks, devices, nodes, global_batch, micro, seq, given = case
    fabric = StubFabric(devices * nodes)
    counters, evals, saves, warm = {"steps": 0}, [], [], {}
    config = Config(name="tiny", block_size=seq, vocab_size=64, padded_vocab_size=64, n_layer=1, n_head=2, n_embd=16)
    model = GPT(config)
    model.max_seq_length = seq
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    real_step = optimizer.step

    def step(*args, **kwargs):
        counters["steps"] += 1
        return real_step(*args, **kwargs)

    optimizer.step = step
    data = torch.randint(0, 64, (blocks, seq + 1))
    train_loader = fabric.setup_dataloaders(DataLoader(data, batch_size=micro, shuffle=False))
    real_get_lr = pretrain.get_lr

    def get_lr(lr, it, warmup_iters, max_iters, min_lr):
        warm.update(warmup_iters=warmup_iters, max_iters=max_iters)
        return real_get_lr(lr, it, warmup_iters, max_iters, min_lr)

    def validate(fabric_, model_, val_dataloader, max_iters, verbose=True):
        if verbose:
            evals.append(counters["steps"])
        return torch.tensor(1.0)

    stubs = {"get_lr": get_lr, "validate": validate, "ThroughputMonitor": StubThroughput,
             "save_checkpoint": lambda fabric_, state, tokenizer_dir, path: saves.append(counters["steps"])}
    saved = {name: getattr(pretrain, name) for name in stubs}
    for name, stub in stubs.items():
        setattr(pretrain, name, stub)
    train = TrainArgs(save_interval=1000, log_interval=1, global_batch_size=global_batch, micro_batch_size=micro,
                      max_tokens=int(3e12), max_norm=1.0, min_lr=4e-5, lr_warmup_steps=2000, tie_embeddings=False)
    for key, value in given.items():
        setattr(train, key, value)
    eval_args = EvalArgs(interval=4, max_iters=2, final_validation=False)
    state = {"model": model, "optimizer": optimizer, "iter_num": 0, "step_count": 0}
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            pretrain.fit(**_kwargs_for(pretrain.fit, fabric=fabric, devices=devices, num_nodes=nodes, state=state,
                                       train_dataloader=train_loader, val_dataloader=[data[:1]], out_dir=Path("/tmp/litgpt_record_out"),
                                       tokenizer_dir=None, train=train, eval=eval_args))
    finally:
        for name, value in saved.items():
            setattr(pretrain, name, value)
    return {"blocks": blocks, "devices": devices, "num_nodes": nodes, "global_batch_size": global_batch, "micro_batch_size": micro,
            "max_seq_length": seq, "train": given, "eval_interval": eval_args.interval, "train_dataloader_len": len(train_loader),
            "gradient_accumulation_iters": _accumulation(train, devices, nodes), "max_iters": state["iter_num"],
            "optimizer_steps": counters["steps"], "warmup_iters": warm.get("warmup_iters"), "eval_steps": evals,
            "save_steps": saves, "step_lines": [line for line in fabric.lines if line.startswith("Epoch ")][-2:]}


def check_pretrain(pretrain, given: dict) -> dict:
    from litgpt.args import EvalArgs, TrainArgs

    train = TrainArgs(**given)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            pretrain.validate_args(train, EvalArgs(), None, False)
            refused = None
        except ValueError as error:
            refused = re.findall(r"doesn't support the '(\w+)' argument", str(error))
    said = [str(w.message) for w in caught if "max_steps" in str(w.message)]
    return {"train": given, "refused": refused, "warned": said}


def record_one(root: str) -> dict:
    sys.path.insert(0, root)
    import litgpt.finetune.lora as lora
    import litgpt.pretrain as pretrain

    version = next(Path(root).glob("litgpt-*.dist-info")).name.split("-")[1].removesuffix(".dist")
    return {"version": version,
            "finetune": [record_finetune(lora, case, FINETUNE_EVAL.get(i)) for i, case in enumerate(FINETUNE)],
            "pretrain": [record_pretrain(pretrain, case) for case in PRETRAIN],
            "pretrain_checks": [check_pretrain(pretrain, given) for given in PRETRAIN_CHECKS]}


if __name__ == "__main__":
    per_release.main(__file__, record_one, sys.argv[1:])

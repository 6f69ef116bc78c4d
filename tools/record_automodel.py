"""Record NeMo Automodel's step arithmetic by running its own StepScheduler over a real loader, at two releases.

    /tmp/ttvenv/bin/pip install torch==2.13.0 torchdata   (the venv of tools/record_torchtitan.py serves)
    pip download --no-deps nemo_automodel==0.5.0 nemo_automodel==0.7.0   (unzip each wheel into its own folder)
    /tmp/ttvenv/bin/python tools/record_automodel.py /tmp/am/o5 /tmp/am/o7 > tests/fixtures/pretrain/automodel.json

What runs is Automodel's: `StepSchedulerConfig` (its YAML defaults: num_epochs 10, ckpt_every_steps 100,
global_batch_size 32) built into a `StepScheduler` over a `StatefulDataLoader` with torchdata's
`StatefulDistributedSampler(drop_last=True)` and `batch_size=local_batch_size` (what `ParallelAwareDataloader` builds
for a map-style dataset without pipeline parallelism), iterated as the recipes do (`for epoch in
step_scheduler.epochs: for batches in step_scheduler: ...`), reading `is_ckpt_step` and `is_val_step` inside the loop.
"""

from __future__ import annotations

import sys

import per_release  # tools/ is this script's own folder, first on sys.path

CASES = [  # rows, dp, local batch, global batch, YAML keys of step_scheduler given
    (1000, 1, 1, 32, {"max_steps": 5000}),  # the trap: num_epochs keeps its default 10
    (1000, 1, 1, 32, {"max_steps": 5000, "num_epochs": None}),
    (1000, 1, 1, 32, {}),
    (1000, 2, 4, 32, {"num_epochs": 2, "ckpt_every_steps": 5, "val_every_steps": 4}),
    (1003, 3, 2, 12, {"num_epochs": 1, "ckpt_every_steps": None}),
    (500, 4, 2, 16, {"max_steps": 20, "num_epochs": 3, "ckpt_every_steps": 7, "save_checkpoint_every_epoch": False}),
    (77, 1, 3, 9, {"num_epochs": 2, "val_every_steps": 3, "validate_on_checkpoint": False}),
    (1000, 2, 2, 12, {"num_epochs": 1}),  # 12 % (2 x 2) == 0: accumulation 3 over 250 batches leaves a partial window
]


def record_one(root: str) -> dict:
    sys.path.insert(0, root)
    import logging

    logging.disable(logging.WARNING)
    import torch
    from nemo_automodel.components.training.step_scheduler import StepSchedulerConfig
    from torchdata.stateful_dataloader import StatefulDataLoader
    from torchdata.stateful_dataloader.sampler import StatefulDistributedSampler

    version = next(p for p in __import__("pathlib").Path(root).glob("nemo_automodel-*.dist-info")).name.split("-")[1].removesuffix(".dist")
    out = []
    for rows, dp, local, global_batch, keys in CASES:
        dataset = torch.arange(rows)
        sampler = StatefulDistributedSampler(dataset, num_replicas=dp, rank=0, shuffle=False, drop_last=True)
        loader = StatefulDataLoader(dataset, batch_size=local, sampler=sampler, drop_last=False)
        fields = StepSchedulerConfig.__dataclass_fields__
        if any(key not in fields for key in keys):  # a setting this release does not have
            out.append({"keys": keys, "not_in_release": sorted(k for k in keys if k not in fields)})
            continue
        quiet = {"preemption_signal": None} if "preemption_signal" in fields else {}
        config = StepSchedulerConfig(global_batch_size=global_batch, **quiet, **keys)
        scheduler = config.build(loader, dp, local)
        ckpt, val, epochs = [], [], []
        for epoch in scheduler.epochs:
            scheduler.set_epoch(epoch)
            epochs.append(epoch)
            for _batches in scheduler:
                if scheduler.is_ckpt_step:
                    ckpt.append(scheduler.step + 1)
                if scheduler.is_val_step:
                    val.append(scheduler.step + 1)
        out.append({"rows": rows, "dp": dp, "local_batch_size": local, "global_batch_size": global_batch, "keys": keys,
                    "dataloader_len": len(loader), "grad_acc_steps": scheduler.grad_acc_steps, "epoch_len": scheduler.epoch_len,
                    "num_epochs": scheduler.num_epochs, "max_steps": scheduler.max_steps,
                    "ckpt_every_steps": scheduler.ckpt_every_steps, "steps_run": scheduler.step, "epochs_started": len(epochs),
                    "ckpt_steps": ckpt, "val_steps": val})
    return {"version": version, "cases": out}


if __name__ == "__main__":
    per_release.main(__file__, record_one, sys.argv[1:])

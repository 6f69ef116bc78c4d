"""Record LLaMA-Factory v1's (`USE_V1=1`) loader and step horizon by running its own code on CPU.

    /tmp/ttvenv/bin/pip install torch==2.13.0 torchdata omegaconf transformers==4.57.1 accelerate==1.11.0
    pip download --no-deps llamafactory==0.9.5   (unzip the wheel into /tmp/lf)
    /tmp/ttvenv/bin/python tools/record_lf_v1.py /tmp/lf > tests/fixtures/llamafactory_v1/batching_0.9.5.json

main, which has no release yet, from a source tree at a named commit:

    git -C LLaMA-Factory archive ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30 src/llamafactory | tar -x -C /tmp/lfmain
    /tmp/ttvenv/bin/python tools/record_lf_v1.py /tmp/lfmain/src main@ff6d4d1 > tests/fixtures/llamafactory_v1/batching_main-ff6d4d1.json

What runs is LLaMA-Factory's: `BatchGenerator` (v1/core/utils/batching.py: its accumulation, its refusals, the
StatefulDistributedSampler + StatefulDataLoader with drop_last=True, `len()` and the batches one epoch yields, with
the data-parallel rank and size it asks `DistributedInterface` for set per case) and the statements of
`BaseTrainer.__init__` that set `num_training_steps` and `save_steps` (v1/core/base_trainer.py, taken with `ast` and
executed, since the trainer itself needs a model). DROP_CASES then run the epoch loop of `BaseTrainer.fit`
(`while global_step < num_training_steps: set_epoch(epoch); for micro_batches in generator: global_step += 1`,
base_trainer.py fit) on rank 0 with every tenth row made unsupervised (longer than cutoff_len, every loss weight 0),
which main's `_drop_unsupervised` (batching.py, since b61140d) drops at batching.
"""

from __future__ import annotations

import ast
import json
import pathlib
import sys
from types import SimpleNamespace

CASES = [  # rows, dp, micro batch, global batch (None: dp x micro), epochs, max_steps, save_epochs
    (1000, 1, 2, None, 3, None, None), (1000, 4, 2, 32, 3, None, None), (1003, 3, 2, 12, 2, None, 0.5),
    (100, 2, 4, 24, 3, None, None), (1000, 8, 1, 16, 1, 500, None), (10, 4, 2, 16, 3, None, None), (999, 2, 3, 10, 1, None, None),
]


DROP_CASES = [  # rows, dp, micro batch, global batch, epochs; every tenth row unsupervised
    (1000, 1, 2, 8, 3), (1000, 4, 2, 32, 2), (400, 2, 4, 16, 3), (95, 1, 2, 8, 1),
    # added after the estimate was written, to measure it on cases it was not chosen on
    (2000, 8, 2, 64, 2), (517, 3, 1, 6, 2), (3000, 2, 4, 32, 1), (250, 1, 3, 12, 4), (1234, 2, 1, 10, 3),
]
CUTOFF_LEN = 4
UNSUPERVISED_EVERY = 10
MAX_LOOP_EPOCHS = 50
"""The recorded loop stops here: an epoch that yields no step would loop for ever."""


class _Renderer:
    """Every row becomes a short model input; the token content does not change how many batches there are. A row
    marked unsupervised becomes longer than cutoff_len with every loss weight 0 (its answer cut off)."""

    processor = object()  # a tokenizer, not a multimodal processor: no cross-rank media alignment

    def process_samples(self, samples):
        out = []
        for sample in samples:
            size = CUTOFF_LEN + 2 if sample.get("unsupervised") else 3
            weight = 0.0 if sample.get("unsupervised") else 1.0
            out.append({"input_ids": [1] * size, "attention_mask": [1] * size, "labels": [1] * size, "loss_weights": [weight] * size,
                        "position_ids": list(range(size))})
        return out


def _loop(generator, num_training_steps: int) -> list[int]:
    """Steps each epoch of BaseTrainer.fit's loop yields until num_training_steps (rank 0)."""
    global_step, epoch, per_epoch = 0, 0, []
    while global_step < num_training_steps and epoch < MAX_LOOP_EPOCHS:
        generator.set_epoch(epoch)
        taken = 0
        for _ in generator:
            global_step += 1
            taken += 1
            if global_step >= num_training_steps:
                break
        per_epoch.append(taken)
        epoch += 1
    return per_epoch


def _record_drops(batching, interface, horizon) -> list[dict]:
    out = []
    for rows, dp, micro, global_batch, epochs in DROP_CASES:
        interface.DistributedInterface.get_world_size = lambda self, dim=None, dp=dp: dp
        interface.DistributedInterface.get_rank = lambda self, dim=None: 0
        data = [{"messages": [], "unsupervised": i % UNSUPERVISED_EVERY == 0} for i in range(rows)]
        generator = batching.BatchGenerator(data, _Renderer(), micro_batch_size=micro, global_batch_size=global_batch,
                                            cutoff_len=CUTOFF_LEN, pin_memory=False)
        me = SimpleNamespace(args=SimpleNamespace(max_steps=None, num_train_epochs=epochs, save_epochs=None, save_steps=None),
                             train_batch_generator=generator)
        exec(horizon, {"self": me, "int": int, "max": max, "len": len})
        out.append({"rows": rows, "dp": dp, "micro_batch_size": micro, "global_batch_size": global_batch, "num_train_epochs": epochs,
                    "unsupervised_rows": sum(row["unsupervised"] for row in data), "cutoff_len": CUTOFF_LEN, "len": len(generator),
                    "num_training_steps": me.num_training_steps, "steps_per_loop_epoch": _loop(generator, me.num_training_steps)})
    return out


def _horizon_statements(root: pathlib.Path):
    tree = ast.parse((root / "llamafactory" / "v1" / "core" / "base_trainer.py").read_text())
    init = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "__init__"
                and "num_training_steps" in ast.unparse(n))
    body = [s for s in init.body if isinstance(s, ast.If) and ("num_training_steps" in ast.unparse(s) or "save_epochs" in ast.unparse(s.test))]
    return compile(ast.Module(body, []), "base_trainer", "exec")


def record(root: str, label: str | None = None) -> dict:
    root_path = pathlib.Path(root)
    sys.path.insert(0, root)
    import logging

    logging.disable(logging.WARNING)
    from llamafactory.v1.accelerator import interface
    from llamafactory.v1.core.utils import batching

    horizon = _horizon_statements(root_path)
    version = label or next(root_path.glob("llamafactory-*.dist-info")).name.split("-")[1].removesuffix(".dist")
    out = []
    for rows, dp, micro, global_batch, epochs, max_steps, save_epochs in CASES:
        row = {"rows": rows, "dp": dp, "micro_batch_size": micro, "global_batch_size": global_batch, "num_train_epochs": epochs,
               "max_steps": max_steps, "save_epochs": save_epochs}
        per_rank = []
        try:
            for rank in range(dp):
                interface.DistributedInterface.get_world_size = lambda self, dim=None, dp=dp: dp
                interface.DistributedInterface.get_rank = lambda self, dim=None, rank=rank: rank
                generator = batching.BatchGenerator([{"messages": []}] * rows, _Renderer(), micro_batch_size=micro,
                                                    global_batch_size=global_batch, pin_memory=False)
                generator.set_epoch(0)
                per_rank.append({"len": len(generator), "batches": sum(1 for _ in generator)})
        except ValueError as exc:
            row["error"] = str(exc)
            out.append(row)
            continue
        me = SimpleNamespace(args=SimpleNamespace(max_steps=max_steps, num_train_epochs=epochs, save_epochs=save_epochs, save_steps=None),
                             train_batch_generator=generator)
        exec(horizon, {"self": me, "int": int, "max": max, "len": len})
        row.update(num_micro_batch=generator.num_micro_batch, per_rank=per_rank, num_training_steps=me.num_training_steps,
                   save_steps=me.args.save_steps)
        out.append(row)
    return {"recorded_by": "tools/record_lf_v1.py", "version": version, "cases": out,
            "drop_cases": _record_drops(batching, interface, horizon)}


if __name__ == "__main__":
    print(json.dumps(record(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None), indent=1))

"""Record where ms-swift's Megatron trainer stops: its cyclic data iterator, driven by its training loop, at two releases.

    pip download --no-deps ms-swift==3.12.6 ; pip download --no-deps ms-swift==4.6.0   (unzip each wheel into its own folder)
    /tmp/ttvenv/bin/python tools/record_swift_megatron_end.py /tmp/sw/3.12.6 /tmp/sw/4.6.0 > tests/fixtures/pretrain/swift_megatron_end.json

What runs is ms-swift's: the training-mode branch of the cyclic iterator (4.x `BaseMegatronTrainer.cyclic_iter`,
3.x `BaseMegatronTrainer.new_cyclic_iter`, which replaces Megatron's `training.cyclic_iter`; both in
swift/megatron/trainers/base.py), which ends a run one iteration after the epochs' data runs out, and for streamed
data its `DataLoaderDispatcher.__iter__` (4.x swift/dataloader/dispatcher.py, 3.x swift/llm/data_loader.py): rank 0
reads dp micro-batches of a torch DataLoader per round and scatters them (seen here from rank 0). Those files import
megatron-core (GPUs); the functions are taken from the release's source with `ast`. The loop around them is the
trainer's: `while iteration < train_iters:` one train step draws global_batch / (micro x dp) micro-batches, then
iteration += 1 (4.x BaseMegatronTrainer.train / run_train_step; 3.x Megatron's train(), which sets curr_iteration).
A dataset with a length goes through Megatron's per-rank sampler: N // (micro x dp) micro-batches per epoch per rank.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import SimpleNamespace

import per_release  # tools/ is this script's own folder, first on sys.path

CASES = [  # rows, micro batch, dp, global batch, epochs, train_iters given (None: the epochs' count), streamed
    (1000, 1, 4, 16, 3, None, False), (1003, 2, 2, 12, 2, None, False), (7144, 1, 8, 64, 1, None, False),
    (1000, 1, 4, 16, 3, 10**6, True), (1003, 2, 2, 12, 2, 10**6, True), (1001, 2, 2, 8, 1, 10**6, True),
    (999, 1, 3, 9, 2, 50, True), (7144, 1, 8, 64, 1, 10**6, True),
]


def _take(path: Path, owner: str, name: str, namespace: dict):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == owner:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    exec(compile(ast.fix_missing_locations(ast.Module(body=[item], type_ignores=[])), str(path), "exec"), namespace)
                    return namespace[name]
    raise LookupError(f"{owner}.{name}")


class _Epochs:
    """Megatron's per-rank sampler seen from one rank: the same number of micro-batches every epoch."""

    def __init__(self, microbatches: int):
        self.microbatches = microbatches

    def __iter__(self):
        return iter(range(self.microbatches))


def _dispatcher(root: Path, major: int, rows: int, micro: int, dp: int):
    import torch

    class Stream(torch.utils.data.IterableDataset):
        """A streamed dataset (no length): rows 0..n-1."""

        def __iter__(self):
            return iter(range(rows))

    path = root / ("swift/dataloader/dispatcher.py" if major >= 4 else "swift/llm/data_loader.py")
    namespace = {"tqdm": lambda it, **_: it, "to_device": lambda data, device: data}
    iterate = _take(path, "DataLoaderDispatcher", "__iter__", namespace)
    skip = _take(path, "DataLoaderDispatcher", "_skip_batches", namespace)
    dispatcher = SimpleNamespace(base_dataloader=torch.utils.data.DataLoader(Stream(), batch_size=micro), device=None,
                                 skip_batches=0, rank=0, world_size=dp, _scatter_object_list=lambda inputs: inputs[0])
    dispatcher._skip_batches = lambda base_iter: skip(dispatcher, base_iter)
    return lambda: iterate(dispatcher)


class _Iterable:
    def __init__(self, make):
        self.make = make

    def __iter__(self):
        return self.make()


def record_one(root: str) -> dict:
    root_path = Path(root)
    version = next(root_path.glob("ms_swift-*.dist-info")).name.split("-")[1].removesuffix(".dist")
    major = int(version.split(".")[0])
    logger = SimpleNamespace(info=lambda *a, **k: None)
    out = []
    for rows, micro, dp, global_batch, epochs, given, streamed in CASES:
        per_step = global_batch // (micro * dp)
        if streamed:
            iterable = _Iterable(_dispatcher(root_path, major, rows, micro, dp))
            train_iters = given
        else:
            iterable = _Epochs(rows // (micro * dp))
            train_iters = rows // (micro * dp) * (micro * dp) * epochs // global_batch  # init_iters (tools/record_swift_megatron.py)
        args = SimpleNamespace(train_iters=train_iters, curr_iteration=0, num_train_epochs=epochs, max_epochs=epochs)
        state = SimpleNamespace(iteration=0)
        me = SimpleNamespace(args=args, state=state, unwrapped_models=[SimpleNamespace(training=True)])
        namespace = {"logger": logger, "get_args": lambda args=args: args}
        cyclic = _take(root_path / "swift/megatron/trainers/base.py", "BaseMegatronTrainer",
                       "cyclic_iter" if major >= 4 else "new_cyclic_iter", namespace)
        data = iter(cyclic(me, iterable))
        drawn = 0
        while state.iteration < args.train_iters:
            args.curr_iteration = state.iteration
            for _ in range(per_step):
                next(data)
                drawn += 1
            state.iteration += 1
        out.append({"rows": rows, "micro_batch_size": micro, "dp": dp, "global_batch_size": global_batch, "epochs": epochs,
                    "train_iters_given": given, "streamed": streamed, "train_iters_before": train_iters,
                    "iterations_trained": state.iteration, "microbatches_drawn_per_rank": drawn})
    return {"version": version, "cases": out}


if __name__ == "__main__":
    per_release.main(__file__, record_one, sys.argv[1:])

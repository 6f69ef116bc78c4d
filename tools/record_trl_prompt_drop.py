"""Record whether TRL's DPOTrainer and KTOTrainer drop rows whose prompt alone fills `max_length`, by building each
trainer on CPU with a tiny random Llama and reading `len(trainer.train_dataset)`.

The data: 12 text rows (prompt, chosen, rejected) whose prompts grow from a few tokens to past `max_length`; each is
tokenized by the trainer itself (the recording keeps the prompt token counts TRL computed). Cases: DPO with
max_length 20 (keep_start, the default), DPO with truncation_mode keep_end, DPO with max_length None; KTO with
max_length 20 on the paired rows (which KTO first unpairs into 2N rows).

    python3 -m venv /tmp/trl-env && /tmp/trl-env/bin/pip install "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
    /tmp/trl-env/bin/pip install trl==1.9.0      # then 1.8.0 and 1.16.0: one recording per release
    /tmp/trl-env/bin/python tools/record_trl_prompt_drop.py > tests/fixtures/rl/prompt-drop-trl-1.9.0.json
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOKENIZER = ROOT / "tests" / "assets" / "tiny_tokenizer.json"
WORDS = "the model learns steps from tokens rows packing epochs batches sample count data".split()
MAX_LENGTH = 20


def rows() -> list[dict]:
    out = []
    for i in range(12):
        prompt = " ".join(WORDS[j % len(WORDS)] for j in range(2 + 4 * i))
        out.append({"prompt": prompt, "chosen": " yes it does", "rejected": " no it does not"})
    return out


def tiny_model(tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256)
    return LlamaForCausalLM(config)


def build(kind: str, **config) -> dict:
    import datasets
    import trl
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(TOKENIZER), eos_token="</s>", bos_token="<s>", pad_token="</s>")
    data = datasets.Dataset.from_list(rows())
    with tempfile.TemporaryDirectory() as out:
        common = {"output_dir": out, "report_to": [], "per_device_train_batch_size": 2, "use_cpu": True}
        if kind == "dpo":
            args = trl.DPOConfig(**common, **config)
            trainer = trl.DPOTrainer(model=tiny_model(tokenizer), ref_model=tiny_model(tokenizer), args=args, train_dataset=data,
                                     processing_class=tokenizer)
        else:
            args = trl.KTOConfig(**common, **config)
            trainer = trl.KTOTrainer(model=tiny_model(tokenizer), ref_model=tiny_model(tokenizer), args=args, train_dataset=data,
                                     processing_class=tokenizer)
        dataset = trainer.train_dataset
        prompts = [len(ids) for ids in dataset["prompt_ids"]] if "prompt_ids" in dataset.column_names else None
    return {"trainer": kind, "settings": config, "rows_in": len(data) * (2 if kind == "kto" else 1),
            "rows_kept": len(dataset), "kept_prompt_tokens": prompts}


def main() -> None:
    import trl

    cases = [build("dpo", max_length=MAX_LENGTH), build("dpo", max_length=MAX_LENGTH, truncation_mode="keep_end"),
             build("dpo", max_length=None), build("kto", max_length=MAX_LENGTH)]
    json.dump({"trl": trl.__version__, "prompts": [r["prompt"] for r in rows()], "cases": cases}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

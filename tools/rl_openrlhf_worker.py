"""Runs OpenRLHF's own data preparation and prompt-batch drawing without GPUs, vLLM or DeepSpeed; one JSON line per case.

- `trainer/ppo_trainer.py prepare_datasets` is taken from the release's source and executed with the real
  `blending_datasets` and `PromptDataset` (jsonl prompts written here) and a strategy whose `setup_dataloader` is what
  DeepspeedStrategy does on one process (a DataLoader with drop_last); it returns the scheduler's `max_steps`.
- `trainer/ppo_utils/samples_generator.py SamplesGenerator.generate_samples` and `_collect_prompt_batch` run for real;
  only the vLLM call is replaced by one stand-in sample per response. The episodes loop of `fit()` (draw until the
  loader is exhausted, one global step per non-empty batch) counts the global steps.

Usage (by record_rl.py): python rl_openrlhf_worker.py CASES_JSON PURELIB_DIR WORKDIR
"""

from __future__ import annotations

import ast
import json
import pathlib
import sys
import types
from types import SimpleNamespace as NS


def stub(name: str, **attrs) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def load_function(path: pathlib.Path, name: str, namespace: dict):
    tree = ast.parse(path.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(path), "exec"), namespace)
    return namespace[name]


def run_case(case: dict, root: pathlib.Path, work: pathlib.Path) -> dict:
    from openrlhf.datasets import PromptDataset
    from openrlhf.datasets.utils import blending_datasets
    from torch.utils.data import DataLoader

    data = work / f"{case['name']}.jsonl"
    data.write_text("".join(json.dumps({"input": f"prompt {i}"}) + "\n" for i in range(case["prompts"])))
    args = NS(
        data=NS(prompt_dataset=str(data), prompt_probs=None, max_samples=case.get("max_samples", int(1e8)), prompt_split="train",
                input_template=None, dataloader_num_workers=0, input_key="input", label_key=None, apply_chat_template=False),
        train=NS(seed=42, batch_size=case["train_batch_size"], num_episodes=case["num_episodes"], max_epochs=case["max_epochs"]),
        rollout=NS(n_samples_per_prompt=case["n"], batch_size=case["rollout_batch_size"], vllm_generate_batch_size=None),
        eval=NS(dataset=None), vllm=NS(enable_sleep=False), algo=NS(dynamic_filtering_enable=False), use_ms=False)

    def setup_dataloader(dataset, batch_size, pin_memory=False, shuffle=True, collate_fn=None, drop_last=True, num_workers=0, **_):
        return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=collate_fn, drop_last=drop_last)

    strategy = NS(args=args, print=lambda *a, **k: None, setup_dataloader=setup_dataloader, is_rank_0=lambda: True)
    source = root / "openrlhf" / "trainer" / "ppo_trainer.py"
    prepare = load_function(source, "prepare_datasets", {"blending_datasets": blending_datasets, "PromptDataset": PromptDataset})
    loader, _, max_steps = prepare(strategy, tokenizer=None)

    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator, _collect_prompt_batch

    gen = SamplesGenerator.__new__(SamplesGenerator)
    gen.args, gen.prompts_dataloader, gen.vllm_engines = args, loader, []

    def fake_vllm(dataloader_iter, num_prompts, dynamic_filtering, **_):
        prompts, _labels, _images, exhausted = _collect_prompt_batch(dataloader_iter, num_prompts)
        if not prompts:
            return [], 0, True
        return [object()] * (len(prompts) * args.rollout.n_samples_per_prompt), len(prompts), exhausted

    gen._generate_vllm = fake_vllm
    steps, per_episode, samples = 0, [], []
    for _episode in range(args.train.num_episodes):  # fit(): one global step per non-empty batch until exhausted
        count = 0
        while True:
            rollout, _rate, _consumed, exhausted = gen.generate_samples()
            if not rollout:
                if exhausted:
                    break
                continue
            steps += 1
            count += 1
            samples.append(len(rollout))
            if exhausted:  # fit(): `if is_exhausted: break` after the step
                break
        per_episode.append(count)
    return {"name": case["name"], "prompts_dataset_len": len(loader.dataset), "len_prompts_dataloader": len(loader),
            "max_steps": max_steps, "global_steps": steps, "global_steps_per_episode": per_episode, "samples_per_step": samples}


def main() -> None:
    cases = json.loads(pathlib.Path(sys.argv[1]).read_text())
    root, work = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(root))
    stub("vllm", SamplingParams=object)
    stub("ray", get=None, wait=None, remote=lambda *a, **k: (lambda f: f))
    stub("openrlhf.trainer.ray.vllm_engine", batch_vllm_engine_call=lambda *a, **k: None)
    for case in cases:
        try:
            record = run_case(case, root, work)
        except Exception as exc:  # recorded as such
            record = {"name": case["name"], "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        print("RLCASE " + json.dumps(record), flush=True)


if __name__ == "__main__":
    main()

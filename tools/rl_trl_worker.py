"""Runs TRL's PPO trainer (trl.experimental.ppo, 1.0.0 — the last release that ships it) and KTO's unpairing on CPU;
prints one JSON line per case. Used by tools/record_rl.py (see its docstring for the environment).

PPO: a tiny random Llama as policy, reference, value and reward model; `PPOTrainer.train()` runs for real, and the
underlying torch optimizer's `step` and the LR scheduler's `step` are counted, next to TRL's own `state.max_steps`,
`state.global_step` and `args.num_total_batches`.
"""

from __future__ import annotations

import json
import sys
import tempfile


def ppo_case(case: dict, tokenizer_path: str) -> dict:
    import torch
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaForSequenceClassification, PreTrainedTokenizerFast
    from trl.experimental.ppo import PPOConfig, PPOTrainer

    torch.manual_seed(0)
    tok = PreTrainedTokenizerFast(tokenizer_file=tokenizer_path, pad_token="[PAD]", unk_token="[UNK]", eos_token="[EOS]")
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=2, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    cls_cfg = LlamaConfig(**{**cfg.to_dict(), "num_labels": 1})
    policy, ref = LlamaForCausalLM(cfg), LlamaForCausalLM(cfg)
    value, reward = LlamaForSequenceClassification(cls_cfg), LlamaForSequenceClassification(cls_cfg)
    rows = [{"input_ids": tok(f"row {i} the cat sat")["input_ids"]} for i in range(case["rows"])]
    data = Dataset.from_list(rows)
    with tempfile.TemporaryDirectory() as out:
        args = PPOConfig(output_dir=out, report_to=[], response_length=3, num_sample_generations=0, stop_token="eos",
                         save_strategy="no", logging_steps=1, use_cpu=True, **case["args"])
        trainer = PPOTrainer(args=args, processing_class=tok, model=policy, ref_model=ref, reward_model=reward,
                             value_model=value, train_dataset=data, eval_dataset=data.select(range(2)))
        counts = {"optimizer": 0, "scheduler": 0}
        inner = trainer.optimizer.optimizer if hasattr(trainer.optimizer, "optimizer") else trainer.optimizer
        step, sched_step = inner.step, trainer.lr_scheduler.step

        def counted(*a, **k):
            counts["optimizer"] += 1
            return step(*a, **k)

        def sched(*a, **k):
            counts["scheduler"] += 1
            return sched_step(*a, **k)

        inner.step, trainer.lr_scheduler.step = counted, sched
        trainer.train()
        return {"name": case["name"], "num_total_batches": args.num_total_batches, "batch_size": args.batch_size,
                "total_episodes": args.total_episodes, "max_steps": trainer.state.max_steps,
                "global_step": trainer.state.global_step, "optimizer_steps": counts["optimizer"],
                "scheduler_steps": counts["scheduler"], "episode": trainer.state.episode}


def kto_case(case: dict) -> dict:
    from datasets import Dataset
    from trl.data_utils import maybe_unpair_preference_dataset

    pairs = Dataset.from_list([{"prompt": f"p{i}", "chosen": "a", "rejected": "b"} for i in range(case["pairs"])])
    return {"name": case["name"], "rows": len(maybe_unpair_preference_dataset(pairs))}


def main() -> None:
    cases = json.loads(open(sys.argv[1]).read())
    import trl

    for case in cases:
        try:
            record = kto_case(case) if "pairs" in case else ppo_case(case, sys.argv[2])
        except Exception as exc:  # recorded: TRL refuses these settings
            record = {"name": case["name"], "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        record["trl"] = trl.__version__
        print("RLCASE " + json.dumps(record), flush=True)


if __name__ == "__main__":
    main()

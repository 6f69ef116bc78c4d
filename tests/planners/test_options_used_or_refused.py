"""Every option of `trainsteps plan`, under every planner: used (it changes the answer) or refused in one line.

The planners declare what they accept (`trainsteps.planners.PLANNERS`); this walks every (planner x option) pair.
An accepted option must change the JSON or the text against the same request without it; an option a planner does
not accept must end in exit code 2 with a line naming the option.
"""

from pathlib import Path

import pytest

from trainsteps.cli.plan import plan_command
from trainsteps.planners import PLANNERS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TINY_TOKENIZER = str(ROOT / "tests" / "assets" / "tiny_tokenizer.json")
QWEN = str(ROOT / "tests" / "assets" / "models" / "qwen2.5-7b" / "config.json")
TIMING_LOG = str(ROOT / "tests" / "fixtures" / "logs" / "public" / "unsloth-1140_two_runs.log")
CHAT_DATA = str(EXAMPLES / "llamafactory" / "data" / "demo_chat.jsonl")
ALPACA = str(EXAMPLES / "llamafactory" / "data" / "demo_alpaca.json")

BASES = {
    "hf": ["--num-examples", "1000"],
    "config": [str(EXAMPLES / "hf" / "training_args.yaml"), "--num-examples", "1000", "--transformers", "4.57.1"],
    "neox": ["--framework", "neox", "--train-tokens", "100000000", "--train-iters", "100", "--micro-batch-size", "1",
             "--eval-interval", "40", "--save-interval", "50"],
    "megatron": ["--framework", "megatron", "--micro-batch-size", "1", "--train-iters", "100", "--global-batch-size", "8",
                 "--train-tokens", "100000000", "--eval-interval", "40", "--save-interval", "50"],
    "deepspeed": ["--framework", "deepspeed", "--train-batch-size", "32", "--micro-batch-size", "4"],
    "lightning": ["--framework", "lightning", "--num-examples", "1000"],
    "verl": ["--framework", "verl", "--num-examples", "10000", "--set", "trainer.save_freq=2", "--set", "trainer.test_freq=2"],
    "openrlhf": ["--framework", "openrlhf", "--num-examples", "10000", "--set", "save_steps=2", "--set", "eval_steps=2"],
    "easyr1": ["--framework", "easyr1", "--num-examples", "10000", "--set", "trainer.save_freq=2", "--set", "trainer.val_freq=2"],
    "trl-ppo": ["--framework", "trl-ppo", "--num-examples", "10000", "--set", "save_steps=2"],
    "torchtitan": ["--framework", "torchtitan", "--max-steps", "100", "--save-interval", "40", "--eval-interval", "30"],
    "automodel": ["--framework", "automodel", "--num-examples", "1000", "--global-batch-size", "8", "--max-steps", "500",
                  "--eval-interval", "30"],
    "llamafactory-v1": ["--framework", "llamafactory-v1", "--num-examples", "1000"],
    "litgpt": ["--framework", "litgpt", "--num-examples", "1000", "--eval-interval", "30", "--save-interval", "40"],
    "swift-megatron": ["--framework", "swift-megatron", "--num-examples", "1000", "--num-train-epochs", "2", "--save-interval", "20",
                       "--eval-interval", "15"],
    "megatron-bridge": ["--framework", "megatron-bridge", "--num-examples", "1000", "--global-batch-size", "64", "--train-iters", "100",
                        "--eval-interval", "30", "--save-interval", "40"],
    # the RL stacks planned from their own words (planners/rl_stacks.py)
    "slime": ["--framework", "slime", "--num-examples", "1000", "--set", "rollout_batch_size=8", "--set", "global_batch_size=8",
              "--set", "num_epoch=2", "--set", "eval_interval=3", "--set", "save_interval=3", "--set", "rollout_max_response_len=1024"],
    "areal": ["--framework", "areal", "--num-examples", "1000", "--set", "train_dataset.batch_size=8", "--set", "saver.freq_steps=7",
              "--set", "evaluator.freq_steps=7"],
    "open-instruct": ["--framework", "open-instruct", "--num-examples", "1000", "--set", "total_episodes=6400",
                      "--set", "local_eval_every=3", "--set", "dataset_mixer_eval_list=x"],
    "trl-async-grpo": ["--framework", "trl-async-grpo", "--num-examples", "1000", "--set", "save_steps=10"],
    "prime-rl": ["--framework", "prime-rl", "--set", "max_steps=50", "--set", "ckpt.interval=10",
                 "--set", "orchestrator.train.sampling.max_completion_tokens=128"],
    "roll": ["--framework", "roll", "--set", "max_steps=50", "--set", "save_steps=10", "--set", "response_length=1024"],
}
"""The smallest request each planner plans."""

STEP_TIME = ["--step-time", "4"]
FLOPS = ["--gpu", "h100-sxm", "--params", "7e9", "--seq-length", "2048"]
DATA = ["--data", ALPACA, "--tokenizer", TINY_TOKENIZER]

# option -> (what it needs beside it, the option with a value that changes the answer)
SAMPLES = {
    "configs": ([], [str(EXAMPLES / "hf" / "training_args.yaml")]),
    "launch": ([], ["--launch", "torchrun --nproc_per_node 4 train.py"]),
    "framework_version": ([], ["--framework-version", "0.9.3"]),
    "num_examples": ([], ["--num-examples", "777"]),
    "per_device_train_batch_size": ([], ["--per-device-train-batch-size", "3"]),
    "gradient_accumulation_steps": ([], ["--gradient-accumulation-steps", "3"]),
    "world_size": ([], ["--world-size", "2"]),
    "gpus": ([], ["--gpus", "2"]),
    "nodes": (["--gpus", "2"], ["--nodes", "2"]),
    "tensor_parallel_size": (["--world-size", "4"], ["--tensor-parallel-size", "2"]),
    "context_parallel_size": (["--world-size", "4"], ["--context-parallel-size", "2"]),
    "sequence_parallel_size": (["--world-size", "4"], ["--sequence-parallel-size", "2"]),
    "num_train_epochs": ([], ["--num-train-epochs", "2"]),
    "max_steps": ([], ["--max-steps", "7"]),
    "dataloader_drop_last": (["--per-device-train-batch-size", "3"], ["--dataloader-drop-last"]),
    "split_batches": (["--world-size", "2"], ["--split-batches"]),
    "no_even_batches": (["--world-size", "3", "--per-device-train-batch-size", "7"], ["--no-even-batches"]),
    "streaming": (["--max-steps", "10"], ["--streaming"]),
    "dataset_tokens": (["--streaming", "--max-steps", "10", "--seq-length", "512"], ["--dataset-tokens", "10000000"]),
    "no_dispatch_batches": (["--streaming", "--max-steps", "10", "--world-size", "2"], ["--no-dispatch-batches"]),
    "transformers_version": ([], ["--transformers", "4.49.0"]),
    "resume_from_step": ([], ["--resume-from-step", "5"]),
    "warmup_ratio": (["--transformers", "4.57.1"], ["--warmup-ratio", "0.1"]),
    "warmup_steps": ([], ["--warmup-steps", "5"]),
    "logging_strategy": ([], ["--logging-strategy", "epoch"]),
    "logging_steps": ([], ["--logging-steps", "10"]),
    "logging_first_step": ([], ["--logging-first-step"]),
    "eval_strategy": ([], ["--eval-strategy", "epoch"]),
    "eval_steps": (["--eval-strategy", "steps"], ["--eval-steps", "20"]),
    "eval_delay": (["--eval-strategy", "steps", "--eval-steps", "20"], ["--eval-delay", "50"]),
    "save_strategy": ([], ["--save-strategy", "epoch"]),
    "save_steps": ([], ["--save-steps", "20"]),
    "metric_for_best_model": (["--eval-strategy", "epoch", "--save-strategy", "best"], ["--metric-for-best-model", "accuracy"]),
    "greater_is_better": (["--eval-strategy", "epoch", "--save-strategy", "best", "--metric-for-best-model", "loss",
                           "--improving-evals", "first"], ["--greater-is-better"]),
    "improving_evals": (["--eval-strategy", "epoch", "--save-strategy", "best", "--metric-for-best-model", "loss"],
                        ["--improving-evals", "first"]),
    "trainable_parameters": ([], ["--trainable-parameters", "1000000"]),
    "compare_versions": ([], ["--compare-versions"]),
    "explain": ([], ["--explain"]),
    "seq_length": ([], ["--seq-length", "512"]),
    "data_prefix": ([], ["--data-prefix", "PREFIX"]),
    "data_weight": (["--data-prefix", "PREFIX", "--data-prefix", "PREFIX2"], ["--data-weight", "1", "--data-weight", "3"]),
    "train_tokens": ([], ["--train-tokens", "50000000"]),
    "data_split": (["--data-prefix", "PREFIX", "--train-tokens", ""], ["--split", "500,250,250"]),
    "train_iters": ([], ["--train-iters", "77"]),
    "train_samples": ([], ["--train-samples", "5000"]),
    "train_epochs": (["--train-iters", ""], ["--train-epochs", "2"]),
    "global_batch_size": ([], ["--global-batch-size", "16"]),
    "micro_batch_size": ([], ["--micro-batch-size", "2"]),
    "train_batch_size": ([], ["--train-batch-size", "64"]),
    "pipeline_parallel_size": (["--world-size", "4"], ["--pipeline-parallel-size", "2"]),
    "expert_parallel_size": (["--world-size", "4"], ["--expert-parallel-size", "2"]),
    "rampup_batch_size": ([], ["--rampup-batch-size", "2", "2", "400"]),
    "decrease_batch_size_if_needed": (["--world-size", "3"], ["--decrease-batch-size-if-needed"]),
    "step_batch_size_schedule": ([], ["--step-batch-size-schedule", "0:8 1M:16"]),
    "megatron_version": ([], ["--megatron-version", "0.12.0"]),
    "eval_interval": ([], ["--eval-interval", "10"]),
    "eval_iters": ([], ["--eval-iters", "5"]),
    "eval_global_batch_size": ([], ["--eval-global-batch-size", "4"]),
    "save_interval": ([], ["--save-interval", "10"]),
    "warmup": ([], ["--warmup", "0.2"]),
    "lr_warmup_iters": ([], ["--lr-warmup-iters", "10"]),
    "seed": ([], ["--seed", "7"]),
    "neox_version": ([], ["--neox-version", "1.0"]),
    "megatron_code": ([], ["--megatron-code", "legacy"]),
    "deepspeed_config": ([], ["--deepspeed-config", str(EXAMPLES / "hf" / "ds_zero2.json")]),
    "unsupervised_rows": ([], ["--unsupervised-rows", "100"]),
    "max_epochs": ([], ["--max-epochs", "2"]),
    "limit_train_batches": ([], ["--limit-train-batches", "0.5"]),
    "fmt": ([], ["--format", "json"]),
    "lang": ([], ["--lang", "zh"]),
    "data_paths": ([], ["--data", ALPACA]),
    "dataset_split": (["--data", "DATASETDICT", "--tokenizer", TINY_TOKENIZER], ["--data-split", "test"]),
    "tokenizer_path": (["--data", ALPACA], ["--tokenizer", TINY_TOKENIZER]),
    "data_format": (DATA, ["--data-format", "text", "--text-field", "instruction"]),
    "text_field": (DATA + ["--data-format", "text", "--text-field", "instruction"], ["--text-field", "output"]),
    "template": (["--data", CHAT_DATA, "--tokenizer", TINY_TOKENIZER], ["--template", "llama3"]),
    "dataset_name": ([], ["--data", str(EXAMPLES / "llamafactory" / "data"), "--dataset", "demo_chat"]),
    "no_special_tokens": (["--data", str(EXAMPLES / "llamafactory" / "data" / "demo_corpus.jsonl"), "--tokenizer", TINY_TOKENIZER,
                           "--data-format", "text"], ["--no-special-tokens"]),
    "add_eos": (DATA, ["--add-eos"]),
    "cutoff_len": (DATA, ["--cutoff-len", "20"]),
    "packing_names": (DATA + ["--cutoff-len", "64"], ["--packing", "trl-bfd"]),
    "num_proc": (DATA + ["--cutoff-len", "64"], ["--packing", "llamafactory", "--num-proc", "4"]),
    "threads": (DATA, ["--threads", "1"]),
    "engine_tokenizer": (DATA, ["--engine-tokenizer", "tokenizers"]),
    "max_line_bytes": (["--data", CHAT_DATA, "--tokenizer", TINY_TOKENIZER], ["--max-line-bytes", "600"]),
    "no_cache": (DATA, ["--no-cache"]),
    "step_time": ([], STEP_TIME),
    "tokens_per_second": (["--seq-length", "512"], ["--tokens-per-second", "5000"]),
    "samples_per_second": ([], ["--samples-per-second", "5"]),
    "timing_from": ([], ["--timing-from", TIMING_LOG]),
    "model_path": (["--gpu", "h100-sxm", "--seq-length", "2048"], ["--model", QWEN]),
    "params": (["--gpu", "h100-sxm", "--seq-length", "2048"], ["--params", "7e9"]),
    "gpu_name": (["--params", "7e9", "--seq-length", "2048"], ["--gpu", "h100-sxm"]),
    "peak_tflops": (["--params", "7e9", "--seq-length", "2048"], ["--peak-tflops", "500"]),
    "stack": (FLOPS, ["--stack", "fsdp"]),
    "activation_checkpointing": (FLOPS, ["--activation-checkpointing", "full"]),
    "dtype": (FLOPS, ["--dtype", "fp8"]),
    "mfu": (FLOPS, ["--mfu", "0.2"]),
    "training": (FLOPS, ["--training", "lora"]),
    "eval_examples": (FLOPS, ["--eval-examples", "100"]),
    "eval_time": (STEP_TIME, ["--eval-time", "60"]),
    "save_time": (STEP_TIME, ["--save-time", "60"]),
    "prepare_time": (STEP_TIME, ["--prepare-time", "60"]),
    "price_per_gpu_hour": (STEP_TIME, ["--price-per-gpu-hour", "2"]),
    "currency": (STEP_TIME + ["--price-per-gpu-hour", "2"], ["--currency", "EUR"]),
    "chat_template_path": ([], ["--chat-template", "x.jinja"]),
    "unsloth_release": ([], ["--unsloth", "2026.10.9"]),
    "rl_overrides": ([], ["--set", "a=1"]),
    "prompts_per_step": ([], ["--prompts-per-step", "4"]),
    "samples_per_prompt": ([], ["--samples-per-prompt", "3"]),
    "response_length": (["--gpu", "h100-sxm", "--params", "7e9"], ["--response-length", "100"]),  # under every default response cap (prime-rl: 128)
    "prompt_length": (["--gpu", "h100-sxm", "--params", "7e9"], ["--prompt-length", "300"]),
    "time_budget": (STEP_TIME, ["--time-budget", "1h"]),
    "safety_margin": (STEP_TIME + ["--time-budget", "1h"], ["--safety-margin", "0.3"]),
}

RL_MODEL = ["--gpu", "h100-sxm", "--params", "7e9"]
RL_MODEL_SAMPLES = {
    "model_path": (["--gpu", "h100-sxm"], ["--model", QWEN]),
    "params": (["--gpu", "h100-sxm"], ["--params", "7e9"]),
    "gpu_name": (["--params", "7e9"], ["--gpu", "h100-sxm"]),
    "peak_tflops": (["--params", "7e9", "--gpu", "h100-sxm"], ["--peak-tflops", "500"]),
    "dtype": (RL_MODEL, ["--dtype", "fp8"]),
    "mfu": (RL_MODEL, ["--mfu", "0.2"]),
    "training": (RL_MODEL, ["--training", "lora"]),
}
"""The RL step model (generation, forwards, updates) of an RL plan: the model and GPU, no sequence length."""

VERL_SMALL = ["--set", "data.train_batch_size=64", "--set", "actor_rollout_ref.actor.ppo_mini_batch_size=8"]
VERL_FILTER = ["--set", "data.filter_overlong_prompts=true", *VERL_SMALL]
"""A verl run whose 300 fixture prompts fill a batch and are filtered by length."""

# the same option with values that fit another planner
PER_PLANNER = {
    ("config", "launch"): ([], ["--launch", "torchrun --nproc_per_node 4 train.py"]),
    ("config", "framework_version"): ([], ["--framework-version", "0.9.3"]),
    ("config", "num_examples"): ([], ["--num-examples", "777"]),
    ("config", "warmup_ratio"): ([], ["--warmup-ratio", "0.1"]),
    ("config", "transformers_version"): ([], ["--transformers", "4.49.0"]),
    ("megatron", "micro_batch_size"): ([], ["--micro-batch-size", "2"]),
    ("megatron", "seq_length"): ([], ["--seq-length", "512"]),
    ("megatron", "global_batch_size"): ([], ["--global-batch-size", "16"]),
    ("megatron", "rampup_batch_size"): (["--train-iters", "", "--train-samples", "5000"], ["--rampup-batch-size", "2", "2", "400"]),
    ("megatron", "step_batch_size_schedule"): (["--global-batch-size", "", "--megatron-version", "0.19.0"],
                                               ["--step-batch-size-schedule", "0:8 100K:16"]),
    ("megatron", "eval_global_batch_size"): ([], ["--eval-global-batch-size", "4"]),
    ("megatron", "train_samples"): (["--train-iters", ""], ["--train-samples", "5000"]),
    ("neox", "train_batch_size"): (["--micro-batch-size", ""], ["--train-batch-size", "4"]),
    ("neox", "eval_iters"): ([], ["--eval-iters", "5"]),
    ("hf", "eval_time"): (STEP_TIME + ["--eval-strategy", "epoch"], ["--eval-time", "60"]),
    ("config", "eval_time"): (STEP_TIME + ["--eval-strategy", "epoch"], ["--eval-time", "60"]),
    ("hf", "eval_examples"): (FLOPS + ["--eval-strategy", "epoch"], ["--eval-examples", "100"]),
    ("config", "eval_examples"): (FLOPS + ["--eval-strategy", "epoch"], ["--eval-examples", "100"]),
    ("hf", "dataset_tokens"): (["--num-examples", "", "--streaming", "--max-steps", "10", "--seq-length", "512"],
                               ["--dataset-tokens", "10000000"]),
    ("trl-ppo", "warmup_ratio"): ([], ["--warmup-ratio", "0.1"]),
    ("trl-ppo", "launch"): ([], ["--launch", "python ppo.py --num_ppo_epochs 8"]),
    ("easyr1", "launch"): ([], ["--launch", "python3 -m verl.trainer.main data.rollout_batch_size=512"]),
    ("verl", "num_examples"): ([], ["--num-examples", "7777"]),
    ("verl", "chat_template_path"): (["--num-examples", "", "--data", "RLDATA", "--tokenizer", TINY_TOKENIZER, *VERL_FILTER],
                                     ["--chat-template", "RLTEMPLATE"]),
    ("verl", "tokenizer_path"): (["--num-examples", "", "--data", "RLDATA", "--chat-template", "RLTEMPLATE", *VERL_FILTER],
                                 ["--tokenizer", TINY_TOKENIZER]),
    ("deepspeed", "per_device_train_batch_size"): (["--micro-batch-size", "", "--train-batch-size", "32"],
                                                   ["--per-device-train-batch-size", "8"]),
    ("config", "configs"): ([], ["ACCELERATE"]),
    ("neox", "gradient_accumulation_steps"): ([], ["--gradient-accumulation-steps", "2"]),
    ("deepspeed", "world_size"): ([], ["--world-size", "2"]),
    ("deepspeed", "gradient_accumulation_steps"): (["--train-batch-size", ""], ["--gradient-accumulation-steps", "2"]),
    ("deepspeed", "train_batch_size"): ([], ["--train-batch-size", "64"]),
    ("deepspeed", "micro_batch_size"): ([], ["--micro-batch-size", "8"]),
    ("deepspeed", "tensor_parallel_size"): (["--world-size", "4", "--train-batch-size", "16"], ["--tensor-parallel-size", "2"]),
    ("deepspeed", "pipeline_parallel_size"): (["--world-size", "4", "--train-batch-size", "16"], ["--pipeline-parallel-size", "2"]),
    ("lightning", "max_steps"): ([], ["--max-steps", "7"]),
    ("lightning", "data_paths"): (["--num-examples", ""], ["--data", ALPACA]),
    ("lightning", "dataset_split"): (["--data", "DATASETDICT"], ["--data-split", "test"]),
    ("lightning", "max_line_bytes"): (["--data", CHAT_DATA], ["--max-line-bytes", "600"]),
    ("lightning", "no_cache"): (["--data", CHAT_DATA], ["--no-cache"]),
    ("verl", "framework_version"): ([], ["--framework-version", "0.6.0"]),
    ("verl", "rl_overrides"): ([], ["--set", "data.train_batch_size=2048"]),
    ("verl", "launch"): ([], ["--launch", "python3 -m verl.trainer.main_ppo data.train_batch_size=2048"]),
    ("verl", "configs"): ([], [str(EXAMPLES / "verl" / "dapo.yaml")]),
    ("verl", "data_paths"): (["--num-examples", "", *VERL_SMALL], ["--data", "RLDATA"]),
    ("openrlhf", "data_paths"): (["--num-examples", ""], ["--data", ALPACA]),
    ("easyr1", "data_paths"): (["--num-examples", ""], ["--data", ALPACA]),
    ("openrlhf", "framework_version"): ([], ["--framework-version", "0.5.0"]),
    ("openrlhf", "rl_overrides"): ([], ["--set", "train_batch_size=64"]),
    ("openrlhf", "launch"): ([], ["--launch", "python3 -m openrlhf.cli.train_ppo_ray --train_batch_size 64"]),
    ("easyr1", "rl_overrides"): ([], ["--set", "data.rollout_batch_size=512"]),
    ("easyr1", "configs"): ([], [str(EXAMPLES / "easyr1" / "config.yaml")]),
    ("trl-ppo", "rl_overrides"): ([], ["--set", "num_ppo_epochs=8"]),
    ("trl-ppo", "configs"): ([], [str(EXAMPLES / "trl" / "ppo.yaml")]),
    ("llamafactory-v1", "framework_version"): ([], ["--framework-version", "0.9.5"]),
    ("swift-megatron", "streaming"): (["--train-iters", "100000"], ["--streaming"]),
    ("torchtitan", "configs"): ([], [str(EXAMPLES / "torchtitan" / "llama3_8b.toml")]),
    ("torchtitan", "stack"): (FLOPS, ["--stack", "megatron"]),  # torchtitan is fsdp already: saying so changes nothing
    ("torchtitan", "rl_overrides"): ([], ["--set", "training.local_batch_size=2"]),
    ("torchtitan", "framework_version"): (["--train-tokens", "100000", "--num-examples", "100"], ["--framework-version", "0.2.2"]),
    ("torchtitan", "num_examples"): (["--train-tokens", "100000", "--num-examples", "100"], ["--num-examples", "777"]),
    ("torchtitan", "train_tokens"): (["--num-examples", "100"], ["--train-tokens", "50000000"]),
    ("torchtitan", "max_steps"): ([], ["--max-steps", "7"]),
    ("torchtitan", "world_size"): ([], ["--world-size", "2"]),
    ("torchtitan", "seq_length"): ([], ["--seq-length", "512"]),
    ("torchtitan", "micro_batch_size"): ([], ["--micro-batch-size", "2"]),
    ("torchtitan", "global_batch_size"): ([], ["--global-batch-size", "16"]),
    ("torchtitan", "tensor_parallel_size"): (["--world-size", "4"], ["--tensor-parallel-size", "2"]),
    ("torchtitan", "pipeline_parallel_size"): (["--world-size", "4"], ["--pipeline-parallel-size", "2"]),
    ("torchtitan", "context_parallel_size"): (["--world-size", "4"], ["--context-parallel-size", "2"]),
    ("torchtitan", "eval_time"): (STEP_TIME, ["--eval-time", "60"]),
    ("automodel", "configs"): ([], [str(EXAMPLES / "automodel" / "llama3_2_1b_squad.yaml")]),
    ("automodel", "rl_overrides"): ([], ["--set", "step_scheduler.num_epochs=null"]),
    ("automodel", "framework_version"): ([], ["--framework-version", "0.5.0"]),
    ("automodel", "world_size"): ([], ["--world-size", "2"]),
    ("automodel", "micro_batch_size"): ([], ["--micro-batch-size", "2"]),
    ("automodel", "global_batch_size"): ([], ["--global-batch-size", "16"]),
    ("automodel", "max_steps"): ([], ["--max-steps", "7"]),
    ("automodel", "tensor_parallel_size"): (["--world-size", "4"], ["--tensor-parallel-size", "2"]),
    ("automodel", "pipeline_parallel_size"): (["--world-size", "4"], ["--pipeline-parallel-size", "2"]),
    ("automodel", "context_parallel_size"): (["--world-size", "4"], ["--context-parallel-size", "2"]),
    ("automodel", "eval_time"): (STEP_TIME, ["--eval-time", "60"]),
    ("llamafactory-v1", "launch"): ([], ["--launch", f"USE_V1=1 NPROC_PER_NODE=2 llamafactory-cli sft {EXAMPLES / 'llamafactory_v1' / 'sft.yaml'}"]),
    ("llamafactory-v1", "configs"): ([], [str(EXAMPLES / "llamafactory_v1" / "sft.yaml")]),
    ("llamafactory-v1", "world_size"): ([], ["--world-size", "2"]),
    ("llamafactory-v1", "micro_batch_size"): ([], ["--micro-batch-size", "2"]),
    ("llamafactory-v1", "global_batch_size"): ([], ["--global-batch-size", "16"]),
    ("llamafactory-v1", "max_steps"): ([], ["--max-steps", "7"]),
    ("llamafactory-v1", "cutoff_len"): ([], ["--cutoff-len", "4096"]),
    ("llamafactory-v1", "save_time"): (STEP_TIME + ["--save-steps", "100"], ["--save-time", "60"]),
    ("litgpt", "configs"): ([], [str(EXAMPLES / "litgpt" / "lora.yaml")]),
    ("litgpt", "launch"): ([], ["--launch", "litgpt finetune_lora --train.epochs 2"]),
    ("litgpt", "rl_overrides"): ([], ["--set", "train.epochs=2"]),
    ("litgpt", "framework_version"): ([], ["--framework-version", "0.4.13"]),
    ("litgpt", "global_batch_size"): ([], ["--global-batch-size", "32"]),
    ("litgpt", "micro_batch_size"): ([], ["--micro-batch-size", "2"]),
    ("litgpt", "max_steps"): ([], ["--max-steps", "7"]),
    ("litgpt", "world_size"): ([], ["--world-size", "2"]),
    ("litgpt", "train_tokens"): (["--seq-length", "512"], ["--train-tokens", "50000000"]),
    ("litgpt", "warmup_ratio"): (["--train-tokens", "1000000", "--seq-length", "128", "--warmup-steps", "0"], ["--warmup-ratio", "0.1"]),
    ("litgpt", "eval_time"): (STEP_TIME, ["--eval-time", "60"]),
    ("megatron-bridge", "configs"): (["--train-iters", "", "--gpus", "8"], [str(EXAMPLES / "megatron_bridge" / "sft.yaml")]),
    ("megatron-bridge", "launch"): (["--train-iters", ""], ["--launch", "torchrun --nproc-per-node=2 run_recipe.py train.train_iters=50"]),
    ("megatron-bridge", "rl_overrides"): ([], ["--set", "train.eval_interval=7"]),
    ("megatron-bridge", "framework_version"): ([], ["--framework-version", "0.5.1"]),
    ("megatron-bridge", "train_samples"): (["--train-iters", ""], ["--train-samples", "5000"]),
    ("megatron-bridge", "num_train_epochs"): (["--train-iters", ""], ["--num-train-epochs", "2"]),
    ("megatron-bridge", "global_batch_size"): ([], ["--global-batch-size", "16"]),
    ("megatron-bridge", "micro_batch_size"): ([], ["--micro-batch-size", "2"]),
    ("megatron-bridge", "world_size"): ([], ["--world-size", "2"]),
    ("megatron-bridge", "eval_time"): (STEP_TIME, ["--eval-time", "60"]),
    ("megatron-bridge", "warmup_ratio"): ([], ["--warmup-ratio", "0.1"]),
    ("swift-megatron", "configs"): ([], ["SWIFTARGS"]),
    ("swift-megatron", "launch"): ([], ["--launch", "megatron sft --global_batch_size 32"]),
    ("swift-megatron", "framework_version"): (["--num-train-epochs", ""], ["--framework-version", "3.12.6", "--train-iters", "50"]),
    ("swift-megatron", "global_batch_size"): ([], ["--global-batch-size", "32"]),
    ("swift-megatron", "micro_batch_size"): (["--global-batch-size", "16", "--world-size", "2"], ["--micro-batch-size", "2"]),
    ("swift-megatron", "world_size"): ([], ["--world-size", "2"]),
    ("swift-megatron", "train_iters"): (["--num-train-epochs", ""], ["--train-iters", "77"]),
    ("swift-megatron", "tensor_parallel_size"): (["--world-size", "4"], ["--tensor-parallel-size", "2"]),
    ("swift-megatron", "pipeline_parallel_size"): (["--world-size", "4"], ["--pipeline-parallel-size", "2"]),
    ("swift-megatron", "context_parallel_size"): (["--world-size", "4"], ["--context-parallel-size", "2"]),
    ("swift-megatron", "eval_time"): (STEP_TIME, ["--eval-time", "60"]),
    ("swift-megatron", "num_train_epochs"): ([], ["--num-train-epochs", "3"]),
    ("slime", "launch"): ([], ["--launch", "python train.py --num-rollout 5"]),
    ("slime", "prompts_per_step"): ([], ["--prompts-per-step", "16"]),
    ("areal", "launch"): ([], ["--launch", "python -m areal.launcher.local grpo.py actor.ppo_n_minibatches=2"]),
    ("areal", "configs"): ([], [str(EXAMPLES / "areal" / "gsm8k_grpo.yaml")]),
    ("open-instruct", "launch"): ([], ["--launch", "python open_instruct/grpo_fast.py --num_mini_batches 2"]),
    ("trl-async-grpo", "launch"): ([], ["--launch", "accelerate launch async_grpo.py --num_generations 4"]),
    ("trl-async-grpo", "framework_version"): ([], ["--framework-version", "1.8.0"]),
    ("prime-rl", "configs"): ([], [str(EXAMPLES / "prime_rl" / "reverse_text.toml")]),
    ("prime-rl", "launch"): ([], ["--launch", f"uv run rl @ {EXAMPLES / 'prime_rl' / 'reverse_text.toml'}"]),
    ("roll", "configs"): ([], [str(EXAMPLES / "roll" / "rlvr_config.yaml")]),
    ("roll", "framework_version"): (["--set", "rollout_batch_size=100", "--set", "num_return_sequences_in_group=3",
                                     "--set", "actor_train.training_args.per_device_train_batch_size=7"], ["--framework-version", "0.1.3"]),
    ("roll", "eval_time"): (STEP_TIME + ["--set", "validation.data_args.file_name=x"], ["--eval-time", "60"]),
    ("prime-rl", "samples_per_prompt"): ([], ["--samples-per-prompt", "4"]),
    ("roll", "launch"): ([], ["--launch", "python examples/start_rlvr_pipeline.py --config_name x"]),
}

PER_PLANNER.update({(planner, name): sample for planner in ("verl", "openrlhf", "easyr1", "trl-ppo")
                    for name, sample in RL_MODEL_SAMPLES.items()})
PER_PLANNER.update({(planner, name): sample for planner in ("slime", "areal", "open-instruct", "trl-async-grpo", "prime-rl", "roll")
                    for name, sample in RL_MODEL_SAMPLES.items() if (planner, name) not in PER_PLANNER})
GRPO_CONFIG = "CONFIG=" + str(EXAMPLES / "trl" / "grpo.yaml")
"""A sample that needs another config file than the planner's base one: a TRL GRPO run, whose step the RL model times."""
PER_PLANNER.update({("config", name): ([GRPO_CONFIG, *RL_MODEL], [f"--{name.replace('_', '-')}", "300"])
                    for name in ("response_length", "prompt_length")})
PER_PLANNER.update({("config", "time_budget"): ([GRPO_CONFIG, *STEP_TIME], ["--time-budget", "1h"]),
                    ("config", "safety_margin"): ([GRPO_CONFIG, *STEP_TIME, "--time-budget", "1h"], ["--safety-margin", "0.3"])})

HOW_NOT_WHAT = {
    "threads": "how many threads tokenize: the counts are the same",
    "engine_tokenizer": "which exact counter tokenizes (both are proven equal): the counts are the same",
    "no_cache": "count again instead of reading the cached count: the counts are the same",
}
"""Accepted options that change how an answer is computed, not the answer."""


SELECTORS = ("framework",)
"""`--framework` picks the planner; so do config files and a launch line (a request with one is planned by `config`)."""


def _pairs():
    for planner in PLANNERS.values():
        for param in plan_command.params:
            if param.name not in SELECTORS and not (planner.name == "hf" and param.name in ("configs", "launch")):
                yield pytest.param(planner, param.name, id=f"{planner.name}-{param.name}")


RL_FIXTURES = ROOT / "tests" / "fixtures" / "rl" / "data"


def _sample(planner, name, tmp_path):
    needs, args = PER_PLANNER.get((planner.name, name)) or (planner.name == "config" and PER_PLANNER.get(("hf", name))) \
        or SAMPLES[name]
    if "--data" in needs + args and "--num-examples" in BASES[planner.name]:  # the data is counted instead
        needs = ["--num-examples", "", *needs]
    return [_file(a, tmp_path) for a in needs], [_file(a, tmp_path) for a in args]


def _file(word: str, tmp_path) -> str:
    """Sample words that stand for files made or found here."""
    if word in ("PREFIX", "PREFIX2"):
        from trainsteps.data.idx import write_idx_from_lengths

        prefix = tmp_path / word.lower()
        if not (tmp_path / f"{word.lower()}.idx").exists():
            write_idx_from_lengths(str(prefix), [300 if word == "PREFIX" else 900] * 2000)
        return str(prefix)
    if word == "DATASETDICT":
        path = tmp_path / "dataset_dict"
        if not path.exists():
            from datasets import Dataset, DatasetDict

            rows = [{"text": "a few words " * n} for n in range(1, 9)]
            DatasetDict({"train": Dataset.from_list(rows), "test": Dataset.from_list(rows[:3])}).save_to_disk(str(path))
        return str(path)
    if word == "SWIFTARGS":
        path = tmp_path / "args.json"
        path.write_text('{"global_batch_size": 32, "micro_batch_size": 1}')
        return str(path)
    if word == "ACCELERATE":
        path = tmp_path / "accelerate.yaml"
        path.write_text("compute_environment: LOCAL_MACHINE\nnum_processes: 2\n")
        return str(path)
    return {"RLDATA": str(RL_FIXTURES / "filter_overlong_train.parquet"),
            "RLTEMPLATE": str(RL_FIXTURES / "tokenizer_config.json")}.get(word, word)


def _without_empty(args):
    """`--num-examples ""` in a sample drops that option from the base (for samples that replace it)."""
    out, skip = [], set()
    for i, arg in enumerate(args):
        if arg == "" and i and args[i - 1].startswith("--"):
            skip.add(args[i - 1])
    i = 0
    while i < len(args):
        if args[i] in skip:
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out


@pytest.mark.parametrize("planner, name", list(_pairs()))
def test_every_option_is_used_or_refused(run_cli, planner, name, tmp_path):
    assert name in SAMPLES, f"add a sample value for {name}"
    needs, args = _sample(planner, name, tmp_path)
    bases = BASES[planner.name]
    if needs and needs[0].startswith("CONFIG="):  # this option is used with another kind of config
        bases, needs = [needs[0].removeprefix("CONFIG="), *bases[1:]], needs[1:]
    base = _without_empty(bases + needs)
    code, out, err = run_cli("plan", *_without_empty(bases + needs + args))
    if name not in planner.accepts:
        assert code == 2 and out == "", (code, out[:300])
        assert err.count("\n") == 1 and ("error:" in err) and (args[0] in err or "CONFIG" in err or "--framework" in err), err
        return
    refused = ("is an option of --framework", "applies to a config file", "is not used with --compare-versions",
               "refines")
    assert not any(words in err for words in refused), err
    assert code == 0 or name in HOW_NOT_WHAT, f"{planner.name} {args}: {err}"
    if name in HOW_NOT_WHAT:
        assert code == 0, err
        return
    assert code == 0, err
    base_code, base_out, base_err = run_cli("plan", *base)
    if base_code != 0:  # the option made a request that could not be planned plannable: it is used
        return
    if (out, err) != (base_out, base_err):
        return
    as_json = ["--format", "json"]
    assert run_cli("plan", *_without_empty(bases + needs + args), *as_json) != run_cli("plan", *base, *as_json), \
        f"{args} changed nothing under {planner.name}"

"""The number of processes from a launch command line or an accelerate config file.

`torchrun --nproc_per_node 4 --nnodes 2 train.py` -> 8; `accelerate launch --num_processes 8 ...` -> 8
(accelerate counts all machines); `deepspeed --num_gpus 4 --num_nodes 2` -> 8; `NPROC_PER_NODE=4 NNODES=2
llamafactory-cli train x.yaml` or `swift sft` with the same variables -> 8. The line is split like a shell
would (shlex) and never run.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from trainsteps.configs.files import ConfigFile
from trainsteps.configs.settings import Settings
from trainsteps.errors import InputError

_PER_NODE = ("--nproc_per_node", "--nproc-per-node", "--num_gpus", "--num-gpus")
_NODES = ("--nnodes", "--num_nodes", "--num-nodes", "--num_machines", "--num-machines")
_TOTAL = ("--num_processes", "--num-processes")


@dataclass(frozen=True, slots=True)
class Launch:
    """What a launch line says."""

    world_size: int | None
    """Processes in the job, when the line says."""
    configs: tuple[str, ...] = ()
    """YAML/JSON files named on the line (the training config, an accelerate --config_file)."""


def join_continued_lines(line: str) -> str:
    """A script's `\\`-continued lines as one line, as the shell reads them."""
    return line.replace("\\\r\n", " ").replace("\\\n", " ")


_DATA_OPTIONS = ("--dataset", "--val_dataset", "--dataset_name", "--train_file", "--validation_file", "--data_files",
                 "--data_path", "--train_data", "--custom_train_dataset_path")
"""Options whose values are data files (ms-swift, transformers' examples, TRL scripts): a .json after one is data."""


def parse_launch(line: str) -> Launch:
    try:
        words = shlex.split(join_continued_lines(line))
    except ValueError as exc:
        raise InputError("configs.error.launch", "configs.hint.launch", line=line, detail=str(exc)) from None
    env, options, files = {}, {}, []
    i = 0
    while i < len(words):
        word = words[i]
        if "=" in word and not word.startswith("-") and word.split("=", 1)[0].isupper():
            name, value = word.split("=", 1)
            env[name] = value
        elif word.startswith("--"):
            name, eq, value = word.partition("=")
            if not eq and i + 1 < len(words) and not words[i + 1].startswith("-"):
                value = words[i + 1]
                i += 1 if name in _PER_NODE + _NODES + _TOTAL + ("--config_file", "--config-file") else 0
            options[name] = value
            if name in ("--config_file", "--config-file"):
                files.append(value)
            if name in _DATA_OPTIONS:  # `--dataset data.json more.jsonl`: data files, never config files
                while i + 1 < len(words) and not words[i + 1].startswith("-"):
                    i += 1
        elif word.endswith((".yaml", ".yml", ".json")):
            files.append(word)
        i += 1
    return Launch(_world_size(line, env, options), tuple(files))


def _world_size(line: str, env: dict, options: dict) -> int | None:
    total = _first(options, _TOTAL)
    if total is not None:
        return _int(total, line)
    per_node = _first(options, _PER_NODE) or env.get("NPROC_PER_NODE")
    nodes = _first(options, _NODES) or env.get("NNODES")
    if per_node is None and "CUDA_VISIBLE_DEVICES" in env and "llamafactory-cli" in line:
        per_node = str(len([d for d in env["CUDA_VISIBLE_DEVICES"].split(",") if d.strip()]))  # LF starts torchrun on every visible GPU
    if per_node is None:
        return 1 if nodes is None and "torchrun" not in line and "accelerate" not in line and "deepspeed" not in line else None
    return _int(per_node, line) * (_int(nodes, line) if nodes is not None else 1)


def _first(options: dict, names: tuple[str, ...]):
    return next((options[n] for n in names if n in options), None)


def _int(text: str, line: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError("configs.error.launch_count", "configs.hint.launch_count", value=text, line=line) from None
    if value < 1:
        raise InputError("configs.error.launch_count", "configs.hint.launch_count", value=text, line=line)
    return value


def read_accelerate(cfg: ConfigFile, settings: Settings) -> None:
    """accelerate config YAML: `num_processes` is the total over all machines."""
    data = cfg.data
    if "num_processes" in data:
        settings.put_number("world_size", data["num_processes"], cfg.where("num_processes"), written="num_processes")
    ds = data.get("deepspeed_config") or {}
    if isinstance(ds, dict) and ds.get("gradient_accumulation_steps") not in (None, "auto"):
        settings.put_number("gradient_accumulation_steps", ds["gradient_accumulation_steps"], cfg.where("deepspeed_config"))
    for key in data:
        if key not in ACCELERATE_KEYS:
            settings.ignored.append((key, cfg.where(key)))


ACCELERATE_KEYS = frozenset({
    "compute_environment", "debug", "distributed_type", "downcast_bf16", "enable_cpu_affinity", "fsdp_config", "deepspeed_config",
    "machine_rank", "main_process_ip", "main_process_port", "main_training_function", "megatron_lm_config", "mixed_precision",
    "num_machines", "num_processes", "rdzv_backend", "same_network", "tpu_env", "tpu_use_cluster", "tpu_use_sudo", "use_cpu",
    "gpu_ids", "dynamo_config", "parallelism_config", "fp8_config", "ipex_config", "mpirun_config",
})

"""How many processes the user meant to start, from launcher command lines and environment prints:
`torchrun --nnodes 2 --nproc_per_node 4`, `accelerate launch --num_processes=8`, DeepSpeed's launcher
(`dist_world_size=32`, `nnodes=8, num_local_procs=4`), `WORLD_SIZE=8`, LLaMA-Factory's `GPU number: 8`, and
Megatron's own `using world size: 16, data-parallel size: 4, ...` (the processes it was started with).
Compared with the processes the banner implies.

`CUDA_VISIBLE_DEVICES=0,1,2,3` lists the devices of ONE node: it is kept as such (`visible_devices`), never
taken for the number of processes. DeepSpeed's batch assertion and its pipeline CONFIG line state what
DeepSpeed itself computed.
"""

from __future__ import annotations

import re

from trainsteps.logs.context import ScanContext
from trainsteps.patterns import lazy

# An option and its value, also as a command quoted as a Python list (subprocess's CalledProcessError, a launcher's own
# log of what it runs): `'--nproc_per_node', '2'`
_ARG = r"(?:[= ]|['\"],\s*['\"])"
_PER_NODE = (lazy(r"--nproc[_-]per[_-]node" + _ARG + r"(\d+)"), lazy(r"\bGPU number:\s*(\d+)"))
_NODES = lazy(r"--nnodes" + _ARG + r"(\d+)(?![:\d])")
# accelerate's notice of its defaults: `--num_processes was set to a value of 4` (one per GPU it found)
_TOTAL = (lazy(r"--num[_-]processes(?:[= ]| was set to a value of )(\d+)"), lazy(r"\bdist_world_size=(\d+)"), lazy(r"\bWORLD_SIZE=(\d+)\b"))
_DS_NODES = lazy(r"\bnnodes=(\d+),\s*num_local_procs=(\d+)")
_VISIBLE = lazy(r"CUDA_VISIBLE_DEVICES=['\"]?([\d,]+)")
_DS_ASSERT = lazy(r"train_batch_size is not equal to micro_batch_per_gpu \* gradient_acc_step \* world_size\s*"
                        r"(\d+)\s*!=\s*(\d+)\s*\*\s*(\d+)\s*\*\s*(\d+)")
_PIPE = lazy(r"CONFIG:\s*micro_batches=(\d+)\s+micro_batch_size=(\d+)")
_GATHER = lazy(r"gather_len_batches:\s*\[([\d,\s]+)\]")
# The processes a framework says it was started with: Megatron's arguments.py (`using world size: 16, ...`), BasicSR's
# training statistics (basicsr/train.py: `World size (gpu number): 4`)
_FRAMEWORK_WORLD = lazy(r"using world size:\s*(\d+)|World size \(gpu number\):\s*(\d+)")
_BARRIER = lazy(r"store[_-]based[_-]barrier.*?with (\d+) nodes")
# `python train.py` (no launcher): one process, whatever the devices
# A script's own list of device ids (`--gpus 0,1,2,3`): the devices it trains on. A single number is left alone:
# `--gpus 2` is device 2 to MXNet's scripts and two GPUs to Lightning's.
_SCRIPT_DEVICES = lazy(r"--gpus[= ]['\"]?(\d+(?:,\d+)+)\b")
_PYTHON = lazy(r"^\s*(?:\$\s*)?(?:(?:export\s+)?[A-Z_][A-Z0-9_]*=\S*\s+)*python3?(?:\.\d+)?\s+(?:-u\s+)?(?!-m\b)\S+\.py\b")
# LLaMA-Factory's `llamafactory-cli train` starts one process per visible device (its launcher: torchrun with
# NPROC_PER_NODE, by default the device count) unless NNODES / NPROC_PER_NODE say otherwise
_LF_TRAIN = lazy(r"\b(?:llamafactory-cli|lmf)\s+train\b")
# The environment LLaMA-Factory's and ms-swift's launchers read (`NNODES=2 NPROC_PER_NODE=8 llamafactory-cli train`,
# `... swift sft`): torchrun --nnodes $NNODES (default 1) --nproc_per_node $NPROC_PER_NODE (default: the node's devices)
_ENV_NODES = lazy(r"(?<![\w])NNODES=['\"]?(\d+)\b")
_ENV_PER_NODE = lazy(r"(?<![\w])NPROC_PER_NODE=['\"]?(\d+)\b")
_ENV_LAUNCHER = lazy(r"\b(?:llamafactory-cli|lmf)\s+train\b|\bswift\s+(?:sft|pt|rlhf|train)\b")
# DeepSpeed's launcher: `deepspeed --num_gpus 8 --num_nodes 2 train.py`
_DS_GPUS = lazy(r"\bdeepspeed\b.*?--num[_-]gpus[= ](\d+)")
_DS_NUM_NODES = lazy(r"--num[_-]nodes[= ](\d+)")
# accelerate's config file (`accelerate config` / default_config.yaml): the processes over all machines
_ACCELERATE_YAML = lazy(r"^\s*num_processes:\s*(\d+)\s*$")
# verl / OpenRLHF launch arguments; verl's and EasyR1's printed config (`'n_gpus_per_node': 4,` in the dict verl pretty-prints,
# `"n_gpus_per_node": 8` in EasyR1's JSON) says the same
_VERL = (lazy(r"(?:\btrainer\.n_gpus_per_node=|['\"]n_gpus_per_node['\"]:\s*)(\d+)"),
         lazy(r"(?:\btrainer\.nnodes=|['\"]nnodes['\"]:\s*)(\d+)"))
# A launch script's variables: `NNODES=4`, `N_GPUS_PER_NODE=8`, `nproc_per_node=4`, each on its own line (a value the
# command then passes as `$NNODES`); only digits are kept (`NNODES=$SLURM_NNODES` says nothing here)
_ASSIGN = lazy(r"^\s*(?:export\s+)?([A-Za-z_]\w*)=['\"]?(\d+)['\"]?\s*$")
_NODES_VARS = {"NNODES", "NUM_NODES", "N_NODES", "NODE_NUM", "NUM_NODE"}
_PER_NODE_VARS = {"NPROC_PER_NODE", "N_GPUS_PER_NODE", "GPUS_PER_NODE", "NGPUS_PER_NODE", "NUM_GPUS_PER_NODE", "GPU_PER_NODE",
                  "NUM_GPU_PER_NODE", "N_GPU_PER_NODE"}
_VARIABLE = lazy(r"\$\{?([A-Za-z_]\w*)\}?")
_COMMAND_LIMIT = 8192
_OPENRLHF = (lazy(r"--actor_num_gpus_per_node[= ](\d+)"), lazy(r"--actor_num_nodes[= ](\d+)"))
NEEDLES = ("gather_len_batches", "barrier", "nproc", "num_processes", "num-processes", "GPU number", "CUDA_VISIBLE_DEVICES", "dist_world_size", "num_local_procs",
           "WORLD_SIZE", "micro_batch_per_gpu", "micro_batches=", "using world size", "World size (gpu", "python", "llamafactory-cli", "lmf ",
           "n_gpus_per_node", "nnodes=", "nnodes'", 'nnodes"', "actor_num_", "num_processes:", "NNODES", "NPROC_PER_NODE", "num_gpus",
           "num-gpus")


# Advice quotes an option without launching anything: `If this was unintended please pass in --num_processes=1.`
_ADVICE = lazy(r"\b(?:please|pass in|you can|you should|would need|try (?:with|using|setting))\b", re.IGNORECASE)


def scan(line: str, ctx: ScanContext) -> bool:
    if "=" in line and _script_variable(line, ctx):
        return True
    if "$" in line and ctx.shell_vars:
        line = _VARIABLE.sub(lambda m: str(ctx.shell_vars.get(m.group(1), m.group(0))), line)
    if line.rstrip().endswith("\\") or ctx.command:
        if _continued_command(line, ctx):
            return True
    for needle in NEEDLES:
        if needle in line:
            break
    else:
        return False
    if _ADVICE.search(line):
        return False
    match = _ACCELERATE_YAML.match(line)
    if match:
        ctx.wrapper_value("configured_world", ctx.reading(int(match.group(1))))
        return True
    match = _GATHER.search(line) or _BARRIER.search(line)
    if match:  # Axolotl gathers one loader length per rank; torch.distributed's barrier counts the processes
        count = len([x for x in match.group(1).split(",") if x.strip()]) if match.re is _GATHER.compiled else int(match.group(1))
        ctx.wrapper_value("launcher_world", ctx.reading(count))
        return True
    match = _FRAMEWORK_WORLD.search(line)
    if match:
        key = "framework_world" if match.group(1) else "loop_world"
        ctx.wrapper_value(key, ctx.reading(int(match.group(1) or match.group(2))))
        return True
    match = _DS_ASSERT.search(line)
    if match:
        for key, value in zip(("deepspeed_assert_train_batch", "deepspeed_assert_micro", "deepspeed_assert_ga", "deepspeed_assert_world"),
                              match.groups(), strict=True):
            ctx.wrapper_value(key, ctx.reading(int(value)))
        return True
    match = _PIPE.search(line)
    if match:
        ctx.wrapper_value("pipeline_micro_batches", ctx.reading(int(match.group(1))))
        ctx.wrapper_value("pipeline_micro_batch_size", ctx.reading(int(match.group(2))))
        return True
    match = _DS_NODES.search(line)
    if match:
        ctx.wrapper_value("launcher_world", ctx.reading(int(match.group(1)) * int(match.group(2))))
        return True
    for pattern in _TOTAL:
        match = pattern.search(line)
        if match:
            ctx.wrapper_value("launcher_world", ctx.reading(int(match.group(1))))
            return True
    if _env_launch(line, ctx):
        return True
    for pattern in _PER_NODE:
        match = pattern.search(line)
        if match:
            nodes = _NODES.search(line)
            if "--standalone" in line:  # torchrun --standalone: one node
                ctx.wrapper_value("launcher_world", ctx.reading(int(match.group(1))))
            elif nodes:
                ctx.wrapper_value("launcher_world", ctx.reading(int(nodes.group(1)) * int(match.group(1))))
            else:
                ctx.wrapper_value("devices_hint", ctx.reading(int(match.group(1))))
            return True
    if _per_node_args(line, ctx):
        return True
    match = _VISIBLE.search(line)
    visible = ctx.pending.get("visible_devices")
    if match:
        visible = ctx.reading(_devices(match))
        ctx.wrapper_value("visible_devices", visible)
    if _LF_TRAIN.search(line) and "NPROC_PER_NODE" not in line and "NNODES" not in line and visible is not None:
        ctx.wrapper_value("launcher_world", ctx.reading(visible.value, note="explain.note.lf_visible"))
        return True
    if _PYTHON.match(line):
        devices = _SCRIPT_DEVICES.search(line) if "-gpus" in line else None
        if devices is not None:  # one process data-parallel over the devices it lists (MXNet, insightface, old mmdet)
            ctx.wrapper_value("launcher_world", ctx.reading(len(devices.group(1).split(",")), note="explain.note.script_devices"))
            return True
        ctx.wrapper_value("launcher_world", ctx.reading(1, note="explain.note.plain_python"))
        return True
    return match is not None


def _script_variable(line: str, ctx: ScanContext) -> bool:
    """`NNODES=4` / `N_GPUS_PER_NODE=8` on their own lines: kept for the `$NNODES` that follows; a node count and a
    per-node count named as such are the processes the script launches (nodes x per node)."""
    match = _ASSIGN.match(line)
    if match is None:
        return False
    name, value = match.group(1), int(match.group(2))
    ctx.shell_vars[name] = value
    upper = name.upper()
    if upper in _PER_NODE_VARS and value > 0:
        ctx.shell_vars["_per_node"] = value
    elif upper in _NODES_VARS and value > 0:
        ctx.shell_vars["_nodes"] = value
    else:
        return False
    per_node = ctx.shell_vars.get("_per_node")
    if per_node is not None:
        ctx.wrapper_value("launcher_world", ctx.reading(per_node * ctx.shell_vars.get("_nodes", 1), note="explain.note.script_variables"))
    return True


def _continued_command(line: str, ctx: ScanContext) -> bool:
    """A command continued over lines with trailing backslashes, read as one line once it ends, for the settings
    that only the whole command gives (`NPROC_PER_NODE=4 \\` then `swift pt \\`). Each line is also read on its own."""
    stripped = line.rstrip()
    if stripped.endswith("\\"):
        if len(ctx.command) < _COMMAND_LIMIT:
            ctx.command += stripped[:-1] + " "
        return False
    whole, ctx.command = ctx.command + stripped, ""
    return _env_launch(whole, ctx) or _per_node_args(whole, ctx)


def _devices(visible: re.Match) -> int:
    """The devices a `CUDA_VISIBLE_DEVICES=0,1,2,3` list names."""
    return len([d for d in visible.group(1).split(",") if d])


def _per_node_args(line: str, ctx: ScanContext) -> bool:
    """verl's `trainer.n_gpus_per_node=4 trainer.nnodes=2`, OpenRLHF's `--actor_num_gpus_per_node 8 --actor_num_nodes 4`,
    on one line or on the lines of one command."""
    for per_node, nodes in (_VERL, _OPENRLHF):
        a, b = per_node.search(line), nodes.search(line)
        a = a if a and int(a.group(1)) > 0 else None  # verl's reward model prints `n_gpus_per_node: 0` when it has no pool
        b = b if b and int(b.group(1)) > 0 else None
        if a or b:
            if a:
                ctx.wrapper_value("rl_gpus_per_node", ctx.reading(int(a.group(1))))
            if b:
                ctx.wrapper_value("rl_nnodes", ctx.reading(int(b.group(1))))
            gpus, count = ctx.pending.get("rl_gpus_per_node"), ctx.pending.get("rl_nnodes")
            if gpus is not None:
                ctx.wrapper_value("launcher_world", ctx.reading(gpus.value * (count.value if count else 1)))
            return True
    return False


def _env_launch(line: str, ctx: ScanContext) -> bool:
    """`NNODES=2 NPROC_PER_NODE=8 llamafactory-cli train x.yaml` (or `swift sft`): nodes x processes per node;
    `deepspeed --num_gpus 8 --num_nodes 2`: the same. NNODES with no per-node count leaves the node's devices to the
    words around the log (`8 A100 each`): kept as `launcher_nodes`."""
    match = _DS_GPUS.search(line)
    if match:
        nodes = _DS_NUM_NODES.search(line)
        if nodes:
            ctx.wrapper_value("launcher_world", ctx.reading(int(nodes.group(1)) * int(match.group(1))))
        else:  # a hostfile may name more nodes: processes per node
            ctx.wrapper_value("devices_hint", ctx.reading(int(match.group(1))))
        return True
    if "NNODES" not in line and "NPROC_PER_NODE" not in line:
        return False
    per_node, nodes = _ENV_PER_NODE.search(line), _ENV_NODES.search(line)
    if (per_node is None and nodes is None) or _ENV_LAUNCHER.search(line) is None:
        return False
    visible = _VISIBLE.search(line)
    if visible:
        ctx.wrapper_value("visible_devices", ctx.reading(_devices(visible)))
    count = int(nodes.group(1)) if nodes else 1
    if per_node is not None:
        ctx.wrapper_value("launcher_world", ctx.reading(count * int(per_node.group(1))))
    else:
        ctx.wrapper_value("launcher_nodes", ctx.reading(count))
    return True

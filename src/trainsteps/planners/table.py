"""The table of planners: each planner, the settings it uses, and the rules that refuse a setting nobody would use.

`tests/planners/test_options_used_or_refused.py` walks every (planner x option) pair and checks that each option is
either used (it changes the answer) or refused.
"""

from __future__ import annotations

from trainsteps.errors import InputError
from trainsteps.record import field, record
from trainsteps.world import WORLD_NAMES

OUTPUT = frozenset({"fmt", "lang", "explain"})
"""How to answer: every planner takes them."""
TIME = frozenset({"step_time", "tokens_per_second", "samples_per_second", "timing_from", "model_path", "params", "gpu_name",
                  "peak_tflops", "stack", "activation_checkpointing", "dtype", "mfu", "training", "eval_examples", "eval_time", "save_time", "prepare_time",
                  "price_per_gpu_hour", "currency"})
"""The time settings (`--step-time`, `--gpu`, ...): a planner whose answer has steps takes them all."""
TIME_ASKS = ("step_time", "tokens_per_second", "samples_per_second", "timing_from", "model_path", "params", "gpu_name",
             "peak_tflops")
"""The time settings that ask for a time; the others only refine one."""
WORLD = frozenset(WORLD_NAMES)
TRAINER = frozenset({
    "num_examples", "per_device_train_batch_size", "gradient_accumulation_steps", "tensor_parallel_size",
    "context_parallel_size", "sequence_parallel_size", "num_train_epochs", "max_steps", "dataloader_drop_last",
    "split_batches", "no_even_batches", "streaming", "dataset_tokens", "no_dispatch_batches", "transformers_version",
    "resume_from_step", "warmup_ratio", "warmup_steps", "logging_strategy", "logging_steps", "logging_first_step",
    "eval_strategy", "eval_steps", "eval_delay", "save_strategy", "save_steps", "metric_for_best_model",
    "greater_is_better", "improving_evals", "trainable_parameters", "seq_length"})
"""The Hugging Face Trainer's settings (TrainingArguments and the loader around it)."""
DATA = frozenset({"data_paths", "tokenizer_path", "data_format", "text_field", "template", "dataset_name", "dataset_split",
                  "no_special_tokens", "add_eos", "cutoff_len", "packing_names", "num_proc", "threads", "no_cache",
                  "engine_tokenizer", "max_line_bytes"})
"""`--data PATH` and how to read and tokenize it (the options `trainsteps count` has)."""
DATA_ROWS = frozenset({"data_paths", "dataset_name", "dataset_split", "max_line_bytes", "no_cache"})
"""`--data PATH` counted for its rows only (a planner that has no use for tokens)."""
NEOX_MEGATRON = frozenset({"tensor_parallel_size", "pipeline_parallel_size", "seq_length", "train_iters", "eval_interval",
                           "eval_iters", "data_split", "data_prefix", "data_weight", "train_tokens", "save_interval",
                           "micro_batch_size"})
RL_COMMON = frozenset({"num_examples", "rl_overrides"})
FLOPS_TIME = frozenset({"model_path", "params", "gpu_name", "peak_tflops", "stack", "activation_checkpointing", "dtype", "mfu", "training", "eval_examples",
                        "tokens_per_second"})
"""Time settings that need the tokens of a step: the FLOPs model and a token rate."""
MEASURED_TIME = TIME - FLOPS_TIME - {"samples_per_second"}
"""Time from a measured step (`--step-time`, `--timing-from`) and what it adds (evaluations, saves, cost)."""
RL_MODEL_TIME = frozenset({"model_path", "params", "gpu_name", "peak_tflops", "dtype", "mfu", "training", "response_length",
                           "prompt_length", "time_budget", "safety_margin"})
"""The RL step model (timing.rl): the model, the GPU and the prompt and response lengths; an RL step is generation,
forwards, updates and weight sync, not the FLOPs of one update (so no --stack, --tokens-per-second, --eval-examples)."""


@record(frozen=True)
class Planner:
    """One planner: the runs it plans and the settings it uses."""

    name: str
    """What `--framework` (or the request's shape) names: hf, config, neox, verl, ..."""
    accepts: frozenset
    """Settings it uses; any other setting the user gives is refused."""
    run: str
    """`module:function` that plans a request: `function(request, counted) -> Answer`."""
    counts_data: bool = False
    """`--data` is counted for it (rows, tokens); the RL planners read their prompt files themselves."""


@record
class Answer:
    """A planner's answer: the JSON data and the human text, ready to print."""

    data: dict
    human: str
    notes: list = field(default_factory=list)
    """Lines for stderr before the answer (what `--data` counted, Unsloth's rewritten defaults)."""
    time_steps: str = "optimizer_steps"
    """The `run` field the time model multiplies by a step's time (RL: training steps)."""
    rollout: object = None
    """An RL plan's step as timing.rl.RolloutShape: what the RL step-time model needs (None: not an RL plan)."""


HF = OUTPUT | WORLD | TRAINER | DATA | TIME | {"unsloth_release"}
"""The Hugging Face Trainer (and the wrappers built on it), from flags or from a config."""
NEOX = OUTPUT | WORLD | (TIME - {"eval_examples"}) | NEOX_MEGATRON | {
    "train_batch_size", "gradient_accumulation_steps", "train_epochs", "seed", "warmup", "neox_version"}
MEGATRON = OUTPUT | WORLD | (TIME - {"eval_examples"}) | NEOX_MEGATRON | {
    "global_batch_size", "context_parallel_size", "expert_parallel_size", "train_samples", "rampup_batch_size",
    "decrease_batch_size_if_needed", "eval_global_batch_size", "lr_warmup_iters", "megatron_code", "step_batch_size_schedule",
    "megatron_version"}
DEEPSPEED = OUTPUT | WORLD | {"tensor_parallel_size", "pipeline_parallel_size", "train_batch_size", "micro_batch_size",
                              "per_device_train_batch_size", "gradient_accumulation_steps", "deepspeed_config"}
"""DeepSpeed's batch triple has no steps: no time."""
LIGHTNING = OUTPUT | WORLD | (TIME - FLOPS_TIME - {"eval_time", "save_time"}) | DATA_ROWS | {
    "num_examples", "per_device_train_batch_size", "gradient_accumulation_steps", "max_epochs", "num_train_epochs",
    "max_steps", "limit_train_batches", "dataloader_drop_last"}
"""Lightning's plan counts batches: rows, no tokens, no evaluations or saves."""
RL_FILES = RL_COMMON | {"configs", "launch", "data_paths"}
VERL = OUTPUT | WORLD | MEASURED_TIME | RL_MODEL_TIME | RL_FILES | {"framework_version", "tokenizer_path", "chat_template_path"}
OPENRLHF = OUTPUT | WORLD | MEASURED_TIME | RL_MODEL_TIME | RL_FILES | {"framework_version"}
EASYR1 = OUTPUT | WORLD | MEASURED_TIME | RL_MODEL_TIME | RL_FILES
TRL_PPO = OUTPUT | WORLD | (MEASURED_TIME - {"eval_time"}) | RL_MODEL_TIME | RL_COMMON | {
    "configs", "launch", "per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "logging_steps",
    "save_steps", "warmup_ratio"}
TORCHTITAN = OUTPUT | WORLD | (TIME - {"eval_examples"}) | {
    "configs", "rl_overrides", "framework_version", "micro_batch_size", "global_batch_size", "seq_length", "max_steps",
    "warmup_steps", "resume_from_step", "train_tokens", "num_examples", "save_interval", "eval_interval",
    "tensor_parallel_size", "pipeline_parallel_size", "context_parallel_size"}
"""torchtitan: its .toml (0.2.2), `--set section.key=value`, or flags; tokens per step are known, so the FLOPs model applies."""
AUTOMODEL = OUTPUT | WORLD | MEASURED_TIME | {
    "configs", "rl_overrides", "framework_version", "num_examples", "micro_batch_size", "global_batch_size",
    "num_train_epochs", "max_steps", "save_interval", "eval_interval", "warmup_steps", "tensor_parallel_size",
    "pipeline_parallel_size", "context_parallel_size"}
"""NeMo Automodel: its recipe YAML, `--set step_scheduler.key=value`, or flags."""
LF_V1 = OUTPUT | WORLD | (MEASURED_TIME - {"eval_time"}) | {
    "configs", "launch", "num_examples", "micro_batch_size", "global_batch_size", "num_train_epochs", "max_steps",
    "save_steps", "cutoff_len", "framework_version", "unsupervised_rows"}
"""LLaMA-Factory v1 (USE_V1=1): its YAML or launch line, or flags; evaluations are not planned."""
LITGPT = OUTPUT | WORLD | (TIME - {"eval_examples"}) | {
    "configs", "launch", "rl_overrides", "framework_version", "num_examples", "global_batch_size", "micro_batch_size",
    "num_train_epochs", "max_steps", "train_tokens", "seq_length", "warmup_steps", "warmup_ratio", "save_interval",
    "eval_interval"}
"""litgpt: its config YAML or launch line (`litgpt finetune_lora ...`, `litgpt pretrain ...`), `--set train.key=value`, or flags."""
MEGATRON_BRIDGE = OUTPUT | WORLD | MEASURED_TIME | {
    "configs", "launch", "rl_overrides", "framework_version", "num_examples", "global_batch_size", "micro_batch_size",
    "train_iters", "train_samples", "num_train_epochs", "eval_interval", "eval_iters", "eval_global_batch_size", "save_interval",
    "lr_warmup_iters", "warmup_ratio", "rampup_batch_size", "tensor_parallel_size", "pipeline_parallel_size", "context_parallel_size"}
"""Megatron-Bridge: its ConfigContainer YAML, `train.train_iters=...` overrides on the launch line or as `--set`, or flags."""
SWIFT_MEGATRON = OUTPUT | WORLD | MEASURED_TIME | {
    "configs", "launch", "framework_version", "num_examples", "micro_batch_size", "global_batch_size", "num_train_epochs",
    "train_iters", "save_strategy", "save_interval", "eval_interval", "tensor_parallel_size", "pipeline_parallel_size",
    "context_parallel_size", "streaming"}
"""ms-swift's Megatron trainer (`megatron sft/pt/rlhf`): its launch line or args.json, or flags."""
RL_STACK = OUTPUT | WORLD | MEASURED_TIME | RL_MODEL_TIME | {"configs", "launch", "rl_overrides", "num_examples", "data_paths", "prompts_per_step",
                                             "samples_per_prompt"}
"""The RL stacks users moved to (slime, AReaL, open-instruct): their launch line, config and `--set`, then the plan's flags."""


def _planners() -> dict[str, Planner]:
    return {p.name: p for p in (
        Planner("hf", HF | {"compare_versions"}, "trainsteps.planners.hf:plan_flags", counts_data=True),
        Planner("config", HF | {"configs", "launch", "framework_version", "response_length", "prompt_length", "time_budget",
                                "safety_margin"},
                "trainsteps.planners.configs:plan_configs",
                counts_data=True),
        Planner("neox", NEOX, "trainsteps.planners.pretrain:plan_neox"),
        Planner("megatron", MEGATRON, "trainsteps.planners.pretrain:plan_megatron"),
        Planner("deepspeed", DEEPSPEED, "trainsteps.planners.pretrain:plan_deepspeed"),
        Planner("lightning", LIGHTNING, "trainsteps.planners.pretrain:plan_lightning", counts_data=True),
        Planner("verl", VERL, "trainsteps.planners.rl:plan_verl"),
        Planner("openrlhf", OPENRLHF, "trainsteps.planners.rl:plan_openrlhf"),
        Planner("easyr1", EASYR1, "trainsteps.planners.rl:plan_easyr1"),
        Planner("trl-ppo", TRL_PPO, "trainsteps.planners.rl:plan_trl_ppo"),
        Planner("torchtitan", TORCHTITAN, "trainsteps.planners.stacks:plan_torchtitan"),
        Planner("automodel", AUTOMODEL, "trainsteps.planners.stacks:plan_automodel"),
        Planner("llamafactory-v1", LF_V1, "trainsteps.planners.stacks:plan_lf_v1"),
        Planner("litgpt", LITGPT, "trainsteps.planners.stacks:plan_litgpt"),
        Planner("megatron-bridge", MEGATRON_BRIDGE, "trainsteps.planners.stacks:plan_megatron_bridge"),
        Planner("swift-megatron", SWIFT_MEGATRON, "trainsteps.planners.stacks:plan_swift_megatron"),
        Planner("slime", RL_STACK, "trainsteps.planners.rl_stacks:plan_slime"),
        Planner("areal", RL_STACK, "trainsteps.planners.rl_stacks:plan_areal"),
        Planner("open-instruct", RL_STACK, "trainsteps.planners.rl_stacks:plan_open_instruct"),
        Planner("trl-async-grpo", (RL_STACK - {"eval_time"}) | {"framework_version"},  # evaluations are not planned
                "trainsteps.planners.rl_stacks:plan_trl_async_grpo"),
        Planner("prime-rl", RL_STACK - {"eval_time", "num_examples", "data_paths"},  # no epochs, no evaluations planned
                "trainsteps.planners.rl_stacks:plan_prime_rl"),
        Planner("roll", (RL_STACK - {"num_examples", "data_paths"}) | {"framework_version"},  # prompts cycle: no epochs
                "trainsteps.planners.rl_stacks:plan_roll"),
    )}


PLANNERS = _planners()
PRETRAIN_FRAMEWORKS = ("neox", "megatron", "deepspeed", "lightning")
RL_FRAMEWORKS = ("verl", "openrlhf", "easyr1", "trl-ppo")
STACK_FRAMEWORKS = ("torchtitan", "automodel", "llamafactory-v1", "litgpt", "megatron-bridge", "swift-megatron")
"""Stacks with their own config files and loop: planned from their files or from flags."""
RL_STACKS = ("slime", "areal", "open-instruct", "trl-async-grpo", "prime-rl", "roll")
"""RL stacks planned from their own launch lines and configs (planners.rl_stacks)."""
FRAMEWORKS = ("hf", *PRETRAIN_FRAMEWORKS, *RL_FRAMEWORKS, *STACK_FRAMEWORKS, *RL_STACKS)
"""What `--framework` takes."""
RL_LAUNCH_WORDS = ("verl.trainer", "main_dapo", "openrlhf.cli")
"""Words of a launch line that starts an RL trainer (`python3 -m verl.trainer.main_ppo ...`)."""


def choose(request) -> Planner:
    """The planner of a request: `--framework`, else an RL launch line, else config files or a launch line, else the
    Trainer from flags."""
    if request.framework in PRETRAIN_FRAMEWORKS or request.framework in RL_FRAMEWORKS or request.framework in STACK_FRAMEWORKS \
            or request.framework in RL_STACKS:
        return PLANNERS[request.framework]
    if request.framework != "hf":
        raise InputError("api.error.framework", "api.hint.framework", framework=repr(request.framework)[:60], guess="hf")
    if request.launch and "USE_V1=1" in request.launch.split():
        return PLANNERS["llamafactory-v1"]  # LLaMA-Factory's v1 trainer, not the Trainer
    if request.launch and "litgpt" in request.launch.split():
        return PLANNERS["litgpt"]  # `litgpt finetune_lora ...`, `litgpt pretrain ...`
    if request.launch and "run_recipe.py" in request.launch:
        return PLANNERS["megatron-bridge"]  # Megatron-Bridge's recipe launcher
    if request.launch and _is_swift_megatron(request.launch):
        return PLANNERS["swift-megatron"]  # `megatron sft ...`: ms-swift's Megatron trainer, not the Trainer
    if request.launch and any(word in request.launch for word in RL_LAUNCH_WORDS):
        from trainsteps.configs.rl_launch import read_launch

        launched = read_launch(request.launch).framework
        if launched in RL_FRAMEWORKS:
            return PLANNERS[launched]
    stack = _rl_stack_of(request)
    if stack is not None:
        return PLANNERS[stack]
    if request.configs and all(str(path).lower().endswith(".toml") for path in request.configs):
        return PLANNERS["torchtitan"]  # only torchtitan's job configs are TOML
    if request.configs:
        rl = _rl_framework_of(request.configs[0])
        if rl is not None:
            return PLANNERS[rl]
        stack = _stack_of(request.configs[0])
        if stack is not None:
            return PLANNERS[stack]
    if request.configs or request.launch:
        return PLANNERS["config"]
    return PLANNERS["hf"]


_LITGPT_TRAIN = frozenset({"global_batch_size", "micro_batch_size", "epochs", "max_tokens", "lr_warmup_steps", "save_interval"})
_LITGPT_TOP = frozenset({"checkpoint_dir", "initial_checkpoint_dir", "tokenizer_dir", "model_name"})
_BRIDGE_TRAIN = frozenset({"train_iters", "train_samples", "num_epochs"})


def _stack_of(path: str) -> str | None:
    """A stack's YAML planned by its stack without `--framework`: NeMo Automodel's `step_scheduler`, litgpt's `train` beside
    its checkpoint or model, Megatron-Bridge's `train.train_iters | train_samples | num_epochs` (the Trainer's readers
    would take them for another wrapper's file)."""
    if not str(path).endswith((".yaml", ".yml")):
        return None
    from trainsteps.configs.files import read_config

    data = read_config(path).data
    train = data.get("train") if isinstance(data, dict) else None
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("step_scheduler"), dict):
        return "automodel"
    if isinstance(train, dict) and train.keys() & _BRIDGE_TRAIN:
        return "megatron-bridge"
    if isinstance(train, dict) and train.keys() & _LITGPT_TRAIN and data.keys() & _LITGPT_TOP:
        return "litgpt"
    return None


def _is_swift_megatron(line: str) -> bool:
    words = line.split()
    return any(word.endswith("megatron") and following in ("sft", "pt", "rlhf") for word, following in zip(words, words[1:], strict=False))


def _rl_stack_of(request) -> str | None:
    """slime, AReaL, open-instruct, ..., from the launch line's words or the first config's keys (configs.rl_stacks)."""
    if not request.launch and not request.configs:  # flags only: nothing to read (and nothing imported)
        return None
    from trainsteps.configs.rl_stacks import stack_of_config, stack_of_launch

    if request.launch:
        stack = stack_of_launch(request.launch)
        if stack is not None:
            return stack
    if request.configs and str(request.configs[0]).endswith((".yaml", ".yml")):
        from trainsteps.configs.files import read_config

        return stack_of_config(read_config(request.configs[0]).data)
    if request.configs and str(request.configs[0]).lower().endswith(".toml"):
        from trainsteps.configs.files import read_toml
        from trainsteps.configs.rl_stacks import stack_of_toml

        return stack_of_toml(read_toml(request.configs[0]))
    return None


def _rl_framework_of(path: str) -> str | None:
    """An RL trainer's YAML is planned by its trainer without `--framework` (read by the one guarded reader)."""
    if not str(path).endswith((".yaml", ".yml")):
        return None
    from trainsteps.configs.files import read_config
    from trainsteps.configs.rl import rl_framework_of

    return rl_framework_of(read_config(path).data)


def refuse_unused(planner: Planner, request) -> None:
    """Every setting the user gave is used by this planner, or refused in one line that names who would use it."""
    for name in sorted(request.given):
        if name in planner.accepts:
            continue
        if name == "configs" and planner.name in PRETRAIN_FRAMEWORKS:  # positional files: the pretraining stacks' own words
            raise InputError("pt.error.configs", "pt.hint.configs", framework=planner.name)
        if name in ("time_budget", "safety_margin"):  # plan fits an RL run's steps to a budget; solve a Trainer run's
            raise InputError("time.error.budget_not_rl", "time.hint.budget_not_rl", option=option_name(name))
        users = {p.name for p in PLANNERS.values() if name in p.accepts}
        option = option_name(name)
        if planner.name == "hf" and "config" in users:
            raise InputError("cli.error.option_needs_config", "cli.hint.option_needs_config", option=option)
        frameworks = sorted({"hf" if user == "config" else user for user in users})
        raise InputError("cli.error.option_framework", "cli.hint.option_framework", option=option,
                         frameworks=", ".join(frameworks) or "-", framework=_framework_of(planner))
    refuse_time_refiners(request.given, request.settings)
    if planner.name == "hf" and request.gave("compare_versions"):
        for name in sorted(request.given & (TIME | {"unsloth_release"})):
            raise InputError("cli.error.option_with_compare", "cli.hint.option_with_compare", option=option_name(name))


def _framework_of(planner: Planner) -> str:
    return "hf" if planner.name == "config" else planner.name


_OPTION_NAMES = {"transformers_version": "--transformers", "data_paths": "--data", "tokenizer_path": "--tokenizer",
                 "dataset_name": "--dataset", "dataset_split": "--data-split", "packing_names": "--packing",
                 "data_split": "--split", "rl_overrides": "--set", "chat_template_path": "--chat-template",
                 "unsloth_release": "--unsloth", "model_path": "--model", "gpu_name": "--gpu", "fmt": "--format",
                 "greater_is_better": "--greater-is-better/--lower-is-better", "configs": "CONFIG"}


def option_name(name: str) -> str:
    """The command-line spelling of a setting (`transformers_version` -> `--transformers`)."""
    return _OPTION_NAMES.get(name) or "--" + name.replace("_", "-")


MODEL_REFINERS = ("dtype", "mfu", "training", "eval_examples", "stack", "activation_checkpointing", "response_length",
                  "prompt_length")
"""Time settings that only the FLOPs model reads (`--gpu` with `--model` or `--params`)."""
MODEL_ASKS = ("model_path", "params", "gpu_name", "peak_tflops")


def refuse_time_refiners(given, settings: dict) -> None:
    """A setting that refines a time (`--mfu`, `--save-time`, `--currency`) without the time it refines is refused."""
    if "currency" in given and settings.get("price_per_gpu_hour") is None:
        raise InputError("time.error.currency_alone", "time.hint.currency_alone")
    wants_model = any(settings.get(name) is not None for name in MODEL_ASKS)
    for name in MODEL_REFINERS:
        if name in given and not wants_model:
            raise InputError("time.error.refines_model", "time.hint.refines_model", option=option_name(name))
    asked = asks_time(settings) or settings.get("time_budget")
    for name in sorted(TIME - set(TIME_ASKS)):
        if name in given and not asked:
            raise InputError("time.error.refines_time", "time.hint.refines_time", option=option_name(name))


def asks_time(settings: dict) -> bool:
    """Whether the settings ask for a time (a measured rate, a log, or a FLOPs model)."""
    return any(settings.get(name) is not None for name in TIME_ASKS)

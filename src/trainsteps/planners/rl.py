"""RL trainers planned from their own launch lines, YAML and settings: verl, OpenRLHF, EasyR1 and TRL PPO
(`trainsteps plan --framework NAME`, a launch line that starts one, or `trainsteps.plan_rl`)."""

from __future__ import annotations

from trainsteps.configs.rl import EASYR1_KEYS, OPENRLHF_TYPES, PPO_KEYS, typed
from trainsteps.errors import InputError
from trainsteps.planners.table import Answer, asks_time


def plan_verl(request, counted) -> Answer:
    return _plan(request, "verl")


def plan_openrlhf(request, counted) -> Answer:
    return _plan(request, "openrlhf")


def plan_easyr1(request, counted) -> Answer:
    return _plan(request, "easyr1")


def plan_trl_ppo(request, counted) -> Answer:
    return _plan(request, "trl-ppo")


def _plan(request, framework: str) -> Answer:
    from trainsteps.configs.rl_launch import RLConfig, read_launch, read_yaml
    from trainsteps.report_rl import render_rl

    kw = request.settings
    refuse_budget_without_time(request)
    if request.gave("num_examples") and kw.get("data_paths"):  # one of the two would be ignored
        raise InputError("count.error.plan_data_twice", "count.hint.plan_data_twice")
    if request.gave("chat_template_path") and not kw.get("tokenizer_path"):
        raise InputError("rl.error.chat_template_alone", "rl.hint.chat_template_alone")
    config = RLConfig(framework=framework)  # the planner chosen for this request (by --framework, a launch line or the YAML)
    for word in kw.get("rl_overrides") or ():
        read_launch_word(config, word)
    if request.launch:
        config = read_launch(request.launch, config)
    for path in request.configs:
        config = read_yaml(path, config)
    for name in _config_names(request.launch or ""):
        config = read_yaml(name, config)
    framework = config.framework or framework
    gpus = _gpus(kw)
    plan = plan_rl_config(framework, config, kw, request.given, gpus)
    if gpus is not None:
        plan.inputs = {**plan.inputs, "world_size": gpus}
    data = plan.to_dict(request.lang)
    data["config"] = {"framework": plan.framework, "entry": config.entry, "files": list(request.configs),
                      "settings": {k: {"value": v, "from": config.origins.get(k)} for k, v in config.values.items()}}
    rollout = rollout_shape(plan, config, gpus) if asks_time(kw) else None  # the time model is imported only when asked
    return Answer(data, render_rl(plan, request.lang, request.explain), time_steps="training_steps", rollout=rollout)


def refuse_budget_without_time(request) -> None:
    """`--time-budget` needs a step time to divide it by; `--safety-margin` refines a budget."""
    if request.gave("safety_margin") and not request.settings.get("time_budget"):
        raise InputError("time.error.refines_budget", "time.hint.refines_budget", option="--safety-margin")
    if request.gave("time_budget") and not asks_time(request.settings):
        raise InputError("rl.error.budget_rate", "rl.hint.budget_rate")


def plan_rl_config(framework: str, config, kw: dict, given=frozenset(), gpus: int | None = None):
    """The RLPlan of a read config under one framework's rules."""
    if framework == "verl":
        return _verl(config, kw, gpus)
    if framework == "openrlhf":
        return _openrlhf(config, kw)
    if framework == "easyr1":
        return _easyr1(config, kw)
    if framework == "trl-ppo":
        return _trl_ppo(config, kw, given, gpus)
    raise InputError("rl.error.framework", "rl.hint.framework", framework=repr(framework)[:60], frameworks=_rl_framework_names())


def _rl_framework_names() -> str:
    from trainsteps.planners.table import RL_FRAMEWORKS, RL_STACKS

    return ", ".join((*RL_FRAMEWORKS, *RL_STACKS))


def plan_from_settings(framework: str, settings: dict, *, num_examples: int | None = None, version: str | None = None,
                       gpus: int | None = None):
    """The plan of `trainsteps.plan_rl` and of the web API: settings by the framework's own names, no files read."""
    from trainsteps.configs.rl_launch import RLConfig
    from trainsteps.numbers import to_whole
    from trainsteps.planners.table import RL_STACKS

    if not isinstance(settings, dict):
        raise InputError("rl.error.settings_type", "rl.hint.settings_type", framework=framework, kind=type(settings).__name__)
    if num_examples is not None:
        num_examples = to_whole(num_examples, "num_examples")
    if gpus is not None and to_whole(gpus, "gpus") < 1:
        raise InputError("rl.error.positive", "rl.hint.positive", key="gpus", value=gpus)
    if version is not None and not isinstance(version, str):
        raise InputError("rl.error.release", "rl.hint.release", framework=framework, version=repr(version)[:60], oldest="0.3.0")
    if framework in RL_STACKS:
        return _stack_from_settings(framework, settings, num_examples, version, gpus)
    config = RLConfig(framework=framework)
    for key, value in settings.items():
        config.values[key], config.origins[key] = value, "settings"
    kw = {"num_examples": num_examples, "framework_version": version, "world_size": gpus}
    return plan_rl_config(framework, config, kw, gpus=gpus)


def _stack_from_settings(framework: str, settings: dict, num_examples, version, gpus):
    """slime, AReaL, open-instruct, TRL AsyncGRPO, prime-rl, ROLL: the command line's planner on the given settings (as
    if each were a `--set key=value`); a keyword the stack has no use for is refused as its command-line option is."""
    from trainsteps.configs.rl_stacks import StackSettings
    from trainsteps.planners.rl_stacks import stack_plan
    from trainsteps.planners.table import PLANNERS, refuse_unused
    from trainsteps.request import PlanRequest

    flags = {"num_examples": num_examples, "framework_version": version, "gpus": gpus}
    request = PlanRequest(settings=flags, given=frozenset(k for k, v in flags.items() if v is not None), framework=framework)
    refuse_unused(PLANNERS[framework], request)
    read = StackSettings()
    for key, value in settings.items():
        read.put(str(key), value, "settings")
    return stack_plan(request, framework, read)[1]


def read_launch_word(config, word: str) -> None:
    from trainsteps.configs.rl_launch import _put

    if "=" not in word:
        raise InputError("rl.error.set", "rl.hint.set", value=word)
    key, value = word.split("=", 1)
    _put(config, key.strip().lstrip("+"), value, "--set")


def _config_names(line: str) -> list[str]:
    """Hydra's `--config-path DIR --config-name NAME` on the line: the user's YAML, when it is a local file."""
    import os
    import shlex

    from trainsteps.configs.launch import join_continued_lines

    try:
        words = shlex.split(join_continued_lines(line), comments=True)
    except ValueError:
        return []
    opts = {}
    for i, word in enumerate(words):
        for name in ("--config-path", "--config-name", "--config_path", "--config_name", "config"):
            if word.startswith(name + "="):
                opts[name.replace("_", "-")] = word.split("=", 1)[1]
            elif word == name and i + 1 < len(words):
                opts[name.replace("_", "-")] = words[i + 1]
    if "config" in opts:  # EasyR1: config=examples/config.yaml
        return [opts["config"]] if os.path.isfile(opts["config"]) else []
    if "--config-name" not in opts:
        return []
    name = opts["--config-name"]
    name = name if name.endswith((".yaml", ".yml")) else name + ".yaml"
    path = os.path.join(opts.get("--config-path", "."), name)
    return [path] if os.path.isfile(path) else []


def _verl(config, kw: dict, gpus: int | None):
    from trainsteps.configs import rl_data
    from trainsteps.configs.rl import train_files, typed, verl_spec
    from trainsteps.frameworks import verl

    version = kw.get("framework_version") or verl.NEWEST
    files = list(kw.get("data_paths") or ()) or train_files(config)
    if config.entry in ("verl.trainer.sft_trainer", "verl.trainer.fsdp_sft_trainer"):  # one optimizer step per batch
        rows = kw.get("num_examples") if kw.get("num_examples") is not None else (rl_data.count_rows(files) if files else None)
        if rows is None:
            raise InputError("rl.error.no_prompts", "rl.hint.no_prompts")
        fsdp = config.entry.endswith("fsdp_sft_trainer")
        freqs = {k: config.values.get(f"trainer.{k}", -1) for k in ("save_freq", "test_freq")}
        ratio = typed(config, "optim.lr_warmup_steps_ratio", float)
        if ratio is None:
            ratio = typed(config, "optim.warmup_steps_ratio", float)  # the name before 0.6
        torchrun = (typed(config, "nproc_per_node", int) or 0) * (typed(config, "nnodes", int) or 1)
        spec = verl.VerlSFTSpec(rows=rows, train_batch_size=typed(config, "data.train_batch_size", int) or 256,
                                total_epochs=typed(config, "trainer.total_epochs", int) or 4,
                                total_training_steps=typed(config, "trainer.total_training_steps", int),
                                n_gpus=gpus or torchrun or (typed(config, "trainer.n_gpus_per_node", int) or 8) * (typed(config, "trainer.nnodes", int) or 1),
                                lr_warmup_steps_ratio=ratio if ratio is not None else (0.1 if fsdp else 0.0), version=version,
                                trainer="fsdp_sft_trainer" if fsdp else "sft_trainer",
                                **{k: v if v == "after_each_epoch" else int(v) for k, v in freqs.items()})
        try:
            return verl.plan_verl_sft(spec)
        except ValueError as exc:
            raise InputError("rl.error.settings", "rl.hint.settings", detail=str(exc)) from None
    prompts = kw.get("num_examples")
    filtered = None
    spec = verl_spec(config, prompts or 0, version=version, gpus=gpus)
    filtering = verl.FILTER_DEFAULT.at(version) if spec.filter_overlong_prompts is None else spec.filter_overlong_prompts
    if kw.get("tokenizer_path") and not filtering:  # the tokenizer only counts the prompts that filter drops
        raise InputError("rl.error.tokenizer_filter_off", "rl.hint.tokenizer_filter_off", version=version)
    if prompts is None:
        if not files:
            raise InputError("rl.error.no_prompts", "rl.hint.no_prompts")
        if kw.get("tokenizer_path") and filtering:
            rows = rl_data.prompt_rows(files)
            prompts = len(rows)
            kept_rows = rows[: verl.prompts_after_max_samples(len(rows), spec.train_max_samples, version)]
            prompt_key = typed(config, "data.prompt_key", str) or "prompt"
            lengths = rl_data.prompt_lengths(kept_rows, kw["tokenizer_path"], kw.get("chat_template_path"), prompt_key)
            filtered = rl_data.kept_after_filter(lengths, spec.max_prompt_length)
        else:
            prompts = rl_data.count_rows(files)
    elif kw.get("tokenizer_path"):
        raise InputError("rl.error.tokenizer_without_data", "rl.hint.tokenizer_without_data")
    spec.prompts, spec.prompts_filtered = prompts, filtered
    try:
        return verl.plan_verl(spec)
    except ValueError as exc:
        raise InputError("rl.error.settings", "rl.hint.settings", detail=str(exc)) from None


def _gpus(kw: dict) -> int | None:
    from trainsteps.world import world_size

    return world_size(kw.get("world_size"), kw.get("gpus"), kw.get("nodes"))


def _prompts(kw: dict, files: list[str]) -> int:
    from trainsteps.configs import rl_data

    if kw.get("num_examples") is not None:
        return kw["num_examples"]
    files = list(kw.get("data_paths") or ()) or files
    if not files:
        raise InputError("rl.error.no_prompts", "rl.hint.no_prompts")
    return rl_data.count_rows(files)


def _openrlhf(config, kw: dict):
    from trainsteps.frameworks import openrlhf
    from trainsteps.frameworks.rl import check_release

    nested = any("." in key for key in config.values)
    version = check_release("OpenRLHF", kw.get("framework_version") or (openrlhf.NEWEST if nested else "0.9.10"), openrlhf.OLDEST)
    names = openrlhf.option_names(version)
    fields = {}
    for name, key in names.items():
        for other in openrlhf.names_of_other_releases(name, version):
            if other in config.values and key not in config.values:
                raise InputError("orl.error.names", "orl.hint.names", key=f"--{other}", version=version, expected=f"--{key}")
        if name == "prompt_data" or key not in config.values:
            continue
        value = typed(config, key, OPENRLHF_TYPES[name])
        if value is not None:
            fields[name] = value
    prompt_data = config.values.get(names["prompt_data"])
    files = [p for p in str(prompt_data).split(",") if p] if prompt_data and _is_local(str(prompt_data)) else []
    return openrlhf.plan_openrlhf(openrlhf.OpenRLHFSpec(prompts=_prompts(kw, files), version=version, **fields))


def _easyr1(config, kw: dict):
    from trainsteps.configs.rl import train_files
    from trainsteps.frameworks import easyr1

    fields = {}
    for key, (name, kind) in EASYR1_KEYS.items():
        value = typed(config, key, kind)
        if value is not None:
            fields[name] = value
    files = [f for f in train_files(config) if _is_local(f)]
    spec = easyr1.EasyR1Spec(prompts=_prompts(kw, files), **fields)
    try:
        return easyr1.plan_easyr1(spec)
    except ValueError as exc:
        raise InputError("rl.error.settings", "rl.hint.settings_easyr1", detail=str(exc)) from None


def _is_local(path: str) -> bool:
    import os

    return os.path.isfile(os.path.expanduser(path.split("@")[0]))


def _trl_ppo(config, kw: dict, given, gpus: int | None):
    """A TRL PPOConfig YAML (flat keys) and the plan command's own options (given ones win)."""
    from trainsteps.frameworks.trl_rl import PPOSpec, plan_trl_ppo

    fields = {}
    for key, kind in PPO_KEYS.items():
        value = typed(config, key, kind)
        if value is not None:
            fields[key] = value
        if key in given:
            fields[key] = kind(kw[key])
    if kw.get("num_examples") is None:
        raise InputError("rl.error.trl_ppo_rows", "rl.hint.trl_ppo_rows")
    world = gpus or 1
    try:
        return plan_trl_ppo(PPOSpec(num_examples=kw["num_examples"], world_size=world, **fields))
    except ValueError as exc:
        raise InputError("rl.error.settings", "rl.hint.settings", detail=str(exc)) from None


RESPONSE_CAP_DEFAULTS = {"verl": 512, "easyr1": 512, "openrlhf": 1024}
"""The response length limit when the settings give none: verl's `data.max_response_length` and EasyR1's (512),
OpenRLHF's `--generate_max_len` up to 0.9.7 (1024; from 0.9.8 `--max_len` bounds it: openrlhf.LENGTH_CAPS)."""


def rollout_shape(plan, config, gpus: int | None):
    """What one training step of this plan does, for the RL step-time model (timing.rl.RolloutShape)."""
    from trainsteps.timing.rl import RolloutShape

    if plan.algorithm.startswith("SFT"):  # verl's SFT trainers generate nothing
        return None
    run, inputs = plan.run, plan.inputs
    prompts = max(run.prompts_per_step, 1)
    common = {"framework": plan.framework, "training_steps": run.training_steps, "prompts_per_step": prompts,
              "samples_per_prompt": max(run.rollouts_per_step // prompts, 1), "critic": run.critic_optimizer_steps is not None}
    return RolloutShape(**{**common, **_ROLLOUT_READERS[plan.framework](config, inputs, gpus)})


def _verl_rollout(config, inputs: dict, gpus: int | None) -> dict:
    """verl's hybrid engine: rollout and training share the GPUs; a reference forward only with a KL term."""
    kl = bool(typed(config, "actor_rollout_ref.actor.use_kl_loss", bool) or typed(config, "algorithm.use_kl_in_reward", bool))
    return {"max_prompt_length": inputs.get("max_prompt_length"),
            "max_response_length": inputs.get("max_response_length") or RESPONSE_CAP_DEFAULTS["verl"],
            "gpus": gpus or (inputs.get("n_gpus_per_node") or 8) * (inputs.get("nnodes") or 1),
            "rollout_tp": typed(config, "actor_rollout_ref.rollout.tensor_model_parallel_size", int) or 2,
            # from 0.6; verl asserts it equals the rollout's TP x DP when above 1 (workers/config/rollout.py)
            "rollout_ep": typed(config, "actor_rollout_ref.rollout.expert_parallel_size", int) or 1,
            "max_num_seqs": typed(config, "actor_rollout_ref.rollout.max_num_seqs", int) or 1024,
            "ppo_epochs": inputs.get("ppo_epochs") or 1, "reference": kl,
            "training": "lora" if (typed(config, "actor_rollout_ref.model.lora_rank", int) or 0) > 0 else None}


def _easyr1_rollout(config, inputs: dict, gpus: int | None) -> dict:
    """EasyR1 (a verl fork): shared GPUs; the reference model runs unless algorithm.disable_kl."""
    nodes = typed(config, "trainer.nnodes", int) or 1
    return {"max_prompt_length": typed(config, "data.max_prompt_length", int) or 512,
            "max_response_length": inputs.get("max_response_length") or RESPONSE_CAP_DEFAULTS["easyr1"],
            "gpus": gpus or (typed(config, "trainer.n_gpus_per_node", int) or 8) * nodes,
            "rollout_tp": typed(config, "worker.rollout.tensor_parallel_size", int) or 2,
            "ppo_epochs": inputs.get("ppo_epochs") or 1, "reference": not typed(config, "algorithm.disable_kl", bool)}


def _openrlhf_rollout(config, inputs: dict, gpus: int | None) -> dict:
    """OpenRLHF: vLLM engines on their own GPUs unless colocated; async training overlaps them. The settings by the
    names the release takes (underscored up to 0.10.1, dotted from 0.10.2)."""
    from trainsteps.frameworks import openrlhf

    version = inputs.get("version") or openrlhf.NEWEST
    names = openrlhf.rollout_names(version)

    def setting(name: str, kind: type):
        return typed(config, names[name], kind)

    engines = setting("vllm_num_engines", int) or 0
    tp = setting("vllm_tensor_parallel_size", int) or 1
    colocated = bool(setting("colocate_all_models", bool)) or not engines
    trainers = (setting("actor_num_nodes", int) or 1) * (setting("actor_num_gpus_per_node", int) or 8)
    kl = setting("init_kl_coef", float)
    if openrlhf.LENGTH_CAPS.at(version) == "total":
        prompt_cap, response_default = None, setting("max_len", int) or 2048
    else:
        prompt_cap, response_default = typed(config, "prompt_max_len", int) or 1024, RESPONSE_CAP_DEFAULTS["openrlhf"]
    return {"max_prompt_length": prompt_cap,
            "max_response_length": inputs.get("generate_max_len") or response_default,
            "gpus": gpus or trainers, "rollout_gpus": None if colocated else engines * tp, "rollout_tp": tp,
            "ppo_epochs": inputs.get("max_epochs") or 1, "asynchronous": bool(setting("async_train", bool)),
            "reference": bool(setting("use_kl_loss", bool)) or kl is None or kl > 0, "training": _openrlhf_training(setting)}


def _openrlhf_training(setting) -> str | None:
    """OpenRLHF's method: LoRA with `lora_rank` > 0 (QLoRA with `load_in_4bit` too: models/actor.py quantizes the base,
    then wraps it in adapters); None: not stated (full-parameter)."""
    if (setting("lora_rank", int) or 0) <= 0:
        return None
    return "qlora" if setting("load_in_4bit", bool) else "lora"


def _trl_ppo_rollout(config, inputs: dict, gpus: int | None) -> dict:
    """TRL PPO generates with the policy being trained (no engine, no weight copy), policy and value model alike."""
    return {"max_response_length": inputs.get("response_length"), "gpus": gpus or 1, "weight_sync": False, "rollout_engine": False, "critic": True,
            "max_num_seqs": inputs.get("per_device_train_batch_size") or 64, "ppo_epochs": inputs.get("num_ppo_epochs") or 1}


_ROLLOUT_READERS = {"verl": _verl_rollout, "easyr1": _easyr1_rollout, "openrlhf": _openrlhf_rollout, "trl-ppo": _trl_ppo_rollout}

"""RL settings (an `RLConfig` from a launch line and YAML) -> the spec of the framework's rules.

Each framework has a table of its own key names -> spec fields; a value of the wrong type is one line naming the key
and where it was set. Keys not in the table are kept (they are listed under `inputs` in the JSON) and change no count.
"""

from __future__ import annotations

from trainsteps.configs.rl_launch import RLConfig
from trainsteps.errors import InputError

VERL_KEYS = {
    "data.train_batch_size": ("train_batch_size", int),
    "data.gen_batch_size": ("gen_batch_size", int),
    "data.train_max_samples": ("train_max_samples", int),
    "data.filter_overlong_prompts": ("filter_overlong_prompts", bool),
    "data.truncation": ("truncation", str),
    "data.max_prompt_length": ("max_prompt_length", int),
    "data.max_response_length": ("max_response_length", int),
    "actor_rollout_ref.rollout.n": ("rollout_n", int),
    "actor_rollout_ref.actor.ppo_mini_batch_size": ("ppo_mini_batch_size", int),
    "actor_rollout_ref.actor.ppo_epochs": ("ppo_epochs", int),
    "actor_rollout_ref.actor.ulysses_sequence_parallel_size": ("ulysses_sequence_parallel_size", int),
    "actor_rollout_ref.rollout.multi_turn.enable": ("multi_turn", bool),
    "actor_rollout_ref.rollout.multi_turn.max_assistant_turns": ("max_assistant_turns", int),
    "actor_rollout_ref.actor.optim.lr_warmup_steps": ("lr_warmup_steps", int),
    "actor_rollout_ref.actor.optim.lr_warmup_steps_ratio": ("lr_warmup_steps_ratio", float),
    "actor_rollout_ref.actor.optim.lr_scheduler_type": ("lr_scheduler_type", str),
    "actor_rollout_ref.actor.optim.warmup_style": ("lr_scheduler_type", str),
    "trainer.total_epochs": ("total_epochs", int),
    "trainer.total_training_steps": ("total_training_steps", int),
    "trainer.n_gpus_per_node": ("n_gpus_per_node", int),
    "trainer.nnodes": ("nnodes", int),
    "trainer.critic_warmup": ("critic_warmup", int),
    "trainer.test_freq": ("test_freq", int),
    "trainer.save_freq": ("save_freq", int),
    "trainer.val_before_train": ("val_before_train", bool),
    "algorithm.adv_estimator": ("adv_estimator", str),
    "algorithm.filter_groups.enable": ("filter_groups", bool),
    "algorithm.filter_groups.max_num_gen_batches": ("max_num_gen_batches", int),
    "critic.enable": ("critic_enable", bool),
    "critic.ppo_mini_batch_size": ("critic_ppo_mini_batch_size", int),
    "critic.ppo_epochs": ("critic_ppo_epochs", int),
    "trainer.use_v1": ("use_v1", bool),
    "trainer.v1.trainer_mode": ("v1_trainer_mode", str),
    "trainer.v1.separate_async.parameter_sync_step": ("parameter_sync_step", int),
}
"""verl's Hydra keys that change a count -> VerlSpec field and type."""


def typed(config: RLConfig, key: str, kind: type):
    """The value of `key` as `kind`; None when unset or null. Hydra interpolations (`${...}`) fall back to the default."""
    value = config.values.get(key)
    if value is None or (isinstance(value, str) and value.startswith("${")):
        return None
    if key in config.shell_values:
        raise InputError("rl.error.shell_variable", "rl.hint.shell_variable", key=key, value=value)
    where = config.origins.get(key, "?")
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif kind in (int, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(value, kind, key, where)
    elif kind is str:
        return str(value)
    shown = repr(value) if not isinstance(value, (str, list, dict)) or len(value) <= 60 else \
        (repr(value[:60]) + "..." if isinstance(value, str) else "a " + type(value).__name__)
    raise InputError("rl.error.value", "rl.hint.value", key=key, value=shown, where=where, kind=kind.__name__)


def _number(value: int | float, kind: type, key: str, where: str) -> int | float:
    """A numeric setting through the one checked conversion (NaN, infinity and fractions refused), within the cap."""
    from trainsteps.frameworks.rl import MAX_SETTING, check_size
    from trainsteps.numbers import to_kind

    if isinstance(value, float) and kind is int and value.is_integer() and abs(value) <= MAX_SETTING:
        return int(value)
    number = to_kind(value, kind, key, f"{key} ({where})")
    return check_size(number, key)


def verl_spec(config: RLConfig, prompts: int, *, version: str, prompts_filtered: int | None = None, gpus: int | None = None):
    from trainsteps.frameworks.rl import check_release
    from trainsteps.frameworks.verl import OLDEST, VerlSpec

    check_release("verl", version, OLDEST)  # the caller looks up the release's defaults next
    fields = {}
    for key, (name, kind) in VERL_KEYS.items():
        value = typed(config, key, kind)
        if value is not None:
            fields[name] = value
    if config.entry and "dapo" in config.entry and "filter_groups" not in fields:
        fields["filter_groups"] = False  # the recipe's YAML default; the line turns it on
    if config.entry and "dapo" in config.entry:
        fields.setdefault("use_v1", False)  # recipe/dapo runs its own RayDAPOTrainer, not main_ppo's v1 trainer
    if gpus is not None:
        fields["n_gpus_per_node"], fields["nnodes"] = gpus, 1
    for name in ("train_batch_size", "rollout_n", "ppo_mini_batch_size", "ppo_epochs", "total_epochs", "n_gpus_per_node", "nnodes",
                 "total_training_steps", "gen_batch_size", "ulysses_sequence_parallel_size", "critic_ppo_mini_batch_size",
                 "critic_ppo_epochs", "max_prompt_length"):
        if name in fields and fields[name] < 1:
            key = next(k for k, (n, _) in VERL_KEYS.items() if n == name)
            raise InputError("rl.error.positive", "rl.hint.positive", key=key, value=fields[name])
    return VerlSpec(prompts=prompts, prompts_filtered=prompts_filtered, version=version, **fields)


def train_files(config: RLConfig, key: str = "data.train_files") -> list[str]:
    """The train files named by the run; `$HOME`-style variables are expanded from this shell's environment."""
    import os

    value = config.values.get(key)
    if value is None:
        return []
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):  # a Hydra list with shell variables
        value = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
    return [os.path.expandvars(str(v)) for v in (value if isinstance(value, list) else [value])]


EASYR1_KEYS = {
    "data.rollout_batch_size": ("rollout_batch_size", int),
    "data.mini_rollout_batch_size": ("mini_rollout_batch_size", int),
    "data.max_response_length": ("max_response_length", int),
    "worker.rollout.n": ("rollout_n", int),
    "worker.actor.global_batch_size": ("actor_global_batch_size", int),
    "worker.actor.ppo_epochs": ("ppo_epochs", int),
    "worker.actor.optim.lr_warmup_ratio": ("lr_warmup_ratio", float),
    "worker.actor.optim.lr_warmup_steps": ("lr_warmup_steps", int),
    "trainer.total_epochs": ("total_epochs", int),
    "trainer.max_steps": ("max_steps", int),
    "trainer.val_freq": ("val_freq", int),
    "trainer.save_freq": ("save_freq", int),
    "trainer.val_before_train": ("val_before_train", bool),
    "algorithm.online_filtering": ("online_filtering", bool),
    "algorithm.adv_estimator": ("adv_estimator", str),
}
OPENRLHF_TYPES = {"train_batch_size": int, "rollout_batch_size": int, "n_samples_per_prompt": int, "num_episodes": int,
                  "max_epochs": int, "max_samples": int, "lr_warmup_ratio": float, "freezing_actor_steps": int, "save_steps": int,
                  "eval_steps": int, "dynamic_filtering": bool, "generate_max_len": int, "advantage_estimator": str,
                  "vllm_generate_batch_size": int}
"""EasyR1 keys -> EasyR1Spec field and type; OPENRLHF_TYPES: OpenRLHFSpec field -> type."""

PPO_KEYS = {"per_device_train_batch_size": int, "gradient_accumulation_steps": int, "num_train_epochs": float,
            "total_episodes": int, "num_mini_batches": int, "num_ppo_epochs": int, "response_length": int,
            "logging_steps": float, "save_steps": float, "warmup_ratio": float}
"""TRL PPOConfig keys that change a count, and their types."""


def rl_framework_of(data: object) -> str | None:
    """The RL trainer a config file is for, from its top-level keys; None for every other config.

    verl's composed config nests `actor_rollout_ref`; EasyR1's nests `worker` beside `algorithm`; a TRL PPOConfig
    (OnPolicyConfig) has `num_ppo_epochs` and `num_mini_batches` (old RLOO had them too, with `rloo_k`)."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("actor_rollout_ref"), dict):
        return "verl"
    if isinstance(data.get("worker"), dict) and "algorithm" in data:
        return "easyr1"
    if "num_ppo_epochs" in data and "num_mini_batches" in data and "rloo_k" not in data:
        return "trl-ppo"
    return None

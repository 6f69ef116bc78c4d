"""OpenRLHF (`openrlhf.cli.train_ppo_ray`: PPO, GRPO, REINFORCE++, RLOO): rollout batches vs optimizer steps.

Read from the source of 0.9.10, 0.10.4, 0.11.0 and 0.11.2 (`trainer/ppo_trainer.py prepare_datasets` and `fit`,
`trainer/ppo_utils/samples_generator.py`, `trainer/ray/ppo_actor.py`); 0.11.2's `prepare_datasets` and prompt-batch
drawing were run for tests/fixtures/rl/openrlhf-0.11.2.json (tools/record_rl.py openrlhf):

- prompts = min(max_samples, rows of the prompt data) (`train_data.select(range(min(max_samples, len)))`);
- the LR scheduler's `max_steps = prompts x n_samples_per_prompt // train_batch_size x num_episodes x max_epochs`:
  it counts optimizer steps (one per `train_batch_size` samples, `max_epochs` passes over each rollout batch), and
  warmup is `ceil(max_steps x lr_warmup_ratio)`;
- `fit()` draws `rollout_batch_size` prompts at a time (the last, partial batch is trained too) and its `global_step`,
  logged as "Global step N" and used for `save_steps`/`eval_steps` and the `global_stepN` checkpoint tags, counts those
  rollout batches, not updates;
- the actor is trained only once `global_step > freezing_actor_steps` (critic warm-up).

The command-line names changed in 0.10.2 (`--train_batch_size` -> `--train.batch_size`, `--rollout_batch_size` ->
`--rollout.batch_size`, ...); both families are read. Releases up to 0.9.0 drew prompts in whole generation
batches with drop_last (PROMPT_LOADER): one global step per batch, the last partial batch dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.derivation import Derivation
from trainsteps.frameworks.rl import Notion, RLPlan, RLRun, check_release, check_rows, check_settings, event_steps
from trainsteps.schedule import Trap
from trainsteps.versions import Timeline, as_version

NEWEST = "0.11.2"
READ_FROM_SOURCE = ("0.9.10", "0.10.4", "0.11.0", "0.11.2")

OLDEST = "0.4.0"
"""The oldest release whose rules are modelled (its ppo_trainer drew prompts as 0.9 does, with a warning)."""
PROMPT_LOADER = Timeline("openrlhf.prompt_loader", [(OLDEST, "whole_batches"), ("0.9.8", "one_by_one")])
"""How fit() draws prompts. Up to 0.9.0 (read in 0.6.0, 0.7.0, 0.8.0, 0.8.11 and 0.9.0): a StatefulDataLoader of whole
generation batches with drop_last=True, one global step per batch (0.6-0.7: rollout_batch_size // dp per rank; 0.8.0:
rollout_batch_size; 0.8.11-0.9.0: vllm_generate_batch_size, default rollout_batch_size), so the last partial batch
is dropped. From 0.9.8 (read; 0.9.1-0.9.7 were not) a loader of single prompts feeds the samples generator, and the
last partial rollout batch is trained (run on 0.11.2)."""
CLI_NAMES = Timeline("openrlhf.cli_names", [(OLDEST, "flat"), ("0.10.2", "nested")])
"""`--train_batch_size` style up to 0.10.1, `--train.batch_size` from 0.10.2 (cli/train_ppo_ray.py of each wheel)."""

NAMES = {  # spec field: (flat name up to 0.9, nested name from 0.10)
    "train_batch_size": ("train_batch_size", "train.batch_size"),
    "rollout_batch_size": ("rollout_batch_size", "rollout.batch_size"),
    "n_samples_per_prompt": ("n_samples_per_prompt", "rollout.n_samples_per_prompt"),
    "num_episodes": ("num_episodes", "train.num_episodes"),
    "max_epochs": ("max_epochs", "train.max_epochs"),
    "max_samples": ("max_samples", "data.max_samples"),
    "lr_warmup_ratio": ("lr_warmup_ratio", "actor.lr_warmup_ratio"),
    "freezing_actor_steps": ("freezing_actor_steps", "critic.freezing_steps"),
    "save_steps": ("save_steps", "ckpt.save_steps"),
    "eval_steps": ("eval_steps", "eval.steps"),
    "dynamic_filtering": ("dynamic_filtering", "algo.dynamic_filtering_enable"),
    "generate_max_len": ("generate_max_len", "rollout.max_new_tokens"),
    "advantage_estimator": ("advantage_estimator", "algo.advantage.estimator"),
    "prompt_data": ("prompt_data", "data.prompt_dataset"),
    "vllm_generate_batch_size": ("vllm_generate_batch_size", "rollout.vllm_generate_batch_size"),
}
RESPONSE_CAP_NAME = Timeline("openrlhf.response_cap_name", [(OLDEST, "generate_max_len"), ("0.9.8", "max_new_tokens")])
"""The underscored name of the response cap: `--generate_max_len` (default 1024) up to 0.9.7; from 0.9.8
`--max_new_tokens` (default None: `--max_len` 2048 minus the prompt) (cli/train_ppo_ray.py of each wheel)."""


ROLLOUT_NAMES = {  # the step's shape, for the RL step model: (underscored name up to 0.10.1, dotted name from 0.10.2)
    "vllm_num_engines": ("vllm_num_engines", "vllm.num_engines"),
    "vllm_tensor_parallel_size": ("vllm_tensor_parallel_size", "vllm.tensor_parallel_size"),
    "colocate_all_models": ("colocate_all_models", "train.colocate_all"),
    "actor_num_nodes": ("actor_num_nodes", "actor.num_nodes"),
    "actor_num_gpus_per_node": ("actor_num_gpus_per_node", "actor.num_gpus_per_node"),
    "async_train": ("async_train", "train.async_enable"),
    "init_kl_coef": ("init_kl_coef", "algo.kl.init_coef"),
    "use_kl_loss": ("use_kl_loss", "algo.kl.use_loss"),
    "max_len": ("max_len", "data.max_len"),
    "lora_rank": ("lora_rank", "ds.lora.rank"),
    "load_in_4bit": ("load_in_4bit", "ds.load_in_4bit"),
}
"""`lora_rank` > 0 trains LoRA adapters (models/actor.py: get_peft_model with r=lora_rank), on a 4-bit base with
`load_in_4bit` (BitsAndBytesConfig nf4); read in cli/train_ppo_ray.py of 0.9.10 (`--lora_rank`, `--load_in_4bit`) and of
0.10.4 and 0.11.2 (`--ds.lora.rank`, `--ds.load_in_4bit`)."""
LENGTH_CAPS = Timeline("openrlhf.length_caps", [(OLDEST, "prompt_and_response"), ("0.9.8", "total")])
"""What bounds the lengths when `--generate_max_len` / `--max_new_tokens` is not set: up to 0.9.7 `--prompt_max_len`
(default 1024) and `--generate_max_len` (default 1024); from 0.9.8 only `--max_len`, prompt + response (default 2048,
vLLM's max_model_len), so a response stops at max_len minus its prompt and no prompt cap of its own is known."""


def _family(version: str) -> int:
    """Which name of a (flat, dotted) pair OpenRLHF `version` takes: 0 flat, 1 dotted."""
    return 1 if CLI_NAMES.at(version) == "nested" else 0


def rollout_names(version: str) -> dict[str, str]:
    """Setting -> the option name OpenRLHF `version` takes for it, for the settings of the step's shape."""
    return {name: pair[_family(version)] for name, pair in ROLLOUT_NAMES.items()}


def option_names(version: str) -> dict[str, str]:
    """Spec field -> the option name OpenRLHF `version` takes for it."""
    family = _family(version)
    names = {name: pair[family] for name, pair in NAMES.items()}
    if not family:
        names["generate_max_len"] = RESPONSE_CAP_NAME.at(version)
    return names


def names_of_other_releases(field_name: str, version: str) -> list[str]:
    """The names other releases take for a spec field, which `version` does not."""
    every = [*NAMES[field_name], *(name for _, name in RESPONSE_CAP_NAME.entries)] if field_name == "generate_max_len" \
        else list(NAMES[field_name])
    own = option_names(version)[field_name]
    return [name for name in dict.fromkeys(every) if name != own]


@dataclass(slots=True)
class OpenRLHFSpec:
    """What an OpenRLHF PPO-family run sets (argparse defaults of train_ppo_ray.py)."""

    prompts: int
    """Rows of the prompt data."""
    train_batch_size: int = 128
    """Samples per optimizer step (global)."""
    rollout_batch_size: int = 1024
    """Prompts per rollout batch."""
    n_samples_per_prompt: int = 1
    """Responses per prompt."""
    num_episodes: int = 1
    """Passes over the prompts."""
    max_epochs: int = 1
    """Passes over each rollout batch's samples."""
    max_samples: int = 100_000_000
    """Keep at most this many prompts."""
    lr_warmup_ratio: float = 0.03
    """Warmup fraction of max_steps (rounded up)."""
    freezing_actor_steps: int = -1
    """The actor is not trained while global_step <= this."""
    save_steps: int = -1
    """Checkpoint every N global steps (rollout batches)."""
    eval_steps: int = -1
    """Evaluate every N global steps."""
    dynamic_filtering: bool = False
    """Drop prompts whose responses all score alike and refill the batch."""
    generate_max_len: int | None = None
    """Tokens per response at most."""
    vllm_generate_batch_size: int | None = None
    """Prompts per generation batch in releases that draw whole batches (0.8.11-0.9.0); None: rollout_batch_size."""
    advantage_estimator: str = "gae"
    """gae (PPO), reinforce, rloo, reinforce_baseline, group_norm (GRPO), dr_grpo."""
    version: str = NEWEST


ALGORITHMS = {"gae": "PPO", "reinforce": "REINFORCE++", "rloo": "RLOO", "reinforce_baseline": "REINFORCE++-baseline",
              "group_norm": "GRPO", "dr_grpo": "Dr. GRPO"}


def plan_openrlhf(spec: OpenRLHFSpec) -> RLPlan:
    version = check_release("OpenRLHF", spec.version, OLDEST)
    check_rows(spec.prompts)
    check_settings(spec, option_names(version),
                   positive=("train_batch_size", "rollout_batch_size", "n_samples_per_prompt", "num_episodes", "max_epochs",
                             "max_samples", "generate_max_len", "vllm_generate_batch_size"), non_negative=("lr_warmup_ratio",))
    d = Derivation()
    warnings: list[Trap] = []
    if as_version(version) > as_version(NEWEST):
        warnings.append(Trap("OPENRLHF_NEWER_THAN_KNOWN", "orl.warn.newer", {"version": version, "newest": NEWEST}))
    n, tb, rb = spec.n_samples_per_prompt, spec.train_batch_size, spec.rollout_batch_size
    prompts = d.add("prompt_rows", min(spec.prompts, spec.max_samples), "min(rows, max_samples)", f"min({spec.prompts}, {spec.max_samples})")
    max_steps = d.add("scheduler_max_steps", prompts * n // tb * spec.num_episodes * spec.max_epochs,
                      "prompts x n_samples_per_prompt // train_batch_size x num_episodes x max_epochs",
                      f"{prompts} x {n} // {tb} x {spec.num_episodes} x {spec.max_epochs}", "orl.why.max_steps")
    if PROMPT_LOADER.at(version) == "whole_batches":
        rb = spec.vllm_generate_batch_size or rb  # each drawn batch is one global step
        per_episode = prompts // rb
        batches = d.add("rollout_batches", per_episode * spec.num_episodes, "floor(prompts / generation batch) x num_episodes",
                        f"floor({prompts} / {rb}) x {spec.num_episodes}", "orl.why.whole_batches", version=version)
        full, last = per_episode, 0
        if prompts % rb:
            warnings.append(Trap("OPENRLHF_OLD_DROPS_LAST", "orl.warn.old", {"version": version, "dropped": prompts % rb, "batch": rb}))
    else:
        per_episode = math.ceil(prompts / rb)
        batches = d.add("rollout_batches", per_episode * spec.num_episodes, "ceil(prompts / rollout_batch_size) x num_episodes",
                        f"ceil({prompts} / {rb}) x {spec.num_episodes}", "orl.why.global_step")
        full, last = divmod(prompts, rb)
    frozen = min(max(spec.freezing_actor_steps, -1) + 1, batches)  # steps 0..freezing run no actor update
    per_batch = rb * n * spec.max_epochs / tb
    d.add("updates_per_rollout_batch", _fmt(per_batch), "rollout_batch_size x n x max_epochs / train_batch_size",
          f"{rb} x {n} x {spec.max_epochs} / {tb}", "orl.why.updates")
    samples = (full * rb + last) * n * spec.num_episodes
    trained_fraction = (batches - frozen) / batches if batches else 0
    updates = d.add("actor_optimizer_steps", int(samples * spec.max_epochs * trained_fraction) // tb,
                    "floor(samples x max_epochs / train_batch_size) over the batches that train the actor",
                    f"{samples} x {spec.max_epochs} / {tb}", "orl.why.deepspeed")
    warmup = d.add("warmup_steps", math.ceil(max_steps * spec.lr_warmup_ratio), "ceil(max_steps x lr_warmup_ratio)",
                   f"ceil({max_steps} x {spec.lr_warmup_ratio})")
    if (rb * n) % tb:
        warnings.append(Trap("OPENRLHF_BATCH_NOT_DIVISIBLE", "orl.warn.not_divisible", {"rollout": rb * n, "train": tb}))
    if updates > max_steps:
        warnings.append(Trap("OPENRLHF_SCHEDULE_ENDS_EARLY", "orl.warn.schedule_short", {"max_steps": f"{max_steps:,}", "updates": f"{updates:,}"}))
    elif updates < max_steps:
        warnings.append(Trap("OPENRLHF_SCHEDULE_NOT_FINISHED", "orl.warn.schedule_long", {"max_steps": f"{max_steps:,}", "updates": f"{updates:,}"}))
    if last:
        warnings.append(Trap("OPENRLHF_PARTIAL_BATCH", "orl.warn.partial", {"last": last, "rollout": rb}))
    if spec.dynamic_filtering:
        warnings.append(Trap("OPENRLHF_DYNAMIC_FILTERING", "orl.warn.dynamic", {"batches": f"{batches:,}"}))
    rollouts = prompts * n * spec.num_episodes
    run = RLRun(
        training_steps=batches, optimizer_steps=updates, scheduler_steps=max_steps, scheduler_steps_taken=min(updates, max_steps),
        warmup_steps=warmup, rollouts=rollouts, rollouts_per_step=rb * n, prompts_per_step=rb, prompts=prompts,
        steps_per_epoch=per_episode, epochs_planned=float(spec.num_episodes), epochs_completed=float(spec.num_episodes),
        updates_per_step=max(int(per_batch), 1) if per_batch >= 1 else 0, test_steps=event_steps(spec.eval_steps, batches, name="eval_steps", at_end=False),
        save_steps=event_steps(spec.save_steps, batches, name="save_steps", at_end=False), upper_bound=spec.dynamic_filtering,
        response_tokens_max=rollouts * spec.generate_max_len if spec.generate_max_len else None,
    )
    notions = [
        Notion("orl.what.global_step", "training", batches),
        Notion("orl.what.episode_bar", "prompts", prompts),
        Notion("orl.what.checkpoint", "training", run.save_steps[-1] if run.save_steps else None),
        Notion("orl.what.max_steps", "optimizer", max_steps),
        Notion("verl.what.warmup", "optimizer", warmup),
        Notion("verl.what.decay", "optimizer", max_steps),
    ]
    sources = [f"OpenRLHF {version}: max_steps and the global steps run from 0.11.2's prepare_datasets and prompt drawing "
               f"(tools/record_rl.py openrlhf); optimizer steps and warmup read from the source of {', '.join(READ_FROM_SOURCE)}"]
    return RLPlan("openrlhf", version, {}, run, notions, warnings, d,
                  inputs={name: getattr(spec, name) for name in OpenRLHFSpec.__slots__},
                  algorithm=ALGORITHMS.get(spec.advantage_estimator, spec.advantage_estimator), sources=sources)


def _fmt(x: float):
    return int(x) if float(x).is_integer() else round(x, 4)

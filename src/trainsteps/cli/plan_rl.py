"""The RL options of `trainsteps plan` (verl, OpenRLHF, EasyR1, TRL PPO; and Unsloth's rewritten defaults; the RL stacks
of `trainsteps.planners.rl_stacks`). The planners are in `trainsteps.planners.rl`; a run is RL when `--framework` names an
RL trainer or `--launch` starts one.
"""

from __future__ import annotations

import click

_OPTIONS = [
    click.option("--chat-template", "chat_template_path", type=click.Path(dir_okay=False),
                 help="[verl] tokenizer_config.json or .jinja with the chat template used by filter_overlong_prompts "
                      "(default: tokenizer_config.json beside --tokenizer)."),
    click.option("--unsloth", "unsloth_release", help="The run uses Unsloth (release, e.g. 2026.10.9): its rewritten TRL "
                 "defaults apply to the settings you did not give (per-device batch 4, accumulation 2, warmup 0.1, ...)."),
    click.option("--set", "rl_overrides", multiple=True, metavar="KEY=VALUE",
                 help="[verl/openrlhf/easyr1 and the RL stacks] One more setting, as on the launch line "
                      "(data.train_batch_size=256, num_rollout=100)."),
    # the RL stacks planned from their own words (planners/rl_stacks.py): one name for what each calls differently
    click.option("--prompts-per-step", type=click.IntRange(min=1), default=None,
                 help="[slime/areal/open-instruct/trl-async-grpo/prime-rl/roll] Prompts per rollout step (--rollout-batch-size, "
                      "train_dataset.batch_size, --num_unique_prompts_rollout, batch_size / group_size, rollout_batch_size)."),
    click.option("--samples-per-prompt", type=click.IntRange(min=1), default=None,
                 help="[slime/areal/open-instruct/trl-async-grpo/prime-rl/roll] Responses per prompt (--n-samples-per-prompt, "
                      "gconfig.n_samples, --num_samples_per_prompt_rollout, num_generations, group_size, "
                      "num_return_sequences_in_group)."),
    click.option("--response-length", "response_length", metavar="MEAN|LOW-HIGH",
                 help="[RL time model] Mean response length in tokens (1200), or the range it drifts over (600-2400). "
                      "Default: a share of the config's max response length."),
    click.option("--time-budget", "time_budget",
                 help="[RL] The training steps and prompts that fit this wall time (12h, 1-12:00:00 as in SLURM), at the "
                      "slow end of the step time (--step-time, --timing-from or the RL step model)."),
    click.option("--safety-margin", "safety_margin", type=float,
                 help="[RL] Share of --time-budget kept free (default 0.10)."),
    click.option("--prompt-length", "prompt_length", metavar="MEAN",
                 help="[RL time model] Mean prompt length in tokens. Default: half the config's max prompt length."),
]


def rl_params() -> list[click.Parameter]:
    """The click parameters of the RL options, to append to `plan`."""
    def holder(**kwargs):
        return None

    for option in reversed(_OPTIONS):
        holder = option(holder)
    return click.command("holder")(holder).params

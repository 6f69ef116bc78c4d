"""The RL options of `trainsteps plan` (verl, OpenRLHF, EasyR1, TRL PPO; and Unsloth's rewritten defaults). The planners
are in `trainsteps.planners.rl`; a run is RL when `--framework` names an RL trainer or `--launch` starts one.
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
                 help="[verl/openrlhf/easyr1] One more setting, as on the launch line (data.train_batch_size=256)."),
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

"""Human text of an RL plan: the three step counts side by side, what each printed number counts, warnings."""

from __future__ import annotations

from trainsteps.derivation import format_value
from trainsteps.frameworks.rl import RLPlan
from trainsteps.i18n import message
from trainsteps.report import warnings_section


def render_rl(plan: RLPlan, lang: str = "en", explain: bool = False) -> str:
    run = plan.run
    bound = message("rl.upper_bound", lang) if run.upper_bound else ""
    lines = [message("rl.heading", lang, framework=plan.framework, version=plan.version, algorithm=plan.algorithm)]
    if plan.printed:
        lines.append(message("rl.printed", lang))
        lines += [f"  {key}: {value}" for key, value in plan.printed.items()]
    lines.append("")
    lines.append(message("rl.three_steps", lang))
    sft = run.rollouts_per_step == 0
    training_what = (message("rl.row.training_what_sft", lang, per_step=f"{run.prompts_per_step:,}") if sft else
                     message("rl.row.training_what", lang, per_step=f"{run.prompts_per_step:,}", rollouts=f"{run.rollouts_per_step:,}"))
    rows = [
        ("rl.row.training", run.training_steps, training_what),
        ("rl.row.optimizer", run.optimizer_steps, message("rl.row.optimizer_what", lang, per_step=run.updates_per_step)),
    ]
    if run.critic_optimizer_steps is not None:
        rows.append(("rl.row.critic", run.critic_optimizer_steps, message("rl.row.optimizer_what", lang, per_step=run.critic_updates_per_step)))
    rows.append(("rl.row.scheduler", run.scheduler_steps, message("rl.row.scheduler_what", lang, taken=f"{run.scheduler_steps_taken:,}",
                                                                  warmup=f"{run.warmup_steps:,}")))
    width = max(len(message(key, lang)) for key, _, _ in rows) + 2
    for key, value, what in rows:
        lines.append(f"  {message(key, lang):<{width}}{format_value(value):>9}{bound}  {what}")
    lines.append("")
    lines.append(message("rl.data", lang))
    if run.prompts:  # the stacks without epochs (prime-rl, ROLL) or a prompt count (slime with --num-rollout) have no line
        lines.append("  " + message("rl.data.prompts", lang, prompts=f"{run.prompts:,}", per_epoch=f"{run.steps_per_epoch:,}",
                                     done=format_value(run.epochs_completed), planned=format_value(run.epochs_planned)))
    if not sft:
        lines.append("  " + message("rl.data.rollouts", lang, rollouts=f"{run.rollouts:,}", per_step=f"{run.rollouts_per_step:,}") + bound)
    if run.response_tokens_max:
        lines.append("  " + message("rl.data.tokens", lang, tokens=f"{run.response_tokens_max:,}"))
    if run.test_steps or run.save_steps:
        lines.append("  " + message("rl.events", lang, test=_steps(run.test_steps), save=_steps(run.save_steps)))
    lines.append("")
    lines.append(message("rl.notions", lang))
    for notion in plan.notions:
        value = "" if notion.value is None else f" = {notion.value:,}"
        lines.append(f"  {message(notion.what, lang)}{value}  ->  {message('rl.counts.' + notion.counts, lang)}")
    lines += warnings_section(plan.warnings, lang)
    if explain:
        lines.append("")
        lines.append(message("rl.derivation", lang))
        lines += ["  " + text for text in plan.derivation.render(lang)]
        lines.append("")
        lines += ["  " + source for source in plan.sources]
    return "\n".join(lines)


def _steps(steps: list[int]) -> str:
    if not steps:
        return "-"
    if len(steps) <= 8:
        return ", ".join(str(s) for s in steps)
    return ", ".join(str(s) for s in steps[:4]) + ", ..., " + ", ".join(str(s) for s in steps[-2:]) + f" ({len(steps)})"

"""The "Time" and "Time budget" sections of the human output (CLI and web share them)."""

from __future__ import annotations


def render_time(result, lang: str = "en", explain: bool = False) -> str:
    """The "Time" section of the human output."""
    from trainsteps.i18n import label, message
    from trainsteps.timing import PARTS

    opening, closing = ("（", "）") if lang == "zh" else (" (", ")")
    origin = "rl_model" if result.rate.origin == "model" and result.step_parts else result.rate.origin  # an RL step by part
    rows = [label("time.heading", lang) + opening + message(f"time.source.{origin}", lang, detail=result.rate.detail) + closing]
    rows.append(_row(label("time.wall", lang), result.wall_seconds.describe(lang)))
    for name in PARTS:
        part = result.part(name)
        if part is None:
            rows.append(_row(label(f"time.row.{name}", lang), message(f"time.left_out.{name}", lang)))
        elif name == "train":
            steps = result.derivation["time_steps"].value
            rows.append(_row(label("time.row.train", lang), f"{steps:,} × {result.step_seconds.expected:,.4g} s = "
                             + part.describe(lang)))
        elif part.high > 0:
            rows.append(_row(label(f"time.row.{name}", lang), part.describe(lang)))
    step = result.step_seconds
    rows.append(_row(label("time.step", lang), f"{step.expected:,.4g} s ({step.low:,.4g} – {step.high:,.4g})"))
    if result.step_parts:
        rows.extend(_step_part_rows(result, lang))
    if result.tokens_per_second:
        tps = result.tokens_per_second
        rows.append(_row(label("time.tokens_per_second", lang), f"{tps.expected:,.0f} ({tps.low:,.0f} – {tps.high:,.0f})"))
    if result.mfu:
        rows.append(_row("MFU", f"{result.mfu.expected:.3f} ({result.mfu.low:.3f} – {result.mfu.high:.3f})"))
    if result.gpu_hours:
        g = result.gpu_hours
        rows.append(_row(label("time.gpu_hours", lang), f"{g.expected:,.2f} ({g.low:,.2f} – {g.high:,.2f}), {result.gpus} GPU"))
    if result.cost:
        c = result.cost
        rows.append(_row(label("time.cost", lang), f"{c.expected:,.2f} {result.currency} ({c.low:,.2f} – {c.high:,.2f})"))
    for msg_id, params in result.notes:
        if msg_id == "time.note.left_out":  # the rows above already say it
            continue
        rows.append("  - " + message(msg_id, lang, **params))
    if explain:
        rows.extend("  " + line for line in result.derivation.render(lang))
    return "\n".join(rows)


def _step_part_rows(result, lang: str) -> list[str]:
    """An RL step by part: the modelled step (or, beside a measured one, the model's view of it)."""
    from trainsteps.i18n import label

    heading = "time.rl.parts" if result.source == "model" else "time.rl.parts_beside"
    rows = ["  " + label(heading, lang)]
    for name, part in result.step_parts.items():
        rows.append(_row("  " + label(f"time.rl.part.{name}", lang), f"{part.expected:,.4g} s ({part.low:,.4g} – {part.high:,.4g})"))
    return rows


def _row(name: str, value: str) -> str:
    """A label and its value, the values in one column in every language (a CJK character takes two columns)."""
    from trainsteps.report import pad

    return f"  {pad(name, 18)} {value}"




def render_budget(fit, lang: str, explain: bool, covered: str | None = None, target_fits: bool | None = None,
                  rl_settings: tuple[str, str] | None = None, rl: bool = False) -> str:
    """The "Time budget" section. An RL run (`rl`) names its own step and save settings (`rl_settings`), or says the
    steps in words where no one setting stops it: the Trainer's max_steps / save_steps are not its names."""
    from trainsteps.i18n import label, message
    from trainsteps.timing import Spoken

    rows = [label("time.budget.heading", lang)]
    rows.append(_row(label("time.budget.limit", lang), format(Spoken(fit.budget_seconds), lang)
                     + f" − {fit.margin:.0%} = " + format(Spoken(fit.budget_seconds * (1 - fit.margin)), lang)))
    steps_name, save_name = rl_settings or ((label("time.rl.budget.steps", lang), label("time.rl.budget.save", lang)) if rl
                                            else ("max_steps", "save_steps"))
    rows.append(_row(steps_name, f"{fit.max_steps:,}"))
    rows.append(_row(save_name, f"{fit.save_steps:,}"))
    if covered:
        rows.append(_row(label("time.budget.covers", lang), covered))
    prefix = "time.rl.budget" if rl else "time.budget"
    if target_fits is not None:
        rows.append("  - " + message(f"{prefix}.target_fits" if target_fits else f"{prefix}.target_cut", lang))
    why = "time.budget.why" if not rl else "time.rl.budget.why" if rl_settings else "time.rl.budget.why_unnamed"
    rows.append("  - " + message(why, lang, steps=f"{fit.max_steps:,}" if not rl_settings else fit.max_steps,
                                 save=f"{fit.save_steps:,}" if not rl_settings else fit.save_steps,
                                 steps_name=steps_name, save_name=save_name))
    if explain:
        rows.extend("  " + line for line in fit.derivation.render(lang))
    return "\n".join(rows) + "\n\n" + render_time(fit.estimate, lang, explain)

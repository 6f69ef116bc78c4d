"""The answer's first line: what the log says about the question people ask of it (did it stop, where and why; is it
stuck; how long is left), decided from what the inference already found, never from new reading.

- crashed or interrupted: `Stopped at step 120 of 3,900: crashed in evaluation`;
- finished: `Finished at step 773 of 773`, and when an error followed the end, that it is not training's;
- running with a measured rate: `Running: 40.0% done (step 1,560 of 3,900), 2 h 10 min left`;
- a step bar drawn at 0 for minutes: `Stuck: 4 min 45 s with no first step`;
- an RL log crashed before its first step: `Crashed before the first step`;
- an end only the post's words state: `Stopped at step 199 of 1,119: crashed, as the text says ("...")`;
- metric dicts with an epoch and no step: `Running: at epoch 0.5; no step count was read from the log (...)`.
"""

from __future__ import annotations

from trainsteps.i18n import message
from trainsteps.logs.inference import Inference
from trainsteps.logs.progress import training_bar
from trainsteps.logs.text import clip

# A bar at step 0 drawn this long after its start has not finished one step: below it, a slow first step is normal
STUCK_SECONDS = 60.0


def for_run(inf: Inference, lang: str = "en") -> str | None:
    """The first line for one run of the log, or None when the log shows neither a step nor an end."""
    step, total = inf.end_step, inf.planned_end_step
    if step is None and inf.run.last_step is not None:
        step = int(inf.run.last_step.value)
    bar = training_bar(inf.run)
    if step is None and bar is not None:
        step = bar.n
    where = _where(step, total, lang)
    codes = {f.msg_id for f in inf.facts}
    if inf.status in ("crashed", "interrupted"):
        said = _said(inf, codes)
        if said is not None:  # the end as the post's words state it: the log itself shows none
            shown = inf.run.last_step is not None or (bar is not None and bar.n > 0)
            return _said_stop(said, inf.status, step if shown else None, total, lang)
        if not step and inf.run.last_step is None and (bar is None or bar.n == 0):
            return message("explain.head.before_first_step", lang, how=message("explain.head.how." + inf.status, lang))
        how = "in_evaluation" if "explain.fact.stopped_in_evaluation" in codes else inf.status
        return message("explain.head.stopped", lang, where=where, how=message("explain.head.how." + how, lang))
    if inf.status == "finished":
        key = "explain.head.finished_then_error" if "explain.fact.error_after_end" in codes else "explain.head.finished"
        return message(key + ("" if step is not None else "_no_step"), lang, where=where)
    stuck = _stuck_seconds(bar, step)
    if stuck is not None:
        return message("explain.head.stuck", lang, time=_duration(stuck, lang))
    if inf.status == "running" and step == 0:
        return message("explain.head.started", lang, where=where)
    if inf.status == "running" and step is not None:
        left = inf.timing.remaining.expected if inf.timing is not None and inf.timing.remaining is not None else None
        if total and left is not None:
            return message("explain.head.running_left", lang, percent=f"{100 * step / total:.1f}", where=where, time=_duration(left, lang))
        if not total and inf.timing is not None:
            return message("explain.head.running_no_total", lang, where=where, time=_duration(inf.timing.rate.step_seconds.expected, lang))
        return message("explain.head.running", lang, where=where)
    if step is None and inf.run.last_epoch is not None and inf.status not in ("crashed", "interrupted", "finished"):
        # metric dicts alone ({'loss': ..., 'epoch': 0.5}) count epochs, not steps: say the epoch rather than nothing
        return message("explain.head.epoch_only", lang, epoch=f"{inf.run.last_epoch.value:g}")
    return None


def for_rl(rl, lang: str = "en") -> str | None:
    """The first line for an RL trainer's log (logs/rl.py)."""
    step, total = rl.step_reached(), rl.total_steps()
    where = _where(step, total, lang)
    status = rl.status()
    if status is not None and rl.crash is None and rl.stated:  # the end as the post's words state it
        reading = rl.stated["stated_failure" if status == "crashed" else "stated_interruption"]
        return _said_stop(reading, status, step, total, lang)
    if status is not None:
        how = message("explain.head.how." + status, lang)
        if step == 0:
            return message("explain.head.before_first_step", lang, how=how)
        if step is None:
            return message("explain.head.stopped_no_step", lang, how=how)
        return message("explain.head.stopped", lang, where=where, how=how)
    if step == 0 and rl.bar_elapsed is not None and rl.bar_elapsed >= STUCK_SECONDS:
        return message("explain.head.stuck", lang, time=_duration(rl.bar_elapsed, lang))
    left = rl.remaining_seconds()
    if step is not None and total and left is not None:
        return message("explain.head.running_left", lang, percent=f"{100 * step / total:.1f}", where=where, time=_duration(left, lang))
    if step is not None:
        return message("explain.head.last_step", lang, where=where)
    rate = rl.seconds_per_step()
    if rate is not None:  # timing lines with no step number (a pasted list of timing_s/*, one slime perf dict)
        return message("explain.head.rl_rate_only" + ("_at_least" if rate[1] == "phases" else ""), lang, time=_duration(rate[0], lang))
    return None


def _said(inf: Inference, codes: set):
    """The words' reading when the end comes from them (explain.fact.stated_failure / stated_interruption), else None."""
    for key in ("stated_failure", "stated_interruption"):
        if "explain.fact." + key in codes:
            return inf.run.wrapper.get(key)
    return None


def _said_stop(reading, status: str, step, total, lang: str) -> str:
    """`Stopped at step 199 of 1,119: crashed, as the text says ("...")`: the end is the words', and said to be."""
    how, text = message("explain.head.how." + status, lang), clip(reading.text.removeprefix("# "), 80)  # a title without its mark
    if not step and reading.note_params.get("step") is not None:  # only the words put a step to it
        return message("explain.head.said_stop_said_step", lang, how=how, text=text, step=f"{reading.note_params['step']:,}")
    if not step:
        return message("explain.head.said_stop_no_step", lang, how=how, text=text)
    return message("explain.head.said_stop", lang, where=_where(step, total, lang), how=how, text=text)


def _stuck_seconds(bar, step) -> float | None:
    if bar is None or step not in (0, None) or bar.n != 0 or bar.elapsed is None or bar.elapsed < STUCK_SECONDS:
        return None
    return bar.elapsed


def _where(step: int | None, total: int | None, lang: str) -> str:
    if step is None:
        return message("explain.head.no_step", lang)
    if total:
        return message("explain.head.step_of", lang, step=f"{step:,}", total=f"{total:,}")
    return message("explain.head.step", lang, step=f"{step:,}")


def _duration(seconds: float, lang: str) -> str:
    from trainsteps.logs.timing import duration

    return duration(seconds, lang)

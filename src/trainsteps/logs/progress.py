"""Where a run stands, how fast it goes and how it ended, from the lines people paste most: progress bars,
loss / eval dicts, `***** train metrics *****` blocks, LLaMA-Factory's trainer_log.jsonl and running_log.txt,
ms-swift's dicts and bars, crashes. Also the transformers release and the settings when the log prints them.

    39%|███▉      | 1520/3900 [1:23:45<2:11:10,  3.30s/it]                     (transformers, tqdm)
    [ 3230/10000 2:20:47 < 4:55:16, 0.38 it/s, Epoch 11.26/13]               (transformers, notebook)
    {'loss': 1.61, 'grad_norm': 0.52, 'learning_rate': 1e-05, 'epoch': 0.26}
    {"current_steps": 10, "total_steps": 3900, "epoch": 0.77, "elapsed_time": "0:00:40", "remaining_time": "4:15:03"}
    {'loss': 1.2, 'epoch': 0.1, 'global_step/max_steps': '10/100', 'elapsed_time': '40s', 'remaining_time': '6m 0s'}
    Traceback (most recent call last):  /  Killed  /  torch.OutOfMemoryError: CUDA out of memory  /  NCCL ... timeout

`observe(line, ctx)` is called for every line the reader keeps; what it reads goes to the current run, or to a run
of its own (kind `progress`) when the input has no banner at all.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from trainsteps import bars
from trainsteps.logs import stack_lines, step_lines
from trainsteps.logs.context import ScanContext
from trainsteps.logs.observed import RATE_SAMPLES, BarTrack, Reading, RunObservation
from trainsteps.logs.text import clip
from trainsteps.patterns import lazy


class _TimingOnFirstLine:
    """`timing` (logs/timing.py) until the first timing line: it brings the time model (five modules, about 2 ms of
    `explain`'s start-up), which a banner without bars or rates never uses; then the module itself takes its place."""

    def __getattr__(self, name: str):
        global timing
        from trainsteps.logs import timing as module

        timing = module
        return getattr(module, name)


timing = _TimingOnFirstLine()

MAX_COUNT = 10**15
"""Steps, totals and samples read from a log are below this (a run of 1e15 steps is none): larger numbers are not read."""
MAX_BARS = 32
_TQDM = bars.TQDM
_NOTEBOOK = bars.NOTEBOOK
_PAIR = lazy(r"""['"]([A-Za-z_][\w/()]*)['"]\s*:\s*(?:'([^']*)'|"([^"]*)"|([-+\w.]+))""")
_METRIC = lazy(r"^\s*([a-z_]+)\s*=\s*(\S+)\s*$")
_VERSIONS = (
    lazy(r"Transformers:\s*v?(\d+\.\d+\.\d+)"),                        # Unsloth's header
    lazy(r""""transformers_version"\s*:\s*"v?(\d+\.\d+\.\d+)"""),       # trainer_state.json / config.json
    lazy(r"\btransformers\s*==\s*v?(\d+\.\d+\.\d+)"),                  # pip freeze, requirements
    lazy(r"`?[Tt]ransformers`?\s+version\s*:\s*v?(\d+\.\d+\.\d+)"),    # transformers-cli env, llamafactory-cli env
    lazy(r"^\s*transformers\s+v?(\d+\.\d+\.\d+)\s*$"),                  # pip list
)
_PIP_SHOW_VERSION = lazy(r"^\s*Version:\s*v?(\d+\.\d+\.\d+)")
_SETTING_NAMES = ("per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "max_steps", "num_generations",
                  "dataloader_drop_last")
_SETTING = lazy(r"\b(" + "|".join(_SETTING_NAMES) + r")(?:\s*[=:]\s*|\s+)['\"]?(-?\d+(?:\.\d+)?|True|False|true|false)\b")
_NUM_ROWS = lazy(r"num_rows['\"]?\s*[:=]\s*(\d+)")
_RAW_SAMPLES = lazy(r"Number of raw training samples:\s*([\d,]+)")
# Bars of data preparation, evaluation or generation: never the training loop's.
_NOT_TRAINING = ("map", "tokeniz", "generat", "load", "download", "filter", "convert", "pack", "shard", "running", "eval", "val",
                 "test", "predict", "fetch", "extract", "sampl", "preprocess", "process", "saving", "upload", "build", "dataset")
# Descriptions of a training loop's bar: ms-swift `Train:`, diffusers/accelerate scripts `Steps:`, Lightning `Epoch 2:`,
# OpenRLHF `Episode [1/1]:`, verl `Training Progress:`.
_TRAINING = ("train", "epoch", "step", "episode", "iter")
_CRASH = (("Traceback (most recent call last)", "traceback"), ("Watchdog caught collective", "nccl_timeout"), ("CUDA out of memory", "oom"), ("OutOfMemoryError", "oom"),
          ("ChildFailedError", "child_failed"), ("Segmentation fault", "segfault"), ("core dumped", "segfault"))
_EXITCODE = lazy(r"exitcode\s*:?\s*-?[1-9]")
# (an issue's title that is the error itself reads `# ValueError: ...`)
_EXCEPTION = lazy(r"^\s*(?:#\s+)?(?:\[rank\d+\]:\s*)?(?:[a-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception):\s")
_INTERRUPT = (("KeyboardInterrupt", "keyboard"), ("SIGINT", "sigint"), ("SIGTERM", "sigterm"), ("DUE TO TIME LIMIT", "time_limit"),
              ("CANCELLED AT", "cancelled"))


_DAYS = lazy(r"(\d+)\s*(?:days?|d)\s*,?\s*(?=\d)")
_UNITS = lazy(r"([\d.]+)\s*(d|h|m|min|s)\b")


def seconds(text: str) -> float | None:
    """`05:12`, `4:15:03`, `1 day, 2:03:04`, `1d, 2:03:04`, `1:02:03.10`, `40s`, `6m 2s`, `1h 2m`, `312.5` -> seconds."""
    parts = text.split(":")
    if 1 < len(parts) <= 3 and len(text) <= 12 and text.isascii() and all(map(str.isdigit, parts)):  # a bar's clock (exact in a float)
        total = 0
        for part in parts:
            total = total * 60 + int(part)
        return float(total)
    text = text.strip().strip("'\"")
    if not text or text == "?":
        return None
    days = 0.0
    day = _DAYS.match(text) if "d" in text else None
    if day and ":" in text:
        days, text = float(day.group(1)), text[day.end():]
    if ":" in text:
        parts = text.split(":")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            return None
        if len(values) > 3:
            return None
        total = 0.0
        for v in values:
            total = total * 60 + v
        return days * 86400 + total
    units = _UNITS.findall(text)
    if units:
        scale = {"d": 86400, "h": 3600, "m": 60, "min": 60, "s": 1}
        try:
            return sum(float(v) * scale[u] for v, u in units)
        except ValueError:
            return None
    try:
        return float(text)
    except ValueError:
        return None


_bare_clock = lru_cache(maxsize=1024)(seconds)
"""`seconds` of a bare draw's clock (short texts): a clock is redrawn many times a second, the time left too."""


def _target(ctx: ScanContext) -> RunObservation:
    if ctx.current is not None and ctx.current.file == ctx.file and not ctx.current.finished:
        return ctx.current
    if ctx.loose is None:
        ctx.loose = RunObservation(kind="progress", file=ctx.file, first_line=ctx.line_no)
    return ctx.loose


_ITERATION = lazy(r"\biteration:?\s+(\d+)\s*/\s*(\d+)")
_ITER_MS = lazy(r"elapsed[_ ]time[_ ]per[_ ]iteration[_ ]?\(?ms\)?:?\s*([\d.]+)")
# NeMo 2's iteration lines (`Training epoch 0, iteration 120/149 | ... | train_step_timing in s: 0.03146`): seconds
_STEP_TIMING_S = lazy(r"train_step_timing in s:\s*(\d+(?:\.\d+)?(?:e[-+]?\d+)?)")
_NO_TOTAL = lazy(r"(?<![\d/])\d+/\?\s*\[")
_DS_STEP = lazy(r"\bglobal_step=(\d+)")
# NeMo's Megatron models log `global_step` and `consumed_samples` into Lightning's bar postfix; tqdm writes a float with
# 3 significant digits when that is shorter (`1.63e+6`), else in full (`794.0`).
_NEMO = lazy(r"\bglobal_step=(\d+(?:\.\d*)?(?:e[+-]?\d+)?)\s*,\s*consumed_samples=(\d+(?:\.\d*)?(?:e[+-]?\d+)?)")
# tqdm with no total (Lightning over a dataset without a length): `Epoch 2: : 115816it [7:03:13,  4.56it/s, loss=2.1]`
_IT_BAR = lazy(r"(?:^|[\s:|])Epoch (\d+)\b[^\[\]|]*?(\d+)it \[([\d:.]+|\d+ days?, [\d:.]+),\s*([\d.]+)\s*(it/s|s/it)")
_FIT_STOPPED = lazy(r"`?Trainer\.fit`? stopped: `?max_(steps|epochs)=(\d+)`? reached")


def _iteration(line: str, ctx: ScanContext) -> bool:
    """Megatron / nanotron iteration lines: `iteration 43/ 100 | ... elapsed time per iteration (ms): 5523.1`."""
    match = _ITERATION.search(line)
    if match is None:
        return False
    step, total = int(match.group(1)), int(match.group(2))
    if total <= 0 or step > total:
        return True
    run = _target(ctx)
    run.progress.step_total = (step, total, ctx.line_no)
    run.last_step = ctx.reading(step)
    timing.feed(run, line, ctx.line_no)
    ms = _ITER_MS.search(line)
    per_step = float(ms.group(1)) / 1000 if ms else None
    if per_step is None and "train_step_timing" in line:
        nemo = _STEP_TIMING_S.search(line)
        per_step = float(nemo.group(1)) if nemo else None
    if per_step is not None:
        bar = _track(ctx, total, labelled=True)
        if bar is not None:
            bar.kind = "iteration"
            _draw(ctx, bar, step, None, None, per_step)
    if run.progress.stop is not None and step > run.progress.stop[3]:
        run.progress.stop = None
    if step >= total:
        run.finish("at_total", ctx.line_no)
    return True


def observe(line: str, ctx: ScanContext) -> None:
    """Read one line for progress, timing, how the run ended, a printed release and printed settings."""
    if ctx.open_dict is not None and _rest_of_dict(line, ctx):
        return
    if "iteration" in line and _iteration(line, ctx):
        return
    if "/?" in line and _NO_TOTAL.search(line):  # a bar over a dataset without a length (Lightning, iterable)
        _target(ctx).progress.step_lines += 1
        return
    if "consumed_samples=" in line and _nemo(line, ctx):
        return
    if "global_step=" in line:
        match = _DS_STEP.search(line)
        if match:
            run = _target(ctx)
            run.progress.step_lines += 1
            run.last_step = ctx.reading(int(match.group(1)))
            return
    if "it [" in line and "Epoch" in line:
        match = _IT_BAR.search(line)
        if match:
            rate = float(match.group(4))
            per_second = rate if match.group(5) == "it/s" else (1 / rate if rate else 0.0)
            run = _target(ctx)
            run.progress.step_lines += 1
            run.wrapper["lightning_epoch_batches"] = ctx.reading(int(match.group(2)), epoch=int(match.group(1)),
                                                                 elapsed=match.group(3), rate=round(per_second, 3))
            _ended(line, ctx)
            return
    if "stopped" in line and "Trainer.fit" in line:
        match = _FIT_STOPPED.search(line)
        if match:
            run = _target(ctx)
            run.finish("lightning", ctx.line_no)
            run.wrapper["lightning_fit_stopped"] = ctx.reading(int(match.group(2)), limit=f"max_{match.group(1)}")
            if match.group(1) == "steps":
                n = int(match.group(2))
                run.progress.step_total = (n, n, ctx.line_no)
                run.last_step = ctx.reading(n)
            return
    if "/" in line and ("[" in line):
        if _bar(line, ctx):
            _ended(line, ctx)  # a crash message glued to the last bar draw
            return
    if "'iteration'" in line and _stack_step(line, ctx):
        return
    if "stopping training" in line or "the training has finished" in line:
        if stack_lines.ended(line):
            _target(ctx).finish("completed", ctx.line_no)
            return
    if "{'" in line and _holds_open_dict(line, ctx):
        line = line[:line.rfind("{'")]  # the dicts before it are whole
        if "{" not in line:
            return
    if "{" in line and ":" in line:
        if _json_step(line, ctx):
            _dict(line, ctx)  # its epoch, as any logging dict's
            return
        if _dict(line, ctx):
            return
    if "Running Evaluation" in line or "Running Prediction" in line:
        ctx.evaluation_next = True
    if "metrics *****" in line:
        ctx.metrics_block = "eval" if "eval" in line else "train"
        return
    if ctx.metrics_block and "=" in line and _metric(line, ctx):
        return
    if _step_line(line, ctx):
        return
    if ("End of" in line or "Training time" in line) and step_lines.ends_the_loop(line):
        _target(ctx).finish("loop_end", ctx.line_no)
        return
    if _ended(line, ctx):
        return
    if "ransformers" in line or "Version:" in line:
        _version(line, ctx)
    if "num_rows" in line or "train_dataset" in line or "raw training samples" in line:
        _rows(line, ctx)
    if "=" in line or ":" in line or "--" in line:
        step_lines.declared_total(line, ctx)
        stack_total = stack_lines.declared_total(line)
        if stack_total:
            ctx.declared_totals["step"] = stack_total
            tokens = stack_lines.declared_tokens_per_rank_step(line)
            if tokens:
                ctx.declared_totals[stack_lines.TOKENS_PER_RANK_STEP] = tokens
        for match in _SETTING.finditer(line) if _names_a_setting(line) else ():
            name, value = match.group(1), match.group(2)
            parsed: int | float | bool
            if value in ("True", "true", "False", "false"):
                parsed = value in ("True", "true")
            else:
                parsed = float(value) if "." in value else int(value)
            ctx.settings[name] = ctx.reading(parsed)


def _names_a_setting(line: str) -> bool:
    """The line holds a name _SETTING reads: a banner's or a loss dict's `=` and `:` lines hold none, and the pattern is
    neither compiled nor searched for them."""
    for name in _SETTING_NAMES:
        if name in line:
            return True
    return False


def _json_step(line: str, ctx: ScanContext) -> bool:
    """A JSON step record a loop or trainer prints (logs/step_lines.py): the step reached and the time of a step."""
    found = step_lines.read_json(line)
    if found is None:
        return False
    step, unit, per_step = found
    return _count_step(line, ctx, step, None, unit, per_step)


def _step_line(line: str, ctx: ScanContext) -> bool:
    """A loop's own step line (logs/step_lines.py): the step reached, the total, and the time of a step."""
    found = step_lines.read(line)
    if found is None:
        return False
    step, total, unit = found
    per_step = step_lines.seconds_per_step(line) or stack_lines.seconds_from_tps(line, ctx.declared_totals.get(stack_lines.TOKENS_PER_RANK_STEP))
    return _count_step(line, ctx, step, total, unit, per_step)


def _count_step(line: str, ctx: ScanContext, step: int | None, total: int | None, unit: str, per_step: float | None) -> bool:
    if step is None:  # a batch of a later epoch whose printer does not say how many steps came before it
        _target(ctx).progress.step_lines += 1
        return True
    _step_reached(line, ctx, step, total or ctx.declared_totals.get(unit), per_step)
    return True


def _stack_step(line: str, ctx: ScanContext) -> bool:
    """A stack's own progress line (logs/stack_lines.py): ms-swift Megatron's `'iteration': 'i/n'` dict."""
    found = stack_lines.read(line)
    if found is None:
        return False
    step, total, per_step, elapsed, remaining = found
    _step_reached(line, ctx, step, total, per_step, elapsed, remaining)
    return True


def _step_reached(line: str, ctx: ScanContext, step: int, total: int | None, per_step: float | None, elapsed: float | None = None,
                  remaining: float | None = None) -> None:
    """The step a loop's line reached, the total it counts to, the time of a step, and the times the line prints."""
    if total is not None and (total <= 0 or step > total):
        total = None
    run = _target(ctx)
    if _counter_fell_back(run, step, ctx):
        run = ctx.start_over(step)
    if run is ctx.loose and run.progress.step_lines == 0:
        ctx.lend_pending(run)
    ctx.last_counted_step = step
    run.progress.step_lines += 1
    run.last_step = ctx.reading(step)
    reported = step_lines.reported_mfu(line)
    if reported is not None:
        run.progress.reported_mfu = (*reported, ctx.line_no)
    if total is not None:
        run.progress.step_total = (step, total, ctx.line_no)
        bar = _track(ctx, total, labelled=True)
        if bar is not None:
            bar.kind = "iteration"
            _draw(ctx, bar, step, elapsed, remaining, per_step)
    elif per_step is not None:
        rates = run.progress.step_rates
        rates.append((step, per_step, ctx.line_no))
        if len(rates) > RATE_SAMPLES:
            del rates[1::2]  # constant memory, the whole run still covered
    if run.progress.stop is not None and step > run.progress.stop[3]:
        run.progress.stop = None  # the run went on after what looked like a crash
    _ended(line, ctx)  # an error glued to the last step line


def _counter_fell_back(run: RunObservation, step: int, ctx: ScanContext) -> bool:
    """Several runs pasted back to back with no banner between them: a loop's step counter that falls below half of
    the step its lines had reached starts another run (a resume from a checkpoint goes on from near where it stopped;
    ranks print the same step). Only progress lines with no banner are split: a banner starts its own run."""
    last = ctx.last_counted_step
    return run is ctx.loose and last is not None and 2 * step < last and run.progress.step_lines >= 2


def printed_number(text: str) -> tuple[float, float]:
    """A number from tqdm's postfix and how far the true value can be from it: `1.63e+6` is 3 significant digits
    (tqdm.format_num writes `{:.3g}` when shorter), `794.0` is str(float), exact."""
    value = float(text)
    if "e" not in text:
        return value, 0.0
    exponent = int(text.split("e")[1])
    if exponent > 300:  # `1.63e+1000` is no count (float says inf); 10 ** exponent of a 31-digit exponent never ends
        return value, math.inf
    return value, 0.5 * 10.0 ** max(exponent - 2, -300)


def _nemo(line: str, ctx: ScanContext) -> bool:
    """`Epoch 0: 1%| | 795/77225 [..., global_step=794.0, consumed_samples=1.63e+6]`: NeMo's own step and sample count.
    The bar's position and total count batches of the epoch, validation batches included: not optimizer steps."""
    match = _NEMO.search(line)
    if match is None:
        return False
    step, _ = printed_number(match.group(1))
    if not (step < MAX_COUNT and printed_number(match.group(2))[0] < MAX_COUNT):
        return True  # a count no run reaches is not read (the line is still a NeMo bar)
    run = _target(ctx)
    run.progress.step_lines += 1
    run.wrapper["nemo_global_step"] = ctx.reading(match.group(1))
    run.wrapper["nemo_consumed_samples"] = ctx.reading(match.group(2))
    run.last_step = ctx.reading(int(step))  # `3.2e+4` is within 50 of it; the finding gives the range
    _ended(line, ctx)  # a crash message glued to the last bar draw
    return True


# ---------------------------------------------------------------- bars

def _bar(line: str, ctx: ScanContext) -> bool:
    note = _NOTEBOOK.search(line) if "Epoch" in line or "it/s" in line or "s/it" in line else None
    if note is not None:
        n, total = int(note.group(1)), int(note.group(2))
        bar = _track(ctx, total, labelled=False)
        if bar is None:
            return True
        timing.feed(_target(ctx), line, ctx.line_no)
        rate = float(note.group(5))
        per_step = rate if note.group(6) == "s/it" else (1 / rate if rate else None)
        _draw(ctx, bar, n, seconds(note.group(3)), seconds(note.group(4) or ""), per_step)
        if note.group(7):
            _epoch_point(ctx, n, float(note.group(7)))
        return True
    match = _TQDM.search(line)
    if match is None:
        return False
    desc = line[:match.start()]
    match = _last_redraw(line, match)
    _tqdm_draw(line, ctx, desc, match.end(1), *match.group(1, 2, 3, 4, 5, 6))
    return True


def _tqdm_draw(line: str, ctx: ScanContext, desc: str, slash: int, position: str, total_text: str, elapsed_text: str,
               left_text: str, rate_text: str | None, unit: str | None, bare: bool = False) -> None:
    """One tqdm draw as _TQDM's groups read it, `desc` the text before it; `bare`: the whole line is the draw."""
    n, total = int(position), int(total_text)
    if total == 0 or n > total:
        return
    known = _DESCRIPTIONS.get(desc)
    if known is None:  # a bar is redrawn thousands of times with the same description: classify it once
        words = _NON_ALPHA.sub(" ", _PERCENT_BAR.sub("", desc)).strip().lower()
        skip = bool(words) and (any(w in words for w in _NOT_TRAINING) or not any(w in words for w in _TRAINING) and len(words) > 2)
        known = (skip, bool(words))
        if len(_DESCRIPTIONS) < 4096:
            _DESCRIPTIONS[desc] = known
    if known[0]:
        return
    bar = _track(ctx, total, labelled=known[1])
    if bar is None:
        return
    clock = _bare_clock if bare else seconds
    elapsed, remaining = clock(elapsed_text), clock(left_text)
    if bare:
        timing.feed_bare_tqdm(_target(ctx), ctx.line_no, position, total_text, elapsed, remaining, rate_text, unit)
    else:
        timing.feed_tqdm(_target(ctx), line, ctx.line_no, slash, position, total_text, elapsed_text, left_text, rate_text,
                         unit, elapsed, remaining)  # read once
    per_step = None
    if rate_text:
        rate = float(rate_text)
        per_step = rate if unit == "s/it" else (1 / rate if rate else None)
    _draw(ctx, bar, n, elapsed, remaining, per_step)


def bare_draw(line: str, ctx: ScanContext, draw: re.Match) -> None:
    """`observe` of a bare tqdm draw, `draw` its match of reader._BARE_DRAW (groups: position, total, elapsed, left,
    rate, unit): what `_bar` reads of it, its only reader. No notebook text (its `[` opens the clocks), one draw (one
    rate), and _TQDM would match at its position: nothing before it holds a `/`."""
    _tqdm_draw(line, ctx, line[:draw.start(1)], draw.end(1), *draw.group(1, 2, 3, 4, 5, 6), bare=True)


def _last_redraw(line: str, first: re.Match) -> re.Match:
    """The last of the bar's redraws a line holds: a copy that lost the carriage returns glues them (`1/29790 [...]  0%|
    | 2/29790 [...]`); a later bar with another total is another bar, not a redraw."""
    if line.count("it/s") + line.count("s/it") < 2:
        return first
    last = first
    for match in _TQDM.finditer(line, first.end()):
        if match.group(2) == first.group(2):
            last = match
    return last


_PERCENT_BAR = lazy(r"\d+%\|.*$")
_NON_ALPHA = lazy(r"[^A-Za-z]")
_DESCRIPTIONS: dict[str, tuple[bool, bool]] = {}
"""A bar's description (the text before `n/total [`) -> (not the training loop's, has words)."""


def _track(ctx: ScanContext, total: int, labelled: bool) -> BarTrack | None:
    bars = _target(ctx).progress.bars
    bar = bars.get(total)
    if bar is None:
        if len(bars) >= MAX_BARS:
            return None
        bar = bars[total] = BarTrack(total=total, labelled=labelled)
        if ctx.evaluation_next and len(bars) > 1:  # first drawn inside an evaluation, beside the training bar
            bar.kind = "evaluation"
    elif bar.kind != "evaluation":
        ctx.evaluation_next = False  # the training bar moves again: the evaluation is over
    return bar


def _draw(ctx: ScanContext, bar: BarTrack, n: int, elapsed, remaining, per_step) -> None:
    bar.n, bar.line, bar.text, bar.count = n, ctx.line_no, ctx.line[:200].strip(), bar.count + 1
    bar.elapsed, bar.remaining = elapsed, remaining
    if bar.first_n is None and n > 0 and elapsed is not None:
        bar.first_n, bar.first_elapsed = n, elapsed
    if per_step is not None and per_step > 0:
        if bar.rates and bar.rates[-1][0] == n:
            bar.rates[-1] = (n, per_step)
        else:
            bar.rates.append((n, per_step))
        if len(bar.rates) > RATE_SAMPLES:
            del bar.rates[1::2]  # keep every other sample: constant memory, the whole run still covered
    ctx.last_bar_step = n
    run = _target(ctx)
    if run.kind == "progress":
        if run.last_step is None or bar is _training_bar(run):
            run.last_step = ctx.reading(n)
    if run.progress.stop is not None and n > run.progress.stop[3]:
        run.progress.stop = None  # the run went on after what looked like a crash


def _training_bar(run: RunObservation) -> BarTrack | None:
    """The training loop's bar: the one drawn most often (evaluation bars restart at 0 every time); ties go to the
    larger total."""
    bars = [bar for bar in run.progress.bars.values() if bar.kind != "evaluation"] or list(run.progress.bars.values())
    if not bars:
        return None
    m = run.value("max_steps")
    if m is not None and m in run.progress.bars:
        return run.progress.bars[m]
    return max(bars, key=lambda b: (b.count, b.total))


training_bar = _training_bar


# ---------------------------------------------------------------- dicts: loss, eval, summary, jsonl, ms-swift

def _given(pairs: dict, key: str) -> bool:
    """Older LLaMA-Factory releases write every key of a trainer_log.jsonl line, the absent ones as null."""
    return pairs[key] not in ("null", "None", "")


def _count_jsonl_repeat(p, step: int, loss: str, elapsed: float | None, line_no: int) -> None:
    """Counts trainer_log.jsonl loss lines that repeat a recent step: LLaMA-Factory writes one per logging step from
    the main process, so repeats with another loss come from a second training writing the same file (the two drift
    apart, so a repeat can come a few lines later)."""
    p.jsonl_losses += 1
    recent = p.jsonl_recent
    seen = recent.pop(step, None)
    if seen is not None:
        p.jsonl_repeats += 1
        if p.jsonl_repeat_example is None and seen[0] != loss:
            p.jsonl_repeat_example = (step, seen[0], loss, line_no)
    recent[step] = (loss, elapsed)
    if len(recent) > 8:
        del recent[next(iter(recent))]


def _dict(line: str, ctx: ScanContext) -> bool:
    # findall gives "" for the alternatives that did not match; only one of the three matched, and only a quoted one
    # can be empty, so the first non-empty one is the value
    pairs = {key: single or double or bare for key, single, double, bare in _PAIR.findall(line)}
    if not pairs:
        return False
    run = _target(ctx)
    p = run.progress
    elapsed_text = remaining_text = elapsed = remaining = None
    if "current_steps" in pairs:  # LLaMA-Factory's clocks, read once here and handed to the time model as read
        elapsed_text, remaining_text = pairs.get("elapsed_time"), pairs.get("remaining_time")
        elapsed = seconds(elapsed_text or "")
        remaining = seconds(remaining_text or "") if elapsed is not None else None
        timing.feed_llamafactory(run, line, ctx.line_no, elapsed_text, remaining_text, elapsed, remaining)
    elif "train_runtime" in pairs or "eval_runtime" in pairs:
        timing.feed(run, line, ctx.line_no)
    step = total = None
    if "current_steps" in pairs and "total_steps" in pairs:  # LLaMA-Factory trainer_log.jsonl
        step, total = _int(pairs["current_steps"]), _int(pairs["total_steps"])
    elif "global_step/max_steps" in pairs:  # ms-swift
        parts = pairs["global_step/max_steps"].split("/")
        if len(parts) == 2:
            step, total = _int(parts[0]), _int(parts[1])
        mfu = _float(pairs.get("MFU"))  # its PerfMetricsLogCallback (swift/callbacks/perf_log.py)
        if mfu is not None and 0 < mfu < 10:
            p.reported_mfu = ("ms-swift", mfu, ctx.line_no)
    elif "step" in pairs and "epoch" in pairs:
        step = _int(pairs["step"])
    if step is not None and total is not None and p.step_total is not None and total != p.step_total[1] \
            and run.last_step is not None and step < run.last_step.value:
        step = total = None  # a line of another counter (an older LLaMA-Factory's final evaluation counts its own steps)
    if step is not None and total is not None and total > 0:
        if "current_steps" in pairs and run.kind == "progress" and not any(
                _given(pairs, k) for k in pairs if k.endswith("loss") or k in ("reward", "accuracy")):
            run.finish("jsonl_final", ctx.line_no)  # LLaMA-Factory writes the Trainer's final (train_runtime) log as a line with no loss
        p.step_total = (step, total, ctx.line_no)
        if run.last_step is None or run.kind == "progress" or step >= run.last_step.value:
            run.last_step = ctx.reading(step)
        if p.stop is not None and step > p.stop[3]:
            p.stop = None
        if "current_steps" not in pairs:  # (read above when it is)
            elapsed = seconds(pairs.get("elapsed_time", "") or "")
            remaining = seconds(pairs.get("remaining_time", "") or "") if elapsed is not None else None
        if "current_steps" in pairs and "loss" in pairs:
            _count_jsonl_repeat(p, step, pairs["loss"], elapsed, ctx.line_no)
        if elapsed is not None:
            point = (step, elapsed, remaining, ctx.line_no)
            if len(p.elapsed_points) < 2:
                p.elapsed_points.append(point)
            else:
                p.elapsed_points[1] = point
    if step is None and ctx.last_bar_step is not None:
        step = ctx.last_bar_step
    epoch = _float(pairs.get("epoch"))
    if "eval_loss" in pairs or "eval_runtime" in pairs or "eval_" in line and any(k.startswith("eval_") for k in pairs):
        p.evals += 1
        p.eval_runtime += _float(pairs.get("eval_runtime")) or 0.0
        if step is not None and len(p.eval_steps) < 64:
            p.eval_steps.append(step)
    elif "train_runtime" in pairs:
        p.train_runtime = _float(pairs["train_runtime"])
        p.train_steps_per_second = _float(pairs.get("train_steps_per_second"))
        p.train_samples_per_second = _float(pairs.get("train_samples_per_second"))
        p.metrics_line = ctx.line_no
        if run.kind == "progress":
            run.finish("runtime", ctx.line_no)
    elif "loss" in pairs or "learning_rate" in pairs or "lr" in pairs:
        p.loss_dicts += 1
    else:
        if epoch is None and step is None:
            return False
    if epoch is not None:
        if run.kind == "progress":
            run.last_epoch = ctx.reading(epoch)
        p.max_epoch = epoch if p.max_epoch is None else max(p.max_epoch, epoch)
        if step is not None and step > 0 and epoch > 0:
            _epoch_point(ctx, step, epoch)
    if run.kind == "progress" and step is not None and total is not None and step >= total:
        run.finish("at_total", ctx.line_no)
    return True


# A console wraps a long metric dict where the terminal's width ends, inside a key, a value or after a comma
# (`..., 'elapsed_tim` / `e': '3h 14m 25s', 'remaining_time': '4d 20h 25m 7s'}`): the line that closes it is its rest.
MAX_OPEN_DICT = 4096


def _holds_open_dict(line: str, ctx: ScanContext) -> bool:
    """The line ends inside a metric dict (no `}` after its last `{'`): it is held for the line that closes it."""
    start = line.rfind("{'")
    tail = line[start + 2:start + 3]
    if "}" in line[start:] or len(line) - start > MAX_OPEN_DICT or (tail and not (tail.isalnum() or tail == "_")):
        return False  # closed, too long to be a dict, or `{'` that opens no key
    ctx.open_dict = line[start:]
    return True


def _rest_of_dict(line: str, ctx: ScanContext) -> bool:
    """A held dict and this line: read joined when this line closes it (its `}` before any `{`), else read as it was
    cut (a paste that ends inside a dict) and this line on its own (False)."""
    head, ctx.open_dict = ctx.open_dict, None
    close = line.find("}")
    if close < 0 and "{" not in line and "':" in line and len(head) + len(line) <= MAX_OPEN_DICT:
        ctx.open_dict = head + line  # wrapped more than once: its middle
        return True
    if close >= 0 and "{" not in line[:close]:
        _dict_text(head + line, ctx)
        return True
    _dict_text(head, ctx)
    return False


def flush(ctx: ScanContext) -> None:
    """End of input: a dict still held was cut where the input ends; read what it holds."""
    if ctx.open_dict is not None:
        head, ctx.open_dict = ctx.open_dict, None
        _dict_text(head, ctx)


def _dict_text(text: str, ctx: ScanContext) -> None:
    _json_step(text, ctx)
    _dict(text, ctx)


def _epoch_point(ctx: ScanContext, step: int, epoch: float) -> None:
    p = _target(ctx).progress
    point = (step, epoch, ctx.line_no)
    if len(p.epoch_points) < 2:
        p.epoch_points.append(point)
    else:
        p.epoch_points[1] = point
    p.max_epoch = epoch if p.max_epoch is None else max(p.max_epoch, epoch)
    run = _target(ctx)
    if run.kind == "progress":
        run.last_epoch = ctx.reading(epoch)


def _metric(line: str, ctx: ScanContext) -> bool:
    match = _METRIC.match(line.split(">>", 1)[-1])
    if match is None:
        ctx.metrics_block = None
        return False
    key, value = match.groups()
    run = _target(ctx)
    p = run.progress
    if ctx.metrics_block == "train":
        if key == "train_runtime":
            p.train_runtime = seconds(value)
            p.metrics_line = ctx.line_no
            if run.kind == "progress":
                run.finish("runtime", ctx.line_no)
        elif key == "train_steps_per_second":
            p.train_steps_per_second = _float(value)
        elif key == "train_samples_per_second":
            p.train_samples_per_second = _float(value)
        elif key == "epoch" and run.kind == "progress":
            run.last_epoch = ctx.reading(_float(value) or 0.0)
    elif ctx.metrics_block == "eval" and key == "eval_runtime":
        p.evals += 1
        p.eval_runtime += seconds(value) or 0.0
    return True


# ---------------------------------------------------------------- how it ended

# Every line _ended can take holds one of these (_EXCEPTION needs "Error:" or "Exception:"): one pass of plain
# substring tests turns away a bar redraw before the crash and interrupt tests below.
_MAY_END = tuple(needle for needle, _ in _CRASH + _INTERRUPT) + ("Killed", "SIGKILL", "NCCL", "closing signal", "exitcode",
                                                                  "Error", "Exception", "Killing subprocess", "return code",
                                                                  "death signal")
# DeepSpeed's launcher (deepspeed/launcher/launch.py sigkill_handler): it kills every worker once one exits, then says
# with which code; -2 is the SIGINT of a Ctrl-C, any other non-zero code a failure.
_DS_RETURN = lazy(r"exits with return code\s*=\s*(-?\d+)")
_SIGINT_CODES = (-2, 130)
# A cause named after a bare SIGTERM is what the SIGTERM followed (NCCL's watchdog and the OOM handler stop the job)
_CAUSES = ("nccl_timeout", "oom")
# torchrun's elastic agent: `Received 2 death signal, shutting down workers` (the launcher itself got the signal: a
# Ctrl-C, a scheduler, a closed terminal), then `Sending process N closing signal SIGINT` (it forwards that signal).
# A SIGTERM sent to the other workers without a death signal is the agent stopping them after one failed.
_DEATH = lazy(r"Received (\d+) death signal")
_SIGNALS = {1: "sighup", 2: "sigint", 15: "sigterm"}
_FORWARDED = lazy(r"closing signal (SIGINT|SIGHUP)")
# A worker that exited with a code of its own failed (`failed (exitcode: 1) local_rank: 5`); a negative code is the
# signal that stopped it. After such a line, a SIGTERM read earlier (the agent's, or a sentence quoting it) was the
# consequence of the failure, not the end of the run.
_OWN_FAILURE = lazy(r"exitcode\s*:?\s*[1-9]")


def _ended(line: str, ctx: ScanContext) -> bool:
    for needle in _MAY_END:
        if needle in line:
            break
    else:
        return False
    if line.startswith("# ") and not _EXCEPTION.match(line):
        return False  # an issue's title is prose (stated.py reads a failure it names), unless it is the error itself
    reason = None
    status = "crashed"
    at = 0  # where the words that end the run start: the quote begins there, not at a bar drawn before them
    for needle, why in _CRASH:
        if needle in line:
            reason, at = why, line.find(needle)
            break
    if reason is None:
        stripped = line.strip()
        if stripped.endswith("Killed") or "Signals.SIGKILL" in line:
            reason, at = "killed", max(line.rfind("Killed"), line.find("Signals.SIGKILL"), 0)
        elif "NCCL" in line and ("imeout" in line or "timed out" in line):
            reason, at = "nccl_timeout", line.find("NCCL")
        elif "return code" in line and _DS_RETURN.search(line):
            code = int(_DS_RETURN.search(line).group(1))
            if code == 0:
                return False
            reason = "sigint" if code in _SIGINT_CODES else "launcher_exit"
            status = "interrupted" if code in _SIGINT_CODES else "crashed"
            at = line.find("exits with return code")
        elif "Killing subprocess" in line:
            reason, at = "launcher_exit", line.find("Killing subprocess")
        elif "death signal" in line and _DEATH.search(line):
            reason, status = _SIGNALS.get(int(_DEATH.search(line).group(1)), "signal"), "interrupted"
            at = line.find("Received")
        elif "closing signal" in line and _FORWARDED.search(line):
            reason, status = _SIGNALS[1 if _FORWARDED.search(line).group(1) == "SIGHUP" else 2], "interrupted"
            at = line.find("closing signal")
        elif "closing signal" in line or _EXITCODE.search(line):
            reason = "child_failed"  # torchrun's elastic agent stops the other workers after one failed
            at = line.find("closing signal") if "closing signal" in line else _EXITCODE.search(line).start()
        elif _EXCEPTION.match(line):
            reason = "traceback"
    if reason is None:
        for needle, why in _INTERRUPT:
            if needle in line:
                reason, status, at = why, "interrupted", line.find(needle)
                break
    if reason is None:
        return False
    run = _target(ctx)
    p = run.progress
    step = run.last_step.value if run.last_step is not None else 0
    resumed = p.stop is not None and run.last_step is not None and run.last_step.line > p.stop[1]
    if p.stop is None or resumed or (p.stop[0] == "crashed" and p.stop[4] == "traceback" and reason != "traceback") \
            or (status == "interrupted" and p.stop[4] in ("traceback", "launcher_exit")) \
            or (p.stop[4] == "sigterm" and reason in _CAUSES) \
            or (p.stop[4] == "sigterm" and reason == "child_failed" and _OWN_FAILURE.search(line)):  # resumed: progress after the earlier stop
        p.stop = (status, ctx.line_no, _quote_from(ctx.line, at), step, reason)
    return True


def _quote_from(line: str, at: int) -> str:
    """The words that end a run: from the end of a tqdm bar drawn before them on the same line (`...it/s]`), else the
    whole line; cut at 160 characters with an ellipsis."""
    bar_end = line.rfind("]", 0, at)
    start = bar_end + 1 if bar_end != -1 and "%|" in line[:bar_end] else 0
    return clip(line[start:].strip(), 160)


# ---------------------------------------------------------------- release and settings printed in the log

def _version(line: str, ctx: ScanContext) -> None:
    if ctx.pip_show_transformers and "Version:" in line:
        match = _PIP_SHOW_VERSION.match(line)
        if match:
            ctx.transformers_version = ctx.reading(match.group(1))
        ctx.pip_show_transformers = False
        return
    if re.match(r"^\s*Name:\s*transformers\s*$", line):
        ctx.pip_show_transformers = True
        return
    for pattern in _VERSIONS:
        match = pattern.search(line)
        if match:
            ctx.transformers_version = ctx.reading(match.group(1))
            return


def _rows(line: str, ctx: ScanContext) -> None:
    raw = _RAW_SAMPLES.search(line)
    if raw:
        ctx.wrapper_value("raw_examples", ctx.reading(int(raw.group(1).replace(",", ""))))
        return
    if "train_dataset" in line:
        ctx.train_dataset_line = ctx.line_no
    match = _NUM_ROWS.search(line)
    if match and ctx.train_dataset_line is not None and ctx.line_no - ctx.train_dataset_line <= 8:
        ctx.wrapper_value("dataset_rows", ctx.reading(int(match.group(1))))
        ctx.train_dataset_line = None


def _int(text) -> int | None:
    try:
        value = int(float(text))
    except (TypeError, ValueError, OverflowError):
        return None
    return value if abs(value) < MAX_COUNT else None


def _float(text) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value == value and abs(value) != float("inf") else None


__all__ = ["observe", "seconds", "training_bar", "Reading"]

"""The transformers Trainer: the `***** Running training *****` banner of every release, with any logger prefix,
and the progress lines that show where a run really stopped.

Labels are compared on their letters only (`letters`), so a prefix such as
`[INFO|trainer.py:2128] 2024-07-16 10:38:45,444 >>`, lost spaces or markdown `**` do not matter.
"""

from __future__ import annotations

import re

from trainsteps import bars
from trainsteps.logs.context import ScanContext
from trainsteps.logs.text import letters, parse_int
from trainsteps.patterns import lazy

# letters of a label (parenthesised part removed) -> banner key
LABELS = {
    "numexamples": "num_examples",
    "numepochs": "num_epochs",
    "numupdatestepsperepoch": "update_steps_per_epoch",
    "instantaneousbatchsizeperdevice": "per_device_batch",
    "trainingwithdataparallelsobatchsizehasbeenadjustedto": "dataparallel_batch",
    "totaltrainbatchsize": "total_batch",
    "gradientaccumulationsteps": "grad_accum",
    "totaloptimizationsteps": "max_steps",
    "numberoftrainableparameters": "trainable_parameters",
}
_BY_LENGTH = sorted(LABELS, key=len, reverse=True)
_SOURCE = lazy(r"\btrainer\.py:(\d+)")
_DATE = lazy(r"\b(20\d\d-[01]\d-[0-3]\d)[ T]\d\d:\d\d")
_LEVEL = lazy(r"\b(INFO|WARNING|WARN|ERROR|DEBUG)\b")
_PARENS = lazy(r"\([^()]*\)")
_EPOCH = lazy(r"""['"]epoch['"]\s*:\s*([0-9][0-9.eE+-]*)""")
_STEPS_PER_SECOND = lazy(r"""['"]train_steps_per_second['"]\s*:\s*([0-9.]+)""")
_RUNTIME = lazy(r"""['"]train_runtime['"]\s*:\s*([0-9.]+)""")
_CURRENT_STEPS = lazy(r""""current_steps"\s*:\s*(\d{1,15})\s*,\s*"total_steps"\s*:\s*(\d{1,15})\b""")
_TQDM = bars.TQDM
_NOTEBOOK = bars.NOTEBOOK_EPOCH
_RESUME_5 = lazy(r"Resuming training from checkpoint with epoch (\d+) and global step (\d+)")
_RESUME_STEP = lazy(r"Continuing training from global step (\d+)")
_RESUME_EPOCH = lazy(r"Continuing training from epoch (\d+)")
_METRIC_EPOCH = lazy(r"^\s*epoch\s*=\s*([0-9.]+)\s*$")


def key_of(label: str) -> str | None:
    """The banner key a label names, or None. Accepts any prefix before the label."""
    flat = letters(_PARENS.sub("", label))
    for known in _BY_LENGTH:
        if flat.endswith(known):
            return LABELS[known]
    return None


def scan(line: str, ctx: ScanContext) -> bool:
    """Read one line; True if it was a line of this format."""
    if "*****" in line or "Running" in line:
        if _header(line, ctx):
            return True
    if "=" in line or "adjusted to" in line:
        if _banner_value(line, ctx):
            return True
    if "max_steps is given" in line:
        level = _LEVEL.search(line)
        ctx.pending_notice = level.group(1) if level else ""
        return True
    if ctx.current is not None:
        return _progress(line, ctx)
    if "training_args.py:" in line or "trainer.py:" in line:
        ctx.pending_trainer_lines += 1
    return False


def _is_copy(run) -> bool:
    """A banner that saw nothing after it yet: the same banner printed again is another node or rank, not a new run."""
    return (run is not None and run.kind == "hf" and bool(run.banner) and run.last_step is None and run.last_epoch is None
            and not run.finished and run.progress.stop is None and not run.progress.bars and not run.progress.loss_dicts)


def _header(line: str, ctx: ScanContext) -> bool:
    if "Running training" in line:
        if _is_copy(ctx.current) and ctx.current.file == ctx.file and ctx.current.header_line is not None:
            ctx.copying = True
            ctx.repeats["header"] = ctx.repeats.get("header", 0) + 1
            ctx.current.copies = max(ctx.current.copies, ctx.repeats["header"])
            return True
        run = ctx.start_run("hf")
        run.header_line = ctx.line_no
        src = _SOURCE.search(line)
        run.header_source_line = int(src.group(1)) if src else None
        _stamp(run, line)
        return True
    if re.search(r"\*+\s*Running (Evaluation|Prediction|Evaluate|Predict)", line):
        ctx.in_other_block = True
        return True
    return False


_RANK_PREFIX = lazy(r"^\s*\[?\d{1,4}\]?\s*:")
_CODE_LABEL = lazy(r"[A-Za-z]\w*_\w*\s*$")
_LOOKALIKE = ("totalnumtrainsamples", "totalnumtrainsamplesperdevice")


def _banner_value(line: str, ctx: ScanContext) -> bool:
    if "\\text" in line or "\\times" in line or "\\frac" in line:  # LaTeX quoting a banner label: prose, not a log
        return False
    body = line.replace("**", "").replace("`", "")
    if "adjusted to" in body and "=" not in body.split("adjusted to", 1)[1][:3]:
        label, _, rest = body.partition("adjusted to")
        label += "adjusted to"
        rest = rest.lstrip(" :")
    else:
        label, _, rest = body.partition("=")
    key = key_of(label)
    if key is None:
        if letters(label).endswith(_LOOKALIKE) and ctx.current is not None and ctx.current.file == ctx.file:
            _lookalike(ctx.current, ctx)  # PaddleNLP's Trainer prints this line; transformers never does
        return False
    if _CODE_LABEL.search(label.split(">>")[-1]) and "_" in label.split(">>")[-1].split()[-1]:
        return False  # `num_examples = self.num_examples(...)`: source code quoting trainer.py, not a log
    if ctx.in_other_block:
        if key == "num_examples":
            return True  # an evaluation set's size, not the training set's
        ctx.in_other_block = False
    parsed = parse_int(rest)
    run = ctx.current
    if parsed is None and (run is None or run.file != ctx.file or not run.banner):
        return False  # a label with no number and no banner around it: prose
    if run is not None and key in run.banner and parsed is not None and run.banner[key].value == parsed[0] and _is_copy(run) \
            and run.file == ctx.file and run.header_line is not None and (ctx.copying or _RANK_PREFIX.match(line)):
        ctx.repeats[key] = ctx.repeats.get(key, 0) + 1
        run.copies = max(run.copies, ctx.repeats[key])
        return True  # the same banner printed by another node or rank
    if run is None or run.kind not in ("hf", "paddlenlp") or key in run.banner or run.finished or run.file != ctx.file:
        run = ctx.start_run("hf")
        run.notes.append(("explain.note.no_header", {"line": ctx.line_no}))
    ctx.copying = False
    if parsed is None:
        run.notes.append(("explain.note.unreadable", {"line": ctx.line_no, "label": label.strip()[-60:]}))
        return True
    value, glued = parsed
    src = _SOURCE.search(label)
    if key in ("max_steps", "num_epochs") and re.match(r"^\.0+\s*$", glued):
        _lookalike(run, ctx)  # `Total optimization steps = 1000.0`: a float, as PaddleNLP prints it
        glued = ""
    note, params = _glued_note(glued)
    if note == "explain.note.cut_number":
        run.notes.append((note, {"line": ctx.line_no, **params}))
        return True
    run.banner[key] = ctx.reading(value, int(src.group(1)) if src else None, note, **params)
    run.banner_order.append(key)
    if run.header_date is None and len(run.banner_order) == 1:
        _stamp(run, label)
    return True


def _stamp(run, line: str) -> None:
    date = _DATE.search(line)
    run.header_date = date.group(1) if date else None


def _lookalike(run, ctx: ScanContext) -> None:
    if run.kind != "paddlenlp":
        run.kind = "paddlenlp"
        run.notes.append(("explain.note.lookalike", {"line": ctx.line_no}))


def _glued_note(glued: str) -> tuple[str | None, dict]:
    rest = glued.strip().strip("*`").strip()
    if not rest or rest.startswith("|") or rest.startswith("of "):
        return None, {}
    if re.match(r"^[,.'_ ]\d", glued) or re.match(r"^[,.]\s*$", rest):
        return "explain.note.cut_number", {"rest": rest[:40]}
    return "explain.note.glued", {"rest": rest[:40]}


def _progress(line: str, ctx: ScanContext) -> bool:
    run = ctx.current
    if "epoch" in line:
        match = _EPOCH.search(line)
        if match:
            try:
                run.last_epoch = ctx.reading(float(match.group(1)))
            except ValueError:
                pass
            if "train_runtime" in line:
                run.finish("runtime", ctx.line_no)
                runtime, per_second = _RUNTIME.search(line), _STEPS_PER_SECOND.search(line)
                if runtime and per_second:
                    run.runtime_steps = float(runtime.group(1)) * float(per_second.group(1))
            if "current_steps" in line:
                steps = _CURRENT_STEPS.search(line)
                if steps:
                    run.last_step = ctx.reading(int(steps.group(1)))
            return True
        metric = _METRIC_EPOCH.match(line)
        if metric:
            run.last_epoch = ctx.reading(float(metric.group(1)))
            return True
    if " [" in line:
        max_steps = run.value("max_steps")
        if max_steps is not None and f"/{max_steps} [" in line:
            for match in _TQDM.finditer(line):
                if int(match.group(2)) == max_steps:
                    run.last_step = ctx.reading(int(match.group(1)))
            return True
    if "Epoch" in line and "/" in line:
        match = _NOTEBOOK.search(line)
        if match:
            run.last_step = ctx.reading(int(match.group(1)))
            run.last_epoch = ctx.reading(float(match.group(3)))
            return True
    if "Training completed" in line:
        run.finish("completed", ctx.line_no)
        return True
    if "global step" in line or "from epoch" in line:
        m5, step, epoch = _RESUME_5.search(line), _RESUME_STEP.search(line), _RESUME_EPOCH.search(line)
        if m5:
            run.resume_epoch, run.resume_global_step = int(m5.group(1)), int(m5.group(2))
        if step:
            run.resume_global_step = int(step.group(1))
        if epoch:
            run.resume_epoch = int(epoch.group(1))
        return bool(m5 or step or epoch)
    return False

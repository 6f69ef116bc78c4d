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
_LEVEL = lazy(r"\b(INFO|WARNING|WARN|ERROR|DEBUG)\b")
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


# The logger prefix and the label are read by hand, not by patterns: a banner's every line reaches them, and
# compiling `\btrainer\.py:(\d+)`, `\b(20\d\d-[01]\d-[0-3]\d)[ T]\d\d:\d\d` and `\([^()]*\)` cost its start-up 0.2 ms
# (tests/logs/test_banner_parsing.py holds them and checks these readers against them).
def _is_word(char: str) -> bool:
    """`\\w` of a pattern: a Unicode letter or digit, or `_`."""
    return char.isalnum() or char == "_"


def _decimals(text: str, start: int, count: int) -> bool:
    return len(text) >= start + count and text[start:start + count].isdecimal()


def source_line(text: str) -> int | None:
    """The number after the first `trainer.py:` that starts a word (the logger prefix's source line), else None."""
    at = text.find("trainer.py:")
    while at != -1:
        end = start = at + len("trainer.py:")
        while end < len(text) and text[end].isdecimal():
            end += 1
        if end > start and (at == 0 or not _is_word(text[at - 1])):
            return int(text[start:end])
        at = text.find("trainer.py:", at + 1)
    return None


def date_of(text: str) -> str | None:
    """The first `20YY-MM-DD` that starts a word and is followed by ` HH:MM` or `THH:MM` (a logger's time stamp)."""
    at = text.find("20")
    while at != -1:
        if (at == 0 or not _is_word(text[at - 1])) and _decimals(text, at + 2, 2) and text[at + 4:at + 5] == "-" \
                and text[at + 5:at + 6] in ("0", "1") and _decimals(text, at + 6, 1) and text[at + 7:at + 8] == "-" \
                and text[at + 8:at + 9] in ("0", "1", "2", "3") and _decimals(text, at + 9, 1) and text[at + 10:at + 11] in (" ", "T") \
                and _decimals(text, at + 11, 2) and text[at + 13:at + 14] == ":" and _decimals(text, at + 14, 2):
            return text[at:at + 10]
        at = text.find("20", at + 1)
    return None


def without_parens(text: str) -> str:
    """`text` without its innermost parenthesised parts, as `re.sub(r"\\([^()]*\\)", "", text)`."""
    at = text.find("(")
    if at == -1:
        return text
    kept, start = [], 0
    while at != -1:
        close = text.find(")", at + 1)
        if close == -1:
            break
        inner = text.find("(", at + 1, close)
        if inner != -1:  # no match opens here: the next one may open at the inner parenthesis
            at = inner
            continue
        kept.append(text[start:at])
        start = close + 1
        at = text.find("(", start)
    kept.append(text[start:])
    return "".join(kept)


def key_of(label: str) -> str | None:
    """The banner key a label names, or None. Accepts any prefix before the label."""
    flat = letters(without_parens(label))
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
        run.header_source_line = source_line(line)
        _stamp(run, line)
        return True
    if re.search(r"\*+\s*Running (Evaluation|Prediction|Evaluate|Predict)", line):
        ctx.in_other_block = True
        return True
    return False


_RANK_PREFIX = lazy(r"^\s*\[?\d{1,4}\]?\s*:")


def _ends_in_identifier(text: str) -> bool:
    """`text` ends (before any spaces) in a word holding a `_` after an ASCII letter, as `[A-Za-z]\\w*_\\w*\\s*$` finds."""
    tail = text.rstrip()
    start = len(tail)
    while start and _is_word(tail[start - 1]):
        start -= 1
    word = tail[start:]
    underscore = word.rfind("_")
    return underscore > 0 and any("a" <= c <= "z" or "A" <= c <= "Z" for c in word[:underscore])

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
    if _ends_in_identifier(label.split(">>")[-1]) and "_" in label.split(">>")[-1].split()[-1]:
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
    if key in ("max_steps", "num_epochs") and _zeros_after_point(glued):
        _lookalike(run, ctx)  # `Total optimization steps = 1000.0`: a float, as PaddleNLP prints it
        glued = ""
    note, params = _glued_note(glued)
    if note == "explain.note.cut_number":
        run.notes.append((note, {"line": ctx.line_no, **params}))
        return True
    run.banner[key] = ctx.reading(value, source_line(label), note, **params)
    run.banner_order.append(key)
    if run.header_date is None and len(run.banner_order) == 1:
        _stamp(run, label)
    return True


def _zeros_after_point(glued: str) -> bool:
    """`.0`, `.000 `: what `^\\.0+\\s*$` matches (a float's fraction glued to a banner number)."""
    zeros = glued[1:].rstrip()
    return glued.startswith(".") and bool(zeros) and not zeros.strip("0")


def _stamp(run, line: str) -> None:
    run.header_date = date_of(line)


def _lookalike(run, ctx: ScanContext) -> None:
    if run.kind != "paddlenlp":
        run.kind = "paddlenlp"
        run.notes.append(("explain.note.lookalike", {"line": ctx.line_no}))


def _glued_note(glued: str) -> tuple[str | None, dict]:
    rest = glued.strip().strip("*`").strip()
    if not rest or rest.startswith("|") or rest.startswith("of "):
        return None, {}
    if _cut_number(glued, rest):
        return "explain.note.cut_number", {"rest": rest[:40]}
    return "explain.note.glued", {"rest": rest[:40]}


def _cut_number(glued: str, rest: str) -> bool:
    """A number cut at a separator: what follows it starts `,3` / `.9` / ` 0` (`^[,.'_ ]\\d`), or is a lone `,` / `.`."""
    if len(glued) > 1 and glued[0] in ",.'_ " and glued[1].isdecimal():
        return True
    return len(rest) >= 1 and rest[0] in ",." and (len(rest) == 1 or rest[1:].isspace())


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

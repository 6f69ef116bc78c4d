"""Read a log from a file, a directory, stdin (`-`) or pasted text, line by line in constant memory."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate

from trainsteps.errors import InputError
from trainsteps.logs import hf, progress
from trainsteps.logs.context import ScanContext
from trainsteps.logs.input_kind import json_error, problem
from trainsteps.logs.observed import LogObservations
from trainsteps.logs.text import CHUNK, MAX_LINE, clean, iter_text_lines, unglued
from trainsteps.patterns import lazy


def _imported_on_first_line(module: str, words: tuple[str, ...] = ()):
    """A parser whose module is imported when a line first reaches it, then put in its place in PARSERS: a Trainer
    banner never reaches LLaMA-Factory's, Axolotl's, DeepSpeed's, the launch lines' or the model card's (about 1.5 ms
    of `explain`'s start-up). With `words`, only a line holding one of them imports it: a parser that reads nothing
    before such a line (Unsloth's, which every line reaches first, starts with its `Num GPUs` banner line)."""
    def first_line(line: str, ctx: ScanContext) -> bool:
        global PARSERS
        if words:
            for word in words:  # a plain loop: every line of a Trainer log comes here first
                if word in line:
                    break
            else:
                return False
        import importlib

        scan = importlib.import_module(module).scan
        PARSERS = tuple(scan if parse is first_line else parse for parse in PARSERS)
        return scan(line, ctx)
    return first_line


STATED_NEEDLES = ("GPU", "gpu", "卡", "SBATCH", "memory", "MEMORY", "Memory", "OOM", "oom", "显存", "顯存", "H100", "H800", "A800", "H200",
                  "B200", "h100", "h200", "h800", "a100", "0Ti", "0 Ti", "RTX", "A20", "A40", "A45", "A50", "A55", "died", "L4", "A10", "090",
                  "V100", "A6000", "MI3", "910", "limit", "LIMIT", "wall", "preempt", "cancel", "CANCEL", "时间限制", "超时被", "抢占", "被取消",
                  "报错", "報錯", "出错", "出錯", "崩溃", "崩潰", "被杀", "被殺", "kill", "Kill", "KILL", "fail", "Fail", "FAIL", "rror", "RROR",
                  "rash", "RASH", "terminat", "Terminat", "Died")
"""Every line stated.py reads a count or a failure from holds one of these: each of its NEEDLES and SAID_NEEDLES
holds one (tests/logs/test_collector_gates.py). Kept here so that a banner does not load stated.py for its lists."""
STATED_WORDS = ("# ", *STATED_NEEDLES)
"""stated.py is imported with the first line holding one of these: its needles, or a post's title (`# ...`)."""
DIGIT_NEEDLES = tuple(needle for needle in STATED_NEEDLES if needle.isdigit())
"""The needles a line of digits and punctuation may hold (a bare tqdm draw, which is read apart): each of stated.py's
needles made of digits holds one of these, since it holds one of STATED_NEEDLES and that one is digits too."""
UNSLOTH_WORDS = ("Num GPUs",)
"""Unsloth's parser reads nothing before a line holding one of these (logs/unsloth.py WORDS, kept equal by
tests/logs/test_collector_gates.py)."""
# Order matters: Unsloth's banner before the Trainer's labels (it reuses some of them).
PARSERS = (_imported_on_first_line("trainsteps.logs.unsloth", words=UNSLOTH_WORDS), hf.scan,
           *map(_imported_on_first_line, ("trainsteps.logs.llamafactory", "trainsteps.logs.axolotl", "trainsteps.logs.deepspeed",
                                          "trainsteps.logs.launch", "trainsteps.logs.model_card")),
           _imported_on_first_line("trainsteps.logs.stated", words=STATED_WORDS))
PARSERS_ON_FIRST_LINE = PARSERS
"""PARSERS as they start, each module imported with the first line that needs it (a fresh read takes them from here in tests)."""
# Any line a parser could use contains one of these; the rest (most of a long log) is skipped.
# Plain substring tests: much faster than one alternation regex.
_NEEDLES = ("=", "poch", "Running", "%|", " [", "Training completed", "global step", "_num_", "data_loader_len", "batch_size",
            "gradient_accumulation", "nproc", "num_processes", "num-processes", "GPU number", "CUDA_VISIBLE", "Unsloth",
            "adjusted to", "max_steps is given", "trainer.py:", "training_args.py:", "Maximum number", "total_supervised",
            # progress, timing, crashes, printed releases and settings (progress.py)
            "/it", "it/s", "Traceback", "Killed", "memory", "NCCL", "rror", "Interrupt", "SIGTERM", "CANCELL", "ransformers",
            "Version:", "num_rows", "train_dataset", "raw training samples", "core dumped", "ault", "dist_world_size", "num_local_procs",
            "WORLD_SIZE", "micro_batch", "global_step", "current_steps", "iteration", "Trainer.fit", "Watchdog", "metrics", "sample_packing", "packing_efficiency", "/?", "closing signal", "exitcode", "Exception",
            # loops' own step lines and the launchers' ends (step_lines.py, progress.py)
            "step", "Step", "iter ", "Iter ", "iters", "iter:", "\"iter", "num_updates\"", "End of training", "Training time", "World size (gpu", "Killing subprocess", "return code", "SIGINT", "gather_len_batches", "barrier", "using world size",
            # the words around a log (stated.py, model_card.py) and launch commands
            *STATED_NEEDLES, "python", "llamafactory-cli", "n_gpus_per_node", "num_gpus_per_node", "- Transformers ",
            "num_devices", "NNODES", "num_gpus", "num-gpus",
            # a metric dict's first piece, when a terminal wrapped it before any key the needles above name (progress.py)
            "{'")
PASTED = "<pasted text>"
"""The name of input given with --text (rendered as "pasted text")."""


def _useful(line: str) -> bool:
    for needle in _NEEDLES:
        if needle in line:
            return True
    return False


# a run folder's launch scripts are read with its logs: their GPU counts join the run (logs/launch.py, stated.py)
_LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".jsonl", ".md", ".slurm", ".sbatch", ".sh"}


def each_of(*feeds: Callable[[str], None] | None) -> Callable[[str], None]:
    """One `also` feed that passes each line to every collector given (None is skipped)."""
    present = [feed for feed in feeds if feed is not None]

    def feed_all(line: str) -> None:
        for feed in present:
            feed(line)
    return feed_all


class WhenSeen:
    """A collector of every line (an `also` feed) made, with its module, when a line holding one of `words` first comes.

    `target` is "module:Class"; until then `collector` is None and nothing of it is loaded (a Trainer banner loads
    none of the RL, RL-stack and pretraining collectors: about 2 ms of `explain`'s start-up). A collector that numbers
    its lines is told with `skip(count)` how many came before its first."""

    def __init__(self, target: str, words: tuple[str, ...]):
        self.target, self.words = target, words
        self.collector = None
        self._passed = 0

    def feed(self, line: str) -> None:
        if self.collector is not None:
            self.collector.feed(line)
            return
        for word in self.words:  # a plain loop: no generator per line
            if word in line:
                break
        else:
            self._passed += 1
            return
        self.make().feed(line)

    def make(self):
        """The collector, made now if no line has woken it (one that read nothing)."""
        if self.collector is None:
            import importlib

            module, name = self.target.split(":")
            self.collector = getattr(importlib.import_module(module), name)()
            if self._passed and hasattr(self.collector, "skip"):
                self.collector.skip(self._passed)
        return self.collector


# The words of each collector the command `explain` feeds every line (each the collector module's WORDS, which
# tests/logs/test_collector_gates.py keeps equal): verl / OpenRLHF / EasyR1 lines (logs/rl.py), AReaL / open-instruct /
# prime-rl / ROLL step lines (logs/rl_stacks.py), GPT-NeoX / Megatron / DeepSpeed / Lightning lines (logs/pretrain.py).
RL_WORDS = ("pid=", "Error executing job with overrides", "ray.exceptions.", "Traceback (most recent call last)", "Total training steps:",
            "Size of train dataloader:", "filter dataset len:", "dataset len:", "Global step ", "step:", "perf ", "timing_s/", "perf/",
            "Training Progress", "Running step", "Episode [", "change the batch size of")
STACK_WORDS = ("Starting training loop", "| Loss", "pipeline ", "Train step", "training_step:", "total:", "Saving final model")
PRETRAIN_WORDS = ("train:", "validation:", "test:", "number of", "sequence length", "_indexmap_", "iteration", "consumed samples",
                  "global batch size", "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "world_size",
                  "seq_length", "train_iters", "Epoch ", "document indices", "Training for a total", "world size", "model parallel with size",
                  "batches to constant", "global batch size to", "micro_batch_size", "global_batch_size", "parallel_size", "eval_i")


def rl_collector() -> WhenSeen:
    return WhenSeen("trainsteps.logs.rl:RLObserved", RL_WORDS)


def stack_collector() -> WhenSeen:
    return WhenSeen("trainsteps.logs.rl_stacks:StackObserved", STACK_WORDS)


def pretrain_collector() -> WhenSeen:
    return WhenSeen("trainsteps.logs.pretrain:PretrainObserved", PRETRAIN_WORDS)


def read_log(path: str | Sequence[str] | None = None, text: str | None = None,
             also: Callable[[str], None] | None = None) -> LogObservations:
    """Everything readable in a path (`-` for stdin), several paths of one run, or a pasted text.

    `also`, if given, sees every line too (in the same pass), e.g. the pretraining-log collector."""
    out = LogObservations(also=also)
    paths = [path] if path is None or isinstance(path, str) else list(path)
    for one in paths:
        _read_one(one, text, out)
    out.lend_stated()
    return out


def _looks_like_state(head: bytes) -> bool:
    """trainer_state.looks_like_state, its module loaded only for input that starts with `{` (a text log never does)."""
    if not head.lstrip().startswith(b"{"):
        return False
    from trainsteps.logs.trainer_state import looks_like_state

    return looks_like_state(head)


def _read_one(path: str | None, text: str | None, out: LogObservations) -> LogObservations:
    if text is not None:
        data = text.encode("utf-8", "replace")
        if _looks_like_state(data[:CHUNK]):
            _read_stream(io.BytesIO(data), PASTED, out)
            return out
        _scan(iter_text_lines(text), PASTED, out)
        out.files.append(PASTED)
        out.bytes_read += len(data)
        return out
    if path is None or path == "-":
        _read_stream(sys.stdin.buffer, "-", out)
        return out
    name = _path_name(path)
    if os.path.isdir(name):
        files = _log_files(name)
        if not files:
            raise InputError("explain.error.empty_dir", "explain.hint.empty_dir", path=name)
        for f in files:
            _read_file(f, out)
        return out
    if not os.path.exists(name):
        raise InputError("explain.error.no_file", "explain.hint.no_file", path=name)
    _read_file(name, out)
    return out


def _path_name(path: str) -> str:
    """`str(Path(path))`, the name a file is reported under; a plain POSIX path is its own, so that reading one file
    does not import `pathlib` (about 6 ms of `trainsteps explain`'s start-up with what it brings)."""
    path = os.fspath(path)
    plain = (os.sep == "/" and path not in ("", ".") and "//" not in path and "/./" not in path
             and not path.startswith("./") and not path.endswith(("/", "/.")))
    if plain:
        return path
    from pathlib import Path

    return str(Path(path))


def read_bytes(data: bytes, name: str = "-") -> LogObservations:
    out = LogObservations()
    _read_stream(io.BytesIO(data), name, out)
    out.lend_stated()
    return out


def _log_files(name: str) -> list:
    from pathlib import Path  # a directory of logs: its listing and globbing

    directory = Path(name)
    files = sorted(f for f in directory.iterdir() if f.is_file() and (f.suffix in _LOG_SUFFIXES or f.name == "trainer_state.json"))
    if not any(f.name == "trainer_state.json" for f in files):
        checkpoints = sorted((c for c in directory.glob("checkpoint-*/trainer_state.json")),
                             key=lambda c: int(c.parent.name.split("-")[-1]) if c.parent.name.split("-")[-1].isdigit() else -1)
        files += checkpoints[-1:]
    return files


def _read_file(path, out: LogObservations) -> None:
    """`path`: a name or a pathlib.Path."""
    try:
        with open(path, "rb") as stream:
            _read_stream(stream, str(path), out)
    except OSError as exc:
        raise InputError("explain.error.unreadable", "explain.hint.no_file", path=str(path), detail=exc.strerror or str(exc)) from None


def _read_stream(stream, name: str, out: LogObservations) -> None:
    head = stream.read(CHUNK)
    out.files.append(name)
    if _looks_like_state(head):
        from trainsteps.logs.trainer_state import MAX_BYTES, parse_state

        data = head + stream.read(MAX_BYTES)
        run = parse_state(data, name)
        if run is not None:
            out.bytes_read += len(data)
            out.lines_read += data.count(b"\n") + (not data.endswith(b"\n"))
            out.runs.append(run)
            return
        error = json_error(data) if name.endswith(".json") else None
        if error is not None:  # a trainer_state.json cut off or edited by hand: where its JSON breaks, not a guess
            out.bytes_read += len(data)
            out.lines_read += data.count(b"\n") + (not data.endswith(b"\n"))
            out.problems.append((name, "explain.error.bad_json", "explain.hint.bad_json",
                                 {"line": error[0], "column": error[1], "detail": error[2]}))
            return
        stream = io.BytesIO(data)  # scanned as text below, which counts its lines and bytes
        head = b""
    else:
        found = problem(name, head, len(head) < CHUNK)
        if found is not None:
            out.problems.append((name, *found))
            if found[0] == "explain.error.compressed":
                out.bytes_read += len(head)
                return
    _scan_chunks(_Chained(head, stream, out), name, out)


class _Chained(io.RawIOBase):
    """The bytes already peeked at, then the rest of the stream; counts what was read."""

    def __init__(self, head: bytes, rest, out: LogObservations):
        self.head, self.rest, self.out = head, rest, out

    def read(self, size: int = -1) -> bytes:
        if self.head:
            data, self.head = self.head, b""
        else:
            data = self.rest.read(size)
        self.out.bytes_read += len(data)
        return data


def _topic(line: str, out: LogObservations) -> None:
    """Prose about streaming or GPT-NeoX gets a hint of its own when no run is found."""
    if "NeoX" in line or "neox" in line or "NEOX" in line:
        out.topic = "neox"
    elif "stream" in line or "流式" in line or "Stream" in line:
        out.topic = "stream"


def _scan(lines: Iterable[str], name: str, out: LogObservations) -> None:
    ctx = ScanContext(file=name, out=out)
    for number, physical in enumerate(lines, 1):
        _read_line(physical, number, ctx)
    out.lines_read += ctx.line_no
    progress.flush(ctx)  # a metric dict cut where the input ends
    ctx.finish()


# A bare tqdm draw (no description, no postfix): ` 12%|█▎        | 48/400 [00:31<03:50,  1.53it/s]`. Its only
# letters are its unit's, so of the line readers only the Trainer's (a bar of `max_steps`) and the bar reader can read
# it, and no collector's word, crash needle, topic or continued command is in it; digit needles are checked apart.
_BARE_DRAW = lazy(r" *[0-9]{1,3}%\|[ \u2588\u258f\u258e\u258d\u258c\u258b\u258a\u2589]*\| *([0-9]{1,15})/([0-9]{1,15}) "
                  r"\[([0-9]{1,9}(?::[0-9]{2}){1,2})<([0-9]{1,9}(?::[0-9]{2}){1,2}|\?), +([0-9]{1,9}(?:\.[0-9]{1,9})?)(it/s|s/it)\] *")


def _bare_draw(line: str, number: int, ctx: ScanContext) -> bool:
    """Read a bare tqdm draw as `_read_line` would, without the readers that cannot read it (a redraw line holds 20
    of them, a tqdm log hundreds of thousands); False, having read nothing, for any other line."""
    if ctx.open_dict is not None or ctx.command:
        return False
    draw = _BARE_DRAW.fullmatch(line)
    if draw is None:
        return False
    if _holds_digit_needle(line):
        return False
    _trainer_reads(line, number, ctx)  # the last step of a bar of `max_steps`; no reader after it reads the line
    progress.bare_draw(line, ctx, draw)
    return True


def _holds_digit_needle(line: str) -> bool:
    for needle in DIGIT_NEEDLES:  # a plain loop: a generator per line costs more than the test
        if needle in line:
            return True
    return False


def _trainer_reads(line: str, number: int, ctx: ScanContext) -> None:
    """What `_read_line` does with a line before its readers, and the Trainer's reader: the only reader besides the
    progress reader that can read a bare draw or a bare LLaMA-Factory row."""
    ctx.line_no, ctx.line, ctx.raw_line = number, line, None
    if ctx.out.also is not None:
        ctx.out.also(line)
    if ctx.current is not None:
        hf.scan(line, ctx)


# A row of LLaMA-Factory's trainer_log.jsonl (callbacks.py LogCallback) holding only its own keys, with numbers, nulls
# and clocks (`4 days, 5:06:09`): `{"current_steps": 10, "total_steps": 99, "loss": 0.61, ..., "remaining_time": "0:08:02"}`.
# No key is a word any line reader but the Trainer's (`epoch`, `current_steps`) and the progress reader looks for.
_ROW_KEYS = ("total_steps", "loss", "eval_loss", "predict_loss", "reward", "accuracy", "learning_rate", "lr", "epoch",
             "percentage", "elapsed_time", "remaining_time", "throughput", "total_tokens")
_BARE_ROW = lazy(r'\{"current_steps": [0-9]{1,15}(?:, "(?:' + "|".join(_ROW_KEYS) + r')": (?:null|-?[0-9]{1,20}(?:\.[0-9]{1,20})?'
                 r'(?:e[-+][0-9]{1,3})?|"(?:[0-9]{1,9} days?, )?[0-9]{1,9}(?::[0-9]{2}){1,2}"))*\} *')


def _bare_row(line: str, number: int, ctx: ScanContext) -> bool:
    """Read such a row as `_read_line` would, without the line readers that cannot read it; False, having read
    nothing, for any other line."""
    if ctx.command or _BARE_ROW.fullmatch(line) is None:
        return False
    if _holds_digit_needle(line):
        return False
    _trainer_reads(line, number, ctx)  # its epoch and step; no reader after it reads the row
    progress.observe(line, ctx)
    return True


def _read_line(physical: str, number: int, ctx: ScanContext) -> None:
    if "%|" in physical and _bare_draw(physical, number, ctx):
        return
    if physical.startswith('{"current_steps": ') and _bare_row(physical, number, ctx):
        return
    out = ctx.out
    if out.topic is None and not out.runs:
        _topic(physical, out)
    also = out.also
    cleaned = clean(physical)  # idempotent: the lines of a pasted text reach here as written
    raw = physical if cleaned != physical and "\x1b" not in physical and "\x00" not in physical else None
    for line in unglued(cleaned):  # a banner whose line breaks were lost is read label by label
        ctx.line_no, ctx.line = number, line
        ctx.raw_line = raw if line is cleaned else None
        if also is not None:
            also(line)
        if not _useful(line):
            if ctx.command or line.endswith("\\"):  # a continued command's lines carry no needle of their own
                from trainsteps.logs import launch  # loaded here only for such a line

                launch.scan(line, ctx)
            if ctx.open_dict is not None:  # the rest of a wrapped metric dict carries none either
                progress.observe(line, ctx)
            continue
        for parse in PARSERS:
            if parse(line, ctx):
                break
        progress.observe(line, ctx)


# ---------------------------------------------------------------- large inputs

FULL_BYTES = 1 << 20
"""The first 1 MB, and the last chunk, are read line by line (a chunk is read whole when it starts within the first
half of FULL_BYTES: the first 1 MB chunk; the next one too only when reads come short). In between, a 1 MB chunk is
read by shape: every line whose shape (the line without its digits) is new in the chunk is read, and of the repeating
lines (bar redraws, loss dicts) every SAMPLE_EVERY-th and the chunk's last ones. Line numbers stay exact. What is sampled: rate readings and
bar draw counts; a second evaluation dict or crash line of the same shape in the same 1 MB is not read."""
SAMPLE_EVERY = 512
TAIL_LINES = 2
FEW_SHAPES = 32
"""Up to this many distinct shapes in a chunk, each one's first line is found with list.index (C speed, stops early)."""
MAX_FORMS = 1024
"""Above this many distinct forms (lines with their digits as 0s) in a chunk, shapes are found on the split lines."""
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_DIGITS = b"0123456789"
MAX_NEW_SHAPES = 64
"""Lines of new shapes read per sampled chunk when it has more (inputs where every line differs): those holding a
MUST_READ marker first, then a spread of the rest."""
SPARSE_PROBE = 1 << 16
"""A sampled chunk whose first SPARSE_PROBE bytes hold at least SPARSE_MIN_LINES lines, three in four of a shape of their
own, is read sparsely (`_sparse`): prose, random bytes, hashes. Shapes say nothing there and cost more than reading."""
SPARSE_MIN_LINES = 64
SPARSE_LINES = 16
"""Lines read in a sparse chunk besides its marked ones and its tail: one at each SPARSE_LINES-th of its bytes."""
SPARSE_MARKERS = (b"Traceback", b"rror:", b"Killed")
"""What a sparse chunk is searched for: the lines that say a run crashed (a scheduler's CANCELLED line says `error:`);
at most MAX_NEW_SHAPES of them are read. Each marker costs a scan of the chunk (about as much as reading its lines)."""
MUST_READ = (b"Traceback", b"rror", b"Killed", b"NCCL", b"Watchdog", b"nterrupt", b"SIGTERM", b"CANCELL", b"Running",
             b"Num ", b"Total ", b"eval_", b"train_runtime", b"ransformers", b"metrics", b"stopped")


def _scan_chunks(stream, name: str, out: LogObservations) -> None:
    """Like `_scan(iter_lines(stream))`, in constant memory, with the middle of a large input read by sampling.

    Works on bytes: shapes are found in the raw chunk at C speed and only the lines that are read get decoded
    (a UTF-8 character never spans a newline byte)."""
    ctx = ScanContext(file=name, out=out)
    pending, previous, seen = b"", None, 0
    one = [False]  # whether the block before was read as one shape (see `_chunk`)
    number = 0
    # A block cut inside a very long line (no line end within MAX_LINE * 4 bytes) leaves that line open: the next
    # block's first line is its continuation and keeps its number (pieces of a line are never counted as lines).
    unfinished = previous_unfinished = False
    # A block of complete lines is (head, body, stop): the lines of head + body[:stop], where head (the unfinished line
    # the chunk before left) holds no newline; the chunk itself is never copied.
    while True:
        chunk = stream.read(CHUNK)
        if chunk:
            cut = chunk.rfind(b"\n")  # `pending` never holds a newline: the last one is in this chunk, if any
            if cut < 0:
                data = pending + chunk
                if len(data) <= MAX_LINE * 4:
                    pending = data
                    continue
                block, pending = (b"", data, len(data)), b""  # no line end in sight: a piece of a very long line
                cut_inside = True
            else:
                block, pending = (pending, chunk, cut + 1), chunk[cut + 1:]
                cut_inside = False
        else:
            block, pending = (b"", pending, len(pending)), b""
            cut_inside = False
        if previous is not None:
            number = _chunk(previous, number - unfinished, ctx, full=seen < FULL_BYTES // 2, one=one)
            seen += len(previous[0]) + previous[2]
            unfinished = previous_unfinished
        previous, previous_unfinished = block, cut_inside
        if not chunk:
            if previous[2]:  # an empty last block (the input ended with a line end) holds no line
                number = _chunk(previous, number - unfinished, ctx, full=True)
            break
    out.lines_read += ctx.line_no
    progress.flush(ctx)  # a metric dict cut where the input ends
    ctx.finish()


def _chunk(block: tuple[bytes, bytes, int], number: int, ctx: ScanContext, full: bool, one: list[bool] | None = None) -> int:
    """Read one block of complete lines (see `_scan_chunks`); returns the number of the last line read.

    `one`, if given, holds whether the block before was read as one shape, and is set for this one: such a block is
    tried as one shape before its probe, since the probe says "one" whenever that succeeds and a line end is in it."""
    head, body, stop = block
    if one is not None:
        one[0], was_one = False, one[0]
        if was_one and not full and body.find(b"\n", 0, SPARSE_PROBE) >= 0:
            read = _one_shape(head, body, stop, number, ctx)
            if read is not None:
                one[0] = True
                return read
            return _after_probe(block, number, ctx, tried_one=True)
    return _after_probe(block, number, ctx, full=full, one=one)


def _after_probe(block: tuple[bytes, bytes, int], number: int, ctx: ScanContext, full: bool = False, tried_one: bool = False,
                 one: list[bool] | None = None) -> int:
    """`_chunk` without its hint: the block read whole, or as its probe says (`tried_one`: not as one shape, which failed)."""
    head, body, stop = block
    if full:
        data = _lines_of(head, body, stop)
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()  # the text after the last newline is not a line
        for raw in lines:
            number = _one(raw.decode("utf-8", "replace"), number, ctx)
        return number
    probe = _probe(head + body[:SPARSE_PROBE] if head else body[:SPARSE_PROBE])
    if probe == "one":  # one shape so far (loss dicts, jsonl rows, Megatron or verl metrics lines): maybe the whole chunk
        read = None if tried_one else _one_shape(head, body, stop, number, ctx)
        if read is not None:
            if one is not None:
                one[0] = True
            return read
        probe = _forms_or_lines(head + body[:SPARSE_PROBE] if head else body[:SPARSE_PROBE])
    if probe != "forms":  # sparse, or lines of many forms (long metrics lines): the split lines cost less than forms
        data = _lines_of(head, body, stop)
        return _sparse(data, number, ctx) if probe == "sparse" else _by_shape(data, number, ctx)
    # Each line with its digits turned into 0s (its form): as long as the line, so the forms give every line's offset
    # and carriage returns without splitting the raw bytes, and the form without its 0s is the line's shape.
    forms = body.translate(_ZEROS).split(b"\n")
    if stop < len(body) or forms[-1] == b"":
        forms.pop()  # the text after the last newline is not a line (nor is the unfinished one after `stop`)
    if head:
        forms[0] = head.translate(_ZEROS) + forms[0]
    count = len(forms)
    distinct = set(forms)
    if len(distinct) > MAX_FORMS:
        return _by_shape(_lines_of(head, body, stop), number, ctx)
    if len(distinct) <= FEW_SHAPES:  # the usual case: a few forms, each first seen near the chunk's start
        first_form = {form: forms.index(form) for form in distinct}  # form -> its first line
    else:
        first_form = dict(zip(reversed(forms), range(count - 1, -1, -1), strict=True))
    first: dict[bytes, int] = {}  # shape -> its first line
    # the shapes of all distinct forms in one C call (a form holds no newline): a replace per form costs more on long lines
    shapes = b"\n".join(first_form).translate(None, b"0").split(b"\n")
    for shape, index in zip(shapes, first_form.values(), strict=True):
        if index < first.get(shape, count):
            first[shape] = index
    if len(first) > FEW_SHAPES:
        return _by_shape(_lines_of(head, body, stop), number, ctx)
    # A line holding a shape new in this chunk is read: banners, crashes, evaluations, versions and launcher lines
    # are one of a kind; bar redraws and loss dicts repeat one shape with other numbers.
    picked = set(range(0, count, SAMPLE_EVERY)) | set(range(max(0, count - TAIL_LINES), count))
    picked.update(first.values())
    # A skipped line counts 1, plus one per carriage return inside it (tqdm redraws); a CRLF end is one line end.
    # With carriage returns about, each form's bytes (newline included) and extra lines are packed in one number,
    # so one sum over the skipped forms gives both.
    packed = {form: (len(form) + 1) << 32 | form.count(b"\r") - form.endswith(b"\r") for form in distinct} \
        if any(b"\r" in form for form in distinct) else None
    done = offset = 0  # lines[:done] are counted; the line `done` starts at `offset` of head + body
    shift = len(head)
    for index in sorted(picked):
        if index > done:
            skipped = forms[done:index]
            if packed is None:
                offset += sum(map(len, skipped)) + index - done
            else:
                both = sum(map(packed.__getitem__, skipped))
                offset += both >> 32
                number += both & 0xFFFFFFFF
            number += index - done
        end = offset + len(forms[index])
        raw = body[offset - shift:end - shift] if offset >= shift else head + body[:end - shift]  # only line 0 has the head
        number = _one(raw.decode("utf-8", "replace"), number, ctx)
        done, offset = index + 1, end + 1
    if done < count:
        number += count - done
        if packed is not None:
            number += sum(map(packed.__getitem__, forms[done:])) & 0xFFFFFFFF
    return number


def _lines_of(head: bytes, body: bytes, stop: int) -> bytes:
    """The block's lines, head + body[:stop], in one copy: a slice then a concatenation allocate two copies of a
    megabyte, and the second allocation costs several times what the copying does (about 2 ms a chunk, measured)."""
    if not head and stop == len(body):
        return body
    return b"".join((head, memoryview(body)[:stop]))


def _probe(probe: bytes) -> str:
    """How a sampled chunk is read, from the whole lines of its first SPARSE_PROBE bytes: "sparse" when three in four
    have a shape of their own (see SPARSE_PROBE), "one" when they all have one shape (the whole chunk may too: see
    `_one_shape`), "lines" when more than FEW_SHAPES forms (digits as 0s) show there already (verl's metrics lines:
    every number's width changes the form), else "forms"."""
    whole = probe[:probe.rfind(b"\n") + 1]
    shapes = whole.translate(None, _DIGITS).split(b"\n")  # the last is the empty text after the last newline
    distinct = len(set(shapes))
    if len(shapes) > SPARSE_MIN_LINES and distinct * 4 > len(shapes) * 3:  # as `_looks_sparse`
        return "sparse"
    if whole and distinct == 2:
        return "one"
    return _forms_or_lines(whole)


def _forms_or_lines(probe: bytes) -> str:
    whole = probe[:probe.rfind(b"\n") + 1]
    return "lines" if len(set(whole.translate(_ZEROS).split(b"\n"))) > FEW_SHAPES else "forms"


def _looks_sparse(probe: bytes) -> bool:
    """Three in four of the probe's whole lines have a shape of their own (see SPARSE_PROBE)."""
    shapes = probe[:probe.rfind(b"\n") + 1].translate(None, _DIGITS).split(b"\n")
    return len(shapes) > SPARSE_MIN_LINES and len(set(shapes)) * 4 > len(shapes) * 3


def _one_shape(head: bytes, body: bytes, stop: int, number: int, ctx: ScanContext) -> int | None:
    """A sampled block (see `_scan_chunks`) whose lines all have one shape (digits removed), read as `_chunk` reads it
    (its first line, every SAMPLE_EVERY-th and its last TAIL_LINES) without splitting it. None when the block holds
    another shape (or no line end). Its lines are checked a SEGMENT at a time (`_one_shape_segments`), which also numbers
    the line starting each segment, so a read line is found by stepping over a few line ends from the nearest one."""
    first_end = body.find(b"\n", 0, stop) + 1
    if first_end == 0:
        return None
    line_shape = (head + body[:first_end] if head else body[:first_end]).translate(None, _DIGITS)
    segments = _one_shape_segments(body, first_end, stop, line_shape)
    if segments is None:
        return None
    starts, firsts = segments
    count = firsts[-1]
    shape = line_shape[:-1]
    # each line holds the shape's carriage returns: one more line each, a CRLF end being one end (as `_one` reads it).
    # A shape ending in \r is both "0\r" (a CRLF end) and "\r0" (a redraw, one more line): its skipped lines are
    # counted from their bytes.
    per_line = 1 + shape.count(b"\r") - shape.endswith(b"\r")
    by_bytes = shape.endswith(b"\r")
    picked = sorted(set(range(0, count, SAMPLE_EVERY)) | set(range(max(0, count - TAIL_LINES), count)))
    number = _one((head + body[:first_end - 1]).decode("utf-8", "replace"), number, ctx)  # line 0, the only one with the head
    done, done_at = 1, first_end  # lines[:done] are counted; line `done` starts at body[done_at]
    for index in picked[1:]:
        start = _line_start(body, starts, firsts, index)
        number += _lines_between(body, done_at, start, True) if by_bytes else (index - done) * per_line
        end = body.find(b"\n", start)
        number = _one(body[start:end].decode("utf-8", "replace"), number, ctx)
        done, done_at = index + 1, end + 1
    return number + (count - done) * per_line  # the last line is always read: nothing is left, by bytes or not


SEGMENT = 1 << 16
"""A block of one shape is checked this many bytes at a time (cut at line starts): each segment's shapes are compared
with the line shape repeated (memcmp speed; counting the occurrences compares byte by byte), and the segments' line
counts number the line that starts each one, so no line end of the block is counted."""


def _one_shape_segments(body: bytes, first_end: int, stop: int, line_shape: bytes) -> tuple[list[int], list[int]] | None:
    """The offsets in `body` of the line starting each segment from `first_end` (line 1) to `stop`, and those lines'
    numbers in the block (the last offset is `stop`, its number the block's line count); None when a line of the
    segments has another shape than `line_shape`. body[stop - 1] is a line end."""
    size = len(line_shape)
    starts, firsts = [first_end], [1]
    at, lines = first_end, 1
    while at < stop:
        end = body.rfind(b"\n", at, min(at + SEGMENT, stop)) + 1  # the last line end within the segment's bytes
        if end == 0:  # a line longer than a segment: up to its end
            end = body.find(b"\n", at, stop) + 1
        shapes = body[at:end].translate(None, _DIGITS)
        more, left = divmod(len(shapes), size)
        if left or shapes != line_shape * more:  # each line's shape ends with its one line end: the tiles are the lines
            return None
        at, lines = end, lines + more
        starts.append(at)
        firsts.append(lines)
    return starts, firsts


def _line_start(body: bytes, starts: list[int], firsts: list[int], index: int) -> int:
    """Where line `index` (1 or more) of a block of one shape begins: from the nearest segment start (see
    `_one_shape_segments`), stepping over line ends forward (`find`) or back (`rfind`), each at C speed."""
    from bisect import bisect_right  # here only: a short log never samples a chunk

    segment = bisect_right(firsts, index) - 1
    ahead, behind = index - firsts[segment], firsts[segment + 1] - index  # index < firsts[-1]: a segment follows
    if behind < ahead:
        at = starts[segment + 1]
        for _ in range(behind):
            at = body.rfind(b"\n", 0, at - 1) + 1
        return at
    at = starts[segment]
    for _ in range(ahead):
        at = body.find(b"\n", at) + 1
    return at


def _lines_between(data: bytes, start: int, end: int, has_cr: bool) -> int:
    """How many lines `_one` counts in data[start:end] (start is a line's start, end a line's start or the end of the
    data): one per line end, plus one per carriage return that is not the first half of a CRLF."""
    count = data.count(b"\n", start, end)
    cr = data.count(b"\r", start, end) if has_cr else 0
    if cr:
        count += cr - data.count(b"\r\n", start, end)
    if end > start and data[end - 1] != 10:  # an unfinished last line counts once (its CR end, if any, is its end)
        count += 1 - (data[end - 1] == 13)
    return count


_LOWER_CASE = frozenset(b"abcdefghijklmnopqrstuvwxyz")
_ANCHORS = 1024
"""Places of a marker's anchor byte checked one by one before `_find_marker` falls back to `bytes.find`."""


def _find_marker(data: bytes, marker: bytes, start: int) -> int:
    """`data.find(marker, start)`, found from the marker's first byte that is not a lower-case letter (`T`, `:`, `K`):
    one byte is found at memchr speed (50 us a megabyte against 500-700 us for the marker in English text), so where
    that byte is rare each of its places is checked; past _ANCHORS places the plain search goes on from there."""
    anchor = next((i for i, byte in enumerate(marker) if byte not in _LOWER_CASE), 0)
    byte = marker[anchor:anchor + 1]
    at = data.find(byte, start + anchor)
    for _ in range(_ANCHORS):
        if at < 0:
            return -1
        if data.startswith(marker, at - anchor):
            return at - anchor
        at = data.find(byte, at + 1)
    return data.find(marker, max(start, at - anchor)) if at >= 0 else -1


def _sparse(data: bytes, number: int, ctx: ScanContext) -> int:
    """A sampled chunk of lines that are nearly all different (see SPARSE_PROBE): its lines are never split or
    translated. Read are the lines holding a SPARSE_MARKERS marker, one at each SPARSE_LINES-th of its bytes and the
    last TAIL_LINES; the others are counted in place."""
    starts = {0}
    for marker in SPARSE_MARKERS:
        at = _find_marker(data, marker, 0)
        while at >= 0 and len(starts) < MAX_NEW_SHAPES:
            starts.add(data.rfind(b"\n", 0, at) + 1)
            end = data.find(b"\n", at)
            at = _find_marker(data, marker, end) if end >= 0 else -1
    for offset in range(0, len(data), len(data) // SPARSE_LINES + 1):
        starts.add(data.rfind(b"\n", 0, offset) + 1)
    end = len(data) - (data[-1:] == b"\n")
    for _ in range(TAIL_LINES):
        if end <= 0:
            break
        start = data.rfind(b"\n", 0, end) + 1
        starts.add(start)
        end = start - 1
    has_cr = b"\r" in data  # one scan, so that the gaps between read lines are counted in one more
    done = 0  # data[:done] is counted
    for start in sorted(starts):
        if start >= len(data) or start < done:
            continue
        number += _lines_between(data, done, start, has_cr)
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        number = _one(data[start:end].decode("utf-8", "replace"), number, ctx)
        done = end + 1
    if done < len(data):
        number += _lines_between(data, done, len(data), has_cr)
    return number


def _must_read(data: bytes, lines: list[bytes]) -> set[int]:
    """The lines of a chunk holding a MUST_READ marker: each marker found with `bytes.find` over the chunk (a search
    per line, or one alternation regex, costs ten times more), its offset turned into a line by bisection."""
    from bisect import bisect_right  # here only: a short log never samples a chunk

    starts = None
    found: set[int] = set()
    for marker in MUST_READ:
        at = data.find(marker)
        while at >= 0 and len(found) < MAX_NEW_SHAPES * 8:
            if starts is None:
                starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
            index = bisect_right(starts, at) - 1
            found.add(index)
            at = data.find(marker, starts[index + 1]) if index + 1 < len(starts) else -1
    return found


def _by_shape(data: bytes, number: int, ctx: ScanContext) -> int:
    """A sampled chunk of many shapes (random bytes, hashes), line by line: what `_chunk` does, on a list of lines."""
    if _looks_sparse(data[:SPARSE_PROBE]):
        return _sparse(data, number, ctx)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the text after the last newline is not a line
    picked = set(range(0, len(lines), SAMPLE_EVERY)) | set(range(max(0, len(lines) - TAIL_LINES), len(lines)))
    # A line whose shape (digits removed) is new in this chunk is read: banners, crashes, evaluations, versions and
    # launcher lines are one of a kind; bar redraws and loss dicts repeat one shape with other numbers.
    shapes = data.translate(None, b"0123456789").split(b"\n")
    body = shapes[:len(lines)] if len(shapes) > len(lines) else shapes  # the text after the last newline is not a line
    distinct = set(body)
    if len(distinct) <= FEW_SHAPES:  # the usual case: a few shapes, each first seen near the chunk's start
        first = {shape: body.index(shape) for shape in distinct}  # shape -> its first line
    else:
        first = dict(zip(reversed(shapes), range(len(shapes) - 1, -1, -1), strict=True))
    new = [i for i in first.values() if i < len(lines)]
    if len(new) > MAX_NEW_SHAPES:  # random bytes, hashes: most lines are new; bound the work, keep what matters
        kept = _must_read(data, lines) & set(new)
        keep = sorted(kept)
        rest = [i for i in new if i not in kept]
        new = keep[:: len(keep) // MAX_NEW_SHAPES + 1] + rest[:: len(rest) // MAX_NEW_SHAPES + 1]
    picked.update(new)
    ends = None  # ends[i]: bytes of lines[:i] without their newlines (built at C speed, only when a line is skipped)
    # a line holds \r (or ends with it: CRLF) exactly when its shape does, so the few distinct shapes tell whether the
    # skipped lines need their carriage returns counted (a search of the whole chunk for \r\n costs more than all this)
    has_cr = any(b"\r" in shape for shape in first)
    crlf = has_cr and any(shape.endswith(b"\r") for shape in first)
    done = 0  # lines[:done] are counted
    for index in sorted(picked):
        if index > done:  # skipped lines: each \n line, plus a line per lone \r inside them
            number += index - done
            if has_cr:
                if ends is None:
                    ends = list(accumulate(map(len, lines), initial=0))
                start, end = ends[done] + done, ends[index] + index  # counted in place: no copy of the skipped bytes
                number += data.count(b"\r", start, end) - (data.count(b"\r\n", start, end) if crlf else 0)
        number = _one(lines[index].decode("utf-8", "replace"), number, ctx)
        done = index + 1
    if done < len(lines):
        number += len(lines) - done
        if has_cr:
            if ends is None:
                ends = list(accumulate(map(len, lines), initial=0))
            start = ends[done] + done
            number += data.count(b"\r", start) - (data.count(b"\r\n", start) if crlf else 0)
    return number


def _one(raw: str, number: int, ctx: ScanContext) -> int:
    if raw.endswith("\r"):  # CRLF: one line end, not two
        raw = raw[:-1]
    if "\r" in raw:
        for part in raw.split("\r"):
            number += 1
            _read_line(part, number, ctx)
        return number
    if len(raw) > MAX_LINE * 4:  # a very long line is read in pieces, all under its one line number
        number += 1
        for start in range(0, len(raw), MAX_LINE * 4):
            _read_line(raw[start:start + MAX_LINE * 4], number, ctx)
        return number
    number += 1
    _read_line(raw, number, ctx)
    return number

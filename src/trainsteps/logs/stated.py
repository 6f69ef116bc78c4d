"""What the words around a log state: the GPUs a user says they trained on, and a failure they name.

People paste a whole issue, not only the log: a title (`CUDA OUT OF MEMORY after several samples training`), a
sentence (`This is my setup on 4 A100 80GB`, `16 A100 GPU (2node * 8 cards)`, `gpu数量为8`, `单卡`), an environment
report (`accelerator(s): NVIDIA L4 x 4`), a SLURM header (`#SBATCH --nodes=1`, `#SBATCH --gres=gpu:2`) or the launch
command itself (`CUDA_VISIBLE_DEVICES=6 llamafactory-cli train ...`, `python finetune.py`). These are the weakest
sources explain uses: a world size computed from the log's own numbers, or printed by a launcher, always wins, and a
stated count that disagrees with one is reported as such.

Only counts that name a GPU (a model such as A100, or the words GPU / card / 卡) are read: `Mixtral 8x7B` is not a
GPU count, and neither is a count in a negated, hedged or conditional sentence (`I do not have 8 GPUs`, `maybe 2
GPUs are enough`, `it would need 4 A100s`). A failure is read from words only where the log shows no end of its own (a traceback, `Killed`), and not
when the words avoid it (`to avoid OOM`, `防止 OOM`).
"""

from __future__ import annotations

import re

from trainsteps.logs.context import ScanContext
from trainsteps.patterns import lazy

# A GPU model: `A100`, `h200` (lower case in prose), `A4500`, `RTX 4090`, `RTX PRO 6000`, `2080Ti` (a Ti suffix names a
# GeForce card), `4090 GPU`, `MI300X`, `910B`
_MODEL = (r"(?:(?:NVIDIA|Nvidia|nvidia|Tesla|GeForce|RTX|rtx)[\s_-]*)*"
          r"(?:[AHBL]\d{2,3}[A-Z]{0,3}|[ahb]\d{3}(?![\d.])|V100|T4|L4|A10G?|A\d000|A\d{2}00|(?:RTX[\s_-]?)?PRO[\s_-]?\d{4}|RTX[\s_-]?\d{4}(?:\s?Ti)?"
          r"|\d{4}\s?Tis?\b|\d{4}(?:\s?Ti)?(?=\s*(?:GPU|gpu|显卡|卡))|MI\d{3}X?|910B?)")
_SIZE = r"(?:\d+\s*G[Bb]?\s+)?"
_COUNT_WORDS = {"one": 1, "single": 1, "a single": 1, "two": 2, "four": 4, "eight": 8, "sixteen": 16}
# "4 × 8 H100 nodes", "2 x 8 A100": nodes times GPUs per node
_GRID = lazy(rf"\b(\d{{1,3}})\s*[x×*]\s*(\d{{1,2}})\s*(?:x\s*)?{_MODEL}")
# "2 Nodes with 8 GPUs each", "2node * 8 cards", "2 nodes x 8 GPUs"
# "for a total of 8 GPUs", "16 GPUs in total": a total said outright wins over the parts around it
_IN_TOTAL = lazy(r"total\s+of\s+(\d{1,5})\s+(?:" + _MODEL + r"\s*)?(?:GPUs?|gpus?|cards?)|\b(\d{1,5})\s+(?:GPUs?|gpus?|cards?)\s+in\s+total",
                       re.IGNORECASE)
# "2 nodes with 8 A100 each", "using 2 nodes, each node has 8 A100s": a GPU model alone names GPUs too
_GPU_NOUN = r"(?:(?:" + _MODEL + r")s?(?:\s*(?:GPUs?|gpus?|cards?))?(?![\w])|GPUs?|gpus?|cards?)"
_NODES_OF = lazy(r"\b(\d{1,3})\s*(?:nodes?|hosts?|machines?|servers?)\b[^.\n;]{0,20}?(?:\bwith|\*|\bx|×|\bof|\bhas|\bhave)"
                       r"[\s`'\"*]*(\d{1,2})\s*" + _GPU_NOUN, re.IGNORECASE)
# Chinese: 两台机器，每台8张A100 / 两台机器每台8张卡 / 2个节点,每个节点8卡
_ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_ZH_NODES = lazy(r"([0-9]{1,3}|[一二两兩三四五六七八九十])\s*(?:台|个|個|组|組)?\s*(?:机器|機器|服务器|服務器|节点|節點|主机|主機|nodes?)"
                       r"\s*[,，、]?\s*(?:每|各)\s*(?:台|个|個)?\s*(?:机器|機器|服务器|服務器|节点|節點|主机|主機)?\s*(?:上|都|各)?\s*(?:有|装|裝|用)?\s*"
                       r"([0-9]{1,2})\s*(?:张|張|块|塊)?\s*(?:" + _MODEL + r"|卡|显卡|顯卡|GPU|gpu)")
# "16 x H100", "8x A100", "8XA100", "8*A100 80G", "NVIDIA L4 x 4" (the env report's accelerator line), "2080Ti*8"
_TIMES_MODEL = lazy(rf"\b(\d{{1,4}})\s*[xX×*]\s*{_MODEL}")
_MODEL_TIMES = lazy(rf"{_MODEL}\s*[x×*]\s*(\d{{1,4}})\b")
# "x2 2080Tis", "x4 A100": the count written after the times sign
_X_COUNT = lazy(rf"(?<![\w.])[xX×]\s?(\d{{1,2}})\s+{_MODEL}")
# "4 A100 80GB", "16 A100 GPU", "8 80G GPU", "has 4 GPUs", "on 1 GPUs", "8 cards"
_COUNT_OF = lazy(rf"\b(\d{{1,4}})\s+{_SIZE}(?:{_MODEL}\s*{_SIZE})?(?:GPU[sS]?|gpus?|cards?)\b|\b(\d{{1,4}})\s+{_MODEL}\b")
_WORD_OF = lazy(r"\b(one|single|a single|two|four|eight|sixteen)\s+(?:\d+\s*G[Bb]?\s+)?(?:" + _MODEL + r"\s*)?(?:GPU|gpu|card)\b",
                      re.IGNORECASE)
# "(7 for training and 1 for vllm)": the processes that train, when some GPUs serve generation
_FOR_TRAINING = lazy(r"\(\s*(\d{1,4})\s+(?:GPUs?\s+)?(?:for|used for)\s+training", re.IGNORECASE)
# Chinese: gpu数量为8, 8卡, 8张A100, 4块 GPU, 单卡, 一张/一張 … 显卡/顯卡
_ZH_COUNT = lazy(r"(?:GPU|gpu|显卡|卡)\s*(?:数量|数|個數|个数)\s*(?:为|是|=|:|：)?\s*([0-9]{1,4})|([0-9]{1,4})\s*(?:张|張|块|塊)?\s*(?:"
                       + _MODEL + r"\s*)?(?:卡|显卡|顯卡)")
_ZH_ONE = lazy(r"单卡|單卡|(?:一|1)\s*(?:张|張|块|塊)[^，。,.\n]{0,12}?(?:显卡|顯卡|卡)")
# A hardware list naming one GPU model with no count: `硬件基础：因特尔XEON-6530 + RTX-4090 + 60G内存`, `Hardware: A100`
_HARDWARE = lazy(r"(?:硬件|硬體|[Hh]ardware|GPU|显卡|顯卡)\s*[^:：]{0,6}[:：]")
_ONE_MODEL = lazy(rf"(?<![\w×*x])\s*{_MODEL}(?!\s*[x×*]|s\b|\w)")
# SLURM: `#SBATCH --nodes=2`, `#SBATCH --gres=gpu:8` / `--gpus-per-node=8`
_SBATCH_NODES = lazy(r"#SBATCH\s+(?:--nodes[= ]|-N\s*)(\d+)")
_SBATCH_GPUS = lazy(r"#SBATCH\s+(?:--gres[= ]gpu(?::[\w-]+)?:|--gpus-per-node[= ](?:[\w-]+:)?)(\d+)")

# A failure named in words (a title, a sentence), not printed by the program; an identifier such as Megatron's
# `max_tokens_to_oom` argument names none
_FAILURE = lazy(r"out of memory|(?<![A-Za-z_])OOM(?![A-Za-z_])|爆显存|显存不足|顯存不足|(?<![A-Za-z])oom(?:错误|報錯|报错|了)", re.IGNORECASE)
# a scheduler that stopped the job, said in words (the scheduler's own `*** ... CANCELLED ... DUE TO TIME LIMIT ***`
# line is the log's, read by progress.py)
_INTERRUPTION = lazy(r"time ?limit|wall ?time|preempt|(?:was|got|been|job) cancell?ed|cancell?ed by (?:slurm|the scheduler)"
                           r"|时间限制|超时被(?:杀|取消|终止)|被抢占|作业被取消|任务被取消", re.IGNORECASE)
_TITLE_ERROR = lazy(r"\b[A-Z]\w*(?:Error|Exception)\b(?::|\s+raised)|\bException raised\b|\b(?:has |have )?crash(?:ed|es)\b|\bdied\b",
                          re.IGNORECASE)
_AVOIDED = lazy(r"avoid|prevent|without|\bno\b|\bnot\b|reduc|fix(?:ed)?\b|solv|防止|避免|不会|不再|没有|解决", re.IGNORECASE)

NEEDLES = ("GPU", "gpu", "卡", "SBATCH", "memory", "MEMORY", "Memory", "OOM", "oom", "显存", "顯存", "A100", "H100", "H800", "A800", "H200", "B200",
           "h100", "h200", "h800", "a100", "0Ti", "0 Ti", "RTX", "A20", "A40", "A45", "A50", "A55", "crash", "Crash", "died",
           "L4", "A10", "090", "V100", "A6000", "L40", "MI3", "910", "limit", "LIMIT", "wall", "preempt", "cancel", "CANCEL",
           "时间限制", "超时被", "抢占", "被取消")


# Nearly every line holds none of these, so each would be searched for in full: one alternation is about twice as
# fast here (on the corpus's lines and on random bytes), unlike the reader's needles, which most lines hold early.
def _MENTIONS(line: str):  # upper case: it stands for the compiled search that replaces it on the first call
    """The search for any of NEEDLES, compiled when a line first reaches it (0.8 ms: a short log may never need it);
    it then takes this function's place, so later calls go straight to the compiled pattern."""
    global _MENTIONS
    _MENTIONS = re.compile("|".join(map(re.escape, NEEDLES))).search
    return _MENTIONS(line)


def _lowered(needles: tuple[str, ...]) -> tuple[str, ...]:
    """The needles in lower case, without those that hold a shorter one (`a100` holds `a10`)."""
    kept: list[str] = []
    for needle in sorted({n.lower() for n in needles}, key=lambda n: (len(n), n)):
        if not any(shorter in needle for shorter in kept):
            kept.append(needle)
    return tuple(kept)


def _may_hold_any(low: str, lowered: tuple[str, ...]) -> bool:
    """False only when the line lowered as `low` holds none of the needles `lowered` was made from: lowering maps each
    character on its own (only a capital sigma looks at its neighbours), so a line holding a needle holds its lower-case
    form once lowered, and a few substring tests of the lowered line turn away most lines before the search (a search
    of one alternation of many needles costs about 50 ns a character on a line that holds none)."""
    for needle in lowered:
        if needle in low:
            return True
    return False


_DIGIT = lazy(r"\d").search


def _has_digit(line: str) -> bool:
    """`_DIGIT(line) is not None`, at a sixth of its cost on a long line: ten substring tests, and the search (which
    also knows full-width and other Unicode digits, read by the patterns' `\\d`) only for a line that is not ASCII."""
    for digit in "0123456789":
        if digit in line:
            return True
    return not line.isascii() and _DIGIT(line) is not None


def _metrics(line: str) -> bool:
    """A program's metrics line (Megatron's `a: 1 | b: 2 | ...`, verl's `a:1 - b:2 - ...`), not a person's words:
    no sentence states a GPU count with six such separators (a table row or a quoted env report has a few)."""
    return line.count(" | ") >= 6 or line.count(" - ") >= 6


def scan(line: str, ctx: ScanContext) -> bool:
    """Counts and failures stated in words; never claims the line (other parsers still read it)."""
    if line.startswith("# ") and "stated_failure" not in ctx.out.stated:
        # a post's title quoting the error it hit (`# 【bug】Exception raised from c10_cuda_check_implementation`,
        # `# IndexError: index 1 is out of bounds`): words about the run, not a line the program printed
        match = _TITLE_ERROR.search(line)
        if match and not _AVOIDED.search(line):
            ctx.out.state("stated_failure", ctx.reading(match.group(0)), ctx.file)
    low = line.lower()
    if "stated_failure" not in ctx.out.stated and _may_hold_any(low, _SAID_LOWER) and _SAID_MENTIONS(line) is not None:
        _said_failure(line, ctx)
    _said_step_of(line, ctx)
    # a metrics line first: two counts cost less than the search of a long line for every needle; then a line none of
    # the readers below can use (no SBATCH, no count's digit or words, no failure or interruption words): most of a
    # forum post, which names the GPU and its memory without a count
    if _metrics(line) or not _may_be_read(line, low) or not _may_hold_any(low, _MENTIONS_LOWER) or _MENTIONS(line) is None:
        return False
    if "SBATCH" in line:
        _slurm(line, ctx)
        return False
    stated = ctx.out.stated
    if "stated_gpus_also" not in stated:
        count = _plain_count(line)
        if count is not None:
            _stated_count(line, count, ctx)
    if "stated_failure" not in stated and "Error" not in line and "Exception" not in line \
            and _may_hold(low, _FAILURE_WORDS):  # not the program's own
        match = _FAILURE.search(line)
        if match and not _AVOIDED.search(line):
            ctx.out.state("stated_failure", ctx.reading(match.group(0)), ctx.file)
            _said_step_of(line, ctx)
    if "stated_interruption" not in stated and "***" not in line and "slurmstepd" not in line and "--" not in line \
            and _may_hold(low, _INTERRUPTION_WORDS):
        match = _INTERRUPTION.search(line)  # `--time-limit` / `#SBATCH --time`: a setting, not what happened
        if match and not _AVOIDED.search(line):
            ctx.out.state("stated_interruption", ctx.reading(match.group(0)), ctx.file)
    return False


def _may_be_read(line: str, low: str) -> bool:
    """False only when every reader of `scan` after the needle search would pass the line by: each needs one of these
    (`_slurm` SBATCH, `_plain_count` what `_may_state_count` tests, the failure and interruption searches their words),
    and they cost a tenth of the needle search on a long line that holds none."""
    return ("SBATCH" in line or _may_hold(low, _FAILURE_WORDS) or _may_hold(low, _INTERRUPTION_WORDS)
            or _may_state_count(line, low))


def _stated_count(line: str, count: int, ctx: ScanContext) -> None:
    stated = ctx.out.stated
    if "stated_gpus" not in stated:  # the first statement: the post's own, before quoted replies
        ctx.out.state("stated_gpus", _quoted(ctx, count), ctx.file)
    elif count != stated["stated_gpus"].value:  # a total and a nodes x per-node sentence that disagree
        ctx.out.state("stated_gpus_also", _quoted(ctx, count), ctx.file)
    split = nodes_and_per_node(line) if "stated_gpus_per_node" not in stated else None
    if split is not None:
        ctx.out.state("stated_gpus_per_node", _quoted(ctx, split[1]), ctx.file)


def _quoted(ctx: ScanContext, value: int):
    """A reading quoting the line as the user wrote it (full-width punctuation kept, not its ASCII reading)."""
    reading = ctx.reading(value)
    if ctx.raw_line is not None:
        reading.text = ctx.raw_line[:200].strip()
    return reading


# A count in a hedged or conditional sentence is not the run's (`maybe 2 GPUs are enough`, `it would need 4 A100s`,
# `should I use 8 cards?`, `如果用8卡`), nor one negated right before it (`I do not have 8 GPUs`; `4 GPUs with no
# accumulation` still states 4)
_HEDGE = lazy(r"\b(?:would|could|might|maybe|perhaps|seems?|probably|whether|if|need(?:s|ed)?|enough)\b|\?\s*$"
                    r"|如果|是否|可能|需要", re.IGNORECASE)
_NEGATED = lazy(r"(?:\b(?:not|no|never|without)|n't|没有|沒有|不是)\W+(?:\w+\W+){0,2}$", re.IGNORECASE)
_SENTENCE_END = lazy(r"(?<=[。；！？])|(?<=[.!?;])\s+")


def _plain_count(line: str) -> int | None:
    """The count of the first sentence of the line that states one plainly (not negated, hedged or supposed)."""
    if not _may_state_count(line):
        return None
    for sentence in _SENTENCE_END.split(line) if len(line) > 40 else (line,):
        count = stated_gpus(sentence)
        if count is not None and not hedged(sentence, count):
            return count
    return None


def hedged(sentence: str, count: int) -> bool:
    """The sentence doubts or supposes what it says, or negates the count right before it."""
    if _HEDGE.search(sentence):
        return True
    at = sentence.find(str(count))
    return at > 0 and _NEGATED.search(sentence[:at]) is not None


# Words (lower case) without which a pattern cannot match: a substring test is far cheaper than a search of a long
# line, and a pattern is searched only when its words are there.
_FAILURE_WORDS = ("out of memory", "oom", "爆显存", "显存不足", "顯存不足")
_INTERRUPTION_WORDS = ("limit", "walltime", "wall time", "preempt", "cancel", "时间限制", "超时被", "被抢占", "被取消")
_COUNT_WORD_WORDS = ("one", "single", "two", "four", "eight", "sixteen")
_NODE_WORDS = ("node", "host", "machine", "server")
_ZH_NODE_WORDS = ("机器", "機器", "服务器", "服務器", "节点", "節點", "主机", "主機", "node")
_ZH_COUNT_WORDS = ("卡", "数", "數")
_TIMES = ("x", "×", "*")


def _may_hold(low: str, words: tuple[str, ...]) -> bool:
    for word in words:
        if word in low:
            return True
    return False


def _may_state_count(line: str, low: str | None = None) -> bool:
    """What `stated_gpus` needs to find anything: a digit, or the words of its forms without one (`one GPU`, `单卡`,
    `Hardware: A100`). Most prose lines have neither, and are not split into sentences. `low`: the line lowered, where
    the caller has it."""
    if _has_digit(line) or "卡" in line or ":" in line or "：" in line:
        return True
    low = line.lower() if low is None else low
    return ("gpu" in low or "card" in low) and _may_hold(low, _COUNT_WORD_WORDS)


def stated_gpus(line: str) -> int | None:
    """The GPUs a sentence says a run used, or None (see the module docstring for the forms read)."""
    low = line.lower()
    digit = _has_digit(line)
    if digit:
        if "training" in low:
            match = _FOR_TRAINING.search(line)
            if match:
                return int(match.group(1))
        if "total" in low:
            match = _IN_TOTAL.search(line)
            if match:
                return int(next(g for g in match.groups() if g))
    split = nodes_and_per_node(line, low, digit)
    if split is not None:
        return split[0] * split[1]
    if digit:
        for pattern in (_TIMES_MODEL, _MODEL_TIMES, _X_COUNT, _COUNT_OF) if _may_hold(low, _TIMES) else (_COUNT_OF,):
            match = pattern.search(line)
            if match:
                return int(next(g for g in match.groups() if g))
    if ("gpu" in low or "card" in low) and _may_hold(low, _COUNT_WORD_WORDS):
        match = _WORD_OF.search(line)
        if match:
            return _COUNT_WORDS[match.group(1).lower()]
    if "卡" in line and _ZH_ONE.search(line):
        return 1
    head = _HARDWARE.search(line) if ":" in line or "：" in line else None
    if head and "number" not in line and "type" not in line and len(_ONE_MODEL.findall(line[head.end():])) == 1 \
            and not re.search(r"[0-9]\s*[x×*]|[x×*]\s*[0-9]", line):
        return 1
    if digit and _may_hold(line, _ZH_COUNT_WORDS):
        match = _ZH_COUNT.search(line)
        if match:
            return int(next(g for g in match.groups() if g))
    return None


def nodes_and_per_node(line: str, low: str | None = None, digit: bool | None = None) -> tuple[int, int] | None:
    """`2 nodes with 8 A100 each`, `2 x 8 A100`, `两台机器每台8张卡`: (nodes, GPUs per node), or None."""
    low = line.lower() if low is None else low
    if not (_has_digit(line) if digit is None else digit):
        return None  # every form has the per-node count in digits
    patterns = (_GRID,) if _may_hold(low, _TIMES) else ()
    if _may_hold(low, _NODE_WORDS):
        patterns += (_NODES_OF,)
    if _may_hold(low, _ZH_NODE_WORDS):
        patterns += (_ZH_NODES,)
    for pattern in patterns:
        match = pattern.search(line)
        if match:
            nodes = match.group(1)
            return (int(nodes) if nodes.isdigit() else _ZH_DIGITS[nodes]), int(match.group(2))
    return None


def _slurm(line: str, ctx: ScanContext) -> None:
    match = _SBATCH_NODES.search(line)
    if match:
        ctx.slurm_nodes = int(match.group(1))
    match = _SBATCH_GPUS.search(line)
    if match and "stated_gpus" not in ctx.out.stated:
        ctx.out.state("stated_gpus", ctx.reading(int(match.group(1)) * (ctx.slurm_nodes or 1)), ctx.file)


# A failure the poster's words state while the pasted text shows none (`训练到一部分会报错断掉`, `训练到一段出现Killed`,
# `# GRPO Train Error`, `but it suddenly terminate`): read from a title or a sentence, never from a line the program
# printed, and only where the words state it. A negation right before the word (`with no error being found`,
# `无任何报错信息`), a hedge or a supposition in its clause (`if it crashes`, `to avoid errors`, `fixed the error`) and a
# yes-or-no question (`does it crash?`, `会报错吗`) state none; a why-question presupposes it (`why does it crash?`).
# `fails to converge` is about the loss, not an end. OOM words are read above (_FAILURE), as before.
SAID_NEEDLES = ("报错", "報錯", "出错", "出錯", "崩溃", "崩潰", "被杀", "被殺", "kill", "Kill", "KILL", "fail", "Fail", "FAIL",
                "rror", "RROR", "rash", "RASH", "terminat", "Terminat", "died", "Died")


_SAID_LOWER = _lowered(SAID_NEEDLES)
_MENTIONS_LOWER = _lowered(NEEDLES)


def _SAID_MENTIONS(line: str):  # upper case: it stands for the compiled search that replaces it on the first call
    """The search for any of SAID_NEEDLES, compiled when a line first reaches it, as _MENTIONS."""
    global _SAID_MENTIONS
    _SAID_MENTIONS = re.compile("|".join(map(re.escape, SAID_NEEDLES))).search
    return _SAID_MENTIONS(line)


_SAID = lazy(r"报错|報錯|出错|出錯|崩溃|崩潰|被\s*(?:kill(?:ed)?|杀|殺)|(?<![A-Za-z])killed\b|\bkill(?:s|ed)?\s+itself\b|\bgets?\s+killed\b"
             r"|\bcrash(?:ed|es|ing)?\b|\berror(?:s|ed)?\b|\bfail(?:s|ed|ing|ure)?\b(?!\s+to\b)|\bdied\b"
             r"|\bterminat\w*\s+(?:unexpectedly|suddenly|abruptly)|\b(?:unexpectedly|suddenly|abruptly)\s+(?:\w+\s+)?terminat\w*",
             re.IGNORECASE)
# the clause a word stands in ends at these (its terminator tells a question)
_CLAUSE_END = "，,;；。!！?？\n"
_SAID_NEGATED = lazy(r"(?:\b(?:no|not|never|without|nothing)\b|n't)[^,，;；。.!?？！]{0,12}$|(?:无|無|没有|沒有|没|沒|不会|不會|不再|未)[^,，;；。!?？！]{0,4}$",
                     re.IGNORECASE)
_SAID_HEDGED = lazy(r"\b(?:if|whether|might|may|maybe|could|would|avoid\w*|prevent\w*|in case|lest|fix\w*|solv\w*|resolv\w*|handl\w*|"
                    r"ignor\w*|catch\w*|expect\w*)\b|如果|若是|是否|防止|避免|可能|会不会|會不會|以免|解决|解決|修复|修復", re.IGNORECASE)
_WH_QUESTION = lazy(r"\b(?:why|what|how|where|when)\b|为什么|為什麼|为何|為何|怎么|怎麼|什么原因|原因|如何|咋", re.IGNORECASE)
# a line the program printed, not a sentence: a log prefix, a level, a timestamp, an exception's name, a bar, a setting
# (`key: value`, or aligned as torchrun's failure report prints it: `  traceback : To enable traceback see: ...`, and
# that report's own heading `Root Cause (first observed failure):`)
_PROGRAM_LINE = lazy(r"^\s*[\[({/|]|^\s*(?:File |Traceback|\w+\s*:\s)|\b(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\b|\w(?:Error|Exception)\b"
                     r"|\d{2}:\d{2}:\d{2}|%\||\]:|=\S|\s\|\s|^\s*Root Cause \(first observed failure\):")
_CJK = lazy(r"[\u4e00-\u9fff]")


def _said_failure(line: str, ctx: ScanContext) -> None:
    title = line.startswith("# ")
    text = line[2:] if title else line.lstrip(" >*-")
    if not title and _PROGRAM_LINE.search(text):
        return
    if _may_hold(text.lower(), _INTERRUPTION_WORDS) and _INTERRUPTION.search(text):
        return  # killed by a time limit, a preemption, a cancel: a stop from outside (stated_interruption), not a failure
    cjk = _CJK.search(text) is not None
    for match in _SAID.finditer(text):
        word = match.group(0)
        if not (title or cjk or word.islower() or not word.isascii()):
            continue  # `Error`, `Killed`, `CRASH` at the start of an English line: the program's own words
        if said_plainly(text, match.start(), match.end()):
            reading = ctx.reading(word)
            raw = ctx.raw_line if ctx.raw_line is not None else line
            raw = raw[2:] if title else raw.lstrip(" >*-")  # full-width `，` kept in the quote, as written
            reading.text = said_where(raw if len(raw) == len(text) else text, match.start(), match.end())
            ctx.out.state("stated_failure", reading, ctx.file)
            return


def _clause(text: str, start: int, end: int) -> tuple[int, int]:
    """(begin, stop) of the clause holding text[start:end]; stop is its terminator's index (or the text's end)."""
    begin = max(text.rfind(mark, 0, start) for mark in _CLAUSE_END) + 1
    stop = min((at for at in (text.find(mark, end) for mark in _CLAUSE_END) if at >= 0), default=len(text))
    return begin, stop


def said_where(text: str, start: int, end: int) -> str:
    """The words that state the end, as the post wrote them: the clause holding the word, with the clause before it
    when it is short (`在训练中途，会报错，`), so the quote says where the post puts the failure."""
    begin, stop = _clause(text, start, end)
    if stop - begin < 24 and begin > 0:
        begin = _clause(text, begin - 1, begin - 1)[0]
    return text[begin:stop + 1].strip().rstrip(",，;；")[:200]


def said_plainly(text: str, start: int, end: int) -> bool:
    """The word at text[start:end] is stated in its clause: not negated right before it, not hedged or supposed, not
    asked in a yes-or-no question."""
    begin, stop = _clause(text, start, end)
    before = text[begin:start]
    if _SAID_NEGATED.search(before) or _SAID_HEDGED.search(before):
        return False
    clause = text[begin:stop + 1]
    asked = clause.rstrip().endswith(("?", "？")) or clause.rstrip(" ?？").endswith(("吗", "嗎"))
    return not asked or _WH_QUESTION.search(clause) is not None


# The step the words put the failure at (`successfully run 54 steps then oom`, `it crashes at step 1200`,
# `训练到第35步报错`, `大约在1020步会遇到报错`): only a number placed by a word of time or place, so a planned length
# (`I train 1000 steps and it crashed`) is none. Used only where the log shows no step of its own.
_SAID_STEP = lazy(r"\b(?:at|after|around|about|by|on)\s+(?:(?:more than|about|around|roughly|~)\s*)?(?:step|iteration|iter)s?\s*#?\s*(\d[\d,]*)"
                  r"|\b(?:at|after|around|about)\s+(?:(?:more than|about|around|roughly|~)\s*)?(\d[\d,]*)\s+(?:steps?|iterations?|iters?)\b"
                  r"|\b(\d[\d,]*)\s+(?:steps?|iterations?)\s+(?:then|and then|later|before)\b"
                  r"|第\s*(\d+)\s*(?:步|个?\s*steps?)|(?:到|在)\s*(?:了|大约|大概|约)?\s*(\d+)\s*(?:步|个?\s*steps?)"
                  r"|(\d+)\s*(?:步|个?\s*steps?)\s*(?:左右|后|之后|时|的时候)", re.IGNORECASE)


def said_step(text: str) -> int | None:
    """The step a sentence says the run failed at, or None."""
    if not _has_digit(text):
        return None
    match = _SAID_STEP.search(text)
    return int(next(g for g in match.groups() if g).replace(",", "")) if match else None


def _said_step_of(line: str, ctx: ScanContext) -> None:
    """The step the words state, kept with the failure they state on the same line."""
    said = ctx.out.stated.get("stated_failure")
    if said is not None and said.line == ctx.line_no and said.file == ctx.file and "step" not in said.note_params:
        step = said_step(line)
        if step is not None:
            said.note_params["step"] = step


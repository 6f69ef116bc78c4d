"""Statistics, cutoff effects and packed counts of a `Counted`, as a JSON-ready dict and as text (en / zh)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsteps.data import packing, stats
from trainsteps.derivation import Derivation
from trainsteps.errors import InputError
from trainsteps.i18n import label, message

PACKERS = ("llamafactory", "llamafactory-pt", "trl-bfd", "trl-bfd_split", "trl-wrapped", "ms-swift", "axolotl", "torchtitan")
DEFAULT_VERSIONS = {"llamafactory": "0.9.5", "llamafactory-pt": "0.9.5", "trl": "1.16.0", "ms-swift": "2", "axolotl": "0.19.0",
                    "torchtitan": "0.3.0"}


@dataclass(frozen=True)
class PackingRequest:
    """One `--packing NAME[@VERSION]`."""

    name: str
    """One of PACKERS."""
    version: str
    """Framework release (for ms-swift: the major version of the `binpacking` package)."""

    @classmethod
    def parse(cls, text: str) -> PackingRequest:
        name, _, version = text.partition("@")
        if name not in PACKERS:
            raise InputError("count.error.packer", "count.hint.packer", name=name, known=", ".join(PACKERS))
        family = name.split("-")[0] if name.startswith("trl") else name
        return cls(name, version or DEFAULT_VERSIONS[family])


@dataclass
class PackingSettings:
    """The framework settings packing depends on."""

    cutoff_len: int
    """cutoff_len / max_length / packing_length / sequence_len."""
    num_proc: int | None = None
    """preprocessing_num_workers / dataset_num_proc / packing_num_proc (None: unset)."""
    micro_batch_size: int = 1
    """Axolotl micro_batch_size (the bin holds micro_batch_size x sequence_len with flash-attention packing)."""
    bin_size: int = 200
    """Axolotl sample_packing_bin_size: at most this many rows in one bin."""
    group_size: int = 100_000
    """Axolotl sample_packing_group_size: rows are packed in groups of this many, each group apart."""
    sequential: bool = False
    """Axolotl sample_packing_sequentially: next-fit in data order instead of first-fit."""
    world_size: int | None = None
    """Axolotl ranks (WORLD_SIZE): each packs its own orders and the smallest count is taken; None: one rank."""


def packed(request: PackingRequest, tokens, d: Derivation, settings: PackingSettings) -> dict:
    """Packed sequence count for one framework, recorded in `d`."""
    lengths = [int(n) for n in tokens]
    cut, procs = settings.cutoff_len, settings.num_proc
    batches = sum(1 for _ in packing.map_batches(len(lengths), packing.MAP_BATCH, procs))
    key = f"packed.{request.name}"
    try:
        if request.name == "llamafactory":
            cap = cut + packing.LF_CAPACITY_OFFSET.at(request.version)
            if cap < 1:
                raise ValueError(f"LLaMA-Factory {request.version} packs into cutoff_len - 1 tokens: give --cutoff-len of at least 2")
            value = packing.llamafactory_sft(lengths, cut, procs, request.version)
            d.add(key, value, "Σ_batches bins(greedy_knapsack(min(l, C), C))", f"{batches} batches, C = {cap}",
                  "count.why.llamafactory", version=request.version, workers=procs or 1)
            return {"framework": request.name, "version": request.version, "sequences": value, "capacity": cap, "map_batches": batches}
        if request.name == "llamafactory-pt":
            value = packing.llamafactory_pt(lengths, cut, False, procs)
            d.add(key, value, "Σ_batches floor(Σ l / C)", f"{batches} batches, C = {cut}", "count.why.llamafactory_pt",
                  version=request.version, workers=procs or 1)
            return {"framework": request.name, "version": request.version, "sequences": value, "capacity": cut, "map_batches": batches}
        if request.name.startswith("trl"):
            strategy = request.name.split("-", 1)[1]
            _check_trl_version(request.version)
            value = packing.trl(lengths, cut, strategy, procs, request.version)
            formula = "Σ_batches ceil(Σ l / S)" if strategy == "wrapped" else "Σ_batches bins(best_fit_decreasing(l, S))"
            d.add(key, value, formula, f"{batches} batches, S = {cut}", "count.why.trl", version=request.version,
                  strategy=strategy, workers=procs or 1)
            return {"framework": request.name, "version": request.version, "sequences": value, "capacity": cut, "map_batches": batches}
        if request.name == "ms-swift":
            major = request.version.split(".")[0]
            if major not in ("1", "2"):
                raise ValueError(f"ms-swift@{request.version}: give the major version of the binpacking package, 1 or 2")
            kept = [n for n in lengths if n <= cut]  # truncation_strategy delete drops longer rows before packing
            value = packing.swift(kept, cut, procs or 1, int(major))
            d.add(key, value, "Σ_slices bins(to_constant_volume(carry + slice, V)), rows with l <= V",
                  f"{len(kept)} rows, V = {cut}", "count.why.swift", binpacking=major, workers=procs or 1)
            return {"framework": request.name, "binpacking": int(major), "sequences": value, "capacity": cut}
        if request.name == "torchtitan":
            return _torchtitan(request, lengths, cut, d)
        low, high = packing.axolotl_range(lengths, cut, settings.micro_batch_size, bin_size=settings.bin_size,
                                          group_size=settings.group_size, sequential=settings.sequential,
                                          world_size=settings.world_size)
        d.add(key, f"{low}-{high}", "99% range of min over 4 random orders of bins(first_fit(order, C))",
              f"C = {settings.micro_batch_size} x {cut}, {packing.AXOLOTL_ORDERS} orders packed",
              "count.why.axolotl_min4", version=request.version, orders=packing.AXOLOTL_ORDERS)
        return {"framework": request.name, "version": request.version, "sequences_min": low, "sequences_max": high,
                "capacity": settings.micro_batch_size * cut}
    except ValueError as exc:
        raise InputError("count.error.packing_version", "count.hint.packing_version", detail=str(exc)) from exc


def _torchtitan(request: PackingRequest, lengths: list[int], seq_len: int, d: Derivation) -> dict:
    """torchtitan's text dataset: documents with bos and eos concatenated and cut into samples of seq_len (one rank,
    one pass; the windows are the release's, frameworks/torchtitan.py)."""
    from trainsteps.frameworks.torchtitan import samples_of_documents, window_tokens
    from trainsteps.versions import Version

    release = str(Version.parse(request.version.lstrip("v")))
    window, extra = window_tokens(seq_len, release)
    value = samples_of_documents(lengths, seq_len, release)
    d.add(f"packed.{request.name}", value, "floor(Σ (l + extra) / W)", f"{len(lengths)} documents, W = {window}, extra = {extra}",
          "count.why.torchtitan", version=release)
    return {"framework": request.name, "version": release, "sequences": value, "capacity": seq_len}


def _check_trl_version(version: str) -> None:
    from trainsteps.versions import Version

    v = Version.parse(version)
    for start, end, why in packing.TRL_UNMODELLED:
        if Version.parse(start) <= v < Version.parse(end):
            raise InputError("count.error.trl_unmodelled", why, version=version)
    if v < Version.parse("0.7.5"):
        raise InputError("count.error.trl_unmodelled", "count.trl.raw", version=version)


def build(counted, cutoff_len: int | None, requests: list[PackingRequest], settings: PackingSettings | None,
          estimate: dict | None = None) -> tuple[dict, Derivation]:
    """Everything `trainsteps count` reports, as plain data, plus the derivation of the derived numbers."""
    tokens, supervised = counted.lengths.tokens, counted.lengths.supervised
    d = Derivation()
    d.add("count.examples", counted.examples, "rows read - invalid rows", f"{counted.rows_read} - {counted.invalid.count}",
          "count.why.examples")
    d.add("count.tokens", int(tokens.sum()), "Σ tokens per example", "", "count.why.tokens")
    d.add("count.supervised_tokens", int(supervised.sum()), "Σ supervised tokens per example", "", "count.why.supervised")
    data = {
        "files": counted.files,
        "row_format": counted.row_format,
        "template": counted.template,
        "rows_read": counted.rows_read,
        "examples": counted.examples,
        "tokens": int(tokens.sum()),
        "supervised_tokens": int(supervised.sum()),
        "lengths": stats.summary(tokens),
        "histogram": stats.histogram(tokens, cutoff_len),
        "invalid_rows": counted.invalid.to_dict(),
        "malformed_lines": counted.malformed.to_dict(),
        "seconds": round(counted.seconds, 3),
    }
    if getattr(counted, "tokenizer_engine", None):
        data["tokenizer_engine"] = counted.tokenizer_engine
    if getattr(counted, "cache_rebuilt", False):
        data["cache_rebuilt"] = True
    if getattr(counted, "from_cache", False):  # `seconds` is then the cache read, not a tokenization
        data["from_cache"] = True
    if cutoff_len:
        over = stats.over_cutoff(tokens, cutoff_len)
        data["cutoff"] = over
        data["cutoff"]["frameworks"] = [_cutoff_effect(rule, counted.examples, over, d) for rule in stats.CUTOFF_RULES]
    if requests:
        data["packing"] = [packed(r, tokens, d, settings) for r in requests]
    if estimate:
        _scale_to_corpus(data, estimate, d)
    data["derivation"] = d
    return data, d


SAMPLED_KEYS = ("count.examples", "count.tokens", "count.supervised_tokens")
SCALED_PREFIXES = ("cutoff.", "packed.")  # steps computed on the drawn rows, recorded again scaled to the corpus


def _scale_to_corpus(data: dict, estimate: dict, d: Derivation) -> None:
    """Under --sample the figures above describe the resampled rows; counts are scaled by estimated examples / rows."""
    data["estimate"] = estimate
    data["estimated"] = True
    rows = max(data["examples"], 1)
    scale = estimate["examples"]["estimate"] / rows
    sample_steps = {s.key: s for s in d.steps}
    d.steps = [s for s in d.steps if s.key not in SAMPLED_KEYS and not s.key.startswith(SCALED_PREFIXES)]
    data["examples"] = _estimated_examples(estimate, d)
    f = estimate["total_bytes"]
    for key in SAMPLED_KEYS[1:]:
        e = estimate[key.removeprefix("count.")]["estimate"]
        data[key.removeprefix("count.")] = d.add(key, round(e), "F x mean(t / b)", f"{f:,} x {e / max(f, 1):.6g}",
                                                 "count.why.sampled_tokens", rows=estimate["sampled_rows"])
    data["lengths"]["mean"] = round(data["tokens"] / max(data["examples"], 1), 2)  # the estimates', not the draw's
    if "cutoff" in data:
        for key in ("examples_over", "tokens_cut", "tokens_in_dropped"):
            data["cutoff"][key] = round(data["cutoff"][key] * scale)
        for entry in data["cutoff"]["frameworks"]:
            entry["examples_after"] = round(entry["examples_after"] * scale)
            if "tokens_cut" in entry:
                entry["tokens_cut"] = data["cutoff"]["tokens_cut"]
            step = sample_steps[f"cutoff.{entry['framework']}"]
            d.add(step.key, entry["examples_after"], "kept(sample) x N / n", f"{step.value} x {data['examples']} / {rows}",
                  "count.why.sampled_cutoff")
    for entry in data.get("packing", []):
        for key in ("sequences", "sequences_min", "sequences_max"):
            if key in entry:
                entry[key] = round(entry[key] * scale)
        step = sample_steps[f"packed.{entry['framework']}"]
        value = entry.get("sequences", f"{entry.get('sequences_min')}-{entry.get('sequences_max')}")
        d.add(step.key, value, "packed(sample) x N / n", f"{step.value} x {data['examples']} / {rows}", "count.why.sampled")


def _estimated_examples(estimate: dict, d: Derivation) -> int:
    e = estimate["examples"]
    why = "count.why.sampled_lines" if e["blocks"] else "count.why.scanned_lines"
    return d.add("count.examples", round(e["estimate"]), "(lines - blank lines) x valid share",
                 f"({e['lines']:,.0f} - {e['blank_lines']:,.0f}) x {e['valid_share']:.6g}", why, blocks=e["blocks"],
                 block_bytes=e["block_bytes"])


def _cutoff_effect(rule: stats.CutoffRule, examples: int, over: dict, d: Derivation) -> dict:
    if rule.action == "drop":
        kept = examples - over["examples_over"]
        d.add(f"cutoff.{rule.framework}", kept, "N - examples over cutoff", f"{examples} - {over['examples_over']}", rule.why,
              setting=rule.setting)
        return {"framework": rule.framework, "action": "drop", "examples_after": kept}
    d.add(f"cutoff.{rule.framework}", examples, "N (over-long examples truncated)", "", rule.why, setting=rule.setting,
          tokens_cut=over["tokens_cut"])
    return {"framework": rule.framework, "action": "truncate", "examples_after": examples, "tokens_cut": over["tokens_cut"]}


def without_tokens(data: dict) -> dict:
    """A count made without a tokenizer: rows are exact, every token figure is unknown (None), not 0."""
    out = {key: value for key, value in data.items() if key not in ("lengths", "histogram")}
    out.update(tokens=None, supervised_tokens=None)
    rows_only = Derivation()  # the token steps summed zeros: they are not shown
    rows_only.steps = [step for step in data["derivation"].steps if step.key not in ("count.tokens", "count.supervised_tokens")]
    out["derivation"] = rows_only
    return out


def to_json(data: dict, lang: str) -> dict:
    out = dict(data)
    out["derivation"] = data["derivation"].to_list(lang)
    return out


def render(data: dict, lang: str, explain: bool = False) -> str:
    from trainsteps.answer import count_line

    lines = [count_line(data, lang), ""] + results_table(data, lang) + [""]
    files = data["files"]
    lines.append(f"{label('count.files', lang)}: {len(files)} ({files[0]}{' ...' if len(files) > 1 else ''})")
    lines.append(f"{label('count.format', lang)}: {data['row_format']}" + (
        f", {label('count.template', lang)} {data['template']}" if data["template"] != "-" else ""))
    if "tokenizer_engine" in data:
        lines.append(message("count.engine_line", lang, **data["tokenizer_engine"]))
    if data.get("cache_rebuilt"):
        lines.append(message("count.note.cache_rebuilt", lang))
    if "estimate" in data:
        lines += _render_estimate(data["estimate"], lang)
    else:
        lines.append(f"{label('count.examples', lang)}: {data['examples']:,}")
        if data["tokens"] is not None:
            lines.append(f"{label('count.tokens', lang)}: {data['tokens']:,} ({label('count.supervised', lang)} {data['supervised_tokens']:,})")
    if "lengths" in data:
        lines += _lengths(data, lang)
    lines += _problems(data, lang)
    steps = data["derivation"]
    shown = [s for s in steps if s.key.startswith(("cutoff.", "packed.")) or explain]
    if shown:
        lines.append(label("derivation", lang) + ":")
        from trainsteps.derivation import render_step

        lines += ["  " + render_step(s, lang) for s in shown]
    return "\n".join(lines)


def _lengths(data: dict, lang: str) -> list[str]:
    lines = []
    s = data["lengths"]
    lines.append(f"{label('count.lengths', lang)}: min {s['min']:,}  p50 {s['p50']:,}  p90 {s['p90']:,}  p95 {s['p95']:,}  "
                 f"p99 {s['p99']:,}  max {s['max']:,}  mean {s['mean']:,}")
    lines.append(label("count.histogram", lang) + ":")
    widest = max((b["examples"] for b in data["histogram"]), default=1) or 1
    for band in data["histogram"]:
        bar = "#" * math.ceil(40 * band["examples"] / widest) if band["examples"] else ""
        lines.append(f"  {band['from']:>8,} - {band['to']:>8,}  {band['examples']:>10,}  {bar}")
    if "cutoff" in data:
        c = data["cutoff"]
        lines.append(message("count.over_cutoff", lang, examples=f"{c['examples_over']:,}", cutoff=f"{c['cutoff']:,}",
                             tokens=f"{c['tokens_cut']:,}"))
    return lines


def _problems(data: dict, lang: str) -> list[str]:
    lines = []
    for problems, key in ((data["invalid_rows"], "count.invalid"), (data["malformed_lines"], "count.malformed")):
        if problems["malformed"]:
            lines.append(message(key, lang, count=f"{problems['malformed']:,}"))
            lines += [f"  {_where(p)}: {p['reason']}" for p in problems["first"]]
    if data["malformed_lines"]["blank_lines"]:
        lines.append(message("count.blank", lang, count=f"{data['malformed_lines']['blank_lines']:,}"))
    return lines


def results_table(data: dict, lang: str) -> list[str]:
    """The results before the detail: examples kept / over the cutoff / dropped per framework, tokens, packed rows."""
    approx = "~" if data.get("estimated") else ""
    rows = [(label("count.examples", lang), f"{approx}{data['examples']:,}")]
    if data["tokens"] is not None:
        rows += [(label("count.tokens", lang), f"{approx}{data['tokens']:,}"),
                 (label("count.supervised", lang), f"{approx}{data['supervised_tokens']:,}")]
    if "cutoff" in data:
        c = data["cutoff"]
        rows.append((message("count.table.over", lang, cutoff=f"{c['cutoff']:,}"), f"{approx}{c['examples_over']:,}"))
        for entry in c["frameworks"]:
            what = "count.table.dropped" if entry["action"] == "drop" else "count.table.truncated"
            rows.append((message(what, lang, framework=entry["framework"]), f"{approx}{entry['examples_after']:,}"))
    for entry in data.get("packing", []):
        value = f"{entry['sequences']:,}" if "sequences" in entry else f"{entry['sequences_min']:,} - {entry['sequences_max']:,}"
        rows.append((message("count.table.packed", lang, framework=entry["framework"]), approx + value))
    from trainsteps.report import display_width

    width = max(display_width(name) for name, _ in rows)
    head = label("count.results", lang)
    return [head + ":"] + [f"  {name}{' ' * (width - display_width(name))}  {value:>14}" for name, value in rows]


def _where(problem: dict) -> str:
    """`file:line`, or only the file when the line number is unknown (a sampled line is found by its byte offset)."""
    return f"{problem['path']}:{problem['line']}" if problem["line"] else problem["path"]


def _render_estimate(e: dict, lang: str) -> list[str]:
    return [message("count.estimate_head", lang, rows=f"{e['sampled_rows']:,}", seed=e["seed"]),
            f"{label('count.examples', lang)}: ~{e['examples']['estimate']:,.0f}  (95%: {e['examples']['low']:,.0f} - {e['examples']['high']:,.0f})",
            f"{label('count.tokens', lang)}: ~{e['tokens']['estimate']:,.0f}  (95%: {e['tokens']['low']:,.0f} - {e['tokens']['high']:,.0f})",
            f"{label('count.supervised', lang)}: ~{e['supervised_tokens']['estimate']:,.0f}  "
            f"(95%: {e['supervised_tokens']['low']:,.0f} - {e['supervised_tokens']['high']:,.0f})"]

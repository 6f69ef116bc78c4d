"""Read and explain the lines GPT-NeoX, Megatron, DeepSpeed and Lightning print about data and steps.

`parse_pretrain_log(lines)` collects what the log states; `explain_pretrain(observed, lang)` turns it
into sentences with their arithmetic. The key fact: the "total number of samples" printed while the
index maps are built counts windows over EVERY epoch built ("total number of epochs"), and
GPT-NeoX / legacy Megatron print one more than the windows built (`sample_idx.shape[0]`).
"""

from __future__ import annotations

from trainsteps.patterns import lazy
from trainsteps.record import field, record

_PATTERNS = {
    # GPT-NeoX and legacy Megatron, Python: sample_idx.shape[0] = N + 1 (4-space indent)
    "python_samples": lazy(r"^\s{4}total number of samples:\s+([\d,]+)\s*$"),
    # megatron-core: N
    "mcore_samples": lazy(r"(?:^|\s|:|\])>\s*total number of samples:\s+([\d,]+)\s*$"),  # after any logger prefix
    # the C++ helper (NeoX, legacy Megatron): exact N, 5-space indent and aligned value
    "cpp_samples": lazy(r"^\s{5}total number of samples:\s+([\d,]+)\s*$"),
    # any other indent or prefix: which printer it was is unknown (N, or N + 1 from the Python path)
    "other_samples": lazy(r"total number of samples:\s+([\d,]+)\s*$"),
    "epochs": lazy(r"total number of epochs:\s+(\d+)"),
    "cpp_epochs": lazy(r"^\s*number of epochs:\s+(\d+)"),
    "seq_length": lazy(r"^\s*sequence length:\s+(\d+)"),
    "index_map": lazy(r"_indexmap_(\d+|None)ns_(\d+)sl_(\d+)s"),
    "iteration": lazy(r"iteration\s+(\d+)\s*/\s*(\d+)"),
    "consumed": lazy(r"consumed samples:\s+(\d+)"),
    "global_batch": lazy(r"global batch size:\s+(\d+)"),
    "ds_value": lazy(r"(?:^|\]|\s)(train_batch_size|train_micro_batch_size_per_gpu|gradient_accumulation_steps|world_size)"
                           r"\s+\.*\s*(\d+)\s*$"),  # after DeepSpeed's `[date] [INFO] [config.py:N:print]` prefix too
    "neox_arg": lazy(r"^\s*(train_batch_size|seq_length|train_iters)\s+\.{2,}\s*(\d+)"),
    "lightning_bar": lazy(r"Epoch (\d+):\s+\d+%\|.*?\|\s*(\d+)/(\d+)"),
    "split": lazy(r"document indices in \[(\d+), (\d+)\) total of (\d+) documents"),
    "per_epoch_line": lazy(r"number of samples per epoch \((\d+)\)"),
    "target": lazy(r"^\s*(?:>\s*)?(train|validation|test):\s+(\d+)\s*$"),
    "tokens_epoch": lazy(r"number of tokens per epoch:\s*([\d,]+)"),
    "training_for": lazy(r"Training for a total of (\d+) iterations, corresponding to (\d+) epochs"),
    # Megatron's parallel layout (megatron/training/arguments.py, initialize.py, num_microbatches_calculator.py):
    #   using world size: 8, data-parallel size: 1, context-parallel size: 1, [hierarchical context-parallel sizes: None,]
    #   tensor-model-parallel size: 4, pipeline-model-parallel size: 2        (older: "data-parallel-size: 4", no context)
    #   > initialized tensor model parallel with size 4    (before 2021: "> initializing tensor model parallel with size 1")
    #   setting number of micro-batches to constant 512    (megatron-core: "setting number of microbatches to constant 512")
    "mg_world": lazy(r"using world size:\s*(\d+)"),
    "mg_sizes": lazy(r"(?<!-)(data-parallel|context-parallel|tensor-model-parallel|pipeline-model-parallel)[- ]size:\s*(\d+)"),
    "mg_init": lazy(r"initiali(?:zed|zing) (tensor|pipeline) model parallel with size (\d+)"),
    "mg_micro": lazy(r"setting number of micro-?batches to constant (\d+)"),
    "mg_global": lazy(r"setting global batch size to (\d+)"),
    # the argument dump, unprefixed (DeepSpeed's own config print has a logger prefix and a data-parallel world_size)
    "mg_arg": lazy(r"^\s*(?:>\s*)?(micro_batch_size|global_batch_size|world_size|tensor_model_parallel_size|pipeline_model_parallel_size"
                         r"|context_parallel_size|data_parallel_size)\s+\.{2,}\s*(\d+)\s*$"),
    # the settings behind `> datasets target sizes` (megatron/training/training.py, get_train_valid_test_num_samples)
    "mg_eval_arg": lazy(r"^\s*(?:>\s*)?(train_iters|eval_interval|eval_iters)\s+\.{2,}\s*(\d+)\s*$"),
}

_MG_KEYS = {"data-parallel": "dp", "context-parallel": "cp", "tensor-model-parallel": "tp", "pipeline-model-parallel": "pp",
            "tensor": "tp", "pipeline": "pp", "world_size": "world", "tensor_model_parallel_size": "tp",
            "pipeline_model_parallel_size": "pp", "context_parallel_size": "cp", "data_parallel_size": "dp"}


@record
class PretrainObserved:
    """What a pretraining log states (None where it says nothing)."""

    samples_line: int | None = None
    """The value of the last "total number of samples" line."""
    samples_line_kind: str | None = None
    """`python` (NeoX/legacy Megatron, N + 1), `mcore` (N) or `cpp` (N)."""
    epochs_built: int | None = None
    """"total number of epochs"."""
    seq_length: int | None = None
    """From the helper's "sequence length" line, the index-map name or the argument dump."""
    requested_samples: int | None = None
    """The `ns` of an index-map file name."""
    global_batch_size: int | None = None
    """From an iteration line, the NeoX argument dump or DeepSpeed's configuration."""
    iteration: int | None = None
    """Last iteration seen."""
    train_iters: int | None = None
    """Total iterations from the iteration line."""
    consumed_samples: int | None = None
    """Megatron's consumed samples at the last iteration line."""
    deepspeed: dict = field(default_factory=dict)
    """Batch values of `DeepSpeedEngine configuration`."""
    lightning_batches: int | None = None
    """Batches per epoch in Lightning's progress bar."""
    splits: list[tuple[int, int]] = field(default_factory=list)
    """NeoX "document indices in [a, b)" ranges."""
    target_sizes: dict = field(default_factory=dict)
    """Megatron's `> datasets target sizes (minimum size)`: train / validation / test samples it builds for."""
    tokens_per_epoch_line: int | None = None
    """GPT-NeoX's own "number of tokens per epoch: T", used as printed."""
    samples_per_epoch_line: int | None = None
    """Legacy Megatron's "... number of samples per epoch (N1)": one epoch, stated outright."""
    parallel: dict = field(default_factory=dict)
    """Megatron's layout as printed: `world`, `dp`, `cp`, `tp`, `pp` -> [value, line text]; the `using world size`
    and `initialized ... with size` lines outrank the argument dump."""
    micro_batches: int | None = None
    """`setting number of micro-batches to constant N`: micro-batches per iteration on each data-parallel rank."""
    micro_batch_size: int | None = None
    """`micro_batch_size ..... N` in Megatron's argument dump."""
    eval_args: dict = field(default_factory=dict)
    """`train_iters`, `eval_interval`, `eval_iters` as Megatron's argument dump prints them."""

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in PretrainObserved.__slots__}

    def feed(self, line: str) -> None:
        """Take one log line (the log reader calls this for every line, in the same pass as the HF parsers)."""
        _feed(self, line)

    def finish(self) -> dict:
        # Megatron's own global batch (argument dump, `setting global batch size`) is the one its sample counts and
        # micro-batches use; a Megatron-DeepSpeed engine can print a different train_batch_size of its own
        if self.global_batch_size is None and "global_batch_size" in self.parallel:
            self.global_batch_size = self.parallel["global_batch_size"][0]
        if self.global_batch_size is None and "train_batch_size" in self.deepspeed:
            self.global_batch_size = self.deepspeed["train_batch_size"]
        return self.to_dict()

    def found_anything(self) -> bool:
        return any(value not in (None, {}, []) for value in self.to_dict().values())


def _int(text: str) -> int:
    return int(text.replace(",", ""))


# Every line _PATTERNS can match contains one of these; other lines are skipped cheaply (and the log reader loads this
# module with the first such line).
WORDS = ("train:", "validation:", "test:", "number of", "sequence length", "_indexmap_", "iteration", "consumed samples", "global batch size",
            "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "world_size",
            "seq_length", "train_iters", "Epoch ", "document indices", "Training for a total", "world size", "model parallel with size",
            "batches to constant", "global batch size to", "micro_batch_size", "global_batch_size", "parallel_size", "eval_i")


def parse_pretrain_log(lines) -> dict:
    """Collect the facts a NeoX / Megatron / DeepSpeed / Lightning log prints. `lines`: an iterable of str."""
    seen = PretrainObserved()
    for raw in lines:
        seen.feed(raw)
    return seen.finish()


def _feed(seen: PretrainObserved, raw: str) -> None:
    for needle in WORDS:  # a plain loop: no generator per line
        if needle in raw:
            break
    else:
        return
    line = raw.rstrip("\n")
    # Each pattern is searched only where its own words are: a Megatron iteration line holds the needles of a few
    # patterns, and a search of a long line costs far more than a substring test.
    if "total number of samples" in line:
        _match_samples(line, seen)
    if "number of epochs" in line:
        for key in ("epochs", "cpp_epochs"):
            m = _PATTERNS[key].search(line)
            if m:
                seen.epochs_built = int(m.group(1))
    if "sequence length" in line and (m := _PATTERNS["seq_length"].search(line)):
        seen.seq_length = int(m.group(1))
    if "_indexmap_" in line and (m := _PATTERNS["index_map"].search(line)):
        seen.requested_samples = None if m.group(1) == "None" else int(m.group(1))
        seen.seq_length = seen.seq_length or int(m.group(2))
    if "iteration" in line and (m := _PATTERNS["iteration"].search(line)):
        seen.iteration, seen.train_iters = int(m.group(1)), int(m.group(2))
    if "consumed samples" in line and (m := _PATTERNS["consumed"].search(line)):
        seen.consumed_samples = int(m.group(1))
    if "global batch size:" in line and (m := _PATTERNS["global_batch"].search(line)):
        seen.global_batch_size = int(m.group(1))
    if ("_size" in line or "_steps" in line) and (m := _PATTERNS["ds_value"].search(line)):
        seen.deepspeed[m.group(1)] = int(m.group(2))
    if ".." in line and (m := _PATTERNS["neox_arg"].search(line)):
        if m.group(1) == "train_batch_size":
            seen.global_batch_size = seen.global_batch_size or int(m.group(2))
        elif m.group(1) == "seq_length":
            seen.seq_length = seen.seq_length or int(m.group(2))
    if "Epoch " in line and (m := _PATTERNS["lightning_bar"].search(line)):
        seen.lightning_batches = int(m.group(3))
    if ":" in line and ("train" in line or "validation" in line or "test" in line) and (m := _PATTERNS["target"].search(line)):
        seen.target_sizes[m.group(1)] = int(m.group(2))
    if "number of tokens per epoch" in line and (m := _PATTERNS["tokens_epoch"].search(line)):
        seen.tokens_per_epoch_line = _int(m.group(1))
    if "number of samples per epoch" in line and (m := _PATTERNS["per_epoch_line"].search(line)):
        seen.samples_per_epoch_line = int(m.group(1))
    if "document indices" in line and (m := _PATTERNS["split"].search(line)):
        seen.splits.append((int(m.group(1)), int(m.group(2))))
    if ("train_iters" in line or "eval_i" in line) and (m := _PATTERNS["mg_eval_arg"].search(line)):
        seen.eval_args[m.group(1)] = int(m.group(2))
    if "size" in line or "constant" in line:
        _megatron_layout(line, seen)


def _megatron_layout(line: str, seen: PretrainObserved) -> None:
    text = line.strip()[:200]
    if "using world size" in line and (m := _PATTERNS["mg_world"].search(line)):
        seen.parallel["world"] = [int(m.group(1)), text]
        for key, value in _PATTERNS["mg_sizes"].findall(line):
            seen.parallel[_MG_KEYS[key]] = [int(value), text]
        return
    if "model parallel with size" in line and (m := _PATTERNS["mg_init"].search(line)):
        seen.parallel[_MG_KEYS[m.group(1)]] = [int(m.group(2)), text]
    elif "batches to constant" in line and (m := _PATTERNS["mg_micro"].search(line)):
        seen.micro_batches = int(m.group(1))
    elif "setting global batch size to" in line and (m := _PATTERNS["mg_global"].search(line)):
        seen.parallel["global_batch_size"] = [int(m.group(1)), text]
    elif ".." in line and (m := _PATTERNS["mg_arg"].search(line)):
        name, value = m.group(1), int(m.group(2))
        if name == "micro_batch_size":
            seen.micro_batch_size = value
        elif name == "global_batch_size":
            seen.parallel.setdefault("global_batch_size", [value, text])
        else:
            seen.parallel.setdefault(_MG_KEYS[name], [value, text])  # the printed layout lines outrank the dump


def _match_samples(line: str, seen: PretrainObserved) -> None:
    for kind in ("cpp", "python", "mcore", "other"):
        pattern = _PATTERNS[f"{kind}_samples"]
        m = pattern.search(line) if kind in ("mcore", "other") else pattern.match(line)  # the others: by their indent
        if m:
            # the Python line (N + 1) comes after the C++ one (N); keep the one printed last
            seen.samples_line, seen.samples_line_kind = _int(m.group(1)), kind
            return


@record
class Explanation:
    """Sentences about a pretraining log, each with a message id so it renders in any language."""

    facts: dict
    """Derived numbers (JSON)."""
    items: list[tuple[str, dict]]
    """(message id, parameters) in reading order."""

    def lines(self, lang: str = "en") -> list[str]:
        from trainsteps.i18n import message

        return [message(msg_id, lang, **params) for msg_id, params in self.items]

    def to_dict(self, lang: str = "en") -> dict:
        return {"facts": dict(self.facts), "explanation": self.lines(lang)}


def explain_pretrain(observed: dict, lang: str = "en", seq_length: int | None = None, global_batch_size: int | None = None,
                     flavor: str | None = None) -> Explanation:
    """Explain the sample/epoch/iteration lines. `flavor` (`neox`, `legacy`, `core`) overrides the guess from the line format."""
    S = seq_length or observed.get("seq_length")
    B = global_batch_size or observed.get("global_batch_size")
    items: list[tuple[str, dict]] = []
    facts: dict = {}
    printed = observed.get("samples_line")
    epochs = observed.get("epochs_built")
    kind = observed.get("samples_line_kind")
    if printed is not None:
        from trainsteps.frameworks import gptdata  # the token-window arithmetic, loaded only for a log that prints samples

        offset = 1 if (flavor in ("neox", "legacy") or (flavor is None and kind == "python")) else 0
        built = printed - offset
        facts.update(printed_samples=printed, samples_built=built)
        items.append(("ptlog.samples_line", {"printed": printed, "built": built}) if offset else ("ptlog.samples_line_exact", {"built": built}))
        if kind == "other" and flavor is None:
            items.append(("ptlog.printer_unknown", {"printed": printed}))
        if epochs:
            facts["epochs_built"] = epochs
            items.append(("ptlog.epochs_line", {"epochs": epochs}))
        printed_tokens = observed.get("tokens_per_epoch_line")
        if printed_tokens and S:
            # NeoX prints the tokens of one epoch itself: one epoch is (T - 1) // S windows, no range to guess
            n1 = gptdata.samples_per_epoch(printed_tokens, S)
            facts.update(tokens_per_epoch=printed_tokens, samples_per_epoch_min=n1, samples_per_epoch_max=n1)
            items.append(("ptlog.tokens_printed", {"T": printed_tokens, "S": S, "n1": n1}))
            if n1 and not epochs:
                facts["epochs_built"] = round(built / n1, 4)
                items.append(("ptlog.epochs_from_tokens", {"built": built, "n1": n1, "epochs": round(built / n1, 4)}))
            if B and n1:
                facts["iterations_per_epoch"] = n1 // B
                items.append(("ptlog.iterations_per_epoch", {"iters": n1 // B, "B": B, "n1": n1}))
        elif epochs and S:
            low, high = gptdata.tokens_range_from_samples(built, epochs, S, 1)
            n1_low, n1_high = gptdata.samples_per_epoch(low, S), gptdata.samples_per_epoch(high, S)
            facts.update(tokens_per_epoch_min=low, tokens_per_epoch_max=high, samples_per_epoch_min=n1_low, samples_per_epoch_max=n1_high)
            items.append(("ptlog.tokens_per_epoch", {"low": low, "high": high, "built": built, "epochs": epochs, "S": S}))
            stated = observed.get("samples_per_epoch_line")
            if stated is not None and n1_low <= stated <= n1_high:
                n1_low = n1_high = stated  # legacy Megatron prints it: removes any ambiguity
                facts.update(samples_per_epoch_min=stated, samples_per_epoch_max=stated)
            items.append(("ptlog.samples_per_epoch" if n1_low == n1_high else "ptlog.samples_per_epoch_range",
                          {"n1": n1_low, "n1_high": n1_high, "S": S}))
            if B:
                it_low, it_high = n1_low // B, n1_high // B
                facts.update(iterations_per_epoch=it_low if it_low == it_high else [it_low, it_high])
                items.append(("ptlog.iterations_per_epoch", {"iters": it_low, "B": B, "n1": n1_low}))
                if epochs > 1:
                    naive = printed * S // (B * S)
                    facts["naive_iterations"] = naive
                    items.append(("ptlog.naive", {"naive": naive, "printed": printed, "epochs": epochs, "iters": it_low}))
        if observed.get("requested_samples"):
            ns = observed["requested_samples"]
            facts["requested_samples"] = ns
            items.append(("ptlog.requested", {"ns": ns}))
    targets = observed.get("target_sizes") or {}
    if "train" in targets:
        # megatron's build_train_valid_test_datasets asks for train_iters x global batch training samples
        train = targets["train"]
        facts["train_samples_target"] = train
        params = {"train": train, "valid": targets.get("validation", "?"), "test": targets.get("test", "?")}
        if B:
            facts["train_iters_from_target"] = train // B
            items.append(("ptlog.target_sizes_iters", {**params, "B": B, "iters": train // B}))
            _eval_targets(targets, observed.get("eval_args") or {}, B, items, facts)
        else:
            items.append(("ptlog.target_sizes", params))
    if observed.get("consumed_samples") is not None and facts.get("samples_per_epoch_min"):
        trained = observed["consumed_samples"] / facts["samples_per_epoch_min"]
        facts["epochs_trained"] = round(trained, 4)
        items.append(("ptlog.epochs_trained", {"consumed": observed["consumed_samples"], "epochs": round(trained, 4)}))
    ds = observed.get("deepspeed") or {}
    if {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "world_size"} <= set(ds):
        product = ds["train_micro_batch_size_per_gpu"] * ds["gradient_accumulation_steps"] * ds["world_size"]
        items.append(("ptlog.deepspeed_ok" if product == ds["train_batch_size"] else "ptlog.deepspeed_bad",
                      {"tb": ds["train_batch_size"], "mb": ds["train_micro_batch_size_per_gpu"], "ga": ds["gradient_accumulation_steps"],
                       "dp": ds["world_size"], "product": product}))
    _layout(observed, B, items, facts)
    if observed.get("lightning_batches") is not None:
        items.append(("ptlog.lightning_bar", {"batches": observed["lightning_batches"]}))
    if observed.get("iteration") is not None:
        it, total = observed["iteration"], observed.get("train_iters")
        items.append(("ptlog.iteration", {"it": it, "total": total or "?", "done": f"{it / total:.1%}" if total else "?"}))
        consumed = observed.get("consumed_samples")
        if consumed is not None and B:
            items.append(("ptlog.consumed", {"consumed": consumed, "B": B, "batches": round(consumed / B, 2)}))
    if not items:
        items.append(("ptlog.nothing", {}))
    return Explanation(facts, items)


def _eval_targets(targets: dict, args: dict, B: int, items: list, facts: dict) -> None:
    """Megatron's target sizes from the printed settings (megatron/training/training.py,
    get_train_valid_test_num_samples): train = train_iters x B, validation = (train_iters // eval_interval + 1) x
    eval_iters x B, test = eval_iters x B. Said to agree or disagree with what the log prints."""
    T, V, E = args.get("train_iters"), args.get("eval_interval"), args.get("eval_iters")
    if T is None or not V or E is None:
        return
    expected = {"train": T * B, "validation": (T // V + 1) * E * B, "test": E * B}
    printed = {key: targets.get(key) for key in expected}
    ok = all(printed[key] is None or printed[key] == expected[key] for key in expected)
    facts["target_sizes_expected"] = expected
    items.append(("ptlog.target_sizes_ok" if ok else "ptlog.target_sizes_bad",
                  {"T": T, "I": V, "E": E, "B": B, "points": T // V + 1, "train": expected["train"],
                   "valid": expected["validation"], "test": expected["test"]}))


def _layout(observed: dict, B: int | None, items: list, facts: dict) -> None:
    """Megatron's parallel layout: world = tensor x pipeline x context x data-parallel (megatron/training/arguments.py),
    and global batch = micro batch x micro-batches x data-parallel (num_microbatches_calculator.py). What the log
    prints is stated; a missing factor is derived from the others when the rest is printed; printed values that
    disagree are said to disagree."""
    printed = {key: value[0] for key, value in (observed.get("parallel") or {}).items()}
    n, m = observed.get("micro_batches"), observed.get("micro_batch_size")
    W, T, P, D = printed.get("world"), printed.get("tp"), printed.get("pp"), printed.get("dp")
    C = printed.get("cp")
    if not (W or T or P or D or n):
        return
    c = C or 1
    if W and T and P:
        if D is None and W % (T * P * c) == 0:
            D = W // (T * P * c)
            items.append(("ptlog.mg_dp_from_world" if C else "ptlog.mg_dp_from_world_nocp", {"W": W, "T": T, "P": P, "C": c, "D": D}))
        elif D is not None:
            ok = W == T * P * c * D
            items.append((("ptlog.mg_layout_ok" if ok else "ptlog.mg_layout_bad") + ("" if C else "_nocp"),
                          {"W": W, "T": T, "P": P, "C": c, "D": D, "product": T * P * c * D}))
    elif T or P or D:
        items.append(("ptlog.mg_layout_partial", {"T": T or "?", "P": P or "?", "D": D or "?", "W": W or "?"}))
    if W is None and D and T and P:
        W = D * T * P * c
        items.append(("ptlog.mg_world_from_layout" + ("" if C else "_nocp"), {"W": W, "T": T, "P": P, "C": c, "D": D}))
    if n is not None:
        if B and m and D:
            ok = B == m * n * D
            items.append(("ptlog.mg_micro_ok" if ok else "ptlog.mg_micro_bad", {"B": B, "m": m, "n": n, "D": D, "product": m * n * D}))
        elif B and m and D is None and B % (m * n) == 0:
            D = B // (m * n)
            items.append(("ptlog.mg_dp_from_batch", {"B": B, "m": m, "n": n, "D": D}))
        elif B and D and m is None and B % (n * D) == 0:
            m = B // (n * D)
            items.append(("ptlog.mg_mbs_from_batch", {"B": B, "n": n, "D": D, "m": m}))
        elif B and B % n == 0:
            items.append(("ptlog.mg_mbs_times_dp", {"B": B, "n": n, "product": B // n}))
        else:
            items.append(("ptlog.mg_micro", {"n": n}))
    layout = {"world_size": W, "tensor_parallel": T, "pipeline_parallel": P, "context_parallel": C, "data_parallel": D,
              "micro_batches": n, "micro_batch_size": m}
    facts.update({key: value for key, value in layout.items() if value is not None})

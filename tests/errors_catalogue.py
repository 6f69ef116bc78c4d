"""The bad-input catalogue: every case here is run, and docs/errors.md is this table with what each case printed.

`tests/test_errors_catalogue.py` runs every case and compares the result with docs/errors.md, so the page and the
behaviour cannot drift apart. After changing a message, regenerate the page:

    PYTHONPATH=src python -m tests.errors_catalogue --write

CLI cases run `trainsteps ARGS` in-process from tests/fixtures/errors/ (the small bad files live there). A case with
exit 2 shows its one stderr line; a case that still answers (exit 0) shows the stdout line that reports the problem.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = Path(__file__).parent / "fixtures" / "errors"
DOC = ROOT / "docs" / "errors.md"
TOK = "../../assets/tiny_tokenizer.json"
N = ["--num-examples", "1000"]


@dataclass(frozen=True)
class Case:
    what: str
    """The bad input, in words."""
    args: tuple
    """`trainsteps` arguments, or for the Python API a dict of keyword arguments."""
    show: str | None = None
    """Exit-0 cases: a piece of the stdout line to show."""


SECTIONS: dict[str, list[Case]] = {
    "Numbers on the command line (every command)": [
        Case("NaN in a step option", ("plan", *N, "--logging-steps", "nan")),
        Case("infinity in a step option", ("plan", *N, "--warmup-steps", "inf")),
        Case("a float that overflows", ("plan", *N, "--save-steps", "1e400")),
        Case("NaN as an evaluation delay", ("plan", "--num-examples", "602", "--eval-delay", "NaN", "--format", "json")),
        Case("a negative evaluation delay", ("plan", *N, "--eval-delay", "-5")),
        Case("a fraction where a whole number is meant", ("plan", "--num-examples", "2.5")),
        Case("a word for a number", ("plan", "--num-examples", "ten")),
        Case("zero examples", ("plan", "--num-examples", "0")),
        Case("a negative count", ("plan", "--num-examples", "-5")),
        Case("an absurdly large count", ("plan", "--num-examples", "1e18")),
        Case("a 22-digit count", ("plan", "--num-examples", "1180591620717411303424")),
        Case("thousands separators in the wrong places", ("plan", "--num-examples", "1,04,7")),
        Case("zero accumulation steps", ("plan", *N, "--gradient-accumulation-steps", "0")),
        Case("zero epochs and no max_steps", ("plan", *N, "--num-train-epochs", "0")),
        Case("a warmup ratio above 1", ("plan", *N, "--warmup-ratio", "1.5")),
        Case("a negative resume step", ("plan", *N, "--resume-from-step", "-1")),
        Case("max_steps beyond any run", ("plan", *N, "--max-steps", "100000000000")),
        Case("NaN as a target epoch count (solve)", ("solve", "--num-examples", "100", "--epochs", "nan")),
        Case("NaN as GPT-NeoX warmup", ("plan", "--framework", "neox", "--train-tokens", "100000", "--seq-length", "200",
                                       "--train-iters", "10", "--train-batch-size", "1", "--warmup", "nan")),
        Case("NaN as Lightning's limit_train_batches", ("plan", "--framework", "lightning", "--num-examples", "10",
                                                        "--limit-train-batches", "nan")),
        Case("a port out of range", ("web", "--port", "70000")),
    ],
    "Settings that cannot make a run": [
        Case("an unknown transformers release", ("plan", "--num-examples", "10", "--transformers", "banana")),
        Case("a release older than the oldest modelled", ("plan", "--num-examples", "10", "--transformers", "4.20.0")),
        Case("a stream without max_steps", ("plan", "--streaming", "--transformers", "4.44.2")),
        Case("both --world-size and --gpus", ("plan", "--num-examples", "10", "--world-size", "2", "--gpus", "2")),
        Case("--nodes without --gpus", ("plan", "--num-examples", "10", "--nodes", "2")),
        Case("an unknown save strategy", ("plan", "--num-examples", "10", "--save-strategy", "sometimes")),
        Case("warmup_ratio on a release that removed it", ("plan", "--num-examples", "10", "--warmup-ratio", "0.1",
                                                           "--transformers", "5.20.0")),
        Case("split_batches with a batch the ranks do not divide", ("plan", *N, "--split-batches",
                                                                    "--per-device-train-batch-size", "3", "--world-size", "2")),
        Case("a tensor-parallel size that does not divide the ranks", ("plan", *N, "--world-size", "4",
                                                                       "--tensor-parallel-size", "3")),
        Case("a pretraining option without its framework", ("plan", "--num-examples", "10", "--train-iters", "5")),
        Case("config files with a pretraining framework", ("plan", "--framework", "neox", "hf_args.yaml")),
        Case("GPT-NeoX with fewer train tokens than one sample", ("plan", "--framework", "neox", "--train-tokens", "100",
                                                                  "--seq-length", "200", "--train-epochs", "2",
                                                                  "--train-batch-size", "1", "--micro-batch-size", "1")),
        Case("a DeepSpeed batch triple that does not multiply out", ("plan", "--framework", "deepspeed", "--train-batch-size", "10",
                                                                     "--micro-batch-size", "3", "--gradient-accumulation-steps", "2")),
        Case("a missing --deepspeed-config file", ("plan", "--framework", "deepspeed", "--deepspeed-config", "missing.json")),
        Case("a DeepSpeed config with NaN", ("plan", "--framework", "deepspeed", "--deepspeed-config", "nan.json")),
        Case("a DeepSpeed batch mismatch inside a config file set", ("plan", "hf_args.yaml", "ds_mismatch.json", *N)),
        Case("an unknown output format", ("plan", "--num-examples", "10", "--format", "xml")),
    ],
    "Names people type": [
        Case("an option that does not exist", ("plan", "--num-examples", "10", "--bogus")),
        Case("--batch-size", ("plan", "--num-examples", "10", "--batch-size", "4")),
        Case("--epochs", ("plan", "--num-examples", "10", "--epochs", "3")),
        Case("--num-gpus", ("plan", "--num-examples", "10", "--num-gpus", "4")),
        Case("--lr (does not change the step count)", ("plan", "--num-examples", "10", "--lr", "3e-4")),
        Case("TrainingArguments spelling with underscores", ("plan", "--num-examples", "10", "--per_device_train_batch_size", "4")),
        Case("a misspelt command", ("plann",)),
        Case("another tool's word for a command", ("serve",)),
    ],
    "Config files": [
        Case("a config file that does not exist", ("plan", "nothere.yaml")),
        Case("YAML with broken indentation", ("plan", "bad_indent.yaml", *N)),
        Case("a !!python tag (never loaded)", ("plan", "python_tag.yaml", *N)),
        Case("a YAML alias bomb (billion laughs)", ("plan", "alias_bomb_llamafactory.yaml", *N)),
        Case("YAML nested 5,000 deep", ("plan", "deep_nesting.yaml", *N)),
        Case("JSON nested 300 deep", ("plan", "deep.json", *N)),
        Case("a YAML list instead of a mapping", ("plan", "list.yaml", *N)),
        Case("a pickled training_args.bin", ("plan", "training_args.bin", *N)),
        Case("NaN in a YAML config", ("plan", "hf_args_logging_nan.yaml", *N)),
        Case("NaN in a JSON config", ("plan", "nan.json", *N)),
        Case("invalid JSON", ("plan", "bad.json", *N)),
        Case("a config that is not UTF-8", ("plan", "gbk.yaml", *N)),
        Case("a file that is no known kind of config", ("plan", "unknown_kind.yaml", *N)),
        Case("a word where a number is meant", ("plan", "epochs_word.yaml", *N)),
        Case("a fractional batch size", ("plan", "batch_fraction.yaml", *N)),
        Case("LLaMA-Factory dataset_dir as a number", ("plan", "lf_dataset_dir_float.yaml")),
        Case("LLaMA-Factory dataset as a number", ("plan", "lf_dataset_int.yaml")),
        Case("LLaMA-Factory dataset_dir without dataset_info.json", ("plan", "lf_no_info.yaml")),
        Case("accelerate num_processes as a word", ("plan", "accelerate_num_processes_text.yaml", *N)),
        Case("Axolotl evals_per_epoch blank", ("plan", "axolotl_zero_division.yml")),
        Case("TRL dataset_name as a mapping", ("plan", "trl_dataset_mapping.yaml")),
        Case("a training script that is not valid Python (parsed, never run)", ("plan", "script_syntax.py", *N)),
        Case("a training script with no TRL / transformers config call", ("plan", "script_no_config.py", *N)),
        Case("an Unsloth release older than the rules", ("plan", "hf_args.yaml", *N, "--unsloth", "2024.1")),
    ],
    "Datasets (`trainsteps count`)": [
        Case("a data file that does not exist", ("count", "missing.jsonl", "--tokenizer", TOK)),
        Case("a glob that matches nothing", ("count", "nothing/*.jsonl", "--tokenizer", TOK)),
        Case("an extension no loader reads", ("count", "rows.xlsx", "--tokenizer", TOK)),
        Case("a truncated .zst", ("count", "truncated.jsonl.zst", "--tokenizer", TOK)),
        Case("a .gz that is not gzip", ("count", "not_gzip.jsonl.gz", "--tokenizer", TOK)),
        Case("a JSON array holding a number", ("count", "array_scalar.json", "--tokenizer", TOK)),
        Case("a cutoff without a tokenizer (rows alone are counted without one)", ("count", "rows.jsonl", "--cutoff-len", "512")),
        Case("--packing without --cutoff-len", ("count", "rows.jsonl", "--tokenizer", TOK, "--packing", "trl-bfd")),
        Case("a line over --max-line-bytes (the count goes on)", ("count", "long_line.jsonl", "--tokenizer", TOK,
                                                                  "--max-line-bytes", "100"), show="long_line.jsonl:1"),
        Case("a JSONL line nested 5,000 deep (the count goes on)", ("count", "deep_line.jsonl", "--tokenizer", TOK),
             show="deep_line.jsonl:1"),
    ],
    "Logs (`trainsteps explain`)": [
        Case("a log file that does not exist", ("explain", "missing.log")),
        Case("a file with no banner or known line", ("explain", "nob.log")),
        Case("an empty file", ("explain", "empty.log")),
        Case("a gzip-compressed log (not decompressed: see docs/explain.md)", ("explain", "log.txt.gz")),
        Case("random bytes", ("explain", "junk.bin")),
        Case("a trainer_state.json cut off mid-way", ("explain", "cut_trainer_state.json")),
        Case("JSON that is not a trainer_state.json", ("explain", "other.json")),
    ],
    "Python API (`trainsteps.plan(...)`)": [
        Case("NaN", {"num_examples": 100, "logging_steps": float("nan")}),
        Case("a fraction of a step", {"num_examples": 100, "resume_from_step": 0.5}),
        Case("a word", {"num_examples": 100, "num_train_epochs": "x"}),
        Case("a mapping", {"num_examples": 100, "warmup_ratio": {"a": 1}}),
        Case("a misspelt keyword", {"num_exampels": 100}),
        Case("another tool's name", {"num_examples": 100, "batch_size": 8}),
        Case("a keyword that does not change the count", {"num_examples": 100, "lr": 3e-4}),
        Case("a flag that is not true/false", {"num_examples": 100, "streaming": "maybe"}),
        Case("a pretraining framework", {"num_examples": 100, "framework": "neox"}),
    ],
}


def run(case: Case) -> tuple[int, str]:
    """(exit code, the line to show) of one case."""
    if isinstance(case.args, dict):
        return _run_api(case.args)
    from click.testing import CliRunner

    from trainsteps.cli.main import main

    class Entry:
        name = "trainsteps"

        def main(self, args=None, prog_name=None, **kwargs):
            main(list(args or []))

    old = os.getcwd()
    os.chdir(FILES)
    try:
        result = CliRunner().invoke(Entry(), list(case.args), catch_exceptions=False)
    finally:
        os.chdir(old)
    if case.show is None:
        lines = result.stderr.strip().splitlines()
        return result.exit_code, " ⏎ ".join(lines)  # more than one line shows, and fails the test
    picked = [line.strip() for line in result.stdout.splitlines() if case.show in line]
    return result.exit_code, picked[0] if picked else "(no line with " + case.show + ")"


def _run_api(kwargs: dict) -> tuple[int, str]:
    import trainsteps

    try:
        trainsteps.plan(**kwargs)
    except trainsteps.TrainstepsError as exc:
        text, hint = exc.render()
        return 2, f"{type(exc).__name__}: {text}" + (f" (hint: {hint})" if hint else "")
    return 0, "(no error)"


def command(case: Case) -> str:
    if isinstance(case.args, dict):
        return "trainsteps.plan(" + ", ".join(f"{k}={v!r}" for k, v in case.args.items()) + ")"
    import shlex

    return "trainsteps " + " ".join(shlex.quote(str(a)) for a in case.args)


def render(results: dict[str, list[tuple[Case, int, str]]]) -> str:
    total = sum(len(rows) for rows in results.values())
    out = [
        "# Bad input: what trainsteps says",
        "",
        f"Every one of these {total} cases is run by `tests/test_errors_catalogue.py`, which compares what it prints with",
        "this page; the page is generated from that test table (`PYTHONPATH=src python -m tests.errors_catalogue --write`).",
        "Bad input gets one line on stderr, `error: what is wrong (hint: how to fix it)`, and exit code 2; a traceback",
        "only with `TRAINSTEPS_DEBUG=1`. A value read from a config file is named with its file and line. Where the answer",
        "can still be given (a malformed line in a dataset), the count goes on, exits 0 and lists the line. The files used",
        "are in `tests/fixtures/errors/`.",
        "",
    ]
    number = 0
    for section, rows in results.items():
        out += [f"## {section}", "", "| # | bad input | command | exit | what it prints |", "|---|---|---|---|---|"]
        for case, code, line in rows:
            number += 1
            out.append(f"| {number} | {_cell(case.what)} | {_code(command(case))} | {code} | {_code(line)} |")
        out.append("")
    return "\n".join(out)


def run_all() -> dict[str, list[tuple[Case, int, str]]]:
    return {section: [(case, *run(case)) for case in cases] for section, cases in SECTIONS.items()}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{_cell(text)}{pad}{fence}"


if __name__ == "__main__":
    text = render(run_all())
    if "--write" in sys.argv:
        DOC.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {DOC} ({sum(len(c) for c in SECTIONS.values())} cases)")
    else:
        print(text)

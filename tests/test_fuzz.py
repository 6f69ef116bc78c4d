"""Bounded fuzzing of every input surface (hypothesis): the contract under bad and hostile input.

Each surface gets generated inputs and is held to the same contract:
- no internal error and no traceback: exit 0 with an answer, or exit 2 with one `error: ...` line;
- bounded: each input within `SECONDS` of CPU time (not wall time: a loaded CI machine must not fail it), and the
  the process's peak memory grows by less than `MEMORY_MB` over the module;
- nothing silently wrong: JSON output is strict JSON (no NaN), and no count in it is negative.

The whole file runs in about a minute (`FUZZ_SCALE=10` for a longer campaign). With `FUZZ_REPORT=path.json` the
outcomes per surface are written out; docs/fuzz.md holds the figures of the last long run.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import resource
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TOKENIZER = ROOT / "tests" / "assets" / "tiny_tokenizer.json"
SCALE = float(os.environ.get("FUZZ_SCALE", "1"))
SECONDS = 10.0
MEMORY_MB = 1024
OUTCOMES: dict[str, Counter] = {}


def _examples(n: int) -> int:
    return max(1, int(n * SCALE))


def fuzz(n: int):
    return settings(max_examples=_examples(n), deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


# ---------------------------------------------------------------- values people (and fuzzers) type

NUMBER_TEXT = st.one_of(
    st.integers(-10, 10**6).map(str),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e309", "1e400", "", " ", "0x10", "1_000", "1,047", "1,04,7", "１２",
                     "٣", "2.5", "-0", "0.0", "9" * 200, "ten", "1e18", "3.0e-5", "1.0", "+5"]),
)
ANY_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), NUMBER_TEXT, st.lists(st.integers(0, 9), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=2),
)


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str, float]:
    from click.testing import CliRunner

    from trainsteps.cli.main import main

    class Entry:
        name = "trainsteps"

        def main(self, args=None, prog_name=None, **kwargs):
            main(list(args or []))

    started = time.process_time()
    result = CliRunner().invoke(Entry(), [str(a) for a in args], input=stdin, catch_exceptions=True)
    took = time.process_time() - started
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # an exception that escaped main() is a traceback for the user
    return result.exit_code, result.stdout, result.stderr, took


def _negative_count(data, path="") -> str | None:
    """A count (steps, samples, tokens, epochs, examples) below zero anywhere in a JSON answer."""
    countish = ("steps", "samples", "tokens", "epochs", "examples", "iterations", "rows", "sequences")
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "inputs" and not path:
                continue  # the settings as given: -1 means "off" in several frameworks (OpenRLHF's save_steps)
            found = _negative_count(value, f"{path}.{key}")
            if found:
                return found
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0 and any(w in key for w in countish) \
                    and key not in ("max_steps", "max_epochs", "resume_from_step"):
                return f"{path}.{key} = {value}"
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found = _negative_count(value, f"{path}[{i}]")
            if found:
                return found
    return None


# a traceback printed by trainsteps itself; a log's own traceback line, quoted back in a finding, is fine
OUR_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):\n  File ", re.M)


def check(surface: str, code: int, out: str, err: str, took: float, json_out: bool = False) -> None:
    """The contract, and the tally of outcomes per surface."""
    tally = OUTCOMES.setdefault(surface, Counter())
    assert not OUR_TRACEBACK.search(err) and not OUR_TRACEBACK.search(out), err[-2000:]
    assert "unexpected internal error" not in err, err
    assert took < SECONDS, f"{took:.1f} s"
    assert code in (0, 2), (code, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(("error: ", "错误：")), err
        tally["clean error (exit 2)"] += 1
        return
    if json_out and out.strip():
        data = json.loads(out, parse_constant=lambda name: pytest.fail(f"bare {name} in the JSON output"))
        negative = _negative_count(data)
        assert negative is None, negative
    tally["answer (exit 0)"] += 1


@pytest.fixture(scope="module", autouse=True)
def _report():
    # ru_maxrss is the process's peak: in a full run, earlier modules (tokenizers, the browser tests) set it first,
    # so the bound is on what the fuzzed inputs add above that peak
    before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    yield
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before_mb
    report = os.environ.get("FUZZ_REPORT")
    if report:
        Path(report).write_text(json.dumps({"peak_rss_mb": round(peak_mb), "scale": SCALE,
                                            "surfaces": {k: dict(v) for k, v in OUTCOMES.items()}}, indent=2))
    assert peak_mb < MEMORY_MB, f"peak RSS {peak_mb:.0f} MB"


# ---------------------------------------------------------------- 1. command-line options

PLAN_OPTIONS = ["--num-examples", "--per-device-train-batch-size", "--gradient-accumulation-steps", "--world-size", "--gpus",
                "--nodes", "--num-train-epochs", "--max-steps", "--resume-from-step", "--warmup-ratio", "--warmup-steps",
                "--logging-steps", "--eval-steps", "--eval-delay", "--save-steps", "--trainable-parameters",
                "--tensor-parallel-size", "--dataset-tokens", "--seq-length"]
PRETRAIN = {
    "neox": ["--train-tokens", "--seq-length", "--train-iters", "--train-epochs", "--train-batch-size", "--micro-batch-size",
             "--gradient-accumulation-steps", "--world-size", "--warmup", "--eval-interval", "--save-interval",
             "--pipeline-parallel-size"],
    "megatron": ["--train-tokens", "--seq-length", "--train-iters", "--train-samples", "--global-batch-size", "--micro-batch-size",
                 "--world-size", "--eval-interval", "--lr-warmup-iters", "--tensor-parallel-size"],
    "deepspeed": ["--train-batch-size", "--micro-batch-size", "--gradient-accumulation-steps", "--world-size"],
    "lightning": ["--num-examples", "--per-device-train-batch-size", "--gradient-accumulation-steps", "--max-epochs",
                  "--max-steps", "--limit-train-batches", "--world-size"],
}
SOLVE_OPTIONS = ["--epochs", "--examples", "--tokens", "--max-steps", "--global-batch", "--num-examples", "--dataset-tokens",
                 "--seq-length", "--per-device-train-batch-size", "--gradient-accumulation-steps", "--gpus"]
SANE = {"--num-examples": "1047", "--train-tokens": "100000", "--seq-length": "128", "--train-iters": "20",
        "--micro-batch-size": "2"}


def _options(names: list[str]):
    picked = st.lists(st.tuples(st.sampled_from(names), st.one_of(NUMBER_TEXT, st.sampled_from(list(SANE.values())))),
                      max_size=5)
    return picked.map(lambda pairs: [x for pair in pairs for x in pair])


@fuzz(150)
@given(_options(PLAN_OPTIONS), st.sampled_from(["--transformers=4.49.0", "--transformers=5.23.0", "--compare-versions",
                                                "--streaming", "--explain"]))
def test_plan_options(args, extra):
    code, out, err, took = _run("plan", "--num-examples", "1047", *args, extra, "--format", "json")
    check("CLI: plan (Trainer)", code, out, err, took, json_out=True)


@fuzz(120)
@given(st.sampled_from(sorted(PRETRAIN)), st.data())
def test_plan_pretraining_options(framework, data):
    args = data.draw(_options(PRETRAIN[framework]))
    base = [x for name in PRETRAIN[framework] if name in SANE for x in (name, SANE[name])]
    code, out, err, took = _run("plan", "--framework", framework, *base, *args, "--format", "json")
    check(f"CLI: plan --framework {framework}", code, out, err, took, json_out=True)


# the planners driven by their own setting names (`--set section.key=value`), and LLaMA-Factory v1's flags
STACKS = {
    "verl": ["data.train_batch_size", "trainer.total_epochs", "trainer.save_freq", "trainer.test_freq",
             "actor_rollout_ref.actor.ppo_mini_batch_size", "actor_rollout_ref.rollout.n", "trainer.n_gpus_per_node"],
    "openrlhf": ["rollout_batch_size", "train_batch_size", "max_epochs", "n_samples_per_prompt", "save_steps", "eval_steps",
                 "num_episodes"],
    "easyr1": ["data.rollout_batch_size", "worker.actor.global_batch_size", "trainer.total_epochs", "trainer.save_freq",
               "trainer.val_freq", "worker.rollout.n"],
    "trl-ppo": ["num_ppo_epochs", "num_mini_batches", "gradient_accumulation_steps", "total_episodes", "num_train_epochs",
                "save_steps", "logging_steps", "per_device_train_batch_size"],
    "torchtitan": ["training.steps", "training.local_batch_size", "training.seq_len", "checkpoint.interval", "validation.freq",
                   "lr_scheduler.warmup_steps", "training.global_batch_size"],
    "automodel": ["step_scheduler.max_steps", "step_scheduler.num_epochs", "step_scheduler.ckpt_every_steps",
                  "step_scheduler.val_every_steps", "step_scheduler.global_batch_size", "step_scheduler.local_batch_size"],
}
STACK_BASE = {"automodel": [str(EXAMPLES / "automodel" / "llama3_2_1b_squad.yaml")], "torchtitan": ["--set", "checkpoint.enable=true"]}
LF_V1 = ["--num-examples", "--micro-batch-size", "--global-batch-size", "--max-steps", "--save-steps", "--num-train-epochs"]


@fuzz(120)
@given(st.sampled_from(sorted(STACKS)), st.data())
def test_plan_stack_settings(framework, data):
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(STACKS[framework]), NUMBER_TEXT), max_size=4))
    settings_ = [x for key, value in pairs for x in ("--set", f"{key}={value}")]
    rows = data.draw(st.one_of(st.just("1000"), NUMBER_TEXT))
    code, out, err, took = _run("plan", "--framework", framework, *STACK_BASE.get(framework, []), "--num-examples", rows, *settings_,
                                "--format", "json")
    check(f"CLI: plan --framework {framework}", code, out, err, took, json_out=True)


@fuzz(40)
@given(_options(LF_V1))
def test_plan_llamafactory_v1_options(args):
    code, out, err, took = _run("plan", "--framework", "llamafactory-v1", str(EXAMPLES / "llamafactory_v1" / "sft.yaml"), *args,
                                "--format", "json")
    check("CLI: plan --framework llamafactory-v1", code, out, err, took, json_out=True)


@fuzz(80)
@given(_options(SOLVE_OPTIONS))
def test_solve_options(args):
    code, out, err, took = _run("solve", *args, "--format", "json")
    check("CLI: solve", code, out, err, took, json_out=True)


# ---------------------------------------------------------------- 2. config files (every format)

CONFIGS = sorted(p for p in EXAMPLES.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and "data" not in p.parts)


@fuzz(150)
@given(st.sampled_from(CONFIGS), st.data())
def test_config_files(config, data):
    import yaml

    text = config.read_text(encoding="utf-8")
    loaded = json.loads(text) if config.suffix == ".json" else yaml.safe_load(text)
    keys = sorted(loaded) if isinstance(loaded, dict) else []
    if keys:
        for key in data.draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)):
            loaded[key] = data.draw(ANY_VALUE)
    mutated = data.draw(st.sampled_from(["values", "truncate", "bytes"]))
    if config.suffix == ".json":
        body = json.dumps(loaded, default=str)
    else:
        body = yaml.safe_dump(loaded, allow_unicode=True)
    raw = body.encode("utf-8")
    if mutated == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    elif mutated == "bytes" and raw:
        at = data.draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + data.draw(st.binary(min_size=1, max_size=4)) + raw[at + 1:]
    target = config.parent / f".fuzz_{config.name}"  # beside the original, so relative data paths resolve
    try:
        target.write_bytes(raw)
        extra = [] if "llamafactory" in config.parts or "axolotl" in config.parts or "trl" in config.parts else ["--num-examples", "500"]
        code, out, err, took = _run("plan", str(target), *extra, "--format", "json")
    finally:
        target.unlink(missing_ok=True)
    check(f"config: {config.parent.name}/{config.suffix}", code, out, err, took, json_out=True)


# ---------------------------------------------------------------- 3. logs

LOGS = sorted((ROOT / "tests" / "fixtures" / "logs").rglob("*.log"))


@fuzz(60)
@given(st.sampled_from(LOGS), st.data())
def test_logs(log, data):
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[:400]
    for _ in range(data.draw(st.integers(0, 4))):
        if not lines:
            break
        at = data.draw(st.integers(0, len(lines) - 1))
        how = data.draw(st.sampled_from(["drop", "dup", "digits", "junk", "cr"]))
        if how == "drop":
            del lines[at]
        elif how == "dup":
            lines.insert(at, lines[at])
        elif how == "digits":
            lines[at] = "".join(data.draw(NUMBER_TEXT) if c.isdigit() else c for c in lines[at][:300])
        elif how == "junk":
            lines[at] = data.draw(st.text(max_size=60))
        else:
            lines[at] = lines[at] + "\r" + lines[at]
    code, out, err, took = _run("explain", "-", "--format", "json", stdin="\n".join(lines))
    check("logs: explain", code, out, err, took, json_out=True)


# ---------------------------------------------------------------- 4. datasets (every format, compressed, corrupt)

ROW = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=40)}),
    st.fixed_dictionaries({"instruction": st.text(max_size=20), "output": st.text(max_size=20)}),
    st.fixed_dictionaries({"messages": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "x"]),
                                                                        "content": st.one_of(st.text(max_size=20), st.none())}),
                                                 max_size=3)}),
    st.dictionaries(st.text(max_size=5), ANY_VALUE, max_size=3),
)


def _dataset_bytes(kind: str, rows: list) -> bytes:
    if kind in ("jsonl", "jsonl.gz", "jsonl.zst"):
        raw = "".join(json.dumps(r, default=str) + "\n" for r in rows).encode()
    elif kind == "json":
        raw = json.dumps(rows, default=str).encode()
    elif kind == "csv":
        raw = ("text\n" + "".join('"' + str(r.get("text", "")).replace('"', '""') + '"\n' for r in rows)).encode()
    elif kind == "txt":
        raw = "".join(str(r.get("text", "")).replace("\n", " ") + "\n" for r in rows).encode()
    else:  # parquet / arrow
        import pyarrow as pa

        table = pa.table({"text": [str(r.get("text", "")) for r in rows]})
        sink = io.BytesIO()
        if kind == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, sink)
        else:
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
        return sink.getvalue()
    if kind.endswith(".gz"):
        return gzip.compress(raw)
    if kind.endswith(".zst"):
        import zstandard

        return zstandard.ZstdCompressor().compress(raw)
    return raw


@fuzz(60)
@given(st.sampled_from(["jsonl", "jsonl.gz", "jsonl.zst", "json", "csv", "txt", "parquet", "arrow"]), st.lists(ROW, max_size=8),
       st.sampled_from(["intact", "truncate", "flip", "append"]), st.data())
def test_datasets(tmp_path_factory, kind, rows, damage, data):
    pytest.importorskip("tokenizers")
    raw = _dataset_bytes(kind, rows)
    if damage == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    elif damage == "flip" and raw:
        at = data.draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1:]
    elif damage == "append":
        raw += data.draw(st.binary(max_size=16))
    folder = tmp_path_factory.mktemp("data")
    path = folder / f"rows.{kind}"
    path.write_bytes(raw)
    extra = data.draw(st.sampled_from([[], ["--cutoff-len", "16", "--packing", "trl-bfd"], ["--max-line-bytes", "64"]]))
    code, out, err, took = _run("count", str(path), "--tokenizer", str(TOKENIZER), "--threads", "1", *extra, "--format", "json")
    check(f"datasets: {kind}", code, out, err, took, json_out=True)


# ---------------------------------------------------------------- 5. the web API (its functions, in-process)

FIELDS = ["num_examples", "per_device_train_batch_size", "gradient_accumulation_steps", "world_size", "num_train_epochs",
          "max_steps", "logging_steps", "eval_steps", "save_steps", "warmup_steps", "warmup_ratio", "eval_delay",
          "resume_from_step", "streaming", "even_batches", "transformers", "eval_strategy", "bogus"]


@fuzz(150)
@given(st.lists(st.tuples(st.sampled_from(FIELDS), st.one_of(NUMBER_TEXT, st.sampled_from(["true", "maybe", "4.49.0"]))),
                max_size=5), st.sampled_from(["/api/plan", "/api/compare", "/api/solve"]))
def test_web_api(pairs, path):
    """The server's GET routes as the handler calls them: 200 with JSON, or 400 with one-line error + hint."""
    from urllib.parse import urlencode

    from trainsteps.web.routes import answer_query

    query = urlencode([("num_examples", "1047"), *pairs])
    started = time.process_time()
    status, body = answer_query(path, query)
    took = time.process_time() - started
    out = json.dumps(body, allow_nan=False)
    assert status in (200, 400), (status, body)
    if status == 200:
        check(f"web API: {path}", 0, out, "", took, json_out=True)
    else:
        assert set(body) >= {"error", "hint"} and "\n" not in body["error"], body
        check(f"web API: {path}", 2, "", "error: " + body["error"], took)


# ---------------------------------------------------------------- 6. the Python API

API_FIELDS = FIELDS[:-1] + ["split_batches", "dataloader_drop_last", "logging_strategy", "save_strategy", "seq_length",
                            "dataset_tokens", "trainable_parameters", "tensor_parallel_size", "gpus", "nodes", "batch_size",
                            "lr", "framework"]


@fuzz(300)
@given(st.dictionaries(st.sampled_from(API_FIELDS), ANY_VALUE, max_size=5))
def test_python_api(kwargs):
    import trainsteps

    kwargs.setdefault("num_examples", 1047)
    started = time.process_time()
    code, out, err = 0, "", ""
    try:
        schedule = trainsteps.plan(**kwargs)
        out = json.dumps(schedule.to_dict(), allow_nan=False)
        trainsteps.render(schedule)
    except trainsteps.TrainstepsError as exc:
        code, err = 2, "error: " + exc.render()[0]
    check("Python API: trainsteps.plan", code, out, err, time.process_time() - started, json_out=True)

"""TrainstepsCallback inside real Trainer runs (CPU, tiny model): what it reports equals what the
model's forward really received, on one rank and on two (torchrun, gloo), for map-style and
iterable datasets; a max_steps from `solve` covers the epochs asked for; faults never stop training.

Set TRAINSTEPS_LIVE_OLD_PYTHON to a python with torch and an older transformers (e.g. made by
`TRANSFORMERS=4.49.0 bash tools/setup_live_env.sh /tmp/venv-449`) to repeat the checks on that release.
"""

from __future__ import annotations

import logging
import math
import os

import pytest

from .conftest import needs, run_worker

pytestmark = pytest.mark.live
needs("torch", "transformers", "accelerate")

import trainsteps  # noqa: E402
from trainsteps.solver import solve  # noqa: E402
from trainsteps.spec import RunSpec  # noqa: E402

from .tiny import tokens_of  # noqa: E402

BS, GA = 4, 2


def scenarios(n_map: int, n_stream: int, world: int, version: str | None) -> list[dict]:
    spec = RunSpec(streaming=True, num_examples=n_stream, per_device_train_batch_size=BS, gradient_accumulation_steps=GA,
                   world_size=world, transformers=version)
    steps = solve(spec, "epochs", 2).ceil.max_steps
    map_spec = RunSpec(num_examples=n_map, per_device_train_batch_size=BS, gradient_accumulation_steps=GA, world_size=world,
                       transformers=version)
    map_steps = solve(map_spec, "epochs", 2.5).ceil.max_steps
    return [
        {"name": "map", "n": n_map, "bs": BS, "ga": GA, "epochs": 2},
        {"name": "map_solved", "n": n_map, "bs": BS, "ga": GA, "max_steps": map_steps},
        {"name": "stream", "n": n_stream, "bs": BS, "ga": GA, "max_steps": steps, "iterable": True},
        {"name": "fault", "n": 40, "bs": BS, "ga": 1, "max_steps": 5, "iterable": True, "fault": "hook", "fault_rank": world - 1},
    ]


def check(results_per_rank: list[list[dict]], world: int, n_map: int, n_stream: int) -> None:
    by_name = [{r["name"]: r for r in rank} for rank in results_per_rank]
    version = by_name[0]["map"]["transformers"]
    for name, n in (("map", n_map), ("stream", n_stream)):
        runs = [rank[name] for rank in by_name]
        rows = sum(r["model_rows"] for r in runs)
        tokens = sum(r["model_tokens"] for r in runs)
        for r in runs:  # every rank reports the totals over all ranks
            assert (r["callback_samples"], r["callback_tokens"]) == (rows, tokens), (name, version)
            assert r["callback_enabled"] and not any("switched off" in w for w in r["warnings"])
        last = runs[0]["log_history"][-1]
        assert last["samples_seen"] == rows and last["tokens_seen"] == tokens
        assert math.isclose(last["equivalent_epoch"], rows / n, abs_tol=1e-6)
        plan = runs[0]["plan"]
        assert plan["samples_seen"] == rows and plan["max_steps"] == runs[0]["max_steps"], (name, version)
        if name == "map":  # the early stop of 4.47-4.51 is announced at train begin exactly when the real run stops short
            stops_short = runs[0]["state_epoch"] < 2 - 1e-9
            assert stops_short == ("HF_PLAN_LOOP_MISMATCH" in plan["warnings"]), version
            assert stops_short == any("HF_PLAN_LOOP_MISMATCH" in w for w in runs[0]["warnings"])
        if name == "stream":
            # solve's max_steps covers the 2 epochs asked for; one step fewer would not (the overshoot is
            # less than one optimizer step, which may carry the leftover batches of a pass)
            spec = RunSpec(streaming=True, num_examples=n, per_device_train_batch_size=BS, gradient_accumulation_steps=GA,
                           world_size=world, transformers=version)
            answer = solve(spec, "epochs", 2)
            assert answer.ceil.max_steps == runs[0]["max_steps"]
            assert rows / n >= 2 and (answer.exact or answer.floor.epochs < 2)
            assert math.isclose(plan["equivalent_epochs"], rows / n, abs_tol=1e-4)
            assert "HF_STREAM_EPOCH_MISLEADING" in plan["warnings"]
            if world == 1:  # one rank reads the stream in order: two whole passes, then the start of a third
                assert tokens == 2 * tokens_of(n) + tokens_of(rows - 2 * n)
    # map-style: solve's max_steps for 2.5 epochs ends the real run at epoch 2.5 (or the least step past it)
    solved = by_name[0]["map_solved"]
    map_spec = RunSpec(num_examples=n_map, per_device_train_batch_size=BS, gradient_accumulation_steps=GA, world_size=world,
                       transformers=version)
    answer = solve(map_spec, "epochs", 2.5)
    assert solved["max_steps"] == solved["global_step"] == answer.ceil.max_steps
    assert math.isclose(solved["state_epoch"], answer.ceil.epochs, abs_tol=1e-4) and solved["state_epoch"] >= 2.5
    assert answer.exact or answer.floor.epochs < 2.5
    assert sum(rank["map_solved"]["model_rows"] for rank in by_name) == solved["callback_samples"] == answer.ceil.samples_seen
    faults = [rank["fault"] for rank in by_name]
    for r in faults:
        assert r["global_step"] == r["max_steps"] == 5  # training went on to the end
        assert r["callback_enabled"] is False
    assert sum(any("injected fault" in w for w in r["warnings"]) for r in faults) == 1


def test_one_rank_newest():
    from .hf_worker import run

    check([[run(sc, 0) for sc in scenarios(50, 50, 1, None)]], 1, 50, 50)


def test_two_ranks_newest(tmp_path):
    # 51 rows: the last dispatch of 3 rows gives each rank 2, so one row is fed twice per pass
    check(run_worker("hf_worker.py", scenarios(50, 51, 2, None), tmp_path, ranks=2), 2, 50, 51)


OLD = os.environ.get("TRAINSTEPS_LIVE_OLD_PYTHON")


@pytest.mark.skipif(not OLD, reason="set TRAINSTEPS_LIVE_OLD_PYTHON to a python with an older transformers")
@pytest.mark.parametrize("world", [1, 2])
def test_older_release(tmp_path, world):
    import subprocess

    version = subprocess.run([OLD, "-c", "import transformers; print(transformers.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    results = run_worker("hf_worker.py", scenarios(50, 51, world, version), tmp_path, ranks=world, python=OLD)
    assert results[0][0]["transformers"] == version
    check(results, world, 50, 51)


# --- in-process: faults at every stage never stop training -----------------------------------------


@pytest.mark.parametrize("fault", ["hook", "log", "begin", "counter_local"])
def test_an_internal_error_becomes_one_warning_and_training_goes_on(fault, tmp_path, caplog):
    from transformers import Trainer, TrainingArguments

    from trainsteps.integrations.hf import TrainstepsCallback

    from .tiny import MapRows, TinyLM, collate

    cb = TrainstepsCallback()

    def boom(*a, **k):
        raise RuntimeError("injected fault")

    if fault == "hook":
        original = cb._train_begin

        def begin(*a, **k):
            original(*a, **k)
            cb._counter.add = boom
        cb._train_begin = begin
    elif fault == "log":
        cb._log = boom
    elif fault == "begin":
        cb._move_before_reporters = boom
    else:
        cb._counter.local = boom
        original = cb._train_begin

        def begin(*a, **k):
            original(*a, **k)
            cb._counter.local = boom
        cb._train_begin = begin
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=4, logging_steps=1, report_to=[],
                             save_strategy="no", use_cpu=True, disable_tqdm=True, remove_unused_columns=False)
    trainer = Trainer(model=TinyLM(), args=args, train_dataset=MapRows(20), data_collator=collate, callbacks=[cb])
    with caplog.at_level(logging.WARNING, logger="transformers.trainsteps"):
        trainer.train()
    assert trainer.state.global_step == 4
    assert cb.enabled is False
    assert len([r for r in caplog.records if "switched off" in r.getMessage()]) == 1


def test_the_plan_warns_about_the_early_stop_release_and_a_disagreeing_max_steps(tmp_path, caplog):
    """The callback plans with the installed release; a forced release shows the 4.47-4.51 warning path."""
    from transformers import Trainer, TrainingArguments

    from trainsteps.integrations.hf import TrainstepsCallback

    from .tiny import MapRows, TinyLM, collate

    cb = TrainstepsCallback()
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=10, gradient_accumulation_steps=8,
                             num_train_epochs=3, logging_steps=50, report_to=[], save_strategy="no", use_cpu=True,
                             disable_tqdm=True, remove_unused_columns=False, max_steps=2)
    trainer = Trainer(model=TinyLM(), args=args, train_dataset=MapRows(105), data_collator=collate, callbacks=[cb])
    trainer.train()
    assert cb.schedule.run.max_steps == trainer.state.max_steps == 2
    early = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, transformers="4.49.0")
    assert "HF_PLAN_LOOP_MISMATCH" in [t.code for t in early.warnings]


def test_timed_evaluation_and_checkpoints(tmp_path):
    from transformers import Trainer, TrainingArguments

    from trainsteps.integrations.hf import TrainstepsCallback

    from .tiny import MapRows, TinyLM, collate

    cb = TrainstepsCallback(eval_every_minutes=1e-9, save_every_minutes=1e-9)
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=3, logging_steps=10, report_to=[],
                             eval_strategy="steps", eval_steps=1000, save_strategy="steps", save_steps=1000, use_cpu=True,
                             disable_tqdm=True, remove_unused_columns=False)
    trainer = Trainer(model=TinyLM(), args=args, train_dataset=MapRows(20), eval_dataset=MapRows(8), data_collator=collate,
                      callbacks=[cb])
    trainer.train()
    evals = [e["step"] for e in trainer.state.log_history if "eval_loss" in e]
    assert evals == [1, 2, 3]
    assert sorted(p.name for p in tmp_path.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2", "checkpoint-3"]


def test_a_plan_that_disagrees_with_the_trainer_is_reported(tmp_path, caplog, monkeypatch):
    from transformers import Trainer, TrainingArguments

    import trainsteps as package
    from trainsteps.integrations.hf import TrainstepsCallback

    from .tiny import MapRows, TinyLM, collate

    real_plan = package.plan

    def off_by_one(spec):
        s = real_plan(spec)
        s.run.max_steps += 1
        return s
    monkeypatch.setattr(package, "plan", off_by_one)
    cb = TrainstepsCallback()
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=3, logging_steps=10, report_to=[],
                             save_strategy="no", use_cpu=True, disable_tqdm=True, remove_unused_columns=False)
    trainer = Trainer(model=TinyLM(), args=args, train_dataset=MapRows(20), data_collator=collate, callbacks=[cb])
    with caplog.at_level(logging.WARNING, logger="transformers.trainsteps"):
        trainer.train()
    assert any("the Trainer plans max_steps=3 but trainsteps computes 4" in r.getMessage() for r in caplog.records)
    assert cb.enabled and cb.samples_seen == 12


def test_reporting_callbacks_listed_before_it_still_see_the_values(tmp_path):
    """The Trainer calls user callbacks after the reporting ones; the callback moves itself first."""
    from transformers import Trainer, TrainerCallback, TrainingArguments

    from trainsteps.integrations.hf import TrainstepsCallback

    from .tiny import MapRows, TinyLM, collate

    class Reporter(TrainerCallback):
        def __init__(self):
            self.seen = []

        def on_log(self, args, state, control, logs=None, **kwargs):
            self.seen.append(dict(logs))

    reporter, cb = Reporter(), TrainstepsCallback()
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=3, logging_steps=1, report_to=[],
                             save_strategy="no", use_cpu=True, disable_tqdm=True, remove_unused_columns=False)
    trainer = Trainer(model=TinyLM(), args=args, train_dataset=MapRows(20), data_collator=collate, callbacks=[reporter, cb])
    trainer.train()
    assert [entry["samples_seen"] for entry in reporter.seen if "loss" in entry] == [4, 8, 12]

"""The inference asks the plan engine for the same settings more than once (a family's probe, drop_last that changes
nothing, the contrast with the other rounding): each distinct setting is replayed once per run."""

import trainsteps.frameworks.hf as hf_engine
from trainsteps.logs import infer, read_log
from trainsteps.record import replace
from trainsteps.spec import RunSpec


def _counted_engine(monkeypatch) -> list:
    calls = []
    engine = hf_engine.plan
    monkeypatch.setattr(hf_engine, "plan", lambda spec: calls.append(spec) or engine(spec))
    return calls


def test_the_same_settings_asked_again_run_the_engine_once(monkeypatch):
    calls = _counted_engine(monkeypatch)
    infer._REPLAYS.clear()
    spec = RunSpec(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=3.0)
    again = RunSpec(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, num_train_epochs=3.0)
    first = infer._plan(spec)
    assert infer._plan(again) is first and first.run.max_steps == 42
    assert len(calls) == 1


def test_a_replay_leaves_the_settings_as_the_engine_leaves_them():
    infer._REPLAYS.clear()
    planned, replayed = (RunSpec(num_examples=1047, per_device_train_batch_size=10, logging_steps=500) for _ in range(2))
    infer._plan(planned)
    infer._plan(replayed)
    assert repr(replayed) == repr(planned) and type(replayed.logging_steps) is type(planned.logging_steps) is float


def test_settings_the_engines_check_makes_equal_are_replayed_once(monkeypatch):
    calls = _counted_engine(monkeypatch)
    infer._REPLAYS.clear()
    spec = RunSpec(num_examples=1047, per_device_train_batch_size=10, num_train_epochs=3.0, logging_steps=500.0)
    infer._plan(spec)
    infer._plan(replace(spec, num_train_epochs=3, logging_steps=500))  # the engine reads both as 3.0 and 500.0
    infer._plan(replace(spec, num_train_epochs=4))
    assert len(calls) == 2


def test_each_run_starts_with_no_replays_kept(monkeypatch):
    calls = _counted_engine(monkeypatch)
    banner = "Num examples = 1,047\nNum Epochs = 3\nInstantaneous batch size per device = 10\nTotal optimization steps = 315\n"
    for _ in range(2):
        infer.infer(read_log(text=banner).runs[0])
    assert len(calls) % 2 == 0 and len(calls) >= 2
    assert len(infer._REPLAYS) == len(calls) // 2

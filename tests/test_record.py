"""`@record`: the core's value classes behave as dataclasses, and deferred fields compute once, when read."""

import dataclasses
import pickle

import pytest

import trainsteps
from trainsteps.record import Deferred, FrozenError, field, record


@record
class Box:
    """A record with a deferred field."""

    label: str
    text: list = field(deferred=True)
    extra: dict = field(default_factory=dict, deferred=True)


@record(frozen=True, order=True)
class Pair:
    a: int
    b: int = 0


calls = []


def _make_text(label):
    calls.append(label)
    return [label.upper()]


def test_a_deferred_field_is_computed_on_its_first_read_only():
    calls.clear()
    box = Box("x", Deferred(_make_text, "x"))
    assert calls == []
    assert box.text == ["X"] and box.text is box.text
    assert calls == ["x"]


def test_a_deferred_field_takes_plain_values_and_defaults_like_any_field():
    box = Box("y", ["Y"])
    assert box.text == ["Y"] and box.extra == {}
    box.extra = {"k": 1}
    assert box.extra == {"k": 1}


def test_records_with_deferred_fields_compare_repr_copy_and_pickle_by_value():
    lazy, plain = Box("z", Deferred(_make_text, "z")), Box("z", ["Z"])
    assert lazy == plain
    assert repr(plain) == "Box(label='z', text=['Z'], extra={})"
    assert dataclasses.replace(lazy, label="w").text == ["Z"]
    assert dataclasses.asdict(lazy) == {"label": "z", "text": ["Z"], "extra": {}}
    assert pickle.loads(pickle.dumps(Box("q", Deferred(_make_text, "q")))).text == ["Q"]


def test_frozen_records_refuse_assignment_and_order_by_their_fields():
    p = Pair(1, 2)
    with pytest.raises(FrozenError):
        p.a = 3
    assert Pair(1, 2) < Pair(2, 0) and hash(Pair(1, 2)) == hash(Pair(1, 2))
    assert [f.name for f in dataclasses.fields(Pair)] == ["a", "b"]


def test_a_plan_builds_its_banner_and_settings_only_when_read_and_they_match_the_settings():
    spec = trainsteps.RunSpec(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8,
                              num_train_epochs=300, transformers="4.49.0")
    schedule = trainsteps.plan(spec)
    unread = [name for name in ("banner", "banner_lines", "inputs")
              if type(type(schedule).__dict__[name].slot.__get__(schedule)) is Deferred]
    assert unread == ["banner", "banner_lines", "inputs"]
    spec.num_examples = 5  # a later change to the spec does not reach the plan made before it
    assert schedule.inputs["num_examples"] == 1047
    assert schedule.banner["Num examples"] == "1,047"
    assert schedule.banner_lines[0] == "***** Running training *****"
    assert schedule.banner_lines[1:] == [f"  {k} = {v}" for k, v in schedule.banner.items()]


def _records_compiled_by(command: list[str]) -> tuple[str, int, bool]:
    """(the records whose `__init__` a run of `command` compiled, how many records it built, whether it loaded the
    explain-only precompiled module), in a fresh process."""
    import subprocess
    import sys

    code = ("import contextlib, io, sys\nfrom trainsteps import record\nfrom trainsteps.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
            "    main(sys.argv[1:])\n"
            "print(record.COMPILED, len(record.SOURCES), 'trainsteps._record_inits_logs' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True, check=True).stdout.split()
    return out[0], int(out[1]), out[2] == "True"


def test_every_record_on_the_plan_path_takes_its_init_precompiled():
    """`trainsteps plan` compiles no record `__init__` at start-up: src/trainsteps/_record_inits.py holds them. After
    changing a record class on the plan path, run `python tools/gen_record_inits.py`."""
    compiled, built, log_inits = _records_compiled_by(["plan", "--num-examples", "1047", "--num-train-epochs", "300", "--explain"])
    assert compiled == "[]", f"compiled at start-up (run tools/gen_record_inits.py): {compiled}"
    assert built >= 10
    assert not log_inits  # the log readers' precompiled records are not loaded by plan


def test_every_record_on_the_explain_path_takes_its_init_precompiled():
    """`trainsteps explain` builds the log readers' records too (observations, timing, inference): none is compiled at
    start-up. After changing one, run `python tools/gen_record_inits.py`."""
    from pathlib import Path

    log = Path(__file__).parent / "fixtures" / "logs" / "seed_001_1047.log"
    compiled, built, _ = _records_compiled_by(["explain", str(log)])
    assert compiled == "[]", f"compiled at start-up (run tools/gen_record_inits.py): {compiled}"
    assert built >= 20  # the RL, pretraining and time-model records load only with lines of theirs


def test_the_records_of_logs_with_bars_rl_or_pretraining_lines_take_their_inits_precompiled_too():
    """Their readers load with their first line, after a banner's; tools/gen_record_inits.py explains such logs too."""
    from pathlib import Path

    logs = Path(__file__).parent / "fixtures" / "logs"
    for log in ("corpus/hf-cpt-windows-crlf-evalpauses.log", "wild/verl-1334-dapo-terminate-unexpectedly-199-of-1119.log",
                "wild/megatron-60-iteration-lines.log", "wild/primerl-1360-signal-15-at-step-0.log"):
        compiled, _, _ = _records_compiled_by(["explain", str(logs / log)])
        assert compiled == "[]", f"{log} compiled (run tools/gen_record_inits.py): {compiled}"


def test_a_record_missing_from_the_precompiled_module_is_compiled_with_its_defaults():
    from trainsteps import record

    assert "Box" in record.COMPILED and "Pair" in record.COMPILED
    assert Pair(1).b == 0 and Box("a", ["A"]).extra == {}


def test_replace_copies_a_record_with_the_changed_fields_as_dataclasses_replace_does():
    from trainsteps.record import replace

    pair = Pair(1, 2)
    assert replace(pair, b=5) == Pair(1, 5) == dataclasses.replace(pair, b=5)
    assert replace(pair) == pair and replace(pair) is not pair
    box = replace(Box("a", ["A"]), label="b")
    assert (box.label, box.text, box.extra) == ("b", ["A"], {})
    with pytest.raises(TypeError, match="no field 'c'"):
        replace(pair, c=1)

"""The RL, RL-stack and pretraining collectors load with the first line of their kind (logs/reader.py `WhenSeen`): what
they collect through that gate is what they collect from every line, on every stored log."""

from pathlib import Path

import pytest

from trainsteps.logs import pretrain, read_log, reader, rl, rl_stacks
from trainsteps.logs.pretrain import PretrainObserved
from trainsteps.logs.rl import RLObserved
from trainsteps.logs.rl_stacks import StackObserved

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOGS = sorted(p for folder in (FIXTURES / "logs", FIXTURES / "rl_stacks" / "logs") for p in folder.rglob("*")
              if p.suffix in (".log", ".txt", ".jsonl", ".out") and p.is_file())


def test_each_gate_holds_the_words_its_collector_reads():
    assert reader.RL_WORDS == rl.WORDS
    assert reader.STACK_WORDS == rl_stacks.WORDS
    assert reader.PRETRAIN_WORDS == pretrain.WORDS


def _rl_state(collector: RLObserved | None) -> tuple:
    collector = collector or RLObserved()
    return collector.to_dict(), collector.lines, collector.crash, collector.bar_seconds, collector.bar_elapsed


def _stack_state(collector: StackObserved | None) -> tuple:
    collector = collector or StackObserved()
    return collector.framework, collector.step, collector.total, collector.epoch, collector.seconds, collector.clock


def _pretrain_state(collector: PretrainObserved | None) -> dict:
    return (collector or PretrainObserved()).finish()


@pytest.fixture(scope="module")
def both_ways() -> list[tuple[Path, tuple, tuple]]:
    """(log, the collectors fed every line, the gated ones) for every stored log, read once each."""
    out = []
    for path in LOGS:
        eager = (RLObserved(), StackObserved(), PretrainObserved())
        gated = (reader.rl_collector(), reader.stack_collector(), reader.pretrain_collector())
        read_log(str(path), also=reader.each_of(*(c.feed for c in eager), *(g.feed for g in gated)))
        out.append((path, eager, tuple(g.collector for g in gated)))
    return out


def test_a_gated_collector_reads_what_one_fed_every_line_reads(both_ways):
    for path, (rl_all, stacks_all, pretrain_all), (rl_gated, stacks_gated, pretrain_gated) in both_ways:
        assert _rl_state(rl_gated) == _rl_state(rl_all), path
        assert _stack_state(stacks_gated) == _stack_state(stacks_all), path
        assert _pretrain_state(pretrain_gated) == _pretrain_state(pretrain_all), path


def test_the_stored_logs_wake_each_collector_and_a_trainer_banner_wakes_none(both_ways):
    woken = {name: {path.name for path, _, gated in both_ways if gated[i] is not None}
             for i, name in enumerate(("rl", "stacks", "pretrain"))}
    assert all(len(names) >= 5 for names in woken.values()), {k: len(v) for k, v in woken.items()}
    assert not any("seed_001_1047.log" in names for names in woken.values())


def test_an_rl_line_after_others_keeps_its_line_number():
    gate = reader.rl_collector()
    read_log(text="Num examples = 1,047\nTotal optimization steps = 3,900\nstep:7 - actor/pg_loss:0.1 - training/epoch:0",
             also=gate.feed)
    assert gate.collector.last_step == 7 and gate.collector.lines["last_step"] == 3


def test_the_unsloth_gate_holds_the_words_its_parser_starts_with():
    from trainsteps.logs import unsloth

    assert reader.UNSLOTH_WORDS == unsloth.WORDS


def test_parsers_loaded_with_their_first_line_read_the_runs_parsers_loaded_at_once_read(monkeypatch):
    from trainsteps.logs import axolotl, deepspeed, hf, launch, llamafactory, model_card, stated, unsloth

    every = (unsloth.scan, hf.scan, llamafactory.scan, axolotl.scan, deepspeed.scan, launch.scan, model_card.scan, stated.scan)
    for path in LOGS:
        monkeypatch.setattr(reader, "PARSERS", reader.PARSERS_ON_FIRST_LINE)
        gated = [run.to_dict() for run in read_log(str(path)).runs]
        monkeypatch.setattr(reader, "PARSERS", every)
        assert [run.to_dict() for run in read_log(str(path)).runs] == gated, path


def test_every_word_stated_reads_holds_one_of_the_needles_that_load_it():
    from trainsteps.logs import stated

    assert all(any(word in needle for word in reader.STATED_NEEDLES) for needle in (*stated.NEEDLES, *stated.SAID_NEEDLES))
    assert reader.STATED_WORDS == ("# ", *reader.STATED_NEEDLES)  # a post's title is read without a needle


def test_a_title_naming_an_error_without_a_needle_still_loads_stated():
    runs = read_log(text="# Exception raised from c10_cuda_check_implementation\nNum examples = 10\n")
    assert "stated_failure" in runs.stated

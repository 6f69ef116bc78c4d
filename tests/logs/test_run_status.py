"""`explain --format json`: status / end_step / planned_end_step on real corpus logs (facts from their threads)."""

import json

import pytest
from click.testing import CliRunner

from trainsteps.cli.main import cli

from .conftest import FIXTURES

CORPUS = FIXTURES / "corpus"


def _item(name):
    meta = json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))
    paths = [CORPUS / meta["file"]] + [CORPUS / c for c in meta.get("companions") or []]
    result = CliRunner().invoke(cli, ["explain", *map(str, paths), "--format", "json"])
    assert result.exit_code == 0, result.output
    return meta["facts"], json.loads(result.output)["runs"][-1]


@pytest.mark.parametrize("name, total", [("lf-8261-nccl-timeout", "total_steps"), ("lf-7820-sigterm-step100", "bar_total")])
def test_a_crashed_run_ends_at_the_crash_not_at_the_planned_end(name, total):
    facts, run = _item(name)
    assert run["status"] == run["stopped"] == facts["stopped"] == "crashed"
    assert run["end_step"] == facts["stop_step"]
    assert run["planned_end_step"] == facts[total]
    assert run["end_step"] < run["planned_end_step"]


def test_a_finished_run_ends_at_its_last_logged_step():
    # LLaMA-Factory's final trainer_log.jsonl line: current_steps 6,565 of total_steps 6,566
    facts, run = _item("lf-qwen25-3b-2gpu-dup-jsonl")
    assert run["status"] == facts["stopped"] == "finished"
    assert run["stopped"] is None
    assert run["end_step"] == facts["stop_step"]
    assert run["planned_end_step"] == facts["total_steps"]


def test_a_run_still_running_has_no_end_step():
    # the file ends at step 202 of 5,100 with no end-of-training line
    facts, run = _item("lf360-dpo-interrupted-jsonl")
    assert run["status"] == "running"
    assert run["stopped"] is None and run["end_step"] is None
    assert run["planned_end_step"] == facts["total_steps"]
    assert run["time"]["at_step"] == facts["stop_step"]


def test_a_banner_alone_is_unknown():
    result = CliRunner().invoke(cli, ["explain", str(FIXTURES / "seed_001_1047.log"), "--format", "json"])
    run = json.loads(result.output)["runs"][-1]
    assert run["status"] == "unknown" and run["end_step"] is None and run["planned_end_step"] == 3900

"""The engine equals every run of the real Trainer recorded by tools/record_hf.py.

Each fixture file holds one transformers release; each run is the real banner and what the
real loop did. Regenerate with the command in the file's "regenerate" field.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import trainsteps
from trainsteps.errors import InputError
from trainsteps.spec import RunSpec

from .conftest import FIXTURES, load_json

FIELDS = set(RunSpec.field_names())
FILES = sorted((FIXTURES / "hf").glob("transformers-*.json"))


def _runs():
    for path in FILES:
        data = load_json(path)
        for run in data["runs"]:
            yield pytest.param(data["transformers"], run, id=f"{data['transformers']}-{run['case']}")


# Failures of the recording environment (torch 2.13 loading an old checkpoint), not of the Trainer.
ENVIRONMENT_ERRORS = ("don't know how to restore data location",)


def spec_of(version: str, run: dict) -> RunSpec:
    settings = {k: v for k, v in run["inputs"].items() if k in FIELDS and v is not None}
    settings["trainable_parameters"] = run.get("trainable_parameters")
    return RunSpec(transformers=version, **settings)


def test_fixtures_cover_every_family_with_enough_cases():
    versions = {load_json(p)["transformers"] for p in FILES}
    families = {trainsteps.plan(num_examples=10, transformers=v).family for v in versions}
    assert families >= {"4.30", "4.31-4.45", "4.46", "4.47-4.51", "4.52-4.56", "4.57+"}
    assert all(len(load_json(p)["runs"]) >= 40 for p in FILES)


@pytest.mark.parametrize("version, run", list(_runs()))
def test_engine_equals_the_recorded_run(version, run):
    spec = spec_of(version, run)
    if run["error"] and any(text in run["error"] for text in ENVIRONMENT_ERRORS):
        pytest.skip(f"the recording environment failed: {run['error'][:80]}")
    if run["error"] and not run["error"].startswith("harness:"):
        with pytest.raises(InputError) as caught:
            trainsteps.plan(spec)
        framework_text = run["error"].split("\n")[0]
        if "__len__" in framework_text:
            assert framework_text in str(caught.value)
        return
    s = trainsteps.plan(spec)
    if run["error"]:  # the recorder stopped a run that never ends
        assert "HF_STREAM_NEVER_ENDS" in [t.code for t in s.warnings]
        return
    assert s.banner_lines == run["banner_lines"][: len(s.banner_lines)] and s.banner == {
        k: v for k, v in run["banner"].items() if k in s.banner
    }
    assert len(s.banner_lines) == len([line for line in run["banner_lines"] if not _is_resume_line(line)])
    assert s.run.optimizer_steps == run["final_global_step"]
    assert s.run.max_steps == run["max_steps"]
    assert s.run.epoch_end_steps == run["epoch_end_steps"]
    if s.run.epochs_completed is not None:
        assert math.isclose(s.run.epochs_completed, run["state_epoch"], abs_tol=1e-4)
    assert s.run.save_steps == run["save_steps"]
    assert s.run.eval_steps == run["eval_steps"]
    assert s.run.log_steps == run["log_steps"]
    if run["warmup_steps"] is not None:
        assert s.run.warmup_steps == run["warmup_steps"]
    assert s.run.real_optimizer_updates == run["real_optimizer_updates"]
    if s.run.samples_seen is not None:
        assert s.run.samples_seen == run["samples_seen"]


def _is_resume_line(line: str) -> bool:
    return any(word in line for word in ("Continuing training", "Will skip", "Resuming training", "Fast-forwarding"))


def test_fixture_files_say_how_to_regenerate_them():
    for path in FILES:
        assert "tools/record_hf.py" in load_json(path)["regenerate"], Path(path).name

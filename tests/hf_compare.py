"""Compare the engine with one recorded run of the real Trainer (used by the fixture and live tests)."""

from __future__ import annotations

import math

import pytest

import trainsteps
from trainsteps.errors import InputError
from trainsteps.spec import RunSpec

FIELDS = set(RunSpec.field_names())
# Failures of the recording environment (torch 2.13 loading an old checkpoint), not of the Trainer.
ENVIRONMENT_ERRORS = ("don't know how to restore data location",)


def spec_of(version: str, run: dict) -> RunSpec:
    settings = {k: v for k, v in run["inputs"].items() if k in FIELDS and v is not None}
    settings["trainable_parameters"] = run.get("trainable_parameters")
    if settings.get("resume_from_step"):  # the recorder wrote checkpoint-K with save_steps=K (fixture notes, "resume")
        settings["checkpoint_save_steps"] = settings["resume_from_step"]
    if settings.get("save_strategy") == "best" and run.get("eval_losses"):
        settings["improving_evals"] = improving_evals(run)
    return RunSpec(transformers=version, **settings)


def improving_evals(run: dict) -> str:
    """The evaluations whose recorded eval_loss beat every earlier one (in the run's direction): what a user
    tells the plan with --improving-evals. The losses are the Trainer's own, from on_evaluate."""
    inputs = run["inputs"]
    greater = inputs.get("greater_is_better")
    if greater is None:
        greater = not str(inputs.get("metric_for_best_model") or "loss").endswith("loss")
    best, steps = None, []
    for step, loss in zip(run["eval_steps"], run["eval_losses"], strict=True):
        if best is None or (loss > best if greater else loss < best):
            best = loss
            steps.append(step)
    return ",".join(map(str, steps))


def assert_engine_matches(version: str, run: dict) -> None:
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



"""Every banner recorded from a real Trainer run (tests/fixtures/hf, tools/record_hf.py) read back by explain:
the settings it was run with must be recovered, or lie in the range explain reports."""

import json
import os
from pathlib import Path

import pytest

from trainsteps.logs import read_log
from trainsteps.logs.infer import MAXSIZE, infer
from trainsteps.versions import Version

DIRECTORY = Path(os.environ.get("TRAINSTEPS_HF_FIXTURES", Path(__file__).resolve().parents[1] / "fixtures" / "hf"))


def _cases():
    for path in sorted(DIRECTORY.glob("transformers-*.json")) if DIRECTORY.is_dir() else []:
        data = json.loads(path.read_text())
        for run in data.get("runs", []):
            if run.get("log_text") and not run.get("error"):
                yield pytest.param(data["transformers"], run, id=f"{data['transformers']}-{run['case']}")


CASES = list(_cases())


def _contains(known, value) -> bool:
    if known.choices is None and known.low is not None and isinstance(known.low, str):
        return Version.parse(known.low) <= Version.parse(value) <= Version.parse(known.high)
    return known.contains(value)


@pytest.mark.skipif(not CASES, reason=f"no recorded runs in {DIRECTORY}")
@pytest.mark.parametrize(("version", "recorded"), CASES or [pytest.param(None, None, id="none")])
def test_explain_recovers_the_recorded_settings(version, recorded):
    runs = [r for r in read_log(text=recorded["log_text"]).runs if r.has_banner()]
    assert len(runs) == 1
    inf = infer(runs[0])
    got, given = inf.inferred, recorded["inputs"]
    assert not inf.contradictions, [c.what for c in inf.contradictions]
    expected = {
        "per_device_train_batch_size": given["per_device_train_batch_size"],
        "gradient_accumulation_steps": given["gradient_accumulation_steps"],
        "world_size": given["world_size"],
        "transformers": version,
        "max_steps": given["max_steps"] if given["max_steps"] > 0 else -1,
        "streaming": given["streaming"],
    }
    no_length = runs[0].value("num_epochs") == MAXSIZE
    if not no_length:
        expected["num_examples"] = given["num_examples"]
        expected["dataloader_drop_last"] = given["dataloader_drop_last"]
        expected["split_batches"] = given["split_batches"]
        if given["max_steps"] <= 0:
            expected["num_train_epochs"] = float(given["num_train_epochs"])
    if given.get("resume_from_step"):
        expected["resume_from_step"] = given["resume_from_step"]
    for name, value in expected.items():
        assert name in got, name
        assert _contains(got[name], value), (name, got[name].to_json(), value)
    # the engine's replay of the best explanation ends where the real run ended
    best = inf.best
    assert best is not None
    same_settings = (best.drop_last == given["dataloader_drop_last"] and best.spec.split_batches == given["split_batches"]
                     and (best.mode in ("max_steps", "stream")) == (given["max_steps"] > 0) and not no_length)
    if same_settings and best.version == version and best.spec.num_train_epochs == given["num_train_epochs"]:
        assert best.schedule.run.optimizer_steps == recorded["final_global_step"]

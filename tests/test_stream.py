"""Streams: the plan equals what the real Trainer fed the model, recorded by tools/record_stream.py
(tests/fixtures/stream), and the stream quantities are consistent with each other."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trainsteps
from trainsteps.errors import InputError

from .conftest import FIXTURES, load_json, recorded_runs

FILES = sorted((FIXTURES / "stream").glob("transformers-*.json"))


def test_fixtures_cover_two_releases_and_every_rank_split():
    versions = {load_json(p)["transformers"] for p in FILES}
    assert len(versions) >= 2
    cases = {run["case"] for p in FILES for run in load_json(p)["runs"]}
    assert any("dispatch" in c for c in cases) and any("shard" in c for c in cases) and any("droplast" in c for c in cases)
    assert all("tools/record_stream.py" in load_json(p)["regenerate"] for p in FILES)


@pytest.mark.parametrize("version, run", recorded_runs(FILES))
def test_the_plan_equals_the_recorded_stream(version, run):
    s = trainsteps.plan(streaming=True, transformers=version, **run["inputs"])
    n = run["inputs"]["num_examples"]
    assert s.run.optimizer_steps == run["final_global_step"]
    assert s.run.samples_seen == run["rows_fed"]
    assert math.isclose(s.run.equivalent_epochs, run["rows_fed"] / n, abs_tol=1e-4)
    assert math.isclose(s.run.epochs_completed, run["state_epoch"], abs_tol=1e-4)
    assert s.run.epoch_end_steps == run["epoch_end_steps"]
    assert s.run.pass_end_steps == run["epoch_end_steps"][: s.run.passes_completed]
    codes = [t.code for t in s.warnings]
    assert ("HF_STREAM_DROP_LAST_IGNORED" in codes) == run["inputs"]["dataloader_drop_last"]
    assert ("HF_STREAM_EPOCH_MISLEADING" in codes) == (abs(run["state_epoch"] - run["rows_fed"] / n) > 1e-3)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 500), bs=st.integers(1, 8), ga=st.integers(1, 4), world=st.integers(1, 4), steps=st.integers(1, 60),
       version=st.sampled_from(["4.30.2", "4.44.2", "4.49.0", "5.23.0"]), dispatch=st.sampled_from([None, False]))
def test_stream_quantities_agree(n, bs, ga, world, steps, version, dispatch):
    s = trainsteps.plan(streaming=True, num_examples=n, per_device_train_batch_size=bs, gradient_accumulation_steps=ga,
                        world_size=world, max_steps=steps, transformers=version, dispatch_batches=dispatch, seq_length=16)
    r = s.run
    if any(t.code == "HF_STREAM_NEVER_ENDS" for t in s.warnings):
        return
    assert r.samples_seen >= r.optimizer_steps * ga * world  # at least one row per micro-batch and rank
    assert math.isclose(r.equivalent_epochs, r.samples_seen / n, abs_tol=1e-4)
    assert r.tokens_seen == 16 * r.samples_seen
    assert len(r.pass_end_steps) == r.passes_completed and r.pass_end_steps == sorted(r.pass_end_steps)
    assert r.passes_completed <= r.equivalent_epochs + 1e-9  # a pass feeds at least N rows
    assert r.rank_split == ("single" if world == 1 else "shard" if (dispatch is False or version == "4.30.2") else "dispatch")


def test_a_packed_stream_is_sized_in_tokens():
    s = trainsteps.plan(streaming=True, dataset_tokens=1_000_000, seq_length=1000, per_device_train_batch_size=10, max_steps=100)
    assert s.derivation["stream_rows"].value == 1000 and s.run.equivalent_epochs == 1.0 and s.run.tokens_seen == 1_000_000


def test_without_a_size_the_api_plans_the_banner_and_warns():
    s = trainsteps.plan(streaming=True, max_steps=20)
    assert s.banner["Num examples"] == "160" and s.run.equivalent_epochs is None
    assert "HF_STREAM_SIZE_UNKNOWN" in [t.code for t in s.warnings]


@pytest.mark.parametrize("settings, msg_id", [
    ({"dataset_tokens": 100}, "stream.error.tokens_need_length"),
    ({"dataset_tokens": 10, "seq_length": 2048}, "stream.error.tokens_too_few"),
    ({"num_examples": 0}, "input.positive_int"),
    ({"num_examples": 10}, "hf.error.stream_needs_max_steps"),
])
def test_bad_stream_sizes_are_refused(settings, msg_id):
    with pytest.raises(InputError) as caught:
        trainsteps.plan(streaming=True, max_steps=-1 if msg_id.startswith("hf.") else 5, **settings)
    assert caught.value.msg_id == msg_id


def test_the_plan_cli_shows_the_stream_in_both_languages(run_cli):
    args = ("plan", "--streaming", "--num-examples", "1047", "--max-steps", "40", "--per-device-train-batch-size", "10",
            "--gradient-accumulation-steps", "8")
    code, en, _ = run_cli(*args)
    assert code == 0 and "equivalent epochs" in en and "13, 26, 39" in en and "HF_STREAM_EPOCH_MISLEADING" in en
    code, zh, _ = run_cli(*args, "--lang", "zh")
    assert code == 0 and "等效轮数" in zh

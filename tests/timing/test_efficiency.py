"""The fitted efficiency: fitted on one half of the published corpus by source, scored on the other half."""

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from trainsteps.timing import efficiency_fit
from trainsteps.timing.efficiency import SetupFacts, estimate_mfu

ROOT = Path(__file__).resolve().parents[2]
CORPUS = json.loads((ROOT / "tests" / "fixtures" / "timing" / "time_corpus.json").read_text())


def _module(path: Path, name: str):
    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_source_has_rows_in_two_splits():
    halves = {}
    for row in CORPUS["rows"]:
        halves.setdefault(row["group"], set()).add(row["split"])
    assert all(len(sides) == 1 for sides in halves.values())
    assert {row["split"] for row in CORPUS["rows"]} == {"calibration", "held_out", "fresh", "fresh2", "fresh3", "fresh4"}
    assert sum(row["split"] == "calibration" for row in CORPUS["rows"]) >= 80
    assert all(row["source"] and row["quote"] and row["stated"] for row in CORPUS["rows"])


def test_the_shipped_fit_is_what_the_calibration_half_gives():
    fit = _module(ROOT / "tools" / "fit_efficiency.py", "fit_efficiency")
    rows = fit.load("calibration")
    coefficients = fit.fit(rows)
    assert coefficients == pytest.approx(efficiency_fit.COEFFICIENTS, abs=1e-3)
    for key, (low, high, count) in fit.residuals(rows, coefficients).items():
        assert efficiency_fit.RESIDUALS[key] == (pytest.approx(low, abs=1e-3), pytest.approx(high, abs=1e-3), count)
    assert {m.group for m in rows}.isdisjoint({m.group for m in fit.load("held_out")} | {m.group for m in fit.load("fresh")})


def test_fp8_is_planned_faster_than_bf16_by_the_gain_sources_measure_running_both_not_by_the_datasheets_2x():
    """fp8's gain is fitted from the sources that run one setup in bf16 and in fp8 (llm-foundry's H100 tables,
    ms-swift's fp8 script against its bf16 twin); both MFUs are against the BF16 peak."""
    bf16 = estimate_mfu(SetupFacts(stack="megatron", checkpointing="none", gpu="h100-sxm"))
    fp8 = estimate_mfu(SetupFacts(stack="megatron", checkpointing="none", gpu="h100-sxm", dtype="fp8"))
    gain = fp8.mfu.expected / bf16.mfu.expected
    assert gain == pytest.approx(math.exp(efficiency_fit.COEFFICIENTS["fp8"]))
    assert 1.15 < gain < 1.6


def test_a_fact_no_two_sources_contrast_inside_their_rows_stays_unfitted():
    """No calibration source runs Blackwell and an older GPU in its own rows: Blackwell's coefficient is not credited
    with the difference between NVIDIA's B200 tables and everyone else's."""
    assert "blackwell" not in efficiency_fit.COEFFICIENTS


def test_a_stacks_level_is_its_typical_sources_not_its_largest_ones():
    fit = _module(ROOT / "tools" / "fit_efficiency.py", "fit_efficiency")
    rows = fit.load("calibration")
    foundry_only = fit.fit([m for m in rows if m.group == "mosaicml/llm-foundry" or m.facts.stack != "fsdp"])
    both = fit.fit(rows)
    assert abs(both["stack_fsdp"] - foundry_only["stack_fsdp"]) > 0.05  # 216 rows of one source do not set the level


def test_a_source_far_below_the_rest_barely_moves_its_stacks_level():
    """axolotl's Llama 4 Scout QLoRA runs sit at 2-4 % MFU, about 12x below the typical source: the stack levels are
    medians of the sources', so leaving them out moves a level by under a tenth of that distance."""
    fit = _module(ROOT / "tools" / "fit_efficiency.py", "fit_efficiency")
    rows = fit.load("calibration")
    far = [m for m in rows if m.group.startswith("axolotl")]
    with_it, without = fit.fit(rows), fit.fit([m for m in rows if m not in far])
    distance = abs(sum(math.log(m.mfu) for m in far) / len(far) - without["stack_hf"])
    assert distance > 2.0
    for stack in {m.facts.stack for m in far}:
        assert abs(with_it[f"stack_{stack}"] - without[f"stack_{stack}"]) < distance / 10


BEHIND_THE_NAPKIN: dict[str, str] = {
    "pretraining": "Megatron-Bridge's archive (fp8/MXFP8 on B200, GB200, B300): 53 % against the napkin's 48 %; Blackwell "
                   "is unfitted (no calibration source contrasts it inside its rows)",
    "all": "133 of its 207 rows are that pretraining archive",
}
"""Held-out categories where the napkin rule is still closer (docs/time.md says so); a fix moves the category out."""

FRESH_BEHIND_THE_NAPKIN: dict[str, str] = {
    "pretraining": "InternLM's trainer: 29 % against the napkin's 17 % (its A100 rows sit near 0.4 MFU, the napkin's own)",
    "all": "54 of its 61 rows are InternLM's pretraining",
}


def _bench():
    return _module(ROOT / "bench" / "bench_time_model.py", "bench_time_model")


def _fit():
    """tools/fit_efficiency.py as bench_time_model imports it (one module, so a setting changed here reaches it)."""
    sys.path.insert(0, str(ROOT / "tools"))
    return importlib.import_module("fit_efficiency")


def held_out_summary(split: str = "held_out"):
    bench = _bench()
    return {row["category"]: row for row in bench.summary(bench.score(_fit().load(split)))}


def _ahead_of_the_napkin(rows) -> set[str]:
    return {category for category, row in rows.items() if row["model_error"] < row["napkin_error"]}


def test_on_held_out_sources_the_model_beats_the_napkin_rule_in_every_category_but_the_named_ones():
    rows = held_out_summary()
    assert {"pretraining", "full", "lora", "qlora", "preference"} <= set(rows)
    assert _ahead_of_the_napkin(rows) == set(rows) - set(BEHIND_THE_NAPKIN)


def test_the_held_out_figures_are_those_docs_time_md_states():
    """What the fit chosen on the 20 calibration sources earns on the first held-out set (docs/time.md, "The fit on 20
    calibration sources"): 50 % error against the napkin's 48 %, 52 % held at 2.24x; in time 35 % against 48 %."""
    overall = held_out_summary()["all"]
    assert overall["model_error"] <= 0.50 and overall["model_inside"] >= 0.515 and overall["model_width"] <= 2.25
    assert overall["model_time_error"] < overall["napkin_time_error"]


def test_on_the_fresh_sources_the_model_beats_the_napkin_rule_for_full_fine_tuning_and_holds_seven_in_ten():
    """As docs/time.md says: 20 % error, 70 % held at 2.14x."""
    rows = held_out_summary("fresh")
    assert _ahead_of_the_napkin(rows) == set(rows) - set(FRESH_BEHIND_THE_NAPKIN)
    overall = rows["all"]
    assert overall["model_error"] <= 0.205 and overall["model_inside"] >= 0.70 and overall["model_width"] <= 2.15


def test_on_the_third_held_out_set_the_model_is_closer_than_the_napkin_rule_in_throughput_and_in_time():
    """docs/time.md: 54 % error against the napkin's 106 %, half the runs held; in time 45 % against 53 %."""
    overall = held_out_summary("fresh2")["all"]
    assert overall["model_error"] <= 0.545 < overall["napkin_error"]
    assert overall["model_inside"] >= 0.50
    assert overall["model_time_error"] < overall["napkin_time_error"]


def test_on_the_fourth_held_out_set_gathered_before_the_fit_the_model_is_closer_than_the_napkin_rule_but_its_interval_misses():
    """fresh3, gathered before the fit was chosen (docs/time.md): 43 % error against the napkin's 58 %, 35 % in time
    against 42 %; the interval holds under half (44-48 %), far from the 75 % wanted: QLoRA on 8-bit and 4-bit bases
    (Baize, xTuring, Lambda) runs 2-3x slower than the calibration's NF4 rows."""
    rows = held_out_summary("fresh3")
    overall = rows["all"]
    assert overall["model_error"] <= 0.435 < overall["napkin_error"]
    assert overall["model_time_error"] < overall["napkin_time_error"]
    assert overall["model_inside"] < 0.75  # the target is not met; when it is, this test says so by failing
    assert rows["qlora"]["model_error"] > rows["qlora"]["napkin_error"]


def _loso(pseudo_sources: float | None = None, fill_ridge: float | None = None, **knobs):
    """Leave-one-source-out over the calibration rows with some of tools/fit_efficiency.py's knobs changed."""
    bench, fit = _bench(), _fit()
    if pseudo_sources is not None:
        knobs["PSEUDO_SOURCES"] = pseudo_sources
    if fill_ridge is not None:
        knobs["FILL_RIDGE"] = fill_ridge
    saved = {name: getattr(fit, name) for name in knobs}, dict(efficiency_fit.COEFFICIENTS), dict(efficiency_fit.RESIDUALS)
    for name, value in knobs.items():
        setattr(fit, name, value)
    try:
        return {row["category"]: row for row in bench.summary(bench.loso(fit.load("calibration")))}
    finally:
        for name, value in saved[0].items():
            setattr(fit, name, value)
        for shipped, kept in ((efficiency_fit.COEFFICIENTS, saved[1]), (efficiency_fit.RESIDUALS, saved[2])):
            shipped.clear()
            shipped.update(kept)


def test_leaving_each_calibration_source_out_unshrunk_stack_levels_beat_shrunk_ones_on_the_twenty_sources():
    """The choice of the fit, by leave-one-source-out over the calibration sources only (docs/time.md), every source
    counted once: with fp8's gain fitted, shrinking each stack's level toward every source's (6 pseudo-sources, the
    choice on 14 sources) costs 4 points (26.1 % against 21.8 %)."""
    unshrunk, shrunk = _loso(_fit().PSEUDO_SOURCES)["all"], _loso(6.0)["all"]
    assert _fit().PSEUDO_SOURCES == 0.0
    assert unshrunk["model_error_by_source"] < shrunk["model_error_by_source"] - 0.01
    assert unshrunk["model_error_by_source"] <= 0.22 and unshrunk["model_inside_by_source"] >= 0.75


def test_leaving_each_calibration_source_out_fp8_as_a_fitted_fact_beats_fp8_as_part_of_each_sources_level():
    """docs/time.md, "Structural variants": fp8 planned at its stack's 16-bit level (a cell of its own in the fit) is
    further off on the sources left out than fp8's gain fitted from the sources that run both."""
    fact, cell = _loso()["all"], _loso(FP8_AS_FACT=False)["all"]
    assert fact["model_error_by_source"] < cell["model_error_by_source"] - 0.01
    assert fact["model_inside_by_source"] >= 0.75


def test_leaving_each_calibration_source_out_the_micro_batch_fill_lowers_the_error_and_the_interval_still_holds_three_in_four():
    """The fact is kept by calibration leave-one-source-out alone (docs/time.md, "The micro-batch fact"): a ridge of a
    million pulls it to no effect, which is the fit without it."""
    kept, dropped = _loso(fill_ridge=_fit().FILL_RIDGE)["all"], _loso(fill_ridge=1e6)["all"]
    # 29.5 % against 34 % on the 14 sources it was chosen on; 25.1 % against 25.9 % on the 18 of today, with fp8's gain
    # fitted (docs/time.md, "Structural variants")
    assert kept["model_error_by_source"] < dropped["model_error_by_source"] - 0.005
    assert kept["model_inside_by_source"] >= 0.75


def test_a_micro_batch_of_one_short_row_is_slower_and_a_large_packed_one_saturates():
    def expected(tokens: float) -> float:
        return estimate_mfu(SetupFacts(stack="hf", checkpointing="none", gpu="a100-80g", tokens_per_micro_batch=tokens)).mfu.expected

    assert efficiency_fit.COEFFICIENTS["log_fill"] > 0
    assert expected(133) < expected(512) < expected(4096) < expected(32768)
    assert expected(512) / expected(256) > 1.05 > expected(65536) / expected(32768)
    assert expected(None) == expected(4096)  # unknown: the typical micro-batch, not a guess either way


def test_an_unknown_stack_widens_the_interval_over_every_stack():
    known = estimate_mfu(SetupFacts(method="lora", stack="hf", checkpointing="full", gpu="a100-80g", active_params=7e9))
    unknown = estimate_mfu(SetupFacts(method="lora", checkpointing="full", gpu="a100-80g", active_params=7e9))
    assert unknown.unknown == ("stack",)
    assert unknown.mfu.low <= known.mfu.low and unknown.mfu.high >= known.mfu.high
    assert unknown.stack_spread > 1.05  # the stacks' typical sources differ less than single sources do


def test_gradient_checkpointing_lowers_the_expected_mfu():
    on = estimate_mfu(SetupFacts(stack="fsdp", checkpointing="full", gpu="h100-sxm"))
    off = estimate_mfu(SetupFacts(stack="fsdp", checkpointing="none", gpu="h100-sxm"))
    assert on.mfu.expected < off.mfu.expected
    assert math.log(off.mfu.expected / on.mfu.expected) == pytest.approx(-efficiency_fit.COEFFICIENTS["checkpointing_full"])

"""The former third to nineteenth held-out sets of the time model (rows of tests/fixtures/timing/time_corpus.json whose
`formerly_held_out` is `fresh2` to `fresh18`; calibration rows since 2026-11-28 and 2026-11-29), and the twentieth,
`fresh19`, scored once and not yet joined: what the rows are, as gathered.
These tests never score the model: a held-out set is scored once, after the fit it judges was chosen.
"""

import importlib
import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = json.loads((ROOT / "tests" / "fixtures" / "timing" / "time_corpus.json").read_text())
FRESH2 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh2"]
FRESH3 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh3"]
FRESH4 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh4"]
FRESH5 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh5"]
FRESH6 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh6"]
FRESH7 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh7"]
FRESH8 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh8"]
FRESH9 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh9"]
FRESH10 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh10"]
FRESH11 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh11"]
FRESH12 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh12"]
FRESH13 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh13"]
FRESH14 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh14"]
FRESH15 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh15"]
FRESH16 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh16"]
FRESH17 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh17"]
FRESH18 = [row for row in CORPUS["rows"] if row.get("formerly_held_out") == "fresh18"]
FRESH19 = [row for row in CORPUS["rows"] if row["split"] == "fresh19"]
DATA_ONLY_SETS = ("fresh2", "fresh3", "fresh4", "fresh5", "fresh6")
"""The sets gathered from outside the calibration pool, all of them former held-out sets (fresh7, also a former one,
keeps the pool out by repository only: its notebooks may run the pool's kernels)."""
CATEGORIES = ("pretraining", "full", "lora", "qlora", "preference")
CALIBRATION_POOL = ("torchtune", "unsloth", "llama-factory", "llamafactory", "liger", "fsdp_qlora", "megatron-lm",
                    "deepspeed", "axolotl", "ms-swift", "modelscope/swift")
"""Sources another calibration effort draws on: a held-out row from them would not be held out for long."""
PINNED_COMMIT = re.compile(r"/(blob|tree)/[0-9a-f]{40}/")
THREAD = re.compile(r"^https://github\.com/[^/]+/[^/]+/(issues|pull)/[0-9]+( |$)")


def _address(source: str) -> str:
    """The address of a row's source without the section named after it."""
    return source.split(" (")[0]


def _former_set(row) -> str:
    return row.get("formerly_held_out", row["split"])


def _assert_each_row_quotes_a_pinned_address_and_a_known_shape(rows, pull_requests: bool = False,
                                                              shape_configs: bool = False) -> None:
    """Each row: an https address (a GitHub file pinned to its commit; a pull request's page too where `pull_requests`),
    its quote, what its source states, and a model of the corpus's `models` (or its own config where `shape_configs`)."""
    for row in rows:
        assert row["source"].startswith("https://") and row["quote"].strip() and row["stated"].strip(), row["id"]
        address = row["source"].split(" ")[0]
        if "github.com/" in row["source"] and not (pull_requests and "/pull/" in address):
            assert PINNED_COMMIT.search(row["source"]), row["id"]
        shaped = shape_configs and (row.get("shape_config") or {}).get("hidden_size")
        assert row["model"] in CORPUS["models"] or shaped, row["id"]


def test_the_calibration_as_first_gathered_and_the_nineteen_former_held_out_sets_share_no_source():
    by_split: dict[str, set[str]] = {}
    addresses: dict[str, set[str]] = {}
    for row in CORPUS["rows"]:
        by_split.setdefault(_former_set(row), set()).add(row["group"])
        addresses.setdefault(_former_set(row), set()).add(_address(row["source"]))
    # the held-out sets gathered after these are splits of their own, kept apart by the same test
    former = {"calibration", "held_out", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8",
              "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18"}
    assert set(by_split) - set(HELD_SETS) == former
    splits = sorted(by_split)
    for i, first in enumerate(splits):
        for second in splits[i + 1:]:
            assert by_split[first].isdisjoint(by_split[second]), (first, second)
            assert addresses[first].isdisjoint(addresses[second]), (first, second)
    for name in (*DATA_ONLY_SETS, "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14",
                 "fresh15", "fresh16", "fresh17", "fresh18"):
        assert set(CORPUS["formerly_held_out"][name]["sources"]) == by_split[name], name


@pytest.mark.parametrize("name", DATA_ONLY_SETS)
def test_no_source_of_a_data_only_set_comes_from_the_calibration_pool(name):
    for row in (r for r in CORPUS["rows"] if _former_set(r) == name):
        named = f"{row['group']} {row['source']}".lower()
        assert not any(pool in named for pool in CALIBRATION_POOL), row["id"]


@pytest.mark.parametrize("name", DATA_ONLY_SETS)
def test_every_row_of_a_data_only_set_names_its_address_its_quote_and_what_its_source_states(name):
    for row in (r for r in CORPUS["rows"] if _former_set(r) == name):
        assert row["source"].startswith("https://"), row["id"]
        assert row["quote"].strip() and row["stated"].strip() and row["shape_source"].strip(), row["id"]
        if "github.com/" in row["source"] or ("huggingface.co/" in row["source"] and "/blob/" in row["source"]):
            # an issue or pull-request thread has no commit to pin; its number names it
            assert PINNED_COMMIT.search(row["source"]) or THREAD.search(row["source"]), row["source"]


def test_fresh2_holds_sixty_rows_from_six_sources_and_six_of_every_category():
    assert len(FRESH2) >= 60
    assert len({row["group"] for row in FRESH2}) >= 6
    for category in CATEGORIES:
        assert sum(row["category"] == category for row in FRESH2) >= 6, category


SET_SIZES = [("fresh3", FRESH3, 50, 11, 20, 15), ("fresh4", FRESH4, 60, 18, 10, 12), ("fresh5", FRESH5, 25, 18, 8, 6)]
"""Each gathered set as gathered: rows, sources, the most rows one source gives, rows off the A100 and H100."""


@pytest.mark.parametrize(("name", "rows", "at_least", "sources", "most_per_source", "off_a100_h100"), SET_SIZES,
                         ids=[size[0] for size in SET_SIZES])
def test_a_gathered_set_holds_its_rows_from_its_sources_none_over_its_cap_every_category_and_rows_off_the_a100_and_h100(
        name, rows, at_least, sources, most_per_source, off_a100_h100):
    rows_per_source = Counter(row["group"] for row in rows)
    assert len(rows) >= at_least
    assert len(rows_per_source) >= sources
    assert max(rows_per_source.values()) <= most_per_source
    assert {row["category"] for row in rows} == set(CATEGORIES)
    assert sum(not row["gpu"].startswith(("a100", "h100")) for row in rows) >= off_a100_h100


def test_no_source_of_fresh4_was_claimed_for_an_earlier_set_under_another_address():
    """A source quoted at a second address is the same source: fresh4's repositories appear in no earlier row."""
    earlier = " ".join(row["source"] for row in CORPUS["rows"] if _former_set(row) != "fresh4").lower()
    for row in FRESH4:
        repository = "/".join(_address(row["source"]).split("/")[3:5]).lower()
        assert repository not in earlier, row["id"]


def test_fresh4_rows_are_numbered_from_3000_and_no_id_repeats():
    assert all(row["id"] >= 3000 for row in FRESH4)
    assert len({row["id"] for row in CORPUS["rows"]}) == len(CORPUS["rows"])


def _rows_per_example(row) -> int:
    """A preference example is a chosen and a rejected row; the tokens/s of the corpus count both."""
    return 2 if row.get("trainer") else 1


@pytest.mark.parametrize("row", [r for r in FRESH2 + FRESH3 + FRESH4 + FRESH5 + FRESH6 if "wall_seconds" in r["measured"]], ids=lambda r: str(r["id"]))
def test_a_wall_time_row_states_the_tokens_per_second_its_examples_and_time_imply(row):
    measured = row["measured"]
    rows_per_second = (measured["examples"] / measured["wall_seconds"] if "examples" in measured
                       else measured["samples_per_second"])
    tokens_per_row = row.get("tokens_per_row") or row["seq"]  # a packed row is the sequence length (timing.calibration)
    implied = rows_per_second * _rows_per_example(row) * tokens_per_row / row["gpus"]
    assert measured["tokens_per_second_per_gpu"] == pytest.approx(implied, rel=1e-3)


@pytest.mark.parametrize("row", [r for r in FRESH2 + FRESH3 + FRESH4 + FRESH5 + FRESH6 if set(r["measured"]) == {"samples_per_second", "tokens_per_second_per_gpu"}],
                         ids=lambda r: str(r["id"]))
def test_a_samples_per_second_row_states_the_tokens_per_second_its_rows_imply(row):
    """Lambda's Llama 2 table gives samples/sec without a wall time: the tokens/s it records is that rate times the tokens
    of a row."""
    measured = row["measured"]
    implied = measured["samples_per_second"] * _rows_per_example(row) * (row.get("tokens_per_row") or row["seq"]) / row["gpus"]
    assert measured["tokens_per_second_per_gpu"] == pytest.approx(implied, rel=1e-3)


@pytest.mark.parametrize("name", DATA_ONLY_SETS)
def test_every_row_of_a_former_held_out_set_loads_as_the_time_model_reads_the_corpus(name):
    sys.path.insert(0, str(ROOT / "tools"))
    ids = {row["id"] for row in CORPUS["rows"] if _former_set(row) == name and not row.get("not_fitted")}
    loaded = [m for m in importlib.import_module("fit_efficiency").load("calibration") if m.row_id in ids]
    assert len(loaded) == len(ids) > 0
    assert all(m.flops_per_token > 0 and m.tokens_per_second_per_gpu > 0 for m in loaded)


def test_no_source_of_fresh5_was_claimed_for_an_earlier_set_under_another_address():
    """A paper or model card quoted at a second address is the same source: fresh5's addresses appear in no other row."""
    others = " ".join(row["source"] for row in CORPUS["rows"] if _former_set(row) != "fresh5").lower()
    for row in FRESH5:
        address = _address(row["source"]).lower().removeprefix("https://")
        assert address not in others, row["id"]


def test_fresh5_rows_are_numbered_in_its_gatherers_ranges():
    assert all(4100 <= row["id"] <= 4999 or 6000 <= row["id"] <= 6499 for row in FRESH5)


def test_no_source_of_fresh5_was_used_by_another_set_under_another_address():
    """fresh5's repositories appear in no row of any other split, calibration included."""
    elsewhere = " ".join(row["source"] for row in CORPUS["rows"] if _former_set(row) != "fresh5").lower()
    for row in FRESH5:
        repository = "/".join(_address(row["source"]).split("/")[3:5]).lower()
        assert repository not in elsewhere, row["id"]


def test_every_fresh5_preference_row_names_its_trainer_and_whether_the_reference_is_precomputed():
    preference = [row for row in FRESH5 if row["category"] == "preference"]
    assert len({row["group"] for row in preference}) >= 3
    assert all(row["trainer"] and row["precompute_reference"] in (True, False) for row in preference)


def test_fresh6_holds_42_rows_from_17_sources_none_over_six_four_categories_and_25_rows_off_the_a100_and_h100():
    """As gathered: no preference row was found in its pools (the set cannot judge that category)."""
    per_source = Counter(row["group"] for row in FRESH6)
    assert len(FRESH6) >= 42 and len(per_source) >= 17 and max(per_source.values()) <= 6
    assert {row["category"] for row in FRESH6} == {"pretraining", "full", "lora", "qlora"}
    assert sum("a100" not in row["gpu"] and "h100" not in row["gpu"] for row in FRESH6) >= 25


def test_fresh6_brings_the_categories_the_model_is_weakest_on_pretraining_and_qlora_from_several_sources():
    for category, rows, sources in (("pretraining", 12, 6), ("qlora", 8, 5), ("full", 4, 2)):
        mine = [row for row in FRESH6 if row["category"] == category]
        assert len(mine) >= rows and len({row["group"] for row in mine}) >= sources, category
    assert all(row["base_quant"] in ("nf4", "fp4", "int8") for row in FRESH6 if row["category"] == "qlora")


def test_fresh6_rows_are_numbered_in_its_gatherers_ranges_and_its_split_lists_their_sources():
    assert all(7000 <= row["id"] <= 7999 for row in FRESH6)
    assert set(CORPUS["formerly_held_out"]["fresh6"]["sources"]) == {row["group"] for row in FRESH6}


SETS_AFTER_FRESH5 = ("fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14",
                     "fresh15", "fresh16", "fresh17", "fresh18", "fresh19")
"""The held-out sets gathered after fresh5, kept apart by every address (fresh6 to fresh18 joined the calibration once
scored)."""
HELD_SETS = ("fresh19",)
"""The held-out sets not yet joined: each is its own split of the corpus until it joins the calibration."""


@pytest.mark.parametrize("name", SETS_AFTER_FRESH5)
def test_no_source_of_a_held_out_set_appears_in_a_row_of_another_split_under_any_address(name):
    """A paper, model card or repository quoted at a second address is the same source: the set's addresses and
    repositories appear in no row of another split, calibration and the former held-out sets included."""
    elsewhere = " ".join(row["source"] for row in CORPUS["rows"] if _former_set(row) != name).lower()
    for row in (r for r in CORPUS["rows"] if _former_set(r) == name):
        address = _address(row["source"]).lower()
        assert address.removeprefix("https://") not in elsewhere, row["id"]
        assert "/".join(address.split("/")[3:5]) not in elsewhere, row["id"]


@pytest.mark.parametrize("name", HELD_SETS)
def test_every_row_of_a_held_out_set_loads_as_the_time_model_reads_the_corpus_and_the_benchmark_selects_it_by_name(name):
    sys.path.insert(0, str(ROOT / "tools"))
    loaded = importlib.import_module("fit_efficiency").load(name)
    assert len(loaded) == sum(not row.get("not_fitted") for row in CORPUS["rows"] if row["split"] == name) > 0
    assert all(m.flops_per_token > 0 and m.tokens_per_second_per_gpu > 0 and m.split == name for m in loaded)
    spec = importlib.util.spec_from_file_location("bench_time_model", ROOT / "bench" / "bench_time_model.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.split_asked(["--split", name]) == name


def test_fresh7_rows_are_numbered_from_8000_to_8499_and_its_former_split_lists_their_sources():
    assert FRESH7 and all(8000 <= row["id"] <= 8499 for row in FRESH7)
    assert set(CORPUS["formerly_held_out"]["fresh7"]["sources"]) == {row["group"] for row in FRESH7}
    assert max(Counter(row["group"] for row in FRESH7).values()) <= 6


def test_no_fresh7_repository_belongs_to_the_calibration_pool():
    # the calibration pool is named by repository: a notebook of another repository may still run its kernels
    for row in FRESH7:
        repository = "/".join(_address(row["source"]).lower().split("/")[3:5])
        assert not any(name in repository for name in CALIBRATION_POOL), row["id"]


def test_every_fresh7_preference_row_names_its_trainer_and_whether_the_reference_is_precomputed():
    preference = [row for row in FRESH7 if row["category"] == "preference"]
    assert preference
    assert all(row["trainer"] and row["precompute_reference"] in (True, False) for row in preference)


def test_fresh8_holds_25_rows_from_8_sources_none_over_five_numbered_from_9000_and_its_former_split_lists_them():
    per_source = Counter(row["group"] for row in FRESH8)
    assert len(FRESH8) >= 25 and len(per_source) >= 8 and max(per_source.values()) <= 5
    assert all(9000 <= row["id"] <= 9499 for row in FRESH8)
    assert CORPUS["formerly_held_out"]["fresh8"]["sources"] == list(per_source)


def test_fresh8_brings_16_bit_lora_moe_and_rows_off_the_a100_and_h100_from_several_sources():
    """As gathered: LoRA over a 16-bit base (no earlier split had enough), MoE or 30B+ models, other accelerators."""
    lora = [row for row in FRESH8 if row["category"] == "lora"]
    assert len(lora) >= 5 and all(row["base_quant"] == "none" for row in lora)
    large = [row for row in FRESH8 if "moe" in row["model"].lower() or row["model"] in ("Qwen3-30B-A3B", "Llama-3-70B")]
    assert len(large) >= 3 and len({row["group"] for row in large}) >= 2
    off = [row for row in FRESH8 if not row["gpu"].startswith(("a100", "h100"))]
    assert len(off) >= 5 and len({row["gpu"] for row in off}) >= 4


def test_every_fresh8_row_names_a_pinned_or_hub_address_and_a_preference_row_its_trainer():
    for row in FRESH8:
        assert row["source"].startswith("https://") and row["quote"].strip() and row["shape_source"].strip(), row["id"]
        if "github.com/" in row["source"]:
            assert PINNED_COMMIT.search(row["source"]), row["id"]
    preference = [row for row in FRESH8 if row["category"] == "preference"]
    assert len({row["group"] for row in preference}) >= 2 and all(row["trainer"] and row["precompute_reference"] in (True, False) for row in preference)


@pytest.mark.parametrize("row", [r for r in FRESH8 if "wall_seconds" in r["measured"]], ids=lambda r: str(r["id"]))
def test_a_fresh8_wall_time_row_states_the_tokens_per_second_its_examples_and_time_imply(row):
    measured = row["measured"]
    implied = measured["examples"] / measured["wall_seconds"] * _rows_per_example(row) * row["tokens_per_row"] / row["gpus"]
    assert measured["tokens_per_second_per_gpu"] == pytest.approx(implied, rel=1e-3)


def test_fresh9_rows_are_numbered_from_9500_none_over_five_a_source_and_its_former_split_lists_their_sources():
    per_source = Counter(row["group"] for row in FRESH9)
    assert FRESH9 and all(9500 <= row["id"] <= 9599 for row in FRESH9)
    assert max(per_source.values()) <= 5
    assert CORPUS["formerly_held_out"]["fresh9"]["sources"] == list(per_source)


def test_every_fresh9_row_names_a_pinned_or_hub_address_its_quote_and_what_its_source_states():
    for row in FRESH9:
        assert row["source"].startswith("https://") and row["quote"].strip() and row["stated"].strip(), row["id"]
        assert row["shape_source"].strip(), row["id"]
        if "github.com/" in row["source"]:
            assert PINNED_COMMIT.search(row["source"]), row["id"]


@pytest.mark.parametrize("row", [r for r in FRESH9 if "wall_seconds" in r["measured"] or "samples_per_second" in r["measured"]],
                         ids=lambda r: str(r["id"]))
def test_a_fresh9_wall_time_or_samples_per_second_row_states_the_tokens_per_second_its_rows_imply(row):
    measured = row["measured"]
    rows_per_second = (measured["examples"] / measured["wall_seconds"] if "wall_seconds" in measured
                       else measured["samples_per_second"])
    implied = rows_per_second * _rows_per_example(row) * row["tokens_per_row"] / row["gpus"]
    assert measured["tokens_per_second_per_gpu"] == pytest.approx(implied, rel=1e-3)


@pytest.mark.parametrize("row", [r for r in FRESH9 if "seconds_per_step" in r["measured"]], ids=lambda r: str(r["id"]))
def test_a_fresh9_step_time_row_states_the_tokens_per_second_its_step_implies(row):
    """One step is one micro-batch of every GPU (the sources' own reading, said in `stated`)."""
    measured = row["measured"]
    implied = row["micro_batch"] * (row.get("tokens_per_row") or row["seq"]) / measured["seconds_per_step"]
    assert measured["tokens_per_second_per_gpu"] == pytest.approx(implied, rel=2e-3)


def test_fresh9_holds_24_rows_from_7_sources_and_brings_16_bit_lora_modern_full_preference_and_large_models():
    """As gathered: LoRA over a 16-bit base, packed full fine-tuning, preference rows, MoE or 70B models, all off the
    A100 and H100."""
    assert len(FRESH9) >= 24 and len({row["group"] for row in FRESH9}) >= 7
    lora = [row for row in FRESH9 if row["category"] == "lora"]
    assert len(lora) >= 5 and all(row["base_quant"] == "none" for row in lora)
    full = [row for row in FRESH9 if row["category"] == "full"]
    assert len(full) >= 4 and all(row["packing"] for row in full)
    preference = [row for row in FRESH9 if row["category"] == "preference"]
    assert len({row["group"] for row in preference}) >= 2 and len(preference) >= 3
    assert all(row["trainer"] and row["precompute_reference"] in (True, False) for row in preference)
    large = [row for row in FRESH9 if row["model"] in ("Qwen3-30B-A3B", "Qwen3-235B-A22B", "DeepSeek-V3", "Llama-2-70B")]
    assert len(large) >= 3 and len({row["group"] for row in large}) >= 3
    assert all(not row["gpu"].startswith(("a100", "h100")) for row in FRESH9)
    assert len({row["gpu"] for row in FRESH9}) >= 6


@pytest.mark.parametrize("rows, name, first_id, least_rows, least_sources, most_a_source", [
    (FRESH10, "fresh10", 9600, 38, 13, 5), (FRESH11, "fresh11", 9700, 50, 17, 4), (FRESH12, "fresh12", 9800, 23, 7, 4),
    (FRESH13, "fresh13", 9900, 25, 13, 4), (FRESH14, "fresh14", 10000, 16, 7, 4), (FRESH15, "fresh15", 10100, 14, 4, 4),
    (FRESH16, "fresh16", 10200, 12, 4, 4), (FRESH17, "fresh17", 10300, 26, 8, 4), (FRESH18, "fresh18", 10400, 41, 12, 4),
    (FRESH19, "fresh19", 10500, 16, 8, 4)],
    ids=["fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19"])
def test_a_recent_sets_rows_are_numbered_without_gaps_and_its_split_lists_their_sources_in_order(
        rows, name, first_id, least_rows, least_sources, most_a_source):
    per_source = Counter(row["group"] for row in rows)
    assert [row["id"] for row in rows] == list(range(first_id, first_id + len(rows)))
    assert len(rows) >= least_rows and len(per_source) >= least_sources and max(per_source.values()) <= most_a_source
    listed = CORPUS["split"][name] if name in CORPUS["split"] else CORPUS["formerly_held_out"][name]["sources"]
    assert listed == list(per_source)


def test_every_fresh10_row_names_a_pinned_or_hub_address_its_quote_and_what_its_source_states():
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH10)


def _trained_rows_per_example(row) -> int:
    """The rows one example trains, by timing.flops' rule: a DPO pair two, a KTO example one, an SFT row one."""
    if not row.get("trainer"):
        return 1
    from trainsteps.timing.architectures import shape_from_config
    from trainsteps.timing.flops import preference_per_token

    shape = shape_from_config(CORPUS["models"][row["model"]]["config"], row["model"])
    training = "full" if row["method"] == "full" else "lora"
    return preference_per_token(shape, row["seq"], row["trainer"], training, bool(row.get("precompute_reference"))).trained_rows


@pytest.mark.parametrize("row", [r for r in FRESH10 if "wall_seconds" in r["measured"]], ids=lambda r: str(r["id"]))
def test_a_fresh10_wall_time_row_states_the_tokens_per_second_its_examples_and_time_imply(row):
    measured = row["measured"]
    tokens_per_row = row.get("tokens_per_row") or row["seq"]
    implied = measured["examples"] / measured["wall_seconds"] * _trained_rows_per_example(row) * tokens_per_row / row["gpus"]
    assert measured["tokens_per_second_per_gpu"] == pytest.approx(implied, rel=1e-3)


def test_fresh10_brings_preference_runs_pretraining_tables_a_moe_and_gpus_besides_the_a100_and_h100():
    """As gathered: preference rows of four trainers from five sources, pretraining throughput tables of seven sources
    (PyTorch FSDP and Megatron, a 235B MoE on H100 and GB200), the Trainer's LoRA/QLoRA on A10G, and runs on a T4, a
    V100, an MI300X and TPU v6e."""
    preference = [row for row in FRESH10 if row["category"] == "preference"]
    assert len(preference) >= 6 and len({row["group"] for row in preference}) >= 5
    assert {row["trainer"] for row in preference} >= {"dpo", "kto", "orpo", "simpo"}
    assert all(row["precompute_reference"] in (True, False) for row in preference)
    pretraining = [row for row in FRESH10 if row["category"] == "pretraining"]
    assert len(pretraining) >= 20 and len({row["group"] for row in pretraining}) >= 7
    assert {row["stack"] for row in pretraining} >= {"fsdp", "megatron"}
    assert sum(row["model"] == "Qwen3-235B-A22B" for row in FRESH10) >= 4
    assert {"a10g", "t4", "v100", "mi300x", "tpu-v6e", "gb200"} <= {row["gpu"] for row in FRESH10}
    assert sum(row["category"] in ("lora", "qlora") and row["stack"] == "hf" for row in FRESH10) >= 5


def test_every_fresh11_row_names_an_address_its_quote_what_its_source_states_and_a_known_model():
    for row in FRESH11:
        assert row["source"].startswith("https://") and row["quote"].strip() and row["stated"].strip(), row["id"]
        assert row["model"] in CORPUS["models"] or row.get("shape_config"), row["id"]
    assert len({row["gpu"] for row in FRESH11}) >= 6 and sum(row["category"] == "pretraining" for row in FRESH11) >= 15


def test_fresh12_brings_mlperf_rounds_no_other_split_draws_on_fp8_and_moe_pretraining_and_unpacked_fsdp_fine_tuning():
    """As gathered: MLPerf Training logs of rounds v4.1, v5.0 and v6.0 (the calibration holds v4.0 and v5.1: a round
    is its own repository and its own submitters), FP8 Llama 3.1 405B and MoE pretraining on GB200 and H100, LoRA of
    Llama 2 70B on six accelerators, unpacked FSDP fine-tuning with and without Liger kernels, and B300 runs."""
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH12)
    calibration = " ".join(row["source"] for row in CORPUS["rows"] if _former_set(row) != "fresh12").lower()
    assert "training_results_v5.1" in calibration and "training_results_v4.0" in calibration
    assert not any(f"training_results_{round_}" in calibration for round_ in ("v4.1", "v5.0", "v6.0"))
    assert {"gb200", "b300", "mi300x", "gh200"} <= {row["gpu"] for row in FRESH12}
    assert sum(row["category"] == "lora" for row in FRESH12) >= 9 and sum(not row["packing"] for row in FRESH12) >= 4


def test_fresh13_brings_mlperf_gpt3_rounds_tpu_and_pax_pretraining_and_t4_notebooks():
    """As gathered: MLPerf Training's GPT-3 175B logs of rounds v3.0 and v3.1 (no other split holds them) on H100 and
    Gaudi 2, MaxText recipe logs on TPU v5p and v6e, Pax on H100 in BF16 and FP8 and nine executed Unsloth notebooks (T4
    QLoRA and DPO, one long-context step on an A100)."""
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH13, shape_configs=True)
    elsewhere = " ".join(row["source"] for row in CORPUS["rows"] if _former_set(row) != "fresh13").lower()
    assert not any(f"training_results_{round_}" in elsewhere for round_ in ("v3.0", "v3.1"))
    assert not any(name in elsewhere for name in ("tpu-recipes", "jax-toolbox", "unslothai/notebooks"))
    assert {"h100-sxm", "gaudi2", "tpu-v5p", "tpu-v6e", "t4", "a100-80g"} <= {row["gpu"] for row in FRESH13}
    assert sum(row["category"] == "pretraining" for row in FRESH13) >= 16 and sum(row["dtype"] == "fp8" for row in FRESH13) >= 8


def test_fresh14_brings_moe_and_torchtitan_pretraining_unpacked_deepspeed_clusters_of_small_gpus_and_an_npu():
    """As gathered: OLMoE's pretraining on 256 H100, torchtitan on 32 H100 and 8 MI300X, Ray Train's executed notebooks
    (full fine-tuning on 16 T4 or 16 A10G, rows padded to 128-512 tokens), Transformer Engine's tutorial on one H100
    (BF16 and FP8), KnowLM on V100 and TeleChat's ZeRO-3 tables on A100 40GB and Ascend 910B."""
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH14)
    assert {"h100-sxm", "mi300x", "t4", "a10g", "v100", "a100-40g", "ascend-910b"} <= {row["gpu"] for row in FRESH14}
    assert sum(row["category"] == "full" for row in FRESH14) >= 11 and sum(not row["packing"] for row in FRESH14) >= 6
    assert any(row["dtype"] == "fp8" for row in FRESH14) and sum(row["category"] == "pretraining" for row in FRESH14) >= 4


def test_fresh15_brings_tuned_pretraining_on_gh200_h100_and_b200_with_fp8_beside_bf16():
    """As gathered: Megatron-LM on the Alps GH200 (300M on 32, Llama 3 8B on 256), a genomic Llama 7B on 48 H100 (FSDP2
    in BF16, Megatron in FP8), nanotron's benchmark table on 8 to 512 H100 and a one-B200 continued pretraining in BF16
    and FP8."""
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH15, pull_requests=True)
    assert {row["category"] for row in FRESH15} == {"pretraining"}
    assert {"gh200", "h100-sxm", "b200"} == {row["gpu"] for row in FRESH15}
    assert sum(row["dtype"] == "fp8" for row in FRESH15) >= 3 and max(row["gpus"] for row in FRESH15) >= 256


def test_fresh16_brings_lora_and_qlora_on_one_gpu_to_64_and_fsdp_tables_on_a100():
    """As gathered: Mistral's fine-tuning repository (LoRA on an A100 40GB and 8 H100, QLoRA on a T4), ATorch's Llama 2
    7B FSDP table (full and LoRA on 8 and 64 A100 80GB), the Unsloth baseline of a LoRA/QLoRA speed table (H200, B200,
    RTX 5090, H100) and Thunder's single-GPU example."""
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH16)
    assert sum(row["category"] == "lora" for row in FRESH16) >= 6 and sum(row["category"] == "qlora" for row in FRESH16) >= 3
    assert all(row["base_quant"] for row in FRESH16 if row["category"] == "qlora")
    assert {"a100-80g", "a100-40g", "h100-sxm", "h200", "b200", "rtx5090", "t4"} <= {row["gpu"] for row in FRESH16}


def test_fresh17_brings_long_context_and_small_model_pretraining_consumer_gpus_and_lora_across_four_cards():
    """As gathered: ProLong at 64K on 8 H100, Megatron-DeepSpeed's 30B at 2K-128K on 32 A100 40GB, two users' nanochat
    runs on RTX 3090 and H100, an HF Trainer FSDP run on 8 A100 40GB, TinyLlama's run_clm speeds, a LoRA benchmark on
    L40S, RTX 6000 Ada, RTX 4090 and RTX 3090, and Qwen3-4B full fine-tuning at 64K-131K on 8 L40S and 8 H200."""
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH17, shape_configs=True)
    assert Counter(row["category"] for row in FRESH17) == {"pretraining": 18, "full": 4, "lora": 4}
    assert {"rtx3090", "rtx4090", "rtx-a6000", "rtx-6000-ada", "l40s", "h200", "a100-40g"} <= {row["gpu"] for row in FRESH17}
    assert max(row["seq"] for row in FRESH17) >= 131072 and max(row["gpus"] for row in FRESH17) == 32


def test_fresh18_brings_pretraining_from_17m_to_405b_on_eleven_accelerators_and_fsdp2_fine_tuning_from_1_to_64_h100():
    """As gathered: Open-Llama's and Sheared-LLaMA's speed tables on A100 80GB, BMTrain's GPT-2 13B on 32 V100, an
    AuroraGPT-7B log on Polaris, parameter-golf's 17M records on 8 H100 and one RTX 5090,
    SEA-LION's pretraining on up to 256 A100 40GB, float8 torchtitan on 512 H100, Primus and Megatron on MI325X,
    AMD-Llama-135m on MI250, a torchtitan fork's pipeline-parallel fine-tuning on H200 and RTX 6000 Ada, torchtitan on
    B200, H200 and GB200, and Qwen2.5-7B FSDP2 fine-tuning on 1 to 64 H100."""
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH18)
    assert Counter(row["category"] for row in FRESH18) == {"pretraining": 33, "full": 8}
    assert {"v100", "mi325x", "mi250x", "b200", "gb200", "rtx5090", "rtx-6000-ada", "h200"} <= {row["gpu"] for row in FRESH18}
    assert sum(row["dtype"] == "fp8" for row in FRESH18) >= 4 and max(row["gpus"] for row in FRESH18) == 512


def test_fresh19_brings_hf_stack_fine_tuning_on_a10_v100_and_mi300x_and_small_model_pretraining_on_a800_and_mi250():
    """As gathered: FastChat's Vicuna-7B FSDP fine-tuning on 8 A100 40GB, a Mistral-7B QLoRA and LoRA study on one and
    four A10, Llama-X's ZeRO-3 offload table on 8 V100, a run_clm ZeRO-3 offload thread on 4 A100, shisa-v2's axolotl
    runs of a dense 3B, Phi-4 and Qwen3-30B-A3B on 8 MI300X, YuLan-Mini's phases on 48 and 56 A800, AMD-OLMo-1B on 64
    MI250 and MiniLLM-0.2B on 4 A800."""
    _assert_each_row_quotes_a_pinned_address_and_a_known_shape(FRESH19, pull_requests=True)
    assert Counter(row["category"] for row in FRESH19) == {"full": 7, "pretraining": 5, "qlora": 3, "lora": 1}
    assert {"a10", "v100", "mi300x", "a800", "mi250x"} <= {row["gpu"] for row in FRESH19}
    assert all(row["base_quant"] == "nf4" for row in FRESH19 if row["category"] == "qlora")
    assert any(CORPUS["models"][row["model"]]["config"].get("num_experts") for row in FRESH19)

"""Every number carries its formula, the values put in, and the rounding rule."""

import trainsteps
from trainsteps.derivation import Derivation, render_step


def test_a_step_renders_formula_values_result_and_reason():
    d = Derivation()
    d.add("num_update_steps_per_epoch", 14, "max(ceil(L / GA), 1)", "max(ceil(105 / 8), 1)", "hf.nupe.ceil")
    assert render_step(d.steps[0]) == (
        "optimizer steps per epoch (planned) = max(ceil(L / GA), 1) = max(ceil(105 / 8), 1) = 14: "
        "transformers >= 4.52 rounds up (PR #37923)"
    )
    assert render_step(d.steps[0], "zh").endswith("14：transformers >= 4.52 向上取整（PR #37923）")


def test_the_plan_explains_the_rounding_of_its_release():
    old = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, transformers="4.49.0")
    new = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8, transformers="4.52.4")
    assert old.derivation["num_update_steps_per_epoch"].substituted == "max(floor(105 / 8), 1)"
    assert new.derivation["num_update_steps_per_epoch"].substituted == "max(ceil(105 / 8), 1)"
    assert "rounds down" in old.to_dict()["derivation"][5]["text"] or any(
        "rounds down" in step["text"] for step in old.to_dict()["derivation"]
    )


def test_every_number_in_the_json_has_a_text_in_both_languages():
    s = trainsteps.plan(num_examples=1000, per_device_train_batch_size=7, gradient_accumulation_steps=3, warmup_ratio=0.1,
                        transformers="4.44.2")
    for lang in ("en", "zh"):
        for step in s.to_dict(lang)["derivation"]:
            assert step["text"] and step["name"]


def test_epochs_print_with_six_significant_digits_and_never_an_exponent():
    from trainsteps.derivation import format_epochs

    assert format_epochs(278.6095) == "278.61"
    assert format_epochs(3.0) == "3"
    assert format_epochs(128770.0) == "128,770"
    assert format_epochs(1_000_000.0) == "1,000,000"
    assert format_epochs(1234.5678) == "1,234.57"
    assert format_epochs(None) == "?"


def test_a_million_epochs_compare_without_an_exponent():
    from trainsteps.compare import compare_families, render_comparison
    from trainsteps.spec import RunSpec

    text = render_comparison(compare_families(RunSpec(num_examples=3, num_train_epochs=1_000_000)), "en")
    assert "1,000,000" in text and "e+06" not in text


def test_a_derivation_read_again_in_another_language_or_after_a_new_step_reads_as_its_steps_do():
    d = Derivation()
    d.add("num_update_steps_per_epoch", 14, "max(ceil(L / GA), 1)", "max(ceil(105 / 8), 1)", "hf.nupe.ceil")
    assert d.render() == [render_step(step) for step in d.steps]
    assert d.render("zh") == [render_step(step, "zh") for step in d.steps] != d.render()
    d.given("num_train_epochs", 300)
    assert [item["text"] for item in d.to_list()] == d.render() == [render_step(step) for step in d.steps]
    assert [item["key"] for item in d.to_list("zh")] == ["num_update_steps_per_epoch", "num_train_epochs"]
    assert d.to_list() == [step.to_dict() for step in d.steps]

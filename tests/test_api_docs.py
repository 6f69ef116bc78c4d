"""docs/api.md is a spec: every Python example in it runs, from the repository's root."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_the_api_page_example_runs(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, "docs/api.md", "exec"), {})  # noqa: S102 - the project's own documentation


def test_the_api_page_has_examples():
    assert len(EXAMPLES) >= 5


def test_every_api_function_is_in_the_package_namespace():
    import trainsteps

    for name in ("plan", "plan_config", "plan_rl", "estimate_time", "solve", "explain", "count", "render"):
        assert callable(getattr(trainsteps, name)), name
    with pytest.raises(AttributeError):
        trainsteps.no_such_function  # noqa: B018


def test_the_api_refuses_a_setting_the_command_refuses():
    import trainsteps

    with pytest.raises(trainsteps.InputError) as caught:
        trainsteps.plan_config(framework="verl", num_examples=100, compare_versions=True)
    assert "--compare-versions" in caught.value.render("en")[0]

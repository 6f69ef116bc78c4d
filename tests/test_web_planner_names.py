"""The page's framework pickers name every planner `trainsteps plan` has as people write it, not by its table id."""

import re

from trainsteps.planners.table import PLANNERS

from .conftest import ROOT


def test_every_planner_a_picker_lists_has_a_name_on_the_page():
    app = (ROOT / "src" / "trainsteps" / "web" / "app.js").read_text()
    names = re.search(r"const PLANNER_NAMES = \{(.*?)\};", app, re.S).group(1)
    named = set(re.findall(r'"?([\w-]+)"?\s*:\s*"', names))
    listed = {planner.name for planner in PLANNERS.values()} - {"config"}  # config files have their own tab
    assert listed <= named, sorted(listed - named)

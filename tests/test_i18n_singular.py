"""English messages say "1 row", never "1 rows"; counts that merely end in 1 keep their plural."""

import pytest

from trainsteps.i18n import _may_have_one_noun, _singular


@pytest.mark.parametrize(("text", "said"), [
    ("1 rows are never used", "1 row is never used"),
    ("Target: 1 epochs", "Target: 1 epoch"),
    ("1 micro-batches were dropped", "1 micro-batch was dropped"),
    ("on 1 GPUs", "on 1 GPU"),
    ("2,001 rows", "2,001 rows"),
    ("0.1 epochs", "0.1 epochs"),
    ("278.61 epochs", "278.61 epochs"),
    ("11 steps", "11 steps"),
    ("1 rowset", "1 rowset"),
])
def test_a_count_of_one_takes_the_singular(text, said):
    shown = _singular(text) if _may_have_one_noun(text) else text
    assert shown == said
    assert shown == _singular(text)  # the quick look never skips a message the full rule would change

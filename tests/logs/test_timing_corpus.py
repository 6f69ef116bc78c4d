"""Total training time predicted from the first 10% and 50% of real runs' progress lines, against the real total
(docs/benchmarks.md holds the table; `python -m tests.logs.timing_corpus` prints it)."""

import pytest

from .timing_corpus import mdape, predictions

# (log, fraction) -> (trainsteps' error, the framework's own ETA error), in % of the real total, as recorded
RECORDED = {
    ('hf-cpt-windows-crlf-evalpauses', 0.1): (95.9, 95.9),  # no evaluation seen yet: 45-min evals unknown to both
    ('hf-cpt-windows-crlf-evalpauses', 0.5): (10.8, 56.8),
    ('lf-enhancedlog-truncated-jsonl', 0.1): (3.1, 1.9),
    ('lf-enhancedlog-truncated-jsonl', 0.5): (0.0, 0.2),
    ('lf-glm4-orpo-jsonl', 0.1): (2.4, 4.8),
    ('lf-glm4-orpo-jsonl', 0.5): (0.0, 0.4),
    ('lf-heymimihere-total-mismatch-jsonl', 0.1): (1.4, 2.1),
    ('lf-heymimihere-total-mismatch-jsonl', 0.5): (0.3, 0.2),
    ('lf-luojiu7b-pt-jsonl', 0.1): (0.2, 0.2),
    ('lf-luojiu7b-pt-jsonl', 0.5): (0.0, 0.0),
    ('lf-neu-cot-flash-lora-jsonl', 0.1): (2.0, 1.7),
    ('lf-neu-cot-flash-lora-jsonl', 0.5): (1.1, 1.1),
    ('lf-neu-cot-jsonl', 0.1): (2.4, 3.4),
    ('lf-neu-cot-jsonl', 0.5): (0.0, 0.0),
    ('lf-neu-flashattn-early-end-jsonl', 0.1): (30.7, 30.4),
    ('lf-neu-flashattn-early-end-jsonl', 0.5): (27.1, 27.0),
    ('lf-nsllm-cpt-jsonl', 0.1): (0.1, 0.1),
    ('lf-nsllm-cpt-jsonl', 0.5): (0.0, 0.0),
    ('lf-phi4-t4-nohup-cr', 0.1): (5.0, 16.2),
    ('lf-phi4-t4-nohup-cr', 0.5): (0.6, 10.3),
    ('lf-qwen25-7b-cs-style-m2-jsonl', 0.1): (2.7, 1.6),
    ('lf-qwen25-7b-cs-style-m2-jsonl', 0.5): (1.5, 1.6),
    ('lf-qwen25-7b-dpo-m3-jsonl', 0.1): (0.9, 4.8),
    ('lf-qwen25-7b-dpo-m3-jsonl', 0.5): (1.0, 0.3),
    ('lf-qwen25-7b-identity-jsonl', 0.1): (2.4, 2.6),
    ('lf-qwen25-7b-identity-jsonl', 0.5): (2.5, 2.5),
    ('lf-qwen25-7b-medical-jsonl', 0.1): (3.2, 5.9),
    ('lf-qwen25-7b-medical-jsonl', 0.5): (0.2, 1.2),
}


@pytest.fixture(scope="module")
def preds():
    return predictions()


def test_each_prediction_is_as_recorded(preds):
    got = {(p.id, p.fraction): (round(100 * p.error(p.ours), 1), round(100 * p.error(p.framework), 1)) for p in preds}
    assert got == RECORDED


def test_median_error_beats_the_frameworks_own_eta(preds):
    for fraction in (0.1, 0.5):
        ours, n = mdape(preds, fraction, "ours")
        theirs, m = mdape(preds, fraction, "framework")
        assert n == m == 14 and ours <= theirs

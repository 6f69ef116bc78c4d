"""`explain` on every log of the public corpus, against the facts each thread states (tests/fixtures/logs/corpus).

The rates printed by `python -m tests.logs.corpus_score` are in docs/explain.md. Every miss is listed here with
why the log cannot give the fact; a new miss (a regression) or a fixed one fails the test, so the list stays true.
"""

import pytest

from .corpus_score import items, rates, score

# id -> why the stated fact is not in the text the user posted
WORLD_NOT_IN_LOG = {
    "dsexamples-381-two-node": "2 nodes x 8 GPUs (the first of the two pasted runs) is only in the prose, whose stored copy was not found; the timer lines carry no world size",
}
RELEASE_NOT_IN_LOG: dict[str, str] = {}
STOP_NOT_IN_LOG = {
    "axolotl-871-packing-first-step-crash": "the paste (a comment by another user) ends at the first step; the failure is in the prose",
}
# three attempts pasted one after another, all killed: the facts give the first one's step (331), explain the last one's
STEP_OF_ANOTHER_ATTEMPT = {"landmark-65-killed"}
FOUND_NOT_A_LOG: dict[str, str] = {}

ITEMS = items()


@pytest.fixture(scope="module")
def outcomes():
    return [score(meta, path) for meta, path in ITEMS]


def test_the_corpus_is_big_and_varied_enough():
    kinds = [k for meta, _ in ITEMS for k in meta["kinds"]]
    assert len(ITEMS) >= 80
    assert kinds.count("no_banner") >= 15 and kinds.count("crash") >= 5 and kinds.count("pretraining") >= 8


def test_every_log_is_found_and_no_text_that_is_not_a_log_is_replayed(outcomes):
    r = rates(outcomes)
    assert set(r.misses["found"]) == set(FOUND_NOT_A_LOG) and r.misses["phantom"] == []
    assert r.found[0] == r.found[1] - len(FOUND_NOT_A_LOG)


def test_world_size_matches_the_thread_wherever_the_log_holds_it(outcomes):
    r = rates(outcomes)
    assert {miss[0] for miss in r.misses["world"]} == set(WORLD_NOT_IN_LOG)
    right, stated = r.world
    assert right == stated - len(WORLD_NOT_IN_LOG)
    # whenever explain names a world size, it is the thread's (the exception is explained above)
    named = [o for o in outcomes if o.world is not None and o.expected["world"] is not None]
    wrong = [o.id for o in named if o.world != o.expected["world"]]
    assert wrong == []


def test_release_matches_wherever_the_log_prints_one(outcomes):
    r = rates(outcomes)
    assert {miss[0] for miss in r.misses["release"]} == set(RELEASE_NOT_IN_LOG)


def test_crash_interruption_and_finish_match_the_thread(outcomes):
    r = rates(outcomes)
    assert {miss[0] for miss in r.misses["stop"]} == set(STOP_NOT_IN_LOG)
    right, stated = r.stop
    assert stated >= 15 and right == stated - len(STOP_NOT_IN_LOG)


def test_stop_steps_match_where_stated(outcomes):
    for meta, path in ITEMS:
        facts = meta["facts"]
        if "stop_step" not in facts or "not_a_log" in meta["kinds"] or meta["id"] in set(STOP_NOT_IN_LOG) | STEP_OF_ANOTHER_ATTEMPT:
            continue
        from .corpus_score import explain_item

        _, inferences, _ = explain_item(path)
        if not inferences or inferences[-1].run.last_step is None:
            continue
        assert inferences[-1].run.last_step.value == facts["stop_step"], meta["id"]


def test_rl_logs_give_the_step_and_totals_their_threads_state():
    from .corpus_score import RL_FRAMEWORKS, rl_item

    checked = 0
    for meta, path in ITEMS:
        if meta["framework"] not in RL_FRAMEWORKS:
            continue
        rl, facts = rl_item(path), meta["facts"]
        if not (rl.found_anything() or rl.bar):  # e.g. a trainer's own `Train epoch` bar, read as a progress bar
            continue
        for fact, seen in (("last_step", rl.last_step), ("last_epoch", rl.last_epoch),
                           ("total_training_steps", rl.total_training_steps), ("bar_total", rl.bar and rl.bar[2])):
            if fact in facts:
                assert seen == facts[fact], (meta["id"], fact)
                checked += 1
        assert rl.framework() == meta["framework"], meta["id"]
    assert checked >= 5

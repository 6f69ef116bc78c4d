"""`explain` on every log of the public corpus, against the facts each thread states (tests/fixtures/logs/corpus).

The rates printed by `python -m tests.logs.corpus_score` are in docs/explain.md. Every miss is listed here with
why the log cannot give the fact; a new miss (a regression) or a fixed one fails the test, so the list stays true.
"""

import pytest

from .corpus_score import items, rates, score

# id -> why the stated fact is not in the log itself (or why the thread's number is not the processes that trained)
WORLD_NOT_IN_LOG = {
    "accelerate-1867-ds-worldsize": "each node's DeepSpeed launcher prints dist_world_size=8 (the thread's bug); 16 is in the config",
    "dsexamples-381-two-node": "2 nodes x 8 GPUs is only in the prose; the timer lines carry no world size",
    "landmark-65-killed": "one GPU is stated in the thread, not in the bars",
    "lf-7820-sigterm-step100": "`GPU number: 4` is in the issue's System Info, not in the log",
    "lf-finquant-4090-jsonl": "one RTX 4090 is in the README, not in trainer_log.jsonl",
    "lf-glm4-orpo-jsonl": "one GPU is in the repository's notes, not in trainer_log.jsonl",
    "lf-luojiu7b-pt-jsonl": "one A10 is stated in the README, not in trainer_log.jsonl",
    "lf-qwen25-3b-2gpu-dup-jsonl": "2 GPUs are in the SLURM script, not in trainer_log.jsonl",
    "megatron-756-mixtral-16xh100": "16 GPUs are in the thread title; the iteration lines do not state the world size",
    "neox-1164-tokens-per-epoch": "4 GPUs are in the prose",
    "openrlhf-simplerl-24-train-epoch-bar": "4 x 8 H100 nodes are in the prose",
    "qwen-503-lora-48s-zh": "one GPU is in the prose",
    "r1v-122-grpo-quoted-bar": "8 GPUs (7 training, 1 vLLM) are in the prose",
    "swift-4366-bar-total-crash-zh": "8 GPUs and the row count are only in the prose",
    "trl-alignment-handbook-220-packing": "the machine has 8 GPUs, but the banner's 32 / (2 x 4) = 4 processes trained",
    "verl-2566-training-progress": "4 A100s are in the prose; verl's bar does not state the world size",
}
RELEASE_NOT_IN_LOG = {
    "lf-6873-bars-callbacks": "the release is in the issue's System Info, not in the log",
    "lf-7820-sigterm-step100": "the release is in the issue's System Info, not in the log",
    "lf-luojiu7b-pt-jsonl": "the release is in the model card README, not in trainer_log.jsonl",
    "trl-3442-grpo-fsdp-banner": "the release is in the issue's System Info, not in the log",
}
STOP_NOT_IN_LOG = {
    "axolotl-871-packing-first-step-crash": "the paste ends at the first step; the failure is in the prose",
    "lf-8868-banner-oom-zh": "the OOM is in the thread title; the paste ends at step 2 of 352",
    "lf-enhancedlog-truncated-jsonl": "the committed trainer_log.jsonl stops at step 500 of 560; the finish is in trainer_state.json",
    "rdt-43-accelerate-banner": "the OOM is in the thread title; the paste ends at step 1 of 200,000",
    "swift-6827-streaming-no-len-zh": "the paste is only the command; the ValueError is in the title",
}
# three attempts pasted one after another, all killed: the facts give the first one's step (331), explain the last one's
STEP_OF_ANOTHER_ATTEMPT = {"landmark-65-killed"}
FOUND_NOT_A_LOG = {"swift-6827-streaming-no-len-zh": "a launch command with no output"}

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
    # whenever explain names a world size, it is the thread's (the two exceptions are explained above)
    named = [o for o in outcomes if o.world is not None and o.expected["world"] is not None]
    wrong = [o.id for o in named if o.world != o.expected["world"]]
    assert set(wrong) == {"accelerate-1867-ds-worldsize", "trl-alignment-handbook-220-packing"}


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

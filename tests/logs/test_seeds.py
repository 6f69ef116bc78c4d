"""The two users of the seeds, answered: what their banners determine, and why."""

from trainsteps.logs import read_log
from trainsteps.logs.explain import render, to_json
from trainsteps.logs.infer import infer

from .conftest import FIXTURES


def test_seed_003_four_processes_and_floor_rounding(explain_file):
    inf = explain_file("seed_003_4gpu.log")
    assert inf.world_size == 4
    assert inf.inferred["world_size"].exact == 4
    # trainer.py:2128 is where only 4.42.0-4.42.4 print "Running training"
    assert inf.inferred["transformers"].to_json() == {"min": "4.42.0", "max": "4.42.4"}
    # 1,509 = 3 x floor(4,025 / 8): the floor rule of releases before 4.52, not ceil (3 x 504 = 1,512)
    best = inf.best
    assert best.family.rounding == "floor"
    d = best.schedule.derivation
    assert d["batches_per_epoch"].value == 4025
    assert d["num_update_steps_per_epoch"].value == 503
    releases = next(f for f in inf.facts if f.msg_id == "explain.fact.releases_epochs")
    assert releases.params["releases"] == "4.42.0-4.42.4"
    assert not inf.contradictions


def test_seed_003_without_line_numbers_is_any_release_before_4_52():
    text = (FIXTURES / "seed_003_4gpu.log").read_text()
    plain = "\n".join(line.split(">>", 1)[1] for line in text.splitlines())
    inf = infer(read_log(text=plain).runs[0])
    whole_epochs = [h for h in inf.hypotheses if h.mode == "epochs" and h.spec.num_train_epochs == 3 and not h.drop_last]
    assert {h.family.rounding for h in whole_epochs} == {"floor"}
    fact = next(f for f in inf.facts if f.msg_id == "explain.fact.releases_epochs")
    assert fact.params["releases"] == "4.30.0-4.51.3"


def test_seed_001_one_process_release_4_49_and_the_real_stop(explain_file):
    inf = explain_file("seed_001_1047.log")
    assert inf.world_size == 1
    assert inf.inferred["transformers"].exact == "4.49.0"
    d = inf.best.schedule.derivation
    # the right reasoning: floor(105 / 8) = 13 steps per epoch, x 300 epochs = 3,900 (not floor(1047 / 80))
    assert d["batches_per_epoch"].value == 105
    assert d["num_update_steps_per_epoch"].substituted == "max(floor(105 / 8), 1)"
    assert d["max_steps"].value == 3900
    assert inf.best.schedule.run.epochs_completed == 278.6095
    codes = [t.code for t in inf.best.schedule.warnings]
    assert "HF_PLAN_LOOP_MISMATCH" in codes


def test_seed_001_reads_through_the_copy_paste_damage(explain_file):
    inf = explain_file("seed_001_1047.log")
    params = inf.run.banner["trainable_parameters"]
    assert params.value == 4399104 and params.note == "explain.note.glued"
    assert inf.run.value("max_steps") == 3900  # not taken from the glued ".teps = 3,900"


def test_seed_001_explanation_in_both_languages():
    observations = read_log(str(FIXTURES / "seed_001_1047.log"))
    inferences = [infer(r) for r in observations.runs]
    en = render(observations, inferences, "en")
    zh = render(observations, inferences, "zh")
    assert "max(floor(105 / 8), 1) = 13" in en and "max(floor(105 / 8), 1) = 13" in zh
    assert "278.61 of 300" in en and "278.61" in zh
    assert "4,200" in en  # what a 4.52+ release would print
    # the blog's floor(1,047 / 80) = 13 agrees only by chance: the Trainer computes floor(105 / 8)
    assert "floor(1,047 / 80) = 13 only happens to agree" in en and "floor(105 / 8) = 13" in en
    assert "逐步推导" in zh
    data = to_json(observations, inferences)
    assert {"observed", "inferred", "run", "contradictions", "derivation"} <= set(data)
    assert data["inferred"]["transformers"] == "4.49.0"
    assert data["run"]["epochs_completed"] == 278.6095


SUMMARY = "{'train_runtime': 3723.1, 'train_samples_per_second': 84.4, 'train_steps_per_second': 1.048, 'epoch': %s}"


def test_where_the_run_stopped_tells_the_release_families_apart():
    """Without line numbers the banner fits every release before 4.52; the final epoch picks the loop."""
    banner = "\n".join(line.split(">>", 1)[1] for line in (FIXTURES / "seed_001_1047.log").read_text().splitlines() if ">>" in line)
    late = infer(read_log(text=banner + "\n" + SUMMARY % "278.61").runs[0])
    assert {h.family.name for h in late.hypotheses} == {"4.47-4.51"}
    assert any(e.msg_id == "explain.ev.progress" for e in late.evidence)
    early = infer(read_log(text=banner + "\n" + SUMMARY % "297.14").runs[0])
    assert {h.family.name for h in early.hypotheses} == {"4.30", "4.31-4.45", "4.46"}
    never = infer(read_log(text=banner + "\n" + SUMMARY % "150.0").runs[0])
    assert never.contradictions and never.contradictions[0].what.msg_id == "explain.contra.progress"

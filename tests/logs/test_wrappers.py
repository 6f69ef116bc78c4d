"""Lines of the wrappers around the Trainer, and the Trainer's own extra lines."""

from trainsteps.logs import read_log
from trainsteps.logs.infer import infer

from .conftest import FIXTURES

BANNER = """***** Running training *****
  Num examples = 1,047
  Num Epochs = 3
  Instantaneous batch size per device = 10
  Total train batch size (w. parallel, distributed & accumulation) = {total}
  Gradient Accumulation steps = 8
  Total optimization steps = {m}
"""


def test_axolotl_estimate_used_as_max_steps_with_packing():
    inf = infer(read_log(str(FIXTURES / "axolotl_banner_deepspeed.log")).runs[0])
    assert not inf.contradictions
    assert inf.inferred["max_steps"].exact == 312
    packed = next(f for f in inf.facts if f.msg_id == "explain.fact.axolotl_packed")
    assert (packed.params["low"], packed.params["high"]) == (104, "155")
    assert inf.run.wrapper["deepspeed_train_batch_size"].value == 8
    assert inf.world_size == 1


def test_deepspeed_lines_give_the_processes_when_the_banner_has_no_total():
    text = ("[INFO] [config.py:1003:print]   train_batch_size ............. 320\n"
            "[INFO] [config.py:1003:print]   train_micro_batch_size_per_gpu  10\n"
            "[INFO] [config.py:1003:print]   gradient_accumulation_steps .. 8\n"
            + BANNER.format(total=320, m=12).replace("  Total train batch size (w. parallel, distributed & accumulation) = 320\n", ""))
    inf = infer(read_log(text=text).runs[0])
    assert inf.world_size == 4
    assert inf.inferred["world_size"].exact == 4


def test_dataparallel_line():
    text = BANNER.format(total=160, m=18).replace(
        "  Total train", "  Training with DataParallel so batch size has been adjusted to: 20\n  Total train")
    run = read_log(text=text).runs[0]
    assert run.value("dataparallel_batch") == 20
    inf = infer(run)
    assert inf.world_size == 1  # 160 = 20 x 8 x 1
    assert any(e.msg_id == "explain.ev.dataparallel" for e in inf.evidence)


def test_resume_lines_are_used():
    text = BANNER.format(total=80, m=39) + "  Continuing training from epoch 1\n  Continuing training from global step 20\n"
    inf = infer(read_log(text=text).runs[0])
    assert inf.inferred["resume_from_step"].exact == 20
    assert inf.best.spec.resume_from_step == 20


def test_llamafactory_trainer_log_jsonl_gives_the_last_step():
    text = BANNER.format(total=80, m=39) + '{"current_steps": 30, "total_steps": 39, "loss": 0.5, "epoch": 2.31}\n'
    run = read_log(text=text).runs[0]
    assert (run.last_step.value, run.last_epoch.value) == (30, 2.31)
    assert infer(run).hypotheses  # an unfinished run may stop anywhere before the end


def test_dataset_size_range_when_num_examples_is_missing():
    text = (FIXTURES / "seed_003_4gpu.log").read_text()
    text = "\n".join(line for line in text.splitlines() if "Num examples" not in line)
    inf = infer(read_log(text=text).runs[0])
    assert inf.inferred["num_examples"].contains(128770)
    ranges = [f.params for f in inf.facts if f.msg_id == "explain.fact.n_range"]
    default = next(p for p in ranges if p["mode"] == "num_train_epochs" and not p["drop_last"])
    assert (default["low"], default["high"]) == (128737, 128992)  # L = 4,025..4,031 per process, floor / 8 = 503


def test_trainer_state_json(tmp_path):
    import json

    state = {"global_step": 20, "epoch": 1.53, "max_steps": 39, "num_train_epochs": 3, "train_batch_size": 10,
             "log_history": [{"loss": 1.0, "epoch": 0.77, "step": 10}]}
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(state))
    (run,) = read_log(str(path)).runs
    inf = infer(run)
    assert run.kind == "trainer_state"
    assert inf.inferred["num_train_epochs"].contains(3)
    assert any(f.code == "LOG_STOPPED_EARLY" for f in inf.facts)
    assert run.wrapper["state_steps_per_epoch"].value == 12.987


def test_explain_messages_exist_in_both_languages_with_the_same_parameters():
    import string

    from trainsteps.i18n import en, zh

    for catalog in ("MESSAGES", "LABELS"):
        ours_en = {k: v for k, v in getattr(en, catalog).items() if k.startswith("explain.")}
        ours_zh = {k: v for k, v in getattr(zh, catalog).items() if k.startswith("explain.")}
        assert set(ours_en) == set(ours_zh)
        for key, text in ours_en.items():
            fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}
            assert fields == {f for _, f, _, _ in string.Formatter().parse(ours_zh[key]) if f}, key


def test_several_runs_in_one_file():
    first = (FIXTURES / "seed_003_4gpu.log").read_text()
    second = (FIXTURES / "seed_001_1047.log").read_text()
    runs = read_log(text=first + "\n{'train_runtime': 10.0, 'epoch': 3.0}\n" + second).runs
    assert [r.value("max_steps") for r in runs] == [1509, 3900]
    assert runs[0].finished and not runs[1].finished
    assert [infer(r).world_size for r in runs] == [4, 1]

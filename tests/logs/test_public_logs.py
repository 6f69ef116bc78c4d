"""Real logs from public issues and blog posts (tests/fixtures/logs/public, each citing its URL):
what each one determines, what stays a range, and what contradicts every Trainer rule."""

import pytest

from trainsteps.logs import read_log
from trainsteps.logs.infer import infer

from .conftest import FIXTURES

PUBLIC = FIXTURES / "public"


def explain(name: str):
    runs = read_log(str(PUBLIC / name)).runs
    return [infer(run) for run in runs]


def test_every_public_log_cites_its_source():
    files = sorted(PUBLIC.glob("*.log"))
    assert len(files) >= 10
    for f in files:
        assert f.read_text().startswith("# source: http"), f.name


def test_grpo_repeats_each_prompt_num_generations_times():
    (inf,) = explain("open-r1-483_grpo_4.49.log")
    assert inf.world_size == 7
    assert inf.inferred["num_examples"].exact == 5498
    (c,) = inf.contradictions
    repeated = next(e for e in c.explanations if e.msg_id in ("explain.expl.repeated", "explain.expl.repeated_printed"))
    assert repeated.params["k"] == 8  # the user's num_generations


def test_grpo_on_fsdp_4_51():
    (inf,) = explain("trl-3442_grpo_fsdp_4.51.3.log")
    assert inf.world_size == 4 and inf.contradictions


def test_neuron_trainer_that_did_not_shard():
    (inf,) = explain("optimum-neuron-198_unsharded.log")
    assert inf.world_size == 32
    (c,) = inf.contradictions
    assert c.explanations[0].msg_id == "explain.expl.unsharded"


def test_partial_banner_still_names_the_release():
    (inf,) = explain("llamafactory-736_partial_4.31.log")
    assert inf.inferred["transformers"].exact == "4.31.0"
    assert inf.inferred["num_examples"].exact == 151901


def test_two_processes_from_a_plain_banner():
    (inf,) = explain("llamafactory-4783_plain.log")
    assert inf.world_size == 2
    fact = inf.facts[0]
    assert fact.msg_id == "explain.fact.releases_epochs" and fact.params["releases"] == "4.30.0-4.51.3"


def test_unsloth_banner_and_a_second_run_in_the_same_file():
    first, second = explain("unsloth-1140_two_runs.log")
    assert first.run.kind == second.run.kind == "unsloth"
    assert first.world_size == 1 and not first.contradictions
    assert first.run.last_step.value == 22 and first.run.last_epoch.value == 0.36
    assert {h.family.rounding for h in first.hypotheses if h.mode == "epochs" and not h.drop_last
            and h.spec.num_train_epochs == 5} == {"floor"}
    assert second.contradictions  # unsloth_train doubles the steps: no Trainer rule prints 580


def test_unsloth_train_steps_are_not_the_trainers():
    (inf,) = explain("unsloth-1194_unsloth_train.log")
    assert inf.contradictions


def test_axolotl_lines_alone():
    (inf,) = explain("axolotl-3152_estimate.log")
    assert inf.run.kind == "wrapper"
    assert inf.run.wrapper["axolotl_total_num_steps"].value == 14
    assert inf.run.wrapper["axolotl_total_num_tokens"].value == 8487290


def test_streaming_banner():
    (inf,) = explain("llamafactory-7375_streaming_4.49.log")
    assert inf.inferred["max_steps"].exact == 1500
    assert inf.world_size == 24  # 192 / (1 x 8)
    assert any(f.msg_id == "explain.fact.stream" for f in inf.facts)
    assert inf.inferred["streaming"].contains(True)


def test_plain_banner_fits_every_release():
    (inf,) = explain("transformers-22757_plain.log")
    assert inf.inferred["world_size"].exact == 1
    assert inf.inferred["num_train_epochs"].contains(3.0)


def test_packing_from_the_tokenizer_bar():
    (inf,) = explain("llamafactory-5362_packing_4.43.log")
    assert inf.inferred["num_examples"].exact == 137591
    # trainer.py:2134 is 4.43.x, 4.44.1 and 4.44.2, but not 4.44.0 (2144)
    assert inf.inferred["transformers"].to_json() == {"one_of": ["4.43.0", "4.43.1", "4.43.2", "4.43.3", "4.43.4", "4.44.1", "4.44.2"]}
    fact = next(f for f in inf.facts if f.code == "LOG_FEWER_EXAMPLES")
    assert fact.params["raw"] == 348979


def test_pretraining_packing_4_51():
    (inf,) = explain("llamafactory-8318_pt_4.51.log")
    assert inf.world_size == 4
    assert inf.inferred["transformers"].to_json() == {"min": "4.51.0", "max": "4.51.3"}
    assert any(f.code == "LOG_FEWER_EXAMPLES" and f.params["raw"] == 1042224 for f in inf.facts)


def test_truncated_last_line_is_not_used():
    (inf,) = explain("llamafactory-7492_truncated_4.50.log")
    assert "trainable_parameters" not in inf.run.banner
    assert any(m == "explain.note.cut_number" for m, _ in inf.run.notes)
    # 2409 is shared by 4.50.x and 4.52.x (not 4.51.x); 44 rows on 2 processes give 22 batches, GA 1: both roundings agree
    assert inf.inferred["transformers"].to_json() == {"one_of": ["4.50.0", "4.50.1", "4.50.2", "4.50.3",
                                                                 "4.52.1", "4.52.2", "4.52.3", "4.52.4"]}


def test_evaluation_banner_is_not_a_training_run():
    inferences = explain("csdn-145152631_eval_4.41.log")
    training = [i for i in inferences if i.run.has_banner() and i.run.value("max_steps")]
    assert len(training) == 1
    assert training[0].inferred["transformers"].to_json() == {"min": "4.41.0", "max": "4.41.2"}
    assert all(i.run.value("num_examples") != 1667 for i in inferences)


def test_single_line_names_two_releases():
    (inf,) = explain("llamafactory-6185_filtered_4.46.log")
    assert inf.inferred["transformers"].to_json() == {"min": "4.46.0", "max": "4.46.1"}


@pytest.mark.parametrize("raw", [641810])
def test_raw_examples_given_by_the_user(raw):
    runs = read_log(str(PUBLIC / "llamafactory-6185_filtered_4.46.log")).runs
    inf = infer(runs[0], raw_examples=raw)
    assert any(f.code == "LOG_FEWER_EXAMPLES" for f in inf.facts)

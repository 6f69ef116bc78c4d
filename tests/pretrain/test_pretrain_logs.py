"""Explaining pretraining logs. The NeoX lines are NeoX's own output (tests/fixtures/pretrain/neox.json), reproducing
gpt-neox#1140, the source of seed 004: 31,267,487 samples over 2 epochs at seq_length 2048."""

from trainsteps.logs.pretrain import explain_pretrain, parse_pretrain_log

from .conftest import load

SEED = load("neox")["seed004"]
MCORE = load("mcore")


def test_seed004_one_epoch_is_half_the_printed_samples():
    observed = parse_pretrain_log(SEED["log"])
    assert (observed["samples_line"], observed["epochs_built"], observed["seq_length"]) == (31_267_487, 2, 2048)
    facts = explain_pretrain(observed, global_batch_size=1024).facts
    assert facts["samples_built"] == 31_267_486
    assert facts["samples_per_epoch_min"] == facts["samples_per_epoch_max"] == 15_633_743
    assert facts["iterations_per_epoch"] == 15_267
    assert facts["naive_iterations"] == 30_534
    assert facts["tokens_per_epoch_min"] <= SEED["tokens_per_epoch"] <= facts["tokens_per_epoch_max"]


def test_seed004_explanation_says_why_30534_is_the_two_epoch_figure_in_both_languages():
    explanation = explain_pretrain(parse_pretrain_log(SEED["log"]), global_batch_size=1024)
    english = "\n".join(explanation.lines("en"))
    assert "30,534" in english and "2-epoch figure" in english and "15,267" in english
    chinese = "\n".join(explanation.lines("zh"))
    assert "30,534" in chinese and "15,267" in chinese and "2 个 epoch" in chinese


def test_only_the_two_totals_of_the_article_are_enough():
    lines = ["    total number of samples: 31267487", "    total number of epochs: 2"]
    facts = explain_pretrain(parse_pretrain_log(lines), seq_length=2048, global_batch_size=1024).facts
    assert facts["iterations_per_epoch"] == 15_267


def test_megatron_core_prints_the_exact_count():
    case = MCORE["cases"][2]  # train: 2 epochs built
    observed = parse_pretrain_log(case["log"][:7])
    assert observed["samples_line_kind"] == "mcore"
    facts = explain_pretrain(observed, seq_length=case["S"], global_batch_size=1).facts
    assert facts["samples_built"] == case["splits"][0]["len"]
    tokens = case["splits"][0]["tokens_per_epoch"]
    assert facts["tokens_per_epoch_min"] <= tokens <= facts["tokens_per_epoch_max"]


def test_deepspeed_configuration_lines_are_checked():
    from trainsteps.frameworks.deepspeed import BatchTriple, config_lines

    observed = parse_pretrain_log(config_lines(BatchTriple(1024, 4, 8), 32))
    assert observed["deepspeed"] == {"gradient_accumulation_steps": 8, "train_batch_size": 1024,
                                     "train_micro_batch_size_per_gpu": 4, "world_size": 32}
    assert "1,024 = micro 4 x accumulation 8" in explain_pretrain(observed).lines()[0]
    bad = parse_pretrain_log(config_lines(BatchTriple(1000, 4, 8), 32))
    assert "DeepSpeed will stop" in explain_pretrain(bad).lines()[0]


def test_a_log_without_such_lines_says_so():
    assert explain_pretrain(parse_pretrain_log(["hello"])).lines() == ["no sample, epoch, iteration or batch line found"]


def test_explain_reads_the_seed004_log_on_its_own(run_cli, tmp_path):
    log = tmp_path / "neox.log"
    log.write_text("\n".join(SEED["log"]) + "\n", encoding="utf-8")
    code, out, _ = run_cli("explain", str(log), "--global-batch-size", "1024")
    assert code == 0 and "15,267" in out and "30,534" in out


def test_explain_takes_the_article_s_two_lines_as_text_in_json(run_cli):
    text = "    total number of samples: 31267487\n    total number of epochs: 2\n"
    code, out, _ = run_cli("explain", "--text", text, "--framework", "neox", "--seq-length", "2048",
                           "--global-batch-size", "1024", "--format", "json")
    import json

    data = json.loads(out)
    assert code == 0 and data["facts"]["iterations_per_epoch"] == 15_267 and data["framework"] == "neox"


def test_a_pretraining_framework_without_its_lines_is_a_clear_error(run_cli):
    code, out, err = run_cli("explain", "--text", "hello\nworld\n", "--framework", "megatron")
    assert code == 2 and out == "" and "no megatron lines" in err


def test_megatron_lines_behind_a_logger_prefix_are_read():
    from trainsteps.logs.pretrain import parse_pretrain_log

    seen = parse_pretrain_log(["INFO:megatron.core.datasets.gpt_dataset:> total number of samples: 31267486",
                               "[INFO     | megatron.core.datasets.gpt_dataset]: > total number of epochs: 2"])
    assert (seen["samples_line"], seen["samples_line_kind"], seen["epochs_built"]) == (31267486, "mcore", 2)


def test_an_iteration_line_alone_is_explained_not_called_nothing():
    from trainsteps.logs.pretrain import explain_pretrain, parse_pretrain_log

    seen = parse_pretrain_log([" iteration      100/   15000 | consumed samples:       102400 | global batch size:  1024 |"])
    ids = [msg_id for msg_id, _ in explain_pretrain(seen).items]
    assert ids == ["ptlog.iteration", "ptlog.consumed"]


def test_deepspeed_config_lines_behind_their_print_prefix_are_read():
    from trainsteps.logs.pretrain import parse_pretrain_log

    prefix = "[2024-05-01 10:00:00,000] [INFO] [config.py:988:print]   "
    seen = parse_pretrain_log([prefix + "train_batch_size ............. 256", prefix + "world_size ................... 4"])
    assert seen["deepspeed"] == {"train_batch_size": 256, "world_size": 4}

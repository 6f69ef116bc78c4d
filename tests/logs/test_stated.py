"""What the words around a log state (logs/stated.py, logs/model_card.py, logs/launch.py): the sentences below are
quoted from the public threads of the corpus (tests/fixtures/logs/corpus), each next to the count its thread means."""

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainsteps.logs import read_log, stated
from trainsteps.logs.explain import explain_log
from trainsteps.logs.stated import stated_gpus

CORPUS = Path(__file__).parent.parent / "fixtures" / "logs" / "corpus"


@pytest.mark.parametrize(("sentence", "gpus"), [
    ("I want to train a 30B llama model on 16 A100 GPU (2node * 8 cards)", 16),    # DeepSpeedExamples#381
    ("I am running a training on `2 Nodes` with `8 GPUs` each", 16),                # accelerate#1867
    ("My current setup has 4 GPUs", 4),                                              # gpt-neox#1164
    ("The speed is based on 4 × 8 H100 nodes.", 32),                                 # simpleRL-reason#24
    ("This is my setup on 4 A100 80GB", 4),                                          # verl#2566
    ("training Qwen2-VL-2B-instruct on 8 80G GPU (7 for training and 1 for vllm)", 7),  # R1-V#122: 7 train
    ("# Training Mixtral 8x7B on 16 x H100", 16),                                    # Megatron-LM#756: not 8
    ("Training with a single process on 1 GPUs.", 1),                                # LandMark#65
    ("I am using a machine with 8 A100", 8),                                         # alignment-handbook#220
    ("- accelerator(s): NVIDIA L4 x 4", 4),                                          # trl#3442 env report
    ("我的数据量为396746，gpu数量为8", 8),                                            # ms-swift#4366
    ("硬件基础：单卡 RTX-4090", 1),
    ("僅使用一張Ａ１０顯卡進行訓練", 1),
    ("用8卡训练", 8),
    (">     Running on 2 hosts     with 4 GPUs each     for a total of 8 GPUs", 8),  # a committed Megatron-DeepSpeed log
    ("3 machines with 8 GPUs each", 24),
])
def test_a_sentence_that_names_gpus_gives_their_count(sentence, gpus):
    assert stated_gpus(sentence) == gpus


# The forms people write a GPU count in, quoted from the fresh corpus (tests/fixtures/logs/wild, its .json has the source)
@pytest.mark.parametrize(("sentence", "gpus"), [
    ("mistral deep speed zero bug axolotl.cli.train FAILED 8XA100", 8),                       # axolotl#891
    ("8*A100 training speed", 8),                                                                # lingbot-vla#27
    ("My torch version: 2.5.1+cu124 python 3.10,2080Ti*8", 8),                                   # open_clip#1024
    ("I am trying the run the code on a single A5000 Node with 4 GPUS", 4),                      # EgoVLP#21
    ("I also try your fintuning on 8 NVIDIA RTX A4500 but got stuck for 2 hours after", 8),      # Finetune-Qwen2.5-VL#2
    ("2*h200， QWen3 0.6B，  slimerl/slime:latest , data gsm8k", 2),                             # slime#385
    ("fine-tuning on 2x RTX PRO 6000 Blackwell", 2),
    ("one machine and 4 GPUs", 4),
    ("I have run  code on a machine with x2 2080Tis, deepspeed report Kill subprocess", 2),     # DeepSpeed#4000
])
def test_the_forms_people_write_a_gpu_count_in_are_read(sentence, gpus):
    assert stated_gpus(sentence) == gpus


@pytest.mark.parametrize("sentence", [
    "Mixtral 8x7B with 32 experts",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB",
    "per_device_train_batch_size 8, gradient_accumulation_steps 4",
    "Loading checkpoint shards: 100%|██████████| 4/4 [00:05<00:00,  1.30s/it]",
    "GPU type: NVIDIA A100 80GB PCIe",
    "Qwen2.5-7B QLoRA, 2048 tokens",
])
def test_text_that_names_no_gpu_count_gives_none(sentence):
    assert stated_gpus(sentence) is None


BAR = "  1%|▏         | 1/148 [00:09<22:27,  9.17s/it]\n"


def _last(text: str):
    return explain_log(read_log(text=text))[-1]


def test_a_failure_named_in_the_title_ends_a_log_that_shows_none():
    inf = _last("# CUDA OUT OF MEMORY after several samples training\n\n" + BAR)
    assert inf.stopped == "crashed"
    assert any(f.msg_id == "explain.fact.stated_failure" for f in inf.facts)


@pytest.mark.parametrize("sentence", ["I set the batch size to 1 to avoid OOM", "训练时防止oom错误", "no OOM so far"])
def test_a_failure_the_words_avoid_is_not_a_failure(sentence):
    assert _last(sentence + "\n" + BAR).stopped is None


@pytest.mark.parametrize("sentence", ["My job hit the time limit and was cancelled by slurm at step 1.",
                                      "the job got preempted", "任务运行到一半超时被杀了"])
def test_a_stop_from_outside_said_in_words_reads_as_interrupted(sentence):
    inf = _last(sentence + "\n" + BAR)
    assert inf.stopped == inf.status == "interrupted" and inf.end_step == 1
    assert any(f.msg_id == "explain.fact.stated_interruption" for f in inf.facts)


@pytest.mark.parametrize("sentence", ["#SBATCH --time-limit=24:00:00", "I save every 100 steps to avoid the time limit",
                                      "srun --partition=gpu --time=1-00:00:00 --cancel-on-limit python train.py"])
def test_a_time_limit_that_is_a_setting_or_avoided_is_no_stop(sentence):
    assert _last(sentence + "\n" + BAR).stopped is None


def test_the_scheduler_s_own_cancel_line_is_the_stop_not_a_statement():
    inf = _last(BAR + "slurmstepd: error: *** JOB 1234 ON node1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***\n")
    assert inf.stopped == "interrupted"
    assert "stated_interruption" not in inf.run.wrapper


def test_the_program_s_own_oom_line_is_the_crash_not_a_statement():
    inf = _last(BAR + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert inf.stopped == "crashed"
    assert "stated_failure" not in inf.run.wrapper


@pytest.mark.parametrize("meta_id", ["megatron-lumi-mi300x-tp4pp2-timelimit", "megatron-ds-notes-world1-micro8"])
def test_megatron_s_max_tokens_to_oom_argument_names_no_failure(meta_id):
    from .conftest import FIXTURES

    path = FIXTURES / "corpus" / f"{meta_id}.log"
    assert "max_tokens_to_oom ......" in path.read_text(encoding="utf-8")  # an argument in Megatron's dump
    assert "stated_failure" not in read_log(str(path)).stated


def test_the_batch_arithmetic_outranks_the_gpus_the_text_states():
    banner = ("I am using a machine with 8 A100\n***** Running training *****\n  Num examples = 698\n  Num Epochs = 3\n"
              "  Instantaneous batch size per device = 2\n"
              "  Total train batch size (w. parallel, distributed & accumulation) = 32\n"
              "  Gradient Accumulation steps = 4\n  Total optimization steps = 66\n")
    inf = _last(banner)
    assert inf.world_size == 4
    assert any(f.msg_id == "explain.fact.stated_gpus_differ" for f in inf.facts)


@pytest.mark.parametrize(("command", "world"), [
    ("CUDA_VISIBLE_DEVICES=6 llamafactory-cli train rlhf_train.yaml", 1),
    ("CUDA_VISIBLE_DEVICES=0,1,2,3 llamafactory-cli train sft.yaml", 4),
    ("export CUDA_VISIBLE_DEVICES=0\npython finetune.py --num_train_epochs 100", 1),
    ("python3 -m verl.trainer.main_ppo \\\n  trainer.n_gpus_per_node=4 \\\n  trainer.nnodes=2 \\", 8),
])
def test_a_launch_command_gives_the_processes(command, world):
    inf = _last(command + "\n" + BAR)
    assert inf.world_size == world


def test_llamafactory_with_nproc_per_node_is_not_one_process_per_visible_device():
    inf = _last("CUDA_VISIBLE_DEVICES=0,1,2,3 NPROC_PER_NODE=2 llamafactory-cli train sft.yaml\n" + BAR)
    assert inf.world_size != 4


CARD = """---
library_name: peft
---
## Training procedure

### Training hyperparameters

The following hyperparameters were used during training:
- learning_rate: 5e-05
- train_batch_size: 8
- eval_batch_size: 8
- seed: 42
- gradient_accumulation_steps: 4
- total_train_batch_size: {total}
- optimizer: Adam with betas=(0.9,0.999) and epsilon=1e-08
- lr_scheduler_type: cosine
- num_epochs: 3.0
{devices}
### Framework versions

- PEFT 0.6.0
- Transformers 4.34.1
- Pytorch 2.1.0+cu121
"""
JSONL = '{"current_steps": 10, "total_steps": 8712, "loss": 2.1, "epoch": 0.0, "percentage": 0.11, "elapsed_time": "0:07:21", "remaining_time": "4 days, 10:40:05"}\n'


def _log_and_card(tmp_path, total, devices=""):
    (tmp_path / "trainer_log.jsonl").write_text(JSONL)
    (tmp_path / "README.md").write_text(CARD.format(total=total, devices=devices))
    obs = read_log([str(tmp_path / "trainer_log.jsonl"), str(tmp_path / "README.md")])
    return obs, explain_log(obs)


def test_a_model_card_beside_a_log_gives_its_processes_and_release(tmp_path):
    obs, inferences = _log_and_card(tmp_path, 32)
    assert len(obs.runs) == 1 and inferences[0].world_size == 1  # 32 / (8 x 4)
    assert obs.runs[0].transformers_version.value == "4.34.1"
    assert obs.runs[0].transformers_version.file.endswith("README.md")


def test_a_card_s_num_devices_is_the_processes(tmp_path):
    _, inferences = _log_and_card(tmp_path, 128, "- distributed_type: multi-GPU\n- num_devices: 4")
    assert inferences[0].world_size == 4


WORDS = ["16", "x", "×", "*", "8", "A100", "H100", "GPU", "GPUs", "cards", "nodes", "node", "with", "each", "单卡", "卡",
         "gpu数量为", "张", "显卡", "OOM", "out of memory", "avoid", "#SBATCH", "--gres=gpu:", "--nodes=", "Hardware:", "RTX-4090",
         "(", "7 for training", ")", "NVIDIA", "L4", "Mixtral", "8x7B", "1,047", "\t", "  "]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=30))
def test_any_sentence_gives_a_count_or_none_quickly(parts):
    sentence = " ".join(parts)
    started = time.perf_counter()
    count = stated_gpus(sentence)
    assert count is None or (isinstance(count, int) and count >= 0)
    assert time.perf_counter() - started < 0.05


def test_a_long_hostile_line_is_read_in_bounded_time():
    started = time.perf_counter()
    read_log(text=("16 x " * 20000) + "\n" + ("2 nodes with " * 20000) + "\n" + ("一张" * 20000) + "\n")
    assert time.perf_counter() - started < 2


def test_the_command_reads_several_files_of_one_run(tmp_path):
    from click.testing import CliRunner

    from trainsteps.cli.main import cli

    (tmp_path / "trainer_log.jsonl").write_text(JSONL)
    (tmp_path / "README.md").write_text(CARD.format(total=32, devices=""))
    result = CliRunner().invoke(cli, ["explain", str(tmp_path / "trainer_log.jsonl"), str(tmp_path / "README.md")])
    assert result.exit_code == 0, result.output
    assert "README.md: line" in result.output
    missing = CliRunner().invoke(cli, ["explain", str(tmp_path / "trainer_log.jsonl"), str(tmp_path / "nope.slurm")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output and len(missing.output.strip().splitlines()) <= 2


@pytest.mark.parametrize(("sentence", "gpus"), [
    ("I train on 2 nodes with 8 A100 each", 16),
    ("2 nodes x 8 A100", 16),
    ("using 2 nodes, each node has 8 A100s", 16),
    ("两台机器，每台8张A100", 16),
    ("【求助】两台机器每台8张卡，训练Qwen2.5-14B时报错", 16),
    ("环境：transformers==4.49.0，deepspeed 0.16.2，gpu数量为16", 16),
])
def test_nodes_times_gpus_per_node_is_their_product(sentence, gpus):
    from trainsteps.logs.text import clean

    assert stated_gpus(clean(sentence)) == gpus


def _world(text: str, *files) -> tuple:
    inf = explain_log(read_log(text=text) if not files else read_log(list(files)))[-1]
    return inf.world_size, inf


@pytest.mark.parametrize(("launch", "world"), [
    ("FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 NPROC_PER_NODE=8 MASTER_ADDR=192.168.1.10 llamafactory-cli train qwen_sft.yaml", 16),
    ("NNODES=2 NODE_RANK=0 NPROC_PER_NODE=8 MASTER_ADDR=10.0.0.1 swift sft --model Qwen/Qwen2.5-7B", 16),
    ("NPROC_PER_NODE=4 swift sft --model Qwen/Qwen2.5-7B", 4),
    ("deepspeed --num_gpus 8 --num_nodes 2 train.py --deepspeed ds.json", 16),
    ("I train on 2 nodes with 8 A100 each\nNNODES=2 NODE_RANK=0 llamafactory-cli train x.yaml", 16),
])
def test_launch_environment_gives_nodes_times_processes_per_node(launch, world):
    assert _world(launch + "\n" + BAR)[0] == world


def test_nnodes_alone_leaves_the_per_node_count_unknown():
    inf = _world("NNODES=2 NODE_RANK=0 llamafactory-cli train x.yaml\n" + BAR)[1]
    assert inf.world_size is None
    assert inf.run.wrapper["launcher_nodes"].value == 2


def test_a_total_and_a_nodes_sentence_that_disagree_are_reported():
    inf = _world("两台机器每台8张卡\n环境：gpu数量为8\n" + BAR)[1]
    assert any(f.msg_id == "explain.fact.stated_counts_differ" for f in inf.facts)
    agree = _world("两台机器每台8张卡\n环境：gpu数量为16\n" + BAR)[1]
    assert agree.world_size == 16 and not any(f.msg_id == "explain.fact.stated_counts_differ" for f in agree.facts)


RUN2_CARD = """- train_batch_size: 2
- distributed_type: multi-GPU
- num_devices: 8
- gradient_accumulation_steps: 4
- total_train_batch_size: 64
"""
RUN2_SLURM = "#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\nsrun torchrun --nnodes 2 --nproc_per_node 8 src/train.py x.yaml\n"
RUN2_LOG = ('{"current_steps": 10, "total_steps": 300, "loss": 1.2, "epoch": 0.1, "percentage": 3.33, '
         '"elapsed_time": "0:01:20", "remaining_time": "0:38:40"}\n'
         '{"current_steps": 20, "total_steps": 300, "loss": 1.1, "epoch": 0.2, "percentage": 6.67, '
         '"elapsed_time": "0:02:40", "remaining_time": "0:37:20"}\n')


def _multi_source(tmp_path):
    (tmp_path / "trainer_log.jsonl").write_text(RUN2_LOG)
    (tmp_path / "README.md").write_text(RUN2_CARD)
    (tmp_path / "run.slurm").write_text(RUN2_SLURM)
    return [str(tmp_path / n) for n in ("trainer_log.jsonl", "README.md", "run.slurm")]


def test_the_model_card_outranks_a_launch_script_and_the_disagreement_is_stated(tmp_path):
    world, inf = _world("", *_multi_source(tmp_path))
    assert world == 8
    assert [c.what.msg_id for c in inf.contradictions] == ["explain.contra.sources_differ"]


def test_no_english_label_word_is_left_in_chinese_output(tmp_path):
    import re

    from trainsteps.i18n import en, zh
    from trainsteps.logs.explain import render

    words = lambda table: {w for v in table.values()  # noqa: E731 - {placeholders} are not words
                           for w in re.findall(r"(?<![\w`])[a-z]{4,}(?![\w`])", re.sub(r"\{[^}]*\}", "", v))}
    # words the zh table keeps on purpose: names of libraries and the identifiers and log words they print
    # actor and critic are the RL roles verl and OpenRLHF print (`timing_s/update_actor`, `critic_lr`)
    kept = {"accelerate", "actor", "critic", "completed", "configuration", "count", "distributed", "documents", "dtype", "epoch",
            "framework", "litgpt", "swift",
            "global", "json", "jsonl", "loss", "path", "percentiles", "rank", "sequences", "size", "step", "tokens", "torch",
            "torchtitan", "transformers",
            "using", "version", "world"}
    english = words(en.LABELS) - kept  # identifiers inside names (num_devices, gradient_accumulation_steps) are not words here
    assert {"launcher", "states", "text", "processes", "node", "model", "card"} <= english
    assert not english & words(zh.LABELS) - {"model", "card"}  # model card stays "模型卡"; no label is left untranslated
    paths = _multi_source(tmp_path)
    (tmp_path / "post.txt").write_text("I train on 2 nodes with 8 A100 each\n")
    obs = read_log([*paths, str(tmp_path / "post.txt")])
    out = render(obs, explain_log(obs), lang="zh")
    out = re.sub(r"“[^”]*”|'[^']*'|\S*/\S*", "", out)  # quoted user text and paths are the user's own
    left = sorted(w for w in set(re.findall(r"(?<![\w_])[a-z]{4,}(?![\w_])", out)) if w in english)
    assert left == []


def test_quotes_keep_full_width_punctuation_and_zh_notes_use_it():
    from trainsteps.logs.explain import render

    def zh(text):
        obs = read_log(text=text)
        return render(obs, explain_log(obs), lang="zh")

    out = zh("我用 8 卡 A100 训练，跑到第 300 步 OOM 了\n" + BAR)
    assert "我用 8 卡 A100 训练，跑到第 300 步 OOM 了" in out
    out = zh("  Num examples = 1,047abc\n" + BAR)
    assert "; " not in out


def test_a_hedged_conditional_or_negated_sentence_states_no_gpu_count_and_a_plain_one_beside_it_still_does():
    from trainsteps.logs import read_log

    def stated(text):
        reading = read_log(text=text + "\n 10%|█ | 10/100 [00:10<01:30, 1.00s/it]").stated.get("stated_gpus")
        return reading.value if reading else None

    for sentence in ("maybe 2 GPUs are enough", "It would need 4 A100 GPUs to train this", "I do not have 8 GPUs",
                     "should I use 8 cards?", "如果用8卡训练"):
        assert stated(sentence) is None, sentence
    assert stated("My current setup has 4 GPUs and 32 batch size with no accumulation. So, the chunks per GPU") == 4
    assert stated("Do you think it is slow? I train on 8 A100 GPUs.") == 8


def _world_of(item_id: str) -> int | None:
    from .wild_score import WILD

    inferences = explain_log(read_log(str(WILD / f"{item_id}.log")))
    return inferences[-1].world_size if inferences else None


def test_a_printed_verl_config_gives_the_gpus_per_node_times_the_nodes():
    assert _world_of("verl-1338-config-dump-four-gpus") == 4  # 'n_gpus_per_node': 4, 'nnodes': 1 in the pretty-printed dict


def test_a_launch_script_s_variables_give_the_processes_even_through_continued_lines():
    assert _world_of("toolstar-10-shell-vars-four-nodes") == 32  # NNODES=4 and N_GPUS_PER_NODE=8, each on its own line
    assert _world_of("msswift-3954-nproc-shell-variable") == 4   # nproc_per_node=4, then NPROC_PER_NODE=$nproc_per_node \\ swift pt


def test_a_variable_that_is_not_a_number_launches_nothing(tmp_path):
    log = tmp_path / "run.sh"
    log.write_text("NNODES=$SLURM_NNODES\nGPUS_PER_NODE=$SLURM_GPUS\ntorchrun --nnodes $NNODES train.py\n", encoding="utf-8")
    assert not explain_log(read_log(str(log)))


def test_a_post_s_title_quoting_the_error_it_hit_names_a_failure_when_the_log_shows_no_end():
    from .wild_score import WILD

    inf = explain_log(read_log(str(WILD / "verl-316-step5-timing.log")))[-1]  # `# 【bug】Exception raised from c10_cuda_...`
    assert inf.status == "crashed" and inf.end_step == 5


def test_a_title_that_names_an_error_as_avoided_or_a_line_the_program_printed_is_not_a_stated_failure(tmp_path):
    log = tmp_path / "post.log"
    log.write_text("# How to avoid RuntimeError: CUDA error when resuming\n\n 10%|#         | 10/100 [00:10<01:30,  1.00s/it]\n",
                   encoding="utf-8")
    assert "stated_failure" not in read_log(str(log)).stated


def test_a_title_saying_the_job_died_or_crashed_names_a_failure():
    from .wild_score import WILD

    stated = read_log(str(WILD / "easyr1-324-config-json-dump.log")).stated  # `# The actor died unexpectedly ... has crashed.`
    assert stated["stated_failure"].line == 1


@pytest.mark.parametrize("sentence", ["训练到一部分会报错断掉", "训练到一段时间就出现Killed", "The training process got killed at step 1",
                                      "It suddenly terminates without warning", "Why does my training crash at step 1",
                                      "为什么训练到一半会报错", "# GRPO Train Error", "# 训练一段时间报错"])
def test_an_end_the_poster_s_words_state_ends_a_log_that_shows_none(sentence):
    inf = _last(sentence + "\n" + BAR)
    assert inf.stopped == inf.status == "crashed" and inf.end_step == 1
    said = [f for f in inf.facts if f.msg_id == "explain.fact.stated_failure"]
    assert said and said[0].params["line"] == 1  # quoted from the words, not from a line the program printed


@pytest.mark.parametrize("sentence", ["There are no errors, the bar just stops", "训练过程中没有任何报错", "无任何报错信息",
                                      "Does it crash if I set batch size 64?", "会报错吗？", "If it crashes I will lower the batch size",
                                      "I fixed the error by updating torch", "Training loss fails to converge",
                                      "[ERROR] worker 3 failed to respond", "RuntimeError: CUDA error: an illegal memory access",
                                      "Error executing job with overrides: []", "Killed"])
def test_a_negated_hedged_asked_or_printed_failure_word_is_no_statement(sentence):
    assert "stated_failure" not in read_log(text=sentence + "\n" + BAR).stated


def test_a_negated_word_does_not_hide_a_plain_statement_in_the_next_clause():
    stated = read_log(text="The training is not over and there are no errors, but it suddenly terminate.\n" + BAR).stated
    assert stated["stated_failure"].value == "suddenly terminate"


@pytest.mark.parametrize(("sentence", "step"), [("successfully run 54 steps then oom", 54), ("it crashes at step 1,200", 1200),
                                                ("训练到第35步报错", 35), ("大约在1020步会遇到报错", 1020),
                                                ("训练到 35 步左右，会报错", 35), ("I train 1000 steps and it crashed", None)])
def test_the_step_the_words_put_a_failure_at_is_read_and_a_planned_length_is_not(sentence, step):
    stated = read_log(text=sentence + "\n").stated
    assert stated["stated_failure"].note_params.get("step") == step


def test_the_words_step_is_the_end_only_where_the_log_shows_no_step():
    inf = _last("It crashes at step 1200 every time\n[INFO|trainer.py:2134] >> ***** Running training *****\n")
    assert inf.status == "crashed" and inf.end_step == 1200
    assert inf.facts[0].msg_id == "explain.fact.stated_failure_said_step"
    inf = _last("It crashes at step 1200 every time\n" + BAR)  # the bar's step 1 is the log's own: it wins
    assert inf.end_step == 1 and inf.facts[0].msg_id == "explain.fact.stated_failure"


_PIECES = st.sampled_from([*stated.NEEDLES, *stated.SAID_NEEDLES, "Σ", "İ", "ẞ", "ǅ", "K", "x", " ", "0", "█", "A", "ti"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=3)), max_size=12).map("".join))
def test_a_line_the_needle_searches_find_something_in_is_never_turned_away_by_the_lowered_test(line):
    """The lowered substring tests only turn away lines the searches would find nothing in (any case, any script)."""
    low = line.lower()
    if stated._MENTIONS(line) is not None:
        assert stated._may_hold_any(low, stated._MENTIONS_LOWER)
    if stated._SAID_MENTIONS(line) is not None:
        assert stated._may_hold_any(low, stated._SAID_LOWER)


_COUNT_PIECES = st.sampled_from([*stated._FAILURE_WORDS, *stated._INTERRUPTION_WORDS, *stated._COUNT_WORD_WORDS, "SBATCH",
                                 "#SBATCH --gres=gpu:", "OOM", "Out Of Memory", "Time Limit", "GPU", "gpus", "card", "卡", ":",
                                 "：", "8", "８", "٣", " x ", "A100", "nodes with ", "--", "***", "Error", " "])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_COUNT_PIECES, st.text(max_size=3)), max_size=12).map("".join))
def test_a_line_turned_away_before_the_needle_search_is_one_no_reader_after_it_uses(line):
    """`_may_be_read` false: no SBATCH, no plain count, no failure or interruption the searches would find."""
    if not stated._may_be_read(line, line.lower()):
        assert "SBATCH" not in line and stated._plain_count(line) is None
        assert stated._FAILURE.search(line) is None and stated._INTERRUPTION.search(line) is None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["7", "０", "٣", "߀", "x", "卡", " "]), st.text(max_size=4)), max_size=10).map("".join))
def test_the_digit_test_agrees_with_the_patterns_digit_on_every_script(line):
    assert stated._has_digit(line) == (stated._DIGIT(line) is not None)


def test_every_corpus_line_turned_away_before_the_needle_search_is_one_no_reader_after_it_uses():
    """The real posts and logs (tests/fixtures/logs/corpus), line by line, as the generated lines above."""
    turned_away = 0
    for path in sorted(CORPUS.iterdir()):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not stated._may_be_read(line, line.lower()):
                turned_away += 1
                assert "SBATCH" not in line and stated._plain_count(line) is None, (path.name, line)
                assert stated._FAILURE.search(line) is None and stated._INTERRUPTION.search(line) is None, (path.name, line)
    assert turned_away > 1000

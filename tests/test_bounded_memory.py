"""The largest plans each planner accepts (at its caps on epoch ends and listed events) finish in bounded memory and
CPU, each in a child process: a regression that builds a list per step again fails here, not on a user's machine.

The bound is the child's peak RSS (VmHWM: interpreter and imports included, about 20 MB) under 100 MB; an address-space cap of
1 GB ends a runaway child early. The CPU bound is generous (3 s) for a loaded CI machine: it is not a benchmark.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PEAK_MB = 100
CPU_SECONDS = 3.0

CHILD = """
import contextlib, io, json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from trainsteps.cli.main import main
out, err = io.StringIO(), io.StringIO()
started = time.process_time()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        code = main(sys.argv[1:]) or 0
    except SystemExit as stop:
        code = stop.code or 0
def peak_mb():
    # VmHWM belongs to this process's own memory map; ru_maxrss would start at the parent's size (kept across exec)
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"code": code, "cpu": time.process_time() - started, "out": len(out.getvalue()), "err": err.getvalue()[-300:],
                  "peak_mb": peak_mb()}))
"""

ONE_M, FIVE_M = "1000000", "5000000"  # MAX_EPOCH_ENDS, and MAX_EVENTS of the Trainer path (frameworks/hf)
LARGEST = {
    "hf: 5 M steps, logging/eval/save every step": [
        "--num-examples", FIVE_M, "--per-device-train-batch-size", "1", "--max-steps", FIVE_M, "--logging-steps", "1",
        "--eval-strategy", "steps", "--eval-steps", "1", "--save-steps", "1"],
    "hf: 1 M epoch ends, every event at each": [
        "--num-examples", "5", "--per-device-train-batch-size", "1", "--max-steps", FIVE_M, "--logging-strategy", "epoch",
        "--eval-strategy", "epoch", "--save-strategy", "epoch"],
    "hf 4.40: 1 M epoch ends of the cumulative counter, evaluation after a delay": [
        "--num-examples", "7", "--per-device-train-batch-size", "1", "--gradient-accumulation-steps", "3", "--max-steps", "2333333",
        "--transformers", "4.40.0", "--eval-strategy", "epoch", "--eval-delay", "3", "--logging-steps", "1"],
    "hf: 1 M epochs, evaluation from the last ten": [
        "--num-examples", "1", "--per-device-train-batch-size", "1", "--num-train-epochs", ONE_M, "--eval-strategy", "epoch",
        "--eval-delay", "999990"],
    "hf 4.46: 1 M epoch ends, some without a step, every event at each": [
        "--num-examples", "8", "--per-device-train-batch-size", "2", "--gradient-accumulation-steps", "5", "--num-train-epochs", ONE_M,
        "--transformers", "4.46.0", "--logging-strategy", "epoch", "--save-strategy", "epoch", "--eval-strategy", "epoch"],
    "hf: a stream of 5 M steps and 1 M passes": [
        "--streaming", "--num-examples", "5", "--per-device-train-batch-size", "1", "--max-steps", FIVE_M, "--logging-steps", "1"],
    "hf: 1 M epochs of one row, with the time": [
        "--num-examples", "1", "--per-device-train-batch-size", "1", "--num-train-epochs", ONE_M, "--save-strategy", "epoch",
        "--step-time", "1", "--save-time", "1"],
    "config: TrainingArguments file, 1 M epochs": [
        str(EXAMPLES / "hf" / "training_args.yaml"), "--transformers", "5.14.0", "--num-examples", "16", "--num-train-epochs", ONE_M, "--logging-steps", "1",
        "--save-steps", "1", "--eval-steps", "1"],
    "neox: 5 M iterations, evaluation and a checkpoint at each": [
        "--framework", "neox", "--train-tokens", FIVE_M, "--seq-length", "1", "--train-batch-size", "1", "--train-iters", FIVE_M,
        "--eval-interval", "1", "--save-interval", "1"],
    "megatron: 5 M iterations, evaluation and a checkpoint at each": [
        "--framework", "megatron", "--train-tokens", FIVE_M, "--train-iters", FIVE_M, "--seq-length", "1", "--global-batch-size", "1",
        "--micro-batch-size", "1", "--eval-interval", "1", "--save-interval", "1"],
    "deepspeed: the batch triple": ["--framework", "deepspeed", "--train-batch-size", "8", "--micro-batch-size", "1", "--world-size", "8"],
    "lightning: 1 M epochs": ["--framework", "lightning", "--num-examples", "1", "--max-epochs", ONE_M, "--per-device-train-batch-size", "1"],
    "verl: 5 M steps, a test and a save at each": [
        "--framework", "verl", "--num-examples", "100", "--set", "data.train_batch_size=1", "--set", "trainer.total_epochs=50000",
        "--set", "trainer.save_freq=1", "--set", "trainer.test_freq=1"],
    "openrlhf: 5 M steps, a save and an evaluation at each": [
        "--framework", "openrlhf", "--num-examples", FIVE_M, "--set", "rollout_batch_size=1", "--set", "save_steps=1",
        "--set", "eval_steps=1"],
    "easyr1: 3.9 M steps, a validation and a save at each": [
        "--framework", "easyr1", "--num-examples", FIVE_M, "--set", "data.rollout_batch_size=256", "--set", "trainer.total_epochs=200",
        "--set", "trainer.save_freq=1", "--set", "trainer.val_freq=1"],
    "trl-ppo: 15 M batches": [
        "--framework", "trl-ppo", "--num-examples", FIVE_M, "--per-device-train-batch-size", "1", "--set", "save_steps=3",
        "--set", "logging_steps=1"],
    "torchtitan: 10 M steps": [
        "--framework", "torchtitan", "--set", "training.steps=10000000", "--set", "checkpoint.interval=100", "--set", "checkpoint.enable=true"],
    "automodel: 1 M steps, its event cap": [
        "--framework", "automodel", str(EXAMPLES / "automodel" / "llama3_2_1b_squad.yaml"), "--num-examples", "1280",
        "--set", "step_scheduler.max_steps=1000000", "--set", "step_scheduler.num_epochs=1000000",
        "--set", "step_scheduler.ckpt_every_steps=10", "--set", "step_scheduler.val_every_steps=10"],
    "llamafactory-v1: 1 M epochs": [
        "--framework", "llamafactory-v1", str(EXAMPLES / "llamafactory_v1" / "sft.yaml"), "--num-examples", "32", "--max-steps", ONE_M,
        "--save-steps", "10"],
}


def _child(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]  # killed by the address-space cap: MemoryError or a signal
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("fmt", ["human", "json"])
@pytest.mark.parametrize("case", sorted(LARGEST))
def test_the_largest_accepted_plan_of_every_planner_stays_under_100_mb_and_3_cpu_seconds(case, fmt):
    result = _child("plan", *LARGEST[case], "--format", fmt)
    assert result["code"] == 0, result["err"]  # accepted: a refusal would not test the bound
    assert result["peak_mb"] < PEAK_MB, f"{case}: {result['peak_mb']:.0f} MB"
    assert result["cpu"] < CPU_SECONDS, f"{case}: {result['cpu']:.1f} s"
    assert result["out"] < 1_000_000, f"{case}: {result['out']:,} bytes of output"


def test_a_plans_time_counts_every_evaluation_of_a_step_list_written_compactly(run_cli):
    code, out, err = run_cli("plan", "--num-examples", "1000000", "--per-device-train-batch-size", "1", "--eval-strategy", "steps",
                             "--eval-steps", "1", "--max-steps", "20000", "--step-time", "1", "--eval-time", "1", "--format", "json")
    data = json.loads(out)
    assert code == 0 and "count" in data["run"]["eval_steps"]  # 20,000 evaluations: the compact form
    assert data["time"]["parts"]["eval"]["expected"] == 20000.0

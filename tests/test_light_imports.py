"""What a plan loads: `import trainsteps` + `plan()` and `trainsteps plan` stay off the costly standard modules.

Start-up is measured in bench/bench_plan.py (never in a timed test); these tests keep the cause from coming back:
a module on the plan path that imports `dataclasses` (which brings `inspect`), `typing`, `json`, `platform` or
`uuid` without need.
"""

import json
import os
import subprocess
import sys

# Modules the plan path has no use for; click itself imports some of them (inspect, typing, uuid, platform), so
# the command's test counts only what trainsteps adds after click.
FORBIDDEN = {"dataclasses", "inspect", "typing", "platform", "uuid", "json", "ast", "dis", "datetime", "decimal",
             "torch", "transformers", "numpy", "pyarrow", "tokenizers", "datasets", "ray", "gradio", "yaml"}


def _added_modules(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_library_plans_without_costly_standard_modules():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import trainsteps\n"
        "s = trainsteps.plan(num_examples=1047, per_device_train_batch_size=10, gradient_accumulation_steps=8,"
        " num_train_epochs=300, transformers='4.49.0')\n"
        "assert s.banner['Total optimization steps'] == '3,900'\n"
        "s.derivation.render()\n"
        "added = sorted(set(sys.modules) - before)\n"
        "import json\n"
        "print(json.dumps(added))\n"
    )
    added = _added_modules(code)
    assert "trainsteps.frameworks.hf.plan" in added  # the plan really ran
    assert FORBIDDEN & added == set()


def test_the_plan_command_adds_nothing_costly_to_what_click_loads():
    code = (
        "import sys, io, contextlib\n"
        "import click\n"
        "before = set(sys.modules)\n"
        "from trainsteps.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        "        main(['plan', '--num-examples', '1047', '--per-device-train-batch-size', '10',"
        " '--gradient-accumulation-steps', '8', '--num-train-epochs', '300', '--transformers', '4.49.0'])\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, exc.code\n"
        "assert '3,900' in out.getvalue()\n"
        "added = sorted(set(sys.modules) - before)\n"
        "import json\n"
        "print(json.dumps(added))\n"
    )
    added = _added_modules(code)
    assert "trainsteps.cli.plan" in added
    assert FORBIDDEN & added == set()
    assert "trainsteps.i18n.zh" not in added  # the Chinese catalog loads only for --lang zh


def test_the_plan_command_does_not_load_json_for_human_output():
    code = (
        "import sys, io, contextlib\n"
        "from trainsteps.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['plan', '--num-examples', '1047'])\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, exc.code\n"
        "print('[' + ('\"json\"' if 'json' in sys.modules else '') + ']')\n"
    )
    assert _added_modules(code) == set()


# What `trainsteps explain` of a short log has no use for: the modules the plan path avoids, and those only some logs
# need (medians of timing lines, a directory's listing, JSON inputs, the `dataclasses` helpers).
EXPLAIN_FORBIDDEN = FORBIDDEN | {"statistics", "fractions", "random", "pathlib", "urllib.parse", "ipaddress", "copy"}


def test_explain_of_a_short_banner_adds_nothing_costly_to_what_click_loads():
    """bench/bench_explain.py times this start-up against `import click`; this keeps the causes from coming back."""
    banner = os.path.join(os.path.dirname(__file__), "fixtures", "logs", "seed_001_1047.log")
    code = (
        "import sys, io, contextlib\n"
        "import click\n"
        "before = set(sys.modules)\n"
        "from trainsteps.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        main(['explain', {banner!r}])\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, exc.code\n"
        "assert 'Total optimization steps' in out.getvalue()\n"
        "added = sorted(set(sys.modules) - before)\n"
        "import json\n"
        "print(json.dumps(added))\n"
    )
    added = _added_modules(code)
    assert "trainsteps.logs.infer" in added  # the log was explained
    assert EXPLAIN_FORBIDDEN & added == set()
    assert "trainsteps.i18n.zh" not in added
    assert "trainsteps.frameworks.gptdata" not in added  # Megatron / GPT-NeoX sample arithmetic: only for their lines
    rare = {"trainsteps.logs.llamafactory", "trainsteps.logs.axolotl", "trainsteps.logs.deepspeed", "trainsteps.logs.model_card",
            "trainsteps.logs.launch", "trainsteps.logs.unsloth"}
    assert rare & added == set()  # readers a Trainer banner never reaches load with the first line that does
    collectors = {"trainsteps.logs.rl", "trainsteps.logs.rl_timing", "trainsteps.logs.rl_stacks", "trainsteps.logs.pretrain"}
    assert collectors & added == set()  # the collectors that see every line load with the first line of their kind
    assert {"trainsteps.logs.timing", "trainsteps.timing"} & added == set()  # the time model: with the first rate a log shows
    assert "bisect" not in added  # only the sampled middle of a large log searches its markers by bisection
    assert "trainsteps.logs.explain_json" not in added  # the JSON answer is built only when it is shown (or captured)
    assert "trainsteps.logs.stated" not in added  # the words around a log: with the first line holding one of its needles
    assert "trainsteps.logs.trainer_state" not in added  # a trainer_state.json starts with `{`; a text log does not


def test_explain_compiles_only_the_patterns_a_short_banner_needs():
    """The readers hold about 180 patterns; compiling them at import cost more than reading a 10-line log."""
    banner = os.path.join(os.path.dirname(__file__), "fixtures", "logs", "seed_001_1047.log")
    code = (
        "import sys, io, contextlib, re\n"
        "from trainsteps.cli.main import main\n"
        "re.purge()\n"
        "compiled = []\n"
        "real = re._compile\n"
        "re._compile = lambda pattern, flags: compiled.append(pattern) or real(pattern, flags)\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main(['explain', {banner!r}])\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, exc.code\n"
        "re._compile = real\n"
        "import json\n"
        "print(json.dumps(sorted({str(p) for p in compiled})))\n"
    )
    compiled = _added_modules(code)  # the same child-process runner: its last line is the JSON list
    # 176 when every reader compiled its patterns at import; 27 when the RL collector read "steps"; 11 before the Trainer
    # reader read its prefix, labels and numbers by hand; now only step_lines' digit test, for "Total optimization steps"
    assert compiled == {"\\d"}


def test_the_console_script_leaves_the_imports_objects_to_the_exit_and_a_caller_keeps_its_collector():
    """The interpreter's collections at exit walk every object the imports made: the console script freezes them."""
    code = (
        "import gc, io, sys, contextlib\n"
        "from trainsteps.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['plan', '--num-examples', '1047', '--per-device-train-batch-size', '10'])\n"
        "    called = gc.get_freeze_count()\n"
        "    sys.argv = ['trainsteps', 'plan', '--num-examples', '1047', '--per-device-train-batch-size', '10']\n"
        "    main()\n"
        "print(called, gc.get_freeze_count() > 1000)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "True"]

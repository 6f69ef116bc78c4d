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

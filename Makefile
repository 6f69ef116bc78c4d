# Two entry points for a fresh machine (Python >= 3.10):
#   make plan   sets up .venv-plan (trainsteps with click and PyYAML only, about 30 MB) and plans the 1,047-example
#               run of seed 001 on the release that stops early
#   make test   sets up .venv with the test tools and the data, ray and web extras, and runs the test suite
PY ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
PLAN_VENV ?= .venv-plan

$(PLAN_VENV)/bin/trainsteps: pyproject.toml
	$(PY) -m venv $(PLAN_VENV)
	$(PLAN_VENV)/bin/pip install -q -e .
	@touch $@

$(BIN)/trainsteps: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[test,data,ray,web]'
	@touch $@

.PHONY: setup plan test lint live bench golden site
setup: $(BIN)/trainsteps

plan: $(PLAN_VENV)/bin/trainsteps
	$(PLAN_VENV)/bin/trainsteps plan --num-examples 1047 --per-device-train-batch-size 10 --gradient-accumulation-steps 8 \
		--num-train-epochs 300 --transformers 4.49.0 --explain

test: setup
	$(BIN)/ruff check src tests tools bench
	$(BIN)/pytest

bench: setup
	$(BIN)/python bench/bench_plan.py

golden: setup
	$(BIN)/python tools/golden.py

# The calculator as static files (build/site/): the page, Pyodide from npm and the wheels it runs, all pinned.
# Downloads are cached in ~/.cache/trainsteps/site; an unchanged checkout is not rebuilt.
site:
	$(PY) tools/build_site.py --out build/site

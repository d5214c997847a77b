# Set-up and checks. Only Python 3.11+ and make are assumed on the machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[test,dask,sweep,repurpose]'
	touch $@

run: $(STAMP)
	$(VENV)/bin/trainsim run examples/ring_allreduce/platform.yaml --workload examples/ring_allreduce/workload/ring

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check src tests bench examples docs
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: $(TEST_STAMP) lint
	$(PY) -m pytest -n 2

bench: $(STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info

# Set-up and checks. Only Python 3.11+ and make are assumed on the machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# the packet backend's compiled core (Rust, no crates); without cargo it runs in Python
NATIVE := src/trainsim/network/packet/_native/libpacket_core.so
# the congestion-aware backend's compiled core (Rust, no crates); without cargo it runs in Python
LINK_CORE := src/trainsim/network/_native/liblink_core.so

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[test,dask,sweep,repurpose]'
	touch $@

$(NATIVE): native/packet_core/src/lib.rs native/packet_core/Cargo.toml
	@if command -v cargo >/dev/null 2>&1; then \
		(cargo build -q --release --offline --manifest-path native/packet_core/Cargo.toml && \
		mkdir -p $(dir $@) && cp native/packet_core/target/release/libpacket_core.so $@.tmp && mv $@.tmp $@) || \
		echo "the packet core did not build: the packet backend will use its Python engine"; \
	else echo "cargo not found: the packet backend will use its Python engine"; fi

$(LINK_CORE): native/link_core/src/lib.rs native/link_core/src/py.rs native/link_core/src/ring.rs native/link_core/src/queues.rs native/link_core/Cargo.toml
	@if command -v cargo >/dev/null 2>&1; then \
		(cargo build -q --release --offline --manifest-path native/link_core/Cargo.toml && \
		mkdir -p $(dir $@) && cp native/link_core/target/release/liblink_core.so $@.tmp && mv $@.tmp $@) || \
		echo "the link core did not build: the congestion-aware backend will use its Python engine"; \
	else echo "cargo not found: the congestion-aware backend will use its Python engine"; fi

run: $(STAMP) $(NATIVE) $(LINK_CORE)
	$(VENV)/bin/trainsim run examples/ring_allreduce/platform.yaml --workload examples/ring_allreduce/workload/ring

lint: $(TEST_STAMP) $(NATIVE) $(LINK_CORE)
	$(VENV)/bin/ruff check src tests bench examples docs
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: $(TEST_STAMP) lint
	$(PY) -m pytest -n 2

bench: $(STAMP) $(LINK_CORE)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info native/packet_core/target $(dir $(NATIVE)) native/link_core/target $(dir $(LINK_CORE))

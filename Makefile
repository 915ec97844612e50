# README's two commands: `make demo` and `make test`. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-slow test-all lint bench dag docs

# rectools (an oracle in tests/metrics) pins numpy<2 and pandas<3 in its metadata, which its
# metrics do not need: it is installed without its dependencies, so pandas stays 3. The same
# for obp (the off-policy estimators' oracle; it would pull a second torch) and ppi-python
# (prediction-powered inference's oracle; it would pull gdown). The metrics engine's numba
# loops are compiled into their cache as the last step of the install.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps rectools==0.19.0 \
		obp==0.4.1 ppi-python==0.2.3
	$(BIN)/python -c "from releval.metrics import compiled; compiled.warm().join()"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/releval demo

# three workers (pytest-xdist; the pipeline tests wait on DVC and Prefect child processes, so
# three keep two cores busy), a test file per worker: module fixtures run once
test: $(STAMP)
	@bash .ci/chromium
	$(BIN)/python -m pytest -m "not slow" -q -n 3 --dist loadfile --durations=15

# the slow checks alone (whole projects on real data, scheduled runs on a Prefect server):
# .ci/run runs them after `make test`
test-slow: $(STAMP)
	@bash .ci/chromium
	$(BIN)/python -m pytest -m slow -q -n 3 --dist loadfile --durations=15

test-all: $(STAMP)
	@bash .ci/chromium
	$(BIN)/python -m pytest -q -n 3 --dist loadfile

# dvc.yaml, generated from the stage table (tests/test_dvc_yaml.py holds it equal)
dag: $(STAMP)
	$(BIN)/python -m stages.table

lint: $(STAMP)
	$(BIN)/ruff check releval stages flows tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/metrics_speed.py
	$(BIN)/python benchmarks/bm25_speed.py
	$(BIN)/python benchmarks/metrics_process.py

# docs/measures.md: its reference part rewritten from the measure registry (the rest of the
# file is written by hand); tests/metrics/test_reference.py fails while it is stale
docs: $(STAMP)
	$(BIN)/python -m releval.metrics.reference --write docs/measures.md

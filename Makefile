# README's two commands: `make demo` and `make test`. Both set up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-all lint bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	@echo "releval demo: the metrics engine on the bundled example (releval/examples)"
	$(BIN)/releval metrics releval/examples/qrels.txt releval/examples/run.txt -q \
		-m nDCG@10 -m "nDCG(dcg='exp-log2')@10" -m R@100 -m RR@10 -m P@5 -m AP -m Bpref -m Judged@10
	$(BIN)/releval metrics releval/examples/qrels.txt releval/examples/run.txt --format trec \
		-m ndcg_cut.10 -m P.5 -m recall.100 -m recip_rank -m map -m num_ret -m num_rel_ret

test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -q

test-all: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check releval tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/metrics_speed.py

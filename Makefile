# One task runner. Every target works from a fresh clone (it makes .venv itself).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test slowest lint format bench golden mutation skeletons clean

$(BIN)/sitegen: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

## demo: install and build the bundled sample archive into site/
demo: $(BIN)/sitegen
	$(BIN)/sitegen build sample/archive -o site --title "sitegen sample archive"
	@echo "open site/index.html"

# How the suite runs: one pytest-xdist worker per core, each given a contiguous part of the
# suite (a module's fixtures are made once) and stealing from the other when it runs out; its
# temporary folders on a tmpfs where there is one (the tests write and delete thousands of
# small files); bytecode kept, so that the test modules' asserts are rewritten once, not in
# every worker of every run.
# (a tmpfs of at least 2 GiB free: a container's default /dev/shm of 64 MB would fill up)
TEST_TMP ?= $(shell [ -w /dev/shm ] && [ "$$(df -Pk /dev/shm | awk 'NR==2 {print $$4}')" -ge 2097152 ] 2>/dev/null && echo /dev/shm || echo $${TMPDIR:-/tmp})
PYTEST := TMPDIR=$(TEST_TMP) PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n auto --dist worksteal

## test: install and run the whole test suite (browser tests need /usr/bin/chromium)
test: $(BIN)/sitegen
	$(PYTEST)

## slowest: the whole suite, then its ten slowest tests (setup, call and teardown apart)
slowest: $(BIN)/sitegen
	$(PYTEST) --durations=10

lint: $(BIN)/sitegen
	$(BIN)/ruff check sitegen tests benchmarks scripts
	$(BIN)/ruff format --check sitegen tests benchmarks scripts
	$(BIN)/mypy sitegen

format: $(BIN)/sitegen
	$(BIN)/ruff format sitegen tests benchmarks scripts
	$(BIN)/ruff check --fix sitegen tests benchmarks scripts

## bench: the archive-scale benchmarks (writes docs/benchmarks.md)
bench: $(BIN)/sitegen
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/run.py --write docs/benchmarks.md

## golden: refresh the golden Vega-Lite and JSON files and the sites' checksums after an
## intended change; first checks the new output against synth's ground truth, and writes
## nothing if it disagrees
golden: $(BIN)/sitegen
	$(BIN)/python -m pytest -q tests/scenarios/test_golden_truth.py -k built
	SITEGEN_UPDATE_GOLDEN=1 $(BIN)/python -m pytest -q tests/scenarios/test_golden.py tests/scenarios/test_same_bytes.py

## mutation: the mutation score of each module that computes a published number or decides
## what is redacted, with that module's own tests (docs/testing.md; minutes, niced)
mutation: $(BIN)/sitegen
	$(BIN)/pip install -q -e '.[mutation]'
	$(BIN)/python scripts/mutation.py --write

## skeletons: rebuild the stored chart shapes (sitegen/present/skeletons/*.json) with Altair
## after changing sitegen/present/shapes.py
skeletons: $(BIN)/sitegen
	$(BIN)/python scripts/chart_skeletons.py

clean:
	rm -rf site .venv .pytest_cache .mutation

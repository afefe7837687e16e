PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test check lint rust-check build bytecode clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/sitescout demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks fuzz docs
	$(BIN)/ruff format --check src tests benchmarks fuzz docs
	$(BIN)/mypy

# The Rust core: formatting, lints (with and without the Python glue) and its own tests.
rust-check:
	cd rust && cargo fmt --check
	cd rust && cargo clippy --quiet --all-targets -- -D warnings
	cd rust && cargo clippy --quiet --all-targets --features python -- -D warnings
	cd rust && cargo test --quiet
	cd benchmarks/floor && cargo fmt --check
	cd benchmarks/floor && cargo clippy --quiet --all-targets -- -D warnings
	cd benchmarks/floor && cargo test --quiet

# After editing Rust: rebuild the extension in place (release, as users and benchmarks run it).
build: $(VENV)/.installed-dev
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --skip-install --quiet

# Real-world files read by the `corpus` tests straight from these sdists: protego's 4,231
# robots.txt files, and the sitemaps and feeds in trafilatura's and scrapy's test data.
CORPUS_SDISTS := protego==0.7.0 trafilatura==2.3.1 scrapy==2.19.0
CORPUS := $(VENV)/corpus/.downloaded

$(CORPUS): | $(BIN)/python
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: --dest $(VENV)/corpus $(CORPUS_SDISTS)
	touch $@

# Bytecode for the package, written once: with PYTHONDONTWRITEBYTECODE set (as on the machine
# this was measured on), an editable install compiles every module again in each new process,
# 0.25 s of every command the tests run in a subprocess. compileall writes it regardless.
bytecode: $(VENV)/.installed-dev
	$(BIN)/python -m compileall -q src

# The suite runs on one worker per core (pytest-xdist, at most 4), all but the `scaling` tests;
# those then run alone, so that no other test's work falls into their timed blocks.
WORKERS := -n auto --maxprocesses 4

test: lint rust-check $(CORPUS) bytecode
	$(BIN)/python -m pytest $(WORKERS) -m "not scaling" --durations=30
	$(BIN)/python -m pytest -m scaling --durations=10

# The fast lane for your own loop: lint and the tests without a heavy marker (the markers are
# declared in pyproject.toml). No Rust checks, no rebuild, no corpus; `make test` (CI) runs it all.
FAST_TESTS := not (slow or cluster or browser or fuzz or scaling or corpus)

check: lint bytecode
	$(BIN)/python -m pytest $(WORKERS) -m "$(FAST_TESTS)"

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache rust/target src/sitescout/_core*.so

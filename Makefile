PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint clean

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
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

# protego's sdist ships 4,231 real robots.txt files (tests/test_data/); downloaded once, read by
# tests/test_robots_corpus.py straight from the tarball.
ROBOTS_CORPUS := $(VENV)/corpus/protego-0.7.0.tar.gz

$(ROBOTS_CORPUS): | $(BIN)/python
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: --dest $(VENV)/corpus protego==0.7.0
	test -f $@ && touch $@

test: lint $(ROBOTS_CORPUS)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

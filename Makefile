# Navi's task runner. `make run` and `make test` work on a fresh clone: they create .venv themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q
STAMP  := $(VENV)/.installed
DEV    := $(VENV)/.installed-dev

.PHONY: run test lint format lock clean screenshots

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -c constraints.txt -e .
	@touch $@

$(DEV): $(STAMP)
	$(PIP) install -c constraints.txt -e ".[dev]"
	@touch $@

## Start Navi on its embedded defaults (SQLite, Ollama at localhost:11434, http://127.0.0.1:8000).
run: $(STAMP)
	$(BIN)/navi serve

## Install what the tests need and run the whole suite.
test: $(DEV)
	@./scripts/test-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## Retake the README's screenshots (docs/screenshots/) from a live Navi on the fake model.
screenshots: $(DEV)
	@./scripts/test-deps
	$(BIN)/python scripts/screenshots.py --out docs/screenshots

CODE := navi tests $(wildcard bench) scripts/screenshots.py

lint: $(DEV)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/mypy

format: $(DEV)
	$(BIN)/ruff check --fix $(CODE)
	$(BIN)/ruff format $(CODE)

## Re-pin every dependency (runtime and dev) into constraints.txt from a clean environment.
lock:
	rm -rf .lockenv && $(PYTHON) -m venv .lockenv
	.lockenv/bin/python -m pip -q install ".[dev]"
	.lockenv/bin/python -m pip freeze --exclude navi > constraints.txt
	rm -rf .lockenv

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

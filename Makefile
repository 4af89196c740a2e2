# Two entry points, both self-installing on a machine with only Python 3.11+, pip, git and make:
#   make run   - set up, start the embedded sandbox, execute every flow notebook against it
#   make test  - set up, then lint (imports too), type-check, build the guide strictly and run the tests
# Re-running is fast: the environment is re-synced only when uv.lock or pyproject.toml change.

PYTHON ?= python3
TOOLS  := .tools
UV     := $(shell command -v uv 2>/dev/null || echo $(TOOLS)/bin/uv)
VENV   := .venv
STAMP  := $(VENV)/.synced
RUN    := $(UV) run --frozen --no-sync
export NO_MKDOCS_2_WARNING := 1
export UV_PYTHON_DOWNLOADS := never
# Bytecode caches on: where the environment turns them off, every process (each sandbox
# worker, kernel and command the tests start) compiled everything it imports from source,
# which doubled the start of each and cost the suite about a third of its time.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run sandbox test coverage lint typecheck docs docs-gen docs-serve pytest isolation browser signing-tools prism newman lab notebooks bench wheel clean translations

# uv's wheel is its binary: pip puts it in .tools/bin/ without a virtual environment of
# its own (whose pip, set up first, took two thirds of a fresh clone's first step).
$(TOOLS)/bin/uv:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target $(TOOLS) "uv==0.13.9"

$(STAMP): uv.lock pyproject.toml | $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	@touch $@

setup: $(STAMP)

run: $(STAMP)
	$(RUN) workbench run

# Lint, type check and the Prism and newman installs run beside the tests (a core is free
# while the workers start; the Prism and newman tests wait for their install); the guide's
# strict build is one of the tests (tests/docs/test_build.py, exactly as `make docs` runs
# it), so it runs once, in parallel with the rest.
# Lint and type check run niced (CHECK_PRIORITY): their CPU goes to the moments the tests
# wait (a server starting, a browser loading), not to the workers' collection and start.
test: $(STAMP) browser signing-tools
	$(MAKE) --no-print-directory -j4 prism newman lint typecheck pytest CHECK_PRIORITY="nice -n 10"

# lint-imports: the import contracts of pyproject.toml (no cycles, the client side without
# the sandbox, only the edge importing the composition root); a third of a second uncached.
lint: $(STAMP)
	$(CHECK_PRIORITY) $(RUN) ruff check .
	$(CHECK_PRIORITY) $(RUN) ruff format --check .
	$(CHECK_PRIORITY) $(RUN) lint-imports --no-cache --no-logo

typecheck: $(STAMP)
	$(CHECK_PRIORITY) $(RUN) mypy

docs: $(STAMP)
	@if [ -f mkdocs.yml ]; then $(RUN) mkdocs build --strict --site-dir site; else echo "docs: no mkdocs.yml yet"; fi

docs-serve: $(STAMP)
	$(RUN) mkdocs serve

# pytest-xdist runs the tests on PYTEST_WORKERS processes (PYTEST_WORKERS=0: one process);
# conftest.py keeps each notebook's cells (and a few fixtures' tests) on one worker, and the
# 15 slowest tests are printed at the end. One worker more than the cores: many tests wait
# (a browser for a quiet network, a killed server's restart), and on 2 cores 3 workers ran
# the suite in 201 s where 2 took 252 s and 4 took 214 s. Coverage is `make coverage`:
# measuring every line costs the suite about a tenth of its time, so the test command
# leaves it out.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
pytest: $(STAMP)
	$(RUN) pytest -n $(PYTEST_WORKERS) --durations=15 $(PYTEST_ARGS)

# --cov names its source: nbval copies the raw option into each notebook kernel, and a bare
# --cov (source [True]) leaves every kernel's coverage setup hanging until it times out.
coverage: $(STAMP) browser signing-tools prism newman
	$(RUN) pytest -n $(PYTEST_WORKERS) --cov=workbench --cov-report=term $(PYTEST_ARGS)

# The suite twice at the same time from this checkout: no test may depend on what else runs.
isolation: $(STAMP) browser
	bash scripts/check-isolation $(PYTEST_ARGS)

# Chromium for the browser tests, from the system's packages (never a downloaded browser).
browser:
	@bash scripts/ensure-chromium

# openssl, curl and Node for the guide's "signing without Python" recipes, run by the tests.
signing-tools:
	@bash scripts/ensure-signing-tools

# Prism (pinned in benchmarks/), for the test that it accepts our OpenAPI document; needs Node.
prism: signing-tools
	@bash scripts/ensure-prism

# newman (pinned in tools/newman/), for the test that runs `workbench postman`'s collection.
newman: signing-tools
	@bash scripts/ensure-newman

# The local sandbox in the foreground, at http://127.0.0.1:8765 (the client's default), for
# the README's first example and your own code; Ctrl-C stops it.
sandbox: $(STAMP)
	$(RUN) workbench sandbox

lab: $(STAMP)
	$(RUN) workbench lab

notebooks: $(STAMP)
	$(RUN) workbench run --update-stored

bench: $(STAMP)
	$(RUN) python -m benchmarks

# The wheel to install into another project: dist/payments_workbench-<version>-py3-none-any.whl.
wheel: | $(UV)
	$(UV) build --wheel --out-dir dist

clean:
	rm -rf $(VENV) $(TOOLS) site .pytest_cache .mypy_cache .ruff_cache .coverage

# Regenerate the guide's pages that come from code (error table, diagrams, CLI help...) and
# the screenshots of the hosted pages (taken in the system's Chromium: `browser`), Home's
# and the two languages' of the Sandbox section.
docs-gen: $(STAMP) browser
	$(RUN) python -m tools.docgen --screenshots
	$(RUN) python -m tools.hosted_shots
	$(RUN) python -m tools.dashboard_shots

# Re-extract the hosted pages' strings (babel.cfg: templates and N_() messages) and merge
# them into each language's catalogue; then translate the new entries in the .po files
# (tests/sandbox/checkout/test_catalogues.py fails on any left untranslated or fuzzy).
LOCALES := workbench/sandbox/checkout/locale
translations: $(STAMP)
	@mkdir -p build
	$(RUN) pybabel extract -F babel.cfg -k N_ --no-wrap --sort-by-file --omit-header -o build/messages.pot workbench/sandbox
	$(RUN) pybabel update -D messages -i build/messages.pot -d $(LOCALES) --no-wrap --ignore-obsolete


# Everyday tasks. `make check` is what CI runs (through the README's test command).
PYTHON ?= python
PYTEST_ARGS ?=

.PHONY: check check-cpus lint typecheck test test-gpu docs doctest bench figures docs-check

check: lint typecheck test docs

lint:
	ruff check minitorch_accel tests benchmarks examples docs
	ruff format --check minitorch_accel tests benchmarks examples docs
	ruff check tools
	$(PYTHON) tools/check_backend_names.py minitorch_accel
	lint-imports

typecheck:
	mypy --strict minitorch_accel
	mypy --config-file mypy-tests.ini tests

# pytest exits with 5 when it collects no test: that is not a failure here.
test:
	$(PYTHON) -m pytest $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(PYTHON) -m pytest --doctest-modules minitorch_accel -q

# The suite under each OpenBLAS kernel this CPU supports, at 1 and 2 BLAS threads (slow;
# run it before stopping on any change that touches numerics).
check-cpus:
	PYTHON=$(PYTHON) bash tools/check_cpus.sh

test-gpu:
	$(PYTHON) -m pytest -m gpu $(PYTEST_ARGS)

docs:
	@if [ -f docs/conf.py ]; then \
	  sphinx-build -W --keep-going -q -b html docs docs/_build/html && \
	  sphinx-build -W --keep-going -q -b doctest docs docs/_build/doctest; \
	else echo "docs/conf.py not found: skipping the docs build"; fi

bench:
	for f in benchmarks/*.py; do echo "== $$f"; $(PYTHON) $$f || exit 1; done

figures:
	$(PYTHON) docs/make_figures.py

# Every built page in headless Chromium at 1280 px: nothing wider than the column, no broken
# image or anchor, no console error, no unrendered LaTeX. Needs Debian's chromium and
# playwright (the docs extra); about 30 s for the pages after the build.
docs-check:
	sphinx-build -W --keep-going -q -b html docs docs/_build/html
	$(PYTHON) docs/check_pages.py docs/_build/html

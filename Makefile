# One entry point for you and CI: `make demo` installs and runs the main job, `make test` runs
# lint, types and the whole test suite exactly as CI does (`make check` is the same thing).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORPUS ?= ../shared/data/sec-10q/docs
QUERY ?= What was Apple's total net sales for the quarter ended July 1, 2023?

.PHONY: install demo lint types pytest test check bench clean

# -qq: errors only. A pip config's unreachable extra indexes and setuptools' notes on editable
# installs otherwise print pages of warnings before the demo's first line.
$(BIN)/deep-research: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -qq --upgrade pip
	$(BIN)/python -m pip install -qq -e '.[dev]'
	touch $@

install: $(BIN)/deep-research

# --output-dir .: without it the report-folder rule would pick docs/ (a `docs` sub-directory).
demo: install
	$(BIN)/deep-research run "$(QUERY)" --corpus "$(CORPUS)" --output-dir .

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The repository root is the package: mypy sees it as `deepresearch` through a symlink made
# outside the tree (inside it, mypy would walk the link forever).
types: install
	@d=$$(mktemp -d) && ln -s "$(CURDIR)" "$$d/deepresearch" && cd "$$d" && \
	MYPYPATH="$$d" "$(CURDIR)/$(BIN)/mypy" --config-file "$(CURDIR)/pyproject.toml" -p deepresearch; \
	rc=$$?; rm -rf "$$d"; exit $$rc

# pytest exits 5 when it collected nothing: that is a failure here, not a pass.
pytest: install
	$(BIN)/python -m pytest tests; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

test: lint types pytest

check: test

bench: install
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/sec10q.py --limit 40

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache

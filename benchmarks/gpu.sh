#!/usr/bin/env bash
# Issue 5's GPU run, from a machine with an NVIDIA GPU (the development box has none):
#
#   env    the Python, JAX and its GPU, nvcc, nvidia-smi
#   setup  the MPI stack: used as it is where mpi4jax imports (e.g. make install's .venv);
#          else installed offline from .whl/ (made by benchmarks/gpu_wheels.sh where pip
#          reaches PyPI; carry it along): the mpich wheel, mpi4py, and mpi4jax built
#          from its sdist against the installed jax (CUDA_PATH, mpich's mpicc), into
#          $PREFIX; pfft itself runs from this checkout (PYTHONPATH)
#   build  make -C kernels cpu cuda (DUCC_SDIST from .whl/ when it is there)
#   test   pytest tests/test_engines.py (its GPU tests run only where JAX has a GPU)
#   bench  python -m benchmarks.engines --platform gpu at 256³, 512³, 1024³ complex64:
#          pfft on a 1x1 grid (engine native, and xla) against jnp.fft.fftn (goal: ratio
#          <= 1.1), the strided axis-0 kernel against jnp.fft.fft(x, axis=0) (goal: >= 1.5x
#          faster), GB/s of each against a device-to-device copy
#   mpi    mpirun -n 2 python -m benchmarks.mpi_gpu: pfft.mpi with 2 ranks sharing GPU 0,
#          256³ complex64 on a 2x1 (slab) grid, checked against numpy in float64, timed
#          against the same transform in one process; MPI4JAX_USE_CUDA_MPI=0 (staged
#          through the host), then =1 if the MPI says it is CUDA-aware
#
# Usage: benchmarks/gpu.sh [python]     (default .venv/bin/python if there is one, else python3)
# Environment (defaults): OUT (results): tables, CSVs and logs; STEPS ("env setup build
# test bench mpi"), e.g. STEPS="env setup build test" and then STEPS="env setup bench mpi"
# to stay within a time limit per command (setup and build are skipped when done);
# SIZES ("256 512 1024"), DTYPES (complex64), REPEATS (10), WARMUP (2), MPI_SIZE (256),
# MPI_RANKS (2), GPU (0), PREFIX (build/gpu-sh/mpi, git-ignored), CUDA_HOME (/usr/local/cuda),
# PLATFORM (gpu; "cpu" runs every step on the CPU at small sizes, to check this script
# where there is no GPU). Stops with a message when a step that later ones need fails;
# a failed test, benchmark or MPI run is reported and the next step runs. Exit status 1
# if anything failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

PLATFORM=${PLATFORM:-gpu}
case $PLATFORM in
    gpu) SIZES=${SIZES:-256 512 1024}; MPI_SIZE=${MPI_SIZE:-256} ;;
    cpu) SIZES=${SIZES:-32 64};        MPI_SIZE=${MPI_SIZE:-64} ;;
    *) echo "PLATFORM must be gpu or cpu, got $PLATFORM" >&2; exit 2 ;;
esac
DTYPES=${DTYPES:-complex64}
REPEATS=${REPEATS:-10}
WARMUP=${WARMUP:-2}
MPI_RANKS=${MPI_RANKS:-2}
GPU=${GPU:-0}
STEPS=${STEPS:-env setup build test bench mpi}
WORK=$ROOT/build/gpu-sh                 # git-ignored; kept between runs on a machine
PREFIX=${PREFIX:-$WORK/mpi}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUT=${OUT:-results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/gpu_sh.log
export PYTHONUNBUFFERED=1               # progress lines reach the log as they come

STEP=start
FAILED=()
step() { STEP=$1; printf '\n=== %s: %s  (%s)\n' "$1" "$2" "$(date '+%Y-%m-%d %H:%M:%S')"; }
die() { printf '\n*** gpu.sh STOPPED in step "%s": %s\n' "$STEP" "$*"; exit 1; }
fail() { FAILED+=("$STEP: $*"); printf '*** FAILED (%s): %s; going on\n' "$STEP" "$*"; }
want() { [[ " $STEPS " == *" $1 "* ]]; }
tail_of() { echo "--- last lines of $1:"; tail -n "${2:-25}" "$1"; }

main() {
# the Python: an argument, $PYTHON, .venv/bin/python, python3 (paths kept as they are:
# resolving a venv's symlink would leave the venv)
PY=${1:-${PYTHON:-}}
if [[ -z $PY ]]; then
    if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=python3; fi
fi
if [[ $PY == */* ]]; then
    [[ -x $PY ]] || die "no Python at $PY"
    PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"
else
    PY=$(command -v "$PY") || die "no $PY on PATH"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"   # pfft from this checkout
export MPI4JAX_NO_WARN_JAX_VERSION=1
[[ -x $CUDA_HOME/bin/nvcc ]] && ! command -v nvcc >/dev/null && export PATH="$PATH:$CUDA_HOME/bin"

echo "gpu.sh: $(date '+%Y-%m-%d %H:%M:%S'), host $(hostname), platform $PLATFORM, steps: $STEPS"
echo "python: $PY; results and logs: $OUT"

# ---------------------------------------------------------------------------------------
if want env; then
    step env "Python, JAX and the device"
    "$PY" -c "import sys; print('Python', sys.version.split()[0])" || die "$PY does not run"
    "$PY" -c "import jax, numpy; print('jax', jax.__version__, 'numpy', numpy.__version__)" \
        || die "jax does not import with $PY"
    if [[ $PLATFORM == gpu ]]; then
        if command -v nvidia-smi >/dev/null; then
            nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv || true
        else
            echo "(no nvidia-smi)"
        fi
        "$PY" -c "import jax; d = jax.devices('gpu'); print('JAX GPUs:', d)" \
            || die "JAX sees no GPU with $PY (jax[cuda13] or jax[cuda12] installed?)"
        command -v nvcc >/dev/null && nvcc --version | tail -n 2 || echo "(no nvcc on PATH)"
    else
        "$PY" -c "import jax; print('JAX devices:', jax.devices())"
    fi
fi

# ---------------------------------------------------------------------------------------
# the MPI stack; MPIRUN empty: the mpi step cannot run
MPIRUN=
mpi_from_prefix() {     # put an installed $PREFIX first; true if it holds the whole stack
    local init libmpi mpicc
    [[ -f $PREFIX/.complete ]] || return 1
    init=$(find "$PREFIX" -path '*/mpi4jax/__init__.py' -not -path '*/build-tools/*' -print -quit)
    libmpi=$(find "$PREFIX" -name 'libmpi.so.12' -print -quit)
    mpicc=$(find "$PREFIX" -path '*/bin/mpicc' -print -quit)
    [[ -n $init && -n $libmpi && -n $mpicc ]] || return 1
    SITE=$(dirname "$(dirname "$init")")
    export PYTHONPATH="$ROOT:$SITE${PYTHONPATH#"$ROOT"}"
    export MPI4PY_LIBMPI=$libmpi            # mpi4py loads the mpich wheel's libmpi
    LD_LIBRARY_PATH="$(dirname "$libmpi")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
    MPIRUN=$(dirname "$mpicc")/mpirun
}
check_mpi4jax() {       # mpi4jax imports, with its GPU extension on GPUs
    "$PY" -c "
import sys, mpi4jax
from mpi4py import MPI
from mpi4jax._src.xla_bridge import HAS_CUDA_EXT
print('mpi4jax', mpi4jax.__version__, 'from', mpi4jax.__file__)
print('MPI:', MPI.Get_library_version().splitlines()[0].strip(), '| mpi4jax CUDA extension:', HAS_CUDA_EXT)
sys.exit(0 if HAS_CUDA_EXT or '$PLATFORM' == 'cpu' else 3)"
}

if want setup || want mpi; then
    step setup "MPI stack (mpi4py, mpi4jax, mpirun)"
    if mpi_from_prefix; then
        echo "installed earlier in $PREFIX"
        check_mpi4jax || die "mpi4jax from $PREFIX does not work (rm -r $PREFIX to rebuild)"
    elif check_mpi4jax 2>/dev/null; then
        MPIRUN=$(dirname "$PY")/mpirun
        [[ -x $MPIRUN ]] || MPIRUN=$(command -v mpirun || true)
        echo "using the installed MPI stack"
    elif [[ -d $ROOT/.whl ]] && want setup; then
        W=$ROOT/.whl
        for f in 'mpich-*.whl' 'mpi4py-*.whl' 'mpi4jax-*.tar.gz' 'setuptools-*.whl' \
                 'wheel-*.whl' 'nanobind-*.whl'; do
            compgen -G "$W/$f" >/dev/null || die "no $f in .whl/ (run benchmarks/gpu_wheels.sh)"
        done
        "$PY" -m pip --version >/dev/null 2>&1 || die "$PY has no pip"
        pipi() { "$PY" -m pip install -q --disable-pip-version-check --no-index --no-deps \
                     --ignore-installed "$@"; }
        rm -rf "$PREFIX"
        echo "installing the mpich and mpi4py wheels into $PREFIX"
        pipi --prefix "$PREFIX" "$W"/mpich-*.whl "$W"/mpi4py-*.whl || die "pip install of the wheels failed"
        pipi --target "$PREFIX/build-tools" "$W"/setuptools-*.whl "$W"/wheel-*.whl \
            "$W"/nanobind-*.whl || die "pip install of the build tools failed"
        site=$(dirname "$(dirname "$(find "$PREFIX" -path '*/mpi4py/__init__.py' \
            -not -path '*/build-tools/*' -print -quit)")")
        mpicc=$(find "$PREFIX" -path '*/bin/mpicc' -print -quit)
        libmpi=$(find "$PREFIX" -name 'libmpi.so.12' -print -quit)
        [[ -n $mpicc && -n $libmpi && $site != . ]] || die "the mpich wheel left no mpicc or libmpi in $PREFIX"
        if [[ -f $CUDA_HOME/include/cuda_runtime.h ]]; then
            cuda=(CUDA_PATH="$CUDA_HOME")
        elif [[ $PLATFORM == gpu ]]; then
            die "no CUDA toolkit at $CUDA_HOME (set CUDA_HOME): mpi4jax's GPU extension needs it"
        else
            cuda=(CUDA_PATH= CUDA_ROOT= CUDA_HOME=)
        fi
        echo "building mpi4jax from its sdist (${cuda[*]}, MPI4JAX_BUILD_MPICC=$mpicc); log: $OUT/mpi4jax_build.log"
        if ! env "${cuda[@]}" PYTHONPATH="$PREFIX/build-tools:$site:$PYTHONPATH" \
                MPI4JAX_BUILD_MPICC="$mpicc" MPI4PY_LIBMPI="$libmpi" PATH="$(dirname "$mpicc"):$PATH" \
                "$PY" -m pip install -v --disable-pip-version-check --no-index --no-deps \
                --ignore-installed --no-build-isolation --prefix "$PREFIX" "$W"/mpi4jax-*.tar.gz \
                >"$OUT/mpi4jax_build.log" 2>&1; then
            tail_of "$OUT/mpi4jax_build.log" 40
            die "mpi4jax did not build"
        fi
        grep -m 1 "CUDA INFO" "$OUT/mpi4jax_build.log" || echo "(mpi4jax built without CUDA)"
        touch "$PREFIX/.complete"
        mpi_from_prefix || die "mpi4jax is not where pip was told to put it ($PREFIX)"
        check_mpi4jax || die "the mpi4jax just built does not work (on GPUs: no CUDA extension?)"
    else
        echo "no working mpi4jax, and no .whl/ to install one from (run benchmarks/gpu_wheels.sh where there is internet, and carry .whl/)"
        if want mpi; then fail "no MPI stack: the mpi step cannot run"; fi
    fi
    if [[ -n $MPIRUN && -x $MPIRUN ]]; then echo "mpirun: $MPIRUN"; fi
fi

# ---------------------------------------------------------------------------------------
if want build; then
    step build "pfft's kernels (make -C kernels)"
    targets=(cpu)
    [[ $PLATFORM == gpu ]] && targets+=(cuda)
    margs=(PYTHON="$PY")
    ducc=("$ROOT"/.whl/ducc0-*.tar.gz)
    if [[ -f ${ducc[0]} ]]; then        # offline: no pip download. A copy that keeps its
        mkdir -p "$WORK"                # date: .whl/ arriving anew must not rebuild DUCC
        [[ -f $WORK/${ducc[0]##*/} ]] || cp -p "${ducc[0]}" "$WORK/"
        margs+=(DUCC_SDIST="$WORK/${ducc[0]##*/}")
    fi
    echo "make -C kernels -j$(nproc) ${targets[*]} ${margs[*]}; log: $OUT/kernels_build.log"
    if ! make -C kernels -j"$(nproc)" "${targets[@]}" "${margs[@]}" >"$OUT/kernels_build.log" 2>&1; then
        tail_of "$OUT/kernels_build.log" 40
        die "the kernels did not build"
    fi
    ls -l kernels/build/*.so
fi
if want build || want test || want bench; then
    "$PY" -c "
from pfft.engines import native
for p in dict.fromkeys(('cpu', '$PLATFORM')):
    print(f'native {p} engine:', native.unavailable_reason(p) or 'available')" \
        || die "pfft does not import with $PY"
    "$PY" -c "from pfft.engines import native; import sys; sys.exit(not native.available('$PLATFORM'))" \
        || fail "native $PLATFORM engine unavailable: its benchmark columns stay empty"
fi

# ---------------------------------------------------------------------------------------
if want test; then
    step test "pytest tests/test_engines.py"
    if ! "$PY" -m pytest -q -rs tests/test_engines.py 2>&1 | tee "$OUT/test_engines.log"; then
        fail "tests/test_engines.py (see $OUT/test_engines.log)"
    fi
fi

# ---------------------------------------------------------------------------------------
if want bench; then
    step bench "one device: pfft 1x1 and the kernels against jnp.fft, GB/s against a copy"
    # one process: let XLA take most of the GPU (1024³ complex64 is 8 GiB an array; the
    # input, jnp's output, a reference and cuFFT's work area are alive together)
    # shellcheck disable=SC2086  # SIZES and DTYPES are lists
    if ! XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.9} \
            "$PY" -m benchmarks.engines --platform "$PLATFORM" --sizes $SIZES --dtypes $DTYPES \
            --repeats "$REPEATS" --warmup "$WARMUP" --out "$OUT" 2>&1 | tee "$OUT/engines_$PLATFORM.log"; then
        fail "benchmarks.engines (see $OUT/engines_$PLATFORM.log)"
    fi
fi

# ---------------------------------------------------------------------------------------
if want mpi; then
    step mpi "mpirun -n $MPI_RANKS: pfft.mpi with the ranks sharing one device"
    if [[ -z $MPIRUN || ! -x $MPIRUN ]]; then
        fail "no mpirun: skipped (see the setup step)"
    else
        # every rank sees the same GPU; they share its memory and allocate on demand
        mpi_env=(CUDA_VISIBLE_DEVICES="$GPU" XLA_PYTHON_CLIENT_PREALLOCATE=false
                 XLA_PYTHON_CLIENT_MEM_FRACTION="$(awk "BEGIN{printf \"%.2f\", 0.9/$MPI_RANKS}")"
                 MPI4JAX_NO_WARN_JAX_VERSION=1)
        [[ $PLATFORM == cpu ]] && mpi_env=(MPI4JAX_NO_WARN_JAX_VERSION=1 JAX_PLATFORMS=cpu)
        for mode in 0 if-aware; do
            [[ $PLATFORM == cpu && $mode != 0 ]] && continue
            echo "--- MPI4JAX_USE_CUDA_MPI: $mode"
            if ! env "${mpi_env[@]}" timeout "${MPI_TIMEOUT:-900}" "$MPIRUN" -n "$MPI_RANKS" \
                    "$PY" -m benchmarks.mpi_gpu --platform "$PLATFORM" --size "$MPI_SIZE" \
                    --repeats "$REPEATS" --warmup "$WARMUP" --cuda-mpi "$mode" --out "$OUT" \
                    2>&1 | tee "$OUT/mpi_${PLATFORM}_cuda_mpi_$mode.log"; then
                fail "mpirun -n $MPI_RANKS benchmarks.mpi_gpu --cuda-mpi $mode (see $OUT/mpi_${PLATFORM}_cuda_mpi_$mode.log)"
            fi
        done
    fi
fi

# ---------------------------------------------------------------------------------------
STEP=summary
printf '\n=== summary (%s)\n' "$(date '+%Y-%m-%d %H:%M:%S')"
for f in "$OUT"/engines*.md "$OUT"/mpi_*.md; do
    if [[ -f $f && $f -nt $STARTED ]]; then echo "--- $f"; cat "$f"; echo; fi
done
echo "results and logs in $OUT:"; ls "$OUT"
if ((${#FAILED[@]})); then
    echo; echo "*** ${#FAILED[@]} failure(s):"; printf '  - %s\n' "${FAILED[@]}"
    return 1
fi
echo "all steps ran"
}

STARTED=$OUT/.gpu_sh_started            # the tables written by this run are newer
touch "$STARTED"
sleep 1
main "$@" 2>&1 | tee -a "$LOG"          # exit status: main's (pipefail)

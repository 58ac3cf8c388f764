#!/usr/bin/env bash
# Everything pfft checks and measures on one GPU, in one run (offline too), and every GPU
# table of the docs rendered from it. The default steps (all but suite, install and wheel)
# are meant to take under five minutes on one H100, the huge step's minute aside; the run
# prints each step's time and the total at the end.
#
#   env      Python, JAX, the GPU, nvcc, the MPI that mpi4py was built against
#   build    the CUDA kernels (make -C kernels cuda), and the CPU ones unless already built
#            (on a GPU in the background, while the GPU steps run, as is mpi4jax's build
#            for the mpi step)
#   bench    benchmarks.engines (c2c: pfft 1x1 and the kernels against jnp.fft, GB/s against
#            a copy) and benchmarks.real_engines (r2c/c2r: rfftn/irfftn; r2r: dctn type II,
#            at once and per axis; strided stages)
#   device   benchmarks.per_device: what one device of a p-GPU slab or pencil plan runs,
#            forward and backward (the inverse), its memory and its local work against
#            its floor (cuFFT's own 3-D transform of the block plus a copy per exchange),
#            within --budget-s (DEVICE_ARGS); then benchmarks.model's predictions from it
#   huge     benchmarks.huge_blocks: blocks of exactly 2³¹ points on the GPU (complex64
#            (2048, 2048, 512), float32 (2048, 1024, 1024)): fftn, ifftn, ifftn over axis 2
#            alone, rfftn and irfftn (half spectra that are not Hermitian too) of deltas
#            and plane waves, through each engine and the public functions, every point
#            against its exact value on the device: where a 32-bit element count breaks
#            an FFT library's scaling; then each transform's time (HUGE_ARGS; about a
#            minute, 64 GiB at most)
#   apps     Taylor-Green 256³ to t = 20 (its whole -dE/dt history against the 512³
#            reference: the RMS deviation, goal <= 1 % of the reference's peak; the peak;
#            the step against the same solver on jnp.fft) and N-body 256³ (growth against
#            linear theory, mass, the one-device run, the gradient at 64³), 1x1 mesh
#   test     every GPU test: tests/test_engines.py (the kernels on both platforms) and
#            tests/test_gpu.py (the API through engines native, xla and auto on a one-GPU
#            mesh: the CPU suite's cases of tests/transform_cases.py, and inverses of
#            blocks of 2³¹ points)
#   mpi      mpi4jax built from its sdist (.whl/) against whichever MPI mpi4py was built
#            with (the machine's own, else the mpich wheel from .whl/), then
#            mpirun -n 2 benchmarks.mpi_gpu: pfft.mpi with 2 ranks sharing the GPU
#   report   every GPU table of the docs rendered from this run: docs/data copied to
#            $OUT/docs/data, this run's files put in it under the names the docs read
#            (engines_gpu, real_engines_gpu, per_device_gpu, taylor_green_256_1x1_float32_padding1.5,
#            nbody_256_1x1_float32, mpi_gpu), `python -m benchmarks report --data
#            $OUT/docs/data --figures $OUT/docs/figures`; it prints the command that puts
#            them in the checkout's docs/data (then `python -m benchmarks report` there)
#   suite    the whole test suite with the GPU visible (not a default step)
#   install  `pip install --no-build-isolation .` into a folder: the GPU engine is built
#            without a flag where nvcc and cuFFT are (python -m pfft from there; not a
#            default step)
#   wheel    the CUDA wheel as a user without nvcc gets it: .whl/pfft-*-manylinux*.whl
#            (benchmarks/gpu_wheels.sh puts it there from `make wheel-cuda`; else dist/)
#            installed with --no-deps into a fresh venv over the machine's Python
#            (--system-site-packages: its jax and CUDA plugin), nvcc off PATH, run from
#            outside the checkout: python -m pfft must report the GPU engine available
#            from that venv's pfft/_lib with the library of the plugin installed; the
#            library loads with cuFFT found by its rpath (a site folder with the wheel's
#            pfft beside a link to the Python's nvidia folder); tests/test_engines.py and
#            tests/test_gpu.py pass with that pfft (and the checkout's benchmarks package;
#            not a default step)
#   archive  everything written, packed into $OUT/gpu_results.tar.gz
#
# Usage: benchmarks/gpu.sh [python]   (default .venv/bin/python if there is one, else python3)
# env and build run first, the report after the other steps and the archive last; the
# others run in the order STEPS names them (under a TIME_LIMIT, what matters most
# first; an unknown name stops the run before any step). Environment (defaults): OUT
# (results), STEPS ("env build bench device huge apps test mpi report archive"; add
# suite, install, wheel to run them), SIZES (256 512 1024), REAL_SIZES (256 512),
# DEVICE_ARGS (arguments of benchmarks.per_device), HUGE_ARGS (of
# benchmarks.huge_blocks), APP_N (256), APP_T_END (20), APP_PADDING (1.5), APP_GRAD_N
# (64), REPEATS (10), WARMUP (2), TEST_WORKERS (4), SUITE_WORKERS (8), SUITE_TIMEOUT
# (300 s), GPU (0), CUDA_HOME (/usr/local/cuda), PLATFORM (gpu; "cpu" runs every step
# on the CPU at small sizes, to check this script where there is no GPU), TIME_LIMIT
# (0: none; else the seconds every step but report and archive may take together: a
# command is stopped when they are spent, a step not started with under STEP_MIN_S
# (20) of them left, and the report and the archive of what was done still come, so a
# run inside a fixed allowance of machine time ends with its results). A step that
# later ones need stops the run when it fails; any other failure is reported and the
# next step runs. Exit status 1 if anything failed or was not started for lack of
# time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

PLATFORM=${PLATFORM:-gpu}
case $PLATFORM in
    gpu) SIZES=${SIZES:-256 512 1024}; REAL_SIZES=${REAL_SIZES:-256 512}; APP_N=${APP_N:-256}
         MPI_SIZE=${MPI_SIZE:-256}; APP_HALO=${APP_HALO:-16}; APP_GRAD_N=${APP_GRAD_N:-64}
         # the budget keeps the default run under five minutes (1024³ runs first)
         DEVICE_ARGS=${DEVICE_ARGS:---platform gpu --sizes 1024 2048 512 --devices 4 8 64 256 --directions forward backward --budget-s 75}
         HUGE_ARGS=${HUGE_ARGS:---platform gpu --points 2147483648} ;;
    cpu) SIZES=${SIZES:-32}; REAL_SIZES=${REAL_SIZES:-32}; APP_N=${APP_N:-32}
         MPI_SIZE=${MPI_SIZE:-32}; APP_HALO=${APP_HALO:-8}; APP_GRAD_N=${APP_GRAD_N:-16}
         DEVICE_ARGS=${DEVICE_ARGS:---platform cpu --sizes 32 --devices 4 8 --directions forward backward}
         HUGE_ARGS=${HUGE_ARGS:---platform cpu --points 32768} ;;
    *) echo "PLATFORM must be gpu or cpu, got $PLATFORM" >&2; exit 2 ;;
esac
APP_T_END=${APP_T_END:-20}
APP_PADDING=${APP_PADDING:-1.5}       # Taylor-Green dealiased by the 3/2 rule
REPEATS=${REPEATS:-10}
WARMUP=${WARMUP:-2}
TEST_WORKERS=${TEST_WORKERS:-4}
SUITE_WORKERS=${SUITE_WORKERS:-8}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-300}
GPU=${GPU:-0}
TIME_LIMIT=${TIME_LIMIT:-0}
STEP_MIN_S=${STEP_MIN_S:-20}
STEPS=${STEPS:-env build bench device huge apps test mpi report archive}
WORK=$ROOT/build/gpu-sh                 # git-ignored; kept between runs on a machine
PREFIX=$WORK/mpi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUT=${OUT:-results}
mkdir -p "$OUT" "$WORK"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/gpu_sh.log
export PYTHONUNBUFFERED=1               # progress lines reach the log as they come
export MPI4JAX_NO_WARN_JAX_VERSION=1
# Open MPI refuses root without these (the GPU machines run commands as root)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

STEP=start
FAILED=()
TIMES=()                                # "step seconds" of each step run
STEP_START=$SECONDS
# step NAME WHAT: a step begins (the one before it ends: its time is kept)
step() {
    [[ $STEP != start ]] && TIMES+=("$STEP $((SECONDS - STEP_START))")
    STEP=$1; STEP_START=$SECONDS
    printf '\n=== %s: %s  (%s)\n' "$1" "$2" "$(date '+%H:%M:%S')"
}
die() { printf '\n*** gpu.sh STOPPED in step "%s": %s\n' "$STEP" "$*"; exit 1; }
fail() { FAILED+=("$STEP: $*"); printf '*** FAILED (%s): %s; going on\n' "$STEP" "$*"; }
want() { [[ " $STEPS " == *" $1 "* ]]; }
NOT_STARTED=()                          # steps wanted but not started: TIME_LIMIT near
# time_left: seconds of TIME_LIMIT left for the steps (a day where there is no limit);
# the report is not limited (nor the archive, which runs no command through run)
time_left() {
    if ((TIME_LIMIT > 0)) && [[ $STEP != report ]]; then
        echo $((TIME_LIMIT - (SECONDS - RUN_START)))
    else
        echo 86400
    fi
}
# due NAME: step NAME is wanted and there is time to start it
due() {
    want "$1" || return 1
    [[ $1 == report ]] && return 0
    local left
    left=$(time_left)
    ((left >= STEP_MIN_S)) && return 0
    NOT_STARTED+=("$1")
    printf '\n=== %s: not started, %s s of TIME_LIMIT=%s left (STEP_MIN_S=%s)\n' \
        "$1" "$left" "$TIME_LIMIT" "$STEP_MIN_S"
    return 1
}
tail_of() { echo "--- last lines of $1:"; tail -n "${2:-25}" "$1"; }
# run NAME TIMEOUT CMD...: a step's command with its log under $OUT, a failure reported
# (its limit is TIMEOUT or what is left of TIME_LIMIT, the less)
run() {
    local name=$1 limit=$2 left rc=0; shift 2
    left=$(time_left)
    if ((left < 1)); then
        fail "$name not run: TIME_LIMIT=$TIME_LIMIT s spent"
        return 1
    fi
    ((left < limit)) && limit=$left
    echo "+ $* (log $name.log, limit ${limit}s)"
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
    if ((rc != 0)); then
        tail_of "$OUT/$name.log" 30
        if ((rc == 124)); then
            fail "$name stopped at its limit of ${limit}s (see $name.log)"
        else
            fail "$name (see $name.log)"
        fi
        return 1
    fi
    tail -n "${SHOW:-15}" "$OUT/$name.log"
}

# check_cuda_wheel: the wheel step (see the top); a failure is reported, the run goes on
check_cuda_wheel() {
    local whl wenv rundir python site path dir lib nvidia want loaded
    whl=$(ls -t .whl/pfft-*-manylinux*.whl dist/pfft-*-manylinux*.whl 2>/dev/null | head -n 1 || true)
    [[ -n $whl ]] || { fail "no CUDA wheel in .whl/ or dist/ (make wheel-cuda; benchmarks/gpu_wheels.sh)"; return 1; }
    echo "wheel: $whl"
    wenv=$WORK/wheel-venv
    rundir=$WORK/wheel-run              # the commands run here: not the checkout
    rm -rf "$wenv" "$rundir" "$WORK/wheel-site"
    mkdir -p "$rundir"
    # the checkout's benchmarks (tests/test_gpu.py runs benchmarks.per_device), not its pfft
    ln -s "$ROOT/benchmarks" "$rundir/benchmarks"
    # PATH without any folder that holds an nvcc
    path=
    while IFS= read -r dir; do
        [[ -n $dir && ! -x $dir/nvcc ]] && path+="${path:+:}$dir"
    done < <(tr ':' '\n' <<<"$PATH")
    "$PY" -m venv --without-pip --system-site-packages "$wenv" || { fail "no venv"; return 1; }
    python=$wenv/bin/python
    site=$("$python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    # $PY's own packages too where it is itself a venv (a .pth line adds the folder only)
    "$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib']); print(sysconfig.get_paths()['platlib'])" \
        | sort -u >"$site/base.pth"
    run pip_install_wheel 300 "$PY" -m pip --python "$python" install --no-deps --no-index \
        --disable-pip-version-check "$whl" || return 1
    local wenv_env=(env -u PYTHONPATH -u PFFT_KERNELS_DIR -u LD_LIBRARY_PATH PATH="$path")
    [[ $PLATFORM == cpu ]] && wenv_env+=(JAX_PLATFORMS=cpu)
    (cd "$rundir" && "${wenv_env[@]}" bash -c '! command -v nvcc' >/dev/null) \
        || fail "nvcc is still on PATH for the wheel's venv"
    (cd "$rundir" && "${wenv_env[@]}" "$python" -c "import pfft; print('pfft from', pfft.__file__)") \
        | tee "$OUT/wheel_pfft.txt"
    grep -q "pfft from $site/pfft/" "$OUT/wheel_pfft.txt" || fail "the venv imports another pfft"
    (cd "$rundir" && "${wenv_env[@]}" "$python" -m pfft) | tee "$OUT/wheel_config.txt"
    loaded=$(sed -n "s|.*native cuda (cuFFT): available, \($site/pfft/_lib/libpfft_cuda1[23]\.so\)\$|\1|p" \
        "$OUT/wheel_config.txt")
    if [[ $PLATFORM == gpu ]]; then
        [[ -n $loaded ]] || fail "the wheel's GPU engine is not available (wheel_config.txt)"
        want=$(cd "$rundir" && "${wenv_env[@]}" "$python" -c "from pfft.engines import _kernels as k; print(*[n for n, c, _ in k.cuda_library_choice(k.installed_cuda_plugins()) if c][:1])")
        [[ -z $loaded || $(basename "$loaded") == "$want" ]] \
            || fail "loaded $(basename "$loaded"), the installed plugin wants $want"
        grep -q "cuda libraries: $want: loaded" "$OUT/wheel_config.txt" \
            || fail "python -m pfft does not say it loaded $want"
    else
        grep -q "native cpu (DUCC): available, $site/pfft/_lib/" "$OUT/wheel_config.txt" \
            || fail "the wheel's CPU kernels are not the ones loaded"
        grep -q "cuda libraries: " "$OUT/wheel_config.txt" || fail "no cuda libraries line"
    fi
    # the rpath: the wheel's pfft beside a link to the Python's nvidia folder, loaded in a
    # process without jax (which would have loaded cuFFT first)
    nvidia=$("${wenv_env[@]}" "$python" -c "
import importlib.util, os
spec = importlib.util.find_spec('nvidia')
print(next((p for p in (spec.submodule_search_locations if spec else []) if os.path.isdir(os.path.join(p, 'cu13', 'lib')) or os.path.isdir(os.path.join(p, 'cufft', 'lib'))), ''))")
    if [[ -n $nvidia ]]; then
        mkdir -p "$WORK/wheel-site"
        cp -r "$site/pfft" "$WORK/wheel-site/"
        ln -s "$nvidia" "$WORK/wheel-site/nvidia"
        for lib in "$WORK"/wheel-site/pfft/_lib/libpfft_cuda1[23].so; do
            [[ $lib == *13.so && -d $nvidia/cu13/lib || $lib == *12.so && -d $nvidia/cufft/lib ]] || continue
            echo "+ $(basename "$lib") by its rpath: $(ldd "$lib" | grep -o 'libcufft.so.[0-9]* => [^ ]*')"
            "${wenv_env[@]}" "$python" -c "import ctypes, sys; v = ctypes.CDLL(sys.argv[1]).pfft_cuda_abi_version(); print('  loads, ABI', v)" "$lib" \
                || fail "$(basename "$lib") does not load from a site folder with the nvidia wheels"
        done
    elif [[ $PLATFORM == gpu ]]; then
        fail "no nvidia wheels (nvidia/cu13/lib, nvidia/cufft/lib) for the wheel's Python"
    else
        echo "(no nvidia wheels for this Python: the rpath check needs them)"
    fi
    SHOW=6 run wheel_tests 900 bash -c 'cd "$1" && shift && exec "$@"' _ "$rundir" \
        "${wenv_env[@]}" "$python" -m pytest -q -rs -n "$TEST_WORKERS" -p no:cacheprovider \
        "$ROOT/tests/test_engines.py" "$ROOT/tests/test_gpu.py" || return 1
}

main() {
# the Python: an argument, $PYTHON, .venv/bin/python, python3
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
[[ -x $CUDA_HOME/bin/nvcc ]] && ! command -v nvcc >/dev/null && export PATH="$PATH:$CUDA_HOME/bin"
[[ $PLATFORM == gpu ]] && export CUDA_VISIBLE_DEVICES=$GPU
[[ $PLATFORM == cpu ]] && export JAX_PLATFORMS=cpu
echo "gpu.sh: $(date '+%Y-%m-%d %H:%M:%S'), host $(hostname), platform $PLATFORM, steps: $STEPS"
echo "python: $PY; results and logs: $OUT"

step_env() {
    step env "Python, JAX, the device, MPI"
    "$PY" -c "import sys, jax, numpy; print('Python', sys.version.split()[0], '| jax', jax.__version__, '| numpy', numpy.__version__); print('devices:', jax.devices())" \
        || die "jax does not import with $PY"
    if [[ $PLATFORM == gpu ]]; then
        nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv 2>/dev/null || echo "(no nvidia-smi)"
        "$PY" -c "import jax; jax.devices('gpu')" || die "JAX sees no GPU with $PY"
        command -v nvcc >/dev/null && nvcc --version | tail -n 2 || echo "(no nvcc on PATH)"
    fi
    "$PY" -c "from mpi4py import MPI; print('mpi4py MPI:', MPI.Get_library_version().splitlines()[0].strip())" 2>/dev/null \
        || echo "(no mpi4py)"
}

# mpi4py's MPI: its build's mpicc, else the one beside the Python, else on PATH
MPICC=
find_mpi() {
    MPICC=$("$PY" -c "import mpi4py; print(mpi4py.get_config().get('mpicc', ''))" 2>/dev/null || true)
    [[ -n $MPICC && -x $MPICC ]] || MPICC=$(dirname "$PY")/mpicc
    [[ -x $MPICC ]] || MPICC=$(command -v mpicc || true)
}
# mpi4jax from its sdist (.whl/) into $MPI4JAX_SITE, against $MPICC; its GPU extension
# against the CUDA toolkit where there is one (an nvcc on PATH without the toolkit's
# headers would break the build)
MPI4JAX_SITE=$PREFIX/site
can_build_mpi4jax() {
    [[ -n $MPICC && -x $MPICC ]] && compgen -G ".whl/mpi4jax-*.tar.gz" >/dev/null
}
build_mpi4jax() {
    [[ -f $MPI4JAX_SITE/.complete ]] && return 0
    local cuda=(CUDA_PATH= CUDA_ROOT= CUDA_HOME=)
    [[ -f $CUDA_HOME/include/cuda_runtime.h ]] && cuda=(CUDA_PATH="$CUDA_HOME")
    env "${cuda[@]}" MPI4JAX_BUILD_MPICC="$MPICC" PATH="$(dirname "$MPICC"):$PATH" \
        "$PY" -m pip install -q --disable-pip-version-check --no-index --no-deps \
        --no-build-isolation --target "$MPI4JAX_SITE" .whl/mpi4jax-*.tar.gz \
        >"$OUT/mpi4jax_build.log" 2>&1 && touch "$MPI4JAX_SITE/.complete"
}

CPU_BUILD=                              # pid of the CPU kernels' build in the background
MPI4JAX_BUILD=                          # pid of mpi4jax's build in the background
step_build() {
    step build "pfft's kernels"
    ducc=("$ROOT"/.whl/ducc0-*.tar.gz)
    margs=(PYTHON="$PY")
    [[ -f ${ducc[0]} ]] && margs+=(DUCC_SDIST="${ducc[0]}")
    if ! compgen -G "kernels/build/libpfft_cpu*.so" >/dev/null; then
        if [[ $PLATFORM == gpu ]]; then
            # the CPU kernels (DUCC, 1-2 minutes) build while the GPU steps run; the
            # steps that need them (test, suite, install) wait for it
            echo "+ make -C kernels cpu in the background (log kernels_cpu_build.log)"
            make -C kernels -j"$(nproc)" cpu "${margs[@]}" >"$OUT/kernels_cpu_build.log" 2>&1 &
            CPU_BUILD=$!
        else
            run kernels_cpu_build 600 make -C kernels -j"$(nproc)" cpu "${margs[@]}" \
                || die "the CPU kernels did not build"
        fi
    fi
    if [[ $PLATFORM == gpu ]] && want mpi; then
        find_mpi
        if ! "$PY" -c "import mpi4jax" 2>/dev/null && can_build_mpi4jax; then
            echo "+ mpi4jax builds in the background against $MPICC (log mpi4jax_build.log)"
            build_mpi4jax &
            MPI4JAX_BUILD=$!
        fi
    fi
    if [[ $PLATFORM == gpu ]]; then
        run kernels_build 600 make -C kernels -j"$(nproc)" cuda "${margs[@]}" \
            || die "the GPU kernels did not build"
    fi
    ls -l kernels/build/*.so
    "$PY" -m pfft | tee "$OUT/show_config.txt" || die "pfft does not import with $PY"
    "$PY" -c "from pfft.engines import native; import sys; sys.exit(not native.available('$PLATFORM'))" \
        || fail "native $PLATFORM engine unavailable"
}
# cpu_kernels: wait for the background build of the CPU kernels (once), say how it went
cpu_kernels() {
    [[ -n $CPU_BUILD ]] || return 0
    local pid=$CPU_BUILD
    CPU_BUILD=
    echo "+ waiting for the CPU kernels' build"
    if wait "$pid"; then
        tail -n 2 "$OUT/kernels_cpu_build.log"
    else
        tail_of "$OUT/kernels_cpu_build.log" 30
        fail "the CPU kernels did not build (see kernels_cpu_build.log)"
    fi
}

step_bench() {
    step bench "one device: c2c and real transforms per engine against jnp.fft"
    # shellcheck disable=SC2086  # SIZES is a list
    XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.9} SHOW=40 \
        run engines 300 "$PY" -m benchmarks.engines --platform "$PLATFORM" --sizes $SIZES \
        --dtypes complex64 --repeats "$REPEATS" --warmup "$WARMUP" --out "$OUT" || true
    # shellcheck disable=SC2086
    XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.9} SHOW=12 \
        run real_engines 300 "$PY" -m benchmarks.real_engines --platform "$PLATFORM" \
        --sizes $REAL_SIZES --dtypes float32 float64 --repeats "$REPEATS" --warmup "$WARMUP" \
        --out "$OUT" || true
}

step_device() {
    step device "what one device of a p-GPU plan runs"
    # shellcheck disable=SC2086  # DEVICE_ARGS is a list
    XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.95} SHOW=60 \
        run per_device 300 "$PY" -m benchmarks.per_device $DEVICE_ARGS --out "$OUT" || true
    if [[ -f $OUT/per_device_$PLATFORM.csv ]]; then
        SHOW=40 run model 120 "$PY" -m benchmarks.model --per-device "$OUT/per_device_$PLATFORM.csv" \
            --markdown "$OUT/gpu_model.md" --plot "$OUT/gpu_model.png" || true
    fi
}

step_huge() {
    step huge "blocks of 2³¹ points, every point against its exact value"
    # shellcheck disable=SC2086  # HUGE_ARGS is a list
    XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.9} SHOW=60 \
        run huge_blocks 300 "$PY" -m benchmarks.huge_blocks $HUGE_ARGS --out "$OUT" || true
}

step_apps() {
    step apps "Taylor-Green ${APP_N}³ to t = $APP_T_END and N-body ${APP_N}³ on one device"
    SHOW=8 run taylor_green 300 "$PY" -m benchmarks.apps.taylor_green --n "$APP_N" --grid 1x1 \
        --t-end "$APP_T_END" --padding "$APP_PADDING" --out "$OUT" || true
    # its last line: the goal's verdict on the whole -dE/dt history (met or NOT met)
    grep -q "^RMS deviation of -dE/dt" "$OUT/taylor_green.log" \
        || fail "Taylor-Green: no RMS deviation of -dE/dt (see taylor_green.log)"
    SHOW=16 run nbody 300 "$PY" -m benchmarks.apps.nbody --n "$APP_N" --grid 1x1 --halo "$APP_HALO" \
        --grad-n "$APP_GRAD_N" --out "$OUT" || true
}

step_test() {
    cpu_kernels
    step test "GPU tests: tests/test_engines.py tests/test_gpu.py"
    SHOW=4 run tests_gpu 600 "$PY" -m pytest -q -rs -n "$TEST_WORKERS" -p no:cacheprovider \
        tests/test_engines.py tests/test_gpu.py || true
}

MPIRUN=
step_mpi() {
    step mpi "mpi4jax against mpi4py's MPI; mpirun -n 2 benchmarks.mpi_gpu"
    find_mpi
    echo "mpicc: ${MPICC:-none}"
    if [[ -n $MPI4JAX_BUILD ]]; then
        echo "+ waiting for mpi4jax's build (against $MPICC)"
        pid=$MPI4JAX_BUILD
        MPI4JAX_BUILD=
        if wait "$pid"; then
            export PYTHONPATH="$PYTHONPATH:$MPI4JAX_SITE"
        else
            tail_of "$OUT/mpi4jax_build.log" 30
            fail "mpi4jax did not build"
        fi
    elif "$PY" -c "import mpi4jax" 2>/dev/null; then
        echo "mpi4jax imports: using it"
    elif can_build_mpi4jax; then
        echo "building mpi4jax from $(ls .whl/mpi4jax-*.tar.gz) against mpi4py's MPI ($MPICC)"
        if build_mpi4jax; then
            export PYTHONPATH="$PYTHONPATH:$MPI4JAX_SITE"
        else
            tail_of "$OUT/mpi4jax_build.log" 30
            fail "mpi4jax did not build"
        fi
    else
        fail "no mpi4jax, and no mpi4py with an mpicc or no .whl/mpi4jax-*.tar.gz (benchmarks/gpu_wheels.sh) to build one"
    fi
    [[ -n $MPICC ]] && MPIRUN=$(dirname "$MPICC")/mpirun
    [[ -x $MPIRUN ]] || MPIRUN=$(command -v mpirun || true)
    if [[ -n $MPIRUN ]] && "$PY" -c "import mpi4jax" 2>/dev/null; then
        extra=()
        "$MPIRUN" --version 2>&1 | grep -qi "open mpi" && extra=(--oversubscribe)
        mpi_env=(XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=0.45)
        for mode in 0 if-aware; do
            [[ $PLATFORM == cpu && $mode != 0 ]] && continue
            # device buffers to MPI only where the MPI library is CUDA-aware
            [[ $mode != 0 ]] && grep -q "not CUDA-aware" "$OUT/mpi_cuda_mpi_0.log" 2>/dev/null \
                && { echo "(MPI not CUDA-aware: no run with device buffers)"; continue; }
            SHOW=20 run "mpi_cuda_mpi_$mode" 300 env "${mpi_env[@]}" "$MPIRUN" "${extra[@]}" -n 2 \
                "$PY" -m benchmarks.mpi_gpu --platform "$PLATFORM" --size "$MPI_SIZE" \
                --repeats "$REPEATS" --warmup "$WARMUP" --cuda-mpi "$mode" --out "$OUT" || true
        done
    fi
}

# gpu_inputs: "run's file" "name the docs read" pairs of this run's data (a CPU check's
# files stand in for the GPU's under the GPU names, to check the rendering)
gpu_inputs() {
    local p=$PLATFORM app=${APP_N}_1x1_float32
    local engines=engines; [[ $p == gpu ]] && engines=engines_gpu
    echo "$engines.csv engines_gpu.csv"; echo "$engines.json engines_gpu.json"
    echo "real_engines_$p.csv real_engines_gpu.csv"; echo "real_engines_$p.json real_engines_gpu.json"
    echo "per_device_$p.csv per_device_gpu.csv"
    echo "huge_blocks_$p.csv huge_blocks_gpu.csv"; echo "huge_blocks_$p.json huge_blocks_gpu.json"
    echo "mpi_$p.csv mpi_gpu.csv"; echo "mpi_$p.json mpi_gpu.json"
    echo "mpi_${p}_cuda_mpi.csv mpi_gpu_cuda_mpi.csv"; echo "mpi_${p}_cuda_mpi.json mpi_gpu_cuda_mpi.json"
    if [[ $APP_N == 256 || $p == cpu ]]; then
        echo "taylor_green_${app}_padding$APP_PADDING.txt taylor_green_256_1x1_float32_padding1.5.txt"
        echo "taylor_green_${app}_padding$APP_PADDING.json taylor_green_256_1x1_float32_padding1.5.json"
        echo "nbody_$app.json nbody_256_1x1_float32.json"
    fi
}

step_report() {
    step report "the docs' GPU tables from this run (python -m benchmarks report)"
    rm -rf "$OUT/docs"
    mkdir -p "$OUT/docs"
    cp -r docs/data "$OUT/docs/data"
    copied=()
    while read -r from to; do
        if [[ -f $OUT/$from ]]; then
            cp "$OUT/$from" "$OUT/docs/data/$to"
            copied+=("$to")
            echo "+ $from -> docs/data/$to"
        fi
    done < <(gpu_inputs)
    [[ $PLATFORM == cpu ]] && echo "(PLATFORM=cpu: the CPU run's files stand in for the GPU's, to check the rendering)"
    [[ $APP_N == 256 || $PLATFORM == cpu ]] || echo "(APP_N=$APP_N: the apps' tables are of 256³ runs; not copied)"
    if SHOW=40 run report 300 "$PY" -m benchmarks report --data "$OUT/docs/data" \
            --figures "$OUT/docs/figures"; then
        for f in "$OUT"/docs/data/gpu_*.md; do
            [[ -f $f && $f -nt $STARTED ]] && echo "rendered: docs/data/$(basename "$f") ($(grep -o '20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]' "$f" | sort -u | tr '\n' ' '))"
        done
        if ((${#copied[@]})) && [[ $PLATFORM == gpu ]]; then
            echo "into the docs: (cd $OUT/docs/data && cp ${copied[*]} $ROOT/docs/data/) && python -m benchmarks report"
        fi
    fi
}

step_suite() {
    cpu_kernels
    step suite "the whole suite with the GPU visible (limit ${SUITE_TIMEOUT}s)"
    SHOW=30 run suite "$SUITE_TIMEOUT" "$PY" -m pytest -q -rs -n "$SUITE_WORKERS" \
        --dist loadfile -p no:cacheprovider tests || true
}

step_install() {
    cpu_kernels
    step install "pip install --no-build-isolation . (the GPU engine without a flag)"
    rm -rf "$WORK/install"
    if run pip_install 600 "$PY" -m pip install -q --disable-pip-version-check --no-index \
            --no-deps --no-build-isolation --target "$WORK/install" -Cbuild-dir="$WORK/install-build" \
            ${INSTALL_ARGS:-} .; then
        (cd "$WORK" && PYTHONPATH="$WORK/install" "$PY" -m pfft) | tee "$OUT/installed_config.txt"
        grep -q "native cuda (cuFFT): available, $WORK/install" "$OUT/installed_config.txt" \
            || [[ $PLATFORM == cpu ]] || fail "the installed pfft has no GPU engine"
    fi
}

step_wheel() {
    cpu_kernels
    step wheel "the CUDA wheel in a fresh venv, no nvcc on PATH"
    check_cuda_wheel || true
}

# env and build first, then the other steps in the order STEPS names them, the report
# after them all (the archive comes with the summary below)
ORDER=()
for s in env build; do want $s && ORDER+=("$s"); done
for s in $STEPS; do
    case $s in
        env|build|report|archive) ;;
        bench|device|huge|apps|test|mpi|suite|install|wheel)
            [[ " ${ORDER[*]} " == *" $s "* ]] || ORDER+=("$s") ;;
        *) die "no step $s (steps: env build bench device huge apps test mpi report suite install wheel archive)" ;;
    esac
done
want report && ORDER+=(report)
for s in "${ORDER[@]}"; do
    if due "$s"; then "step_$s"; fi
done

cpu_kernels                             # not left running whatever the steps
[[ $STEP != start ]] && TIMES+=("$STEP $((SECONDS - STEP_START))")
STEP=summary
printf '\n=== summary (%s)\n' "$(date '+%H:%M:%S')"
for f in "$OUT"/*.md; do
    if [[ -f $f && $f -nt $STARTED ]]; then echo "--- $f"; head -c 6000 "$f"; echo; fi
done
echo
echo "time per step: $(printf '%s s, ' "${TIMES[@]}" | sed 's/, $//')"
echo "total: $((SECONDS - RUN_START)) s"
if ((${#NOT_STARTED[@]})); then
    echo; echo "*** not started for lack of time (TIME_LIMIT=$TIME_LIMIT s): ${NOT_STARTED[*]}"
fi
if ((${#FAILED[@]})); then
    echo; echo "*** ${#FAILED[@]} failure(s):"; printf '  - %s\n' "${FAILED[@]}"
fi
if want archive; then                   # last: the log in it holds the lines above
    tar -C "$OUT" -czf "$WORK/gpu_results.tar.gz" --exclude gpu_results.tar.gz . \
        && mv "$WORK/gpu_results.tar.gz" "$OUT/" && echo "archive: $OUT/gpu_results.tar.gz"
fi
((${#FAILED[@]} + ${#NOT_STARTED[@]} == 0)) || return 1
echo "all steps ran"
}

STARTED=$OUT/.gpu_sh_started            # the tables written by this run are newer
touch "$STARTED"
sleep 1
RUN_START=$SECONDS
main "$@" 2>&1 | tee -a "$LOG"          # exit status: main's (pipefail)

"""The CPU pieces kernel's passes against DUCC's own strided transform of the same block.

A distributed transform on CPU is a chain of fused passes of ``pfft_pieces``
(:func:`pfft.engines.native.fft_pieces`): each reads the pieces an exchange delivered,
transforms one axis and writes the pieces the next exchange sends. Its baseline is the
same transform of the same block without the pieces: DUCC's strided transform through
pfft's plain handlers (:func:`pfft.engines.native.fft`, ``rfft``, ``r2r``), which read
the block and write a new one. The ratio is what the unpacking and packing add to a pass.

Each block holds one device's share of an ``N³`` array on a 2x4 grid (``N³/8`` points:
``(N/2, N/4, N)`` before the first pass, ``(N/8, N, N/2+1)`` and ``(N, N/8, N/2+1)`` after
the exchanges), cut into 4 pieces as a pencil plan's passes cut it. One device, one
kernel thread (as each of 8 simulated devices on 2 cores runs), each call jitted; the
minimum and the median of ``--repeats`` calls after a warm-up. On a machine shared with
other work the minimum is the steadier figure.

Those calls read the same input again and again, from cache. Inside a plan a pass reads
what an exchange has just delivered on all devices, more than the last-level cache
holds (session 18: in-plan kernel time matched these calls' cold figure, not their hot
one). So each pass is timed again **cold**: the calls cycle through copies of their
inputs, ``--cold-mib`` MiB of them in all (default 96, three times a 32 MiB L3), and
the median of ``--repeats`` calls is reported beside the hot figures.

    python -m benchmarks.kernel_passes [--size 128] [--dtypes float32 float64] [--repeats 100]
        [--cold-mib 96]
"""
from __future__ import annotations

import argparse
import time

from .common import markdown_table, run_header, simulate_cpu_devices, write_results

simulate_cpu_devices(1)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from pfft.engines import native  # noqa: E402
from pfft.engines.r2r import scipy_op  # noqa: E402

jax.config.update("jax_enable_x64", True)
PIECES = 4


def _times(fn, arg_sets, repeats: int) -> tuple[float, float]:
    """Minimum and median wall time (ms) of ``fn(*args)``, ``args`` taken from
    ``arg_sets`` in turn, after a warm-up call on each of the first two."""
    for args in arg_sets[:2]:
        jax.block_until_ready(fn(*args))
    times = []
    for i in range(repeats):
        args = arg_sets[i % len(arg_sets)]
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.min(times)), 1e3 * float(np.median(times))


def _cold_sets(args, mib: float) -> list:
    """``args`` and enough copies of it that all of them hold at least ``mib`` MiB
    (at least two sets): calls that cycle through them read from memory."""
    size = sum(a.nbytes for a in args)
    count = max(2, -(-int(mib * 2**20) // max(size, 1)))
    return [args] + [[a + 0 for a in args] for _ in range(count - 1)]


def _cases(n: int, real, cplx):
    """(name, pass, its inputs, baseline, its input): the passes of a pencil chain."""
    rng = np.random.default_rng(0)
    block = (n // 2, n // 4, n)
    half = n // 2 + 1
    t1 = dict(nthreads=1)

    def rand(shape, dtype):
        a = rng.standard_normal(shape)
        if np.issubdtype(dtype, np.complexfloating):
            a = a + 1j * rng.standard_normal(shape)
        return jnp.asarray(a.astype(dtype))

    def cut(shape, axis):
        shape = list(shape)
        shape[axis] //= PIECES
        return tuple(shape)

    x = rand(block, real)
    yield ("r2c axis 2, pieces cut along axis 0",
           lambda a: native.fft_pieces([a], -1, n, kind="r2c",
                                       out_shape=cut(block[:2] + (half,), 0),
                                       out_count=PIECES, out_split=-3, out_sign=1, **t1), [x],
           lambda a: native.rfft(a, (2,), nthreads=1), [x])
    spectrum = (n // 8, n, half)              # axis 1 gathered from the pieces
    pieces = [rand(cut(spectrum, 1), cplx) for _ in range(PIECES)]
    yield ("c2c axis 1, reading pieces cut along axis 1",
           lambda *p: native.fft_pieces(list(p), -2, n, kind="c2c", in_split=-2, in_sign=-1,
                                        out_shape=spectrum, **t1), pieces,
           lambda a: native.fft(a, (1,), nthreads=1), [rand(spectrum, cplx)])
    last = (n, n // 8, half)                  # axis 0 gathered from the pieces
    pieces = [rand(cut(last, 0), cplx) for _ in range(PIECES)]
    yield ("c2c axis 0, reading pieces cut along axis 0",
           lambda *p: native.fft_pieces(list(p), -3, n, kind="c2c", in_split=-3, in_sign=-1,
                                        out_shape=last, **t1), pieces,
           lambda a: native.fft(a, (0,), nthreads=1), [rand(last, cplx)])
    yield ("c2r axis 2, reading pieces cut along axis 0",
           lambda *p: native.fft_pieces(list(p), -1, n, kind="c2r", in_split=-3, in_sign=-1,
                                        out_shape=(n, n // 8, n), inverse=True, **t1), pieces,
           lambda a: native.irfft(a, (2,), n, nthreads=1), [rand(last, cplx)])
    op = scipy_op("dct2", n, "backward", None, inverse=False)
    yield ("dct2 axis 2, pieces cut along axis 0",
           lambda a: native.fft_pieces([a], -1, n, kind="r2r", op=op, out_shape=cut(block, 0),
                                       out_count=PIECES, out_split=-3, out_sign=1, **t1), [x],
           lambda a: native.r2r(a, op, 2, nthreads=1), [x])
    column = (n, n // 8, n)
    pieces = [rand(cut(column, 0), real) for _ in range(PIECES)]
    yield ("dct2 axis 0, reading pieces cut along axis 0",
           lambda *p: native.fft_pieces(list(p), -3, n, kind="r2r", op=op, in_split=-3,
                                        in_sign=-1, out_shape=column, **t1), pieces,
           lambda a: native.r2r(a, op, 0, nthreads=1), [rand(column, real)])


def run(n: int, dtypes, repeats: int, cold_mib: float = 96, progress=print) -> list[dict]:
    rows = []
    for dtype in dtypes:
        real = np.dtype(dtype)
        cplx = np.result_type(real, np.complex64)
        for name, fused, args, base, base_args in _cases(n, real, cplx):
            progress(f"  {n}³ {real.name}: {name}")
            fused, base = jax.jit(fused), jax.jit(base)
            f_min, f_med = _times(fused, [args], repeats)
            b_min, b_med = _times(base, [base_args], repeats)
            _, f_cold = _times(fused, _cold_sets(args, cold_mib), repeats)
            _, b_cold = _times(base, _cold_sets(base_args, cold_mib), repeats)
            rows.append(dict(size=n, dtype=real.name, pass_=name, pieces_min_ms=f_min,
                             pieces_median_ms=f_med, pieces_cold_ms=f_cold,
                             ducc_min_ms=b_min, ducc_median_ms=b_med, ducc_cold_ms=b_cold,
                             ratio_min=f_min / b_min, ratio_cold=f_cold / b_cold))
    return rows


COLUMNS = [("size", "N", "{}"), ("dtype", "dtype", "{}"),
           ("pass_", "pass (one device's 2x4 block)", "{}"),
           ("pieces_min_ms", "pieces kernel min ms", "{:.3f}"),
           ("pieces_median_ms", "median ms", "{:.3f}"),
           ("ducc_min_ms", "DUCC strided min ms", "{:.3f}"),
           ("ducc_median_ms", "median ms", "{:.3f}"),
           ("ratio_min", "**pieces / DUCC (min)**", "{:.2f}"),
           ("pieces_cold_ms", "pieces cold median ms", "{:.3f}"),
           ("ducc_cold_ms", "DUCC cold median ms", "{:.3f}"),
           ("ratio_cold", "**pieces / DUCC (cold)**", "{:.2f}")]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--cold-mib", type=float, default=96,
                    help="MiB of input copies the cold calls cycle through (default 96)")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    if args.size % 8:
        ap.error("--size must be a multiple of 8 (a 2x4 block cut into 4 pieces)")
    if args.cold_mib <= 0:
        ap.error("--cold-mib must be positive")
    print(run_header("kernel passes", "one device, one kernel thread, library "
                     f"{native.unavailable_reason() or 'loaded'}"))
    rows = run(args.size, args.dtypes, args.repeats, args.cold_mib)
    table = markdown_table(rows, COLUMNS)
    print(table)
    write_results(rows, table, args.out, "kernel_passes")


if __name__ == "__main__":
    main()

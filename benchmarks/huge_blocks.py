"""Transforms of blocks of 2³¹ points on one device, every point against its exact value.

From 2³¹ elements an FFT library whose scaling or indexing counts elements in 32 bits
goes wrong without an error (XLA's GPU FFT applies an inverse's ``1/n`` with cuBLAS's
``scal``, whose element count is a 32-bit int, and skips it from 2³¹ output elements);
small blocks cannot show it. This runs, on one device, blocks of exactly ``--points``
points (default 2³¹) whose transforms are known exactly at every point:

- complex64 ``(2048, 2048, 512)`` (16 GiB): ``fftn`` of a delta at ``p`` (the phases
  ``exp(-2 pi i k.p/n)``) and of a plane wave ``exp(2 pi i k0.x/n)`` (``N delta(k - k0)``);
  ``ifftn`` of the same (``exp(2 pi i x.p/n) / N``, and ``delta(m + k0)``); ``ifftn``
  over axis 2 alone of the same (``1/n`` along that axis only);
- float32 ``(2048, 1024, 1024)``: ``rfftn`` of a delta (the half of its phases) and of a
  cosine wave (``N/2 delta(k - k0)``); ``irfftn`` of a half spectrum holding one delta
  inside the half (``2/N Re(a exp(2 pi i q.x/n))``), one on the zero bin and one on the
  Nyquist bin of the halved axis with a complex amplitude (half spectra that are not
  Hermitian: numpy keeps the real part, ``1/N Re(...)``), and the half spectrum of a
  delta (the delta back);

each through each engine (``native``, ``xla``, ``auto``: ``pfft.plan(..., engine=)`` on a
one-device mesh, its forward or backward) and through the public functions as a user
calls them on an array on the device (``default``: ``pfft.fftn``, ``pfft.ifftn``,
``pfft.ifft(axis=2)``, ``pfft.rfftn``, ``pfft.irfftn``, with ``$PFFT_ENGINE``'s engine);
and, for reference, through ``jax.numpy.fft`` (runner ``jnp.fft``: XLA's own FFT, what a
user of ``jnp.fft`` meets, and the time a rewritten inverse is measured against; its
rows are reported, never counted as failures).
Every input and answer is a product of one vector per axis (a delta's or a wave's), so
both are made on the device, and the output is compared with the answer at every point
there (:func:`benchmarks.exact.device_errors`: the largest error over the largest
value), and at a sample of points fetched to the host in float64 (the peak among them),
without a copy of the block on the host. Then the transform is timed (the median of
``--repeats`` calls: what a rewrite of an inverse that avoids the defect costs). Each
case's buffers are freed before the next.

Writes ``huge_blocks_<platform>.{csv,md,json}`` under ``--out``; exits with status 1
if any case is wrong (beyond ``--tol``) or failed. On a CPU, ``--points 32768`` runs the
same cases on small blocks (benchmarks/gpu.sh, ``PLATFORM=cpu``).

    XLA_PYTHON_CLIENT_MEM_FRACTION=0.9 python -m benchmarks.huge_blocks --platform gpu
    python -m benchmarks.huge_blocks --platform cpu --points 32768 --out /tmp/huge
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass

# a block, two outputs (timed calls) and a work area take up to 64 GiB at once: more
# than XLA's default 75 % of an 80 GB GPU
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.9")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import pfft  # noqa: E402
from pfft.engines import choice, native  # noqa: E402

from .common import (first_device, markdown_table, median_time, read_info,  # noqa: E402
                     read_table_rows, run_info, write_doc, write_results)
from .exact import Separable, device_errors  # noqa: E402

__all__ = ["Case", "cases", "shapes", "problem", "run", "failures", "OPS", "SOURCES",
           "RUNNERS", "REFERENCE_RUNNERS", "TOL", "main"]

#: each transform and the inputs whose outputs are known exactly
SOURCES = {"fftn": ("delta", "wave"), "ifftn": ("delta", "wave"),
           "ifft axis 2": ("delta", "wave"), "rfftn": ("delta", "cosine"),
           "irfftn": ("delta inside", "delta zero bin", "delta Nyquist bin",
                      "spectrum of a delta")}
OPS = tuple(SOURCES)
RUNNERS = ("native", "xla", "auto", "default", "jnp.fft")
#: the runners whose wrong answers are reported only: not pfft
REFERENCE_RUNNERS = ("jnp.fft",)
#: the largest error allowed, over the largest exact value: single precision's rounding
#: through 31 levels of a 2³¹-point transform is about 31 x 6e-8 = 2e-6 at most (measured
#: on CPUs: 1.8e-7 at 2¹⁵ points, 5.7e-7 at 2²⁴); the defects this is for are off by
#: factors (512, 2³¹) or by percents
TOL = 1e-5
SAMPLES = 64
_AMP = 0.8 + 0.6j                # |a| = 1, not real: a real-only path would show
_REAL_AMP = 1.25


@dataclass(frozen=True)
class Case:
    """One transform (``op``) of one input (``source``) through one ``runner``."""

    op: str
    source: str
    runner: str

    @property
    def real(self) -> bool:
        """A real-transform case (its shape is the real block's)."""
        return self.op in ("rfftn", "irfftn")


def shapes(points: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The complex and the real block of ``points`` points (a power of two, at least
    2¹⁵): ``(2048, 2048, 512)`` and ``(2048, 1024, 1024)`` for 2³¹; the same proportions
    below (``(64, 64, 8)`` and ``(32, 32, 32)`` for 2¹⁵).

    Raises
    ------
    ValueError
        For a count that is not a power of two or is too small.
    """
    e = int(points).bit_length() - 1
    if points < 2 ** 15 or points != 2 ** e:
        raise ValueError(f"--points must be a power of two of at least 2^15 (the waves "
                         f"need 8 points along each axis), got {points}")
    a = -(-(e + 2) // 3)                                  # 11 for 2³¹
    b = e // 3                                            # 10 for 2³¹
    return (2 ** a, 2 ** a, 2 ** (e - 2 * a)), (2 ** (e - 2 * b), 2 ** b, 2 ** b)


def cases(ops=OPS, runners=RUNNERS, sources=None) -> list[Case]:
    """Every op's inputs (``sources``: only those named) through every runner, one op at
    a time."""
    return [Case(op, s, r) for op in ops for r in runners for s in SOURCES[op]
            if sources is None or s in sources]


def _phase(n: int, p: int, sign: int) -> np.ndarray:
    """``exp(sign 2 pi i k p / n)``, k = 0 ... n - 1, from the exact integer ``k p mod n``."""
    return np.exp(sign * 2j * np.pi * ((np.arange(n) * p) % n) / n)


def _delta(n: int, i: int) -> np.ndarray:
    return np.eye(1, n, i % n, dtype=np.complex128)[0]


def problem(op: str, source: str, shape) -> tuple[Separable, Separable]:
    """The input of ``op`` on ``source`` for a block of ``shape`` (the complex block's,
    or the real one's for ``rfftn`` and ``irfftn``) and its exact output, as products of
    one vector per axis (real parts where real).

    Raises
    ------
    ValueError
        For an unknown op or source, or a block too small for its waves.
    """
    n = tuple(shape)
    if min(n) < 8:
        raise ValueError(f"blocks need 8 points along each axis, got {n}")
    big = math.prod(n)
    p = (n[0] // 3 + 1, n[1] // 5 + 2, n[2] // 7 + 3)              # a delta's place
    k0 = (n[0] // 5 + 1, n[1] // 3 + 1, n[2] // 4 + 1)             # a wave's: 0 < k0[2] < n/2
    half = n[2] // 2 + 1

    def outer(amp, vectors, real=False):
        return Separable([[amp * vectors[0]] + list(vectors[1:])], real)

    phases = lambda at, sign: [_phase(m, i, sign) for m, i in zip(n, at)]      # noqa: E731
    deltas = lambda at: [_delta(m, i) for m, i in zip(n, at)]                  # noqa: E731
    if op == "fftn" and source == "delta":
        return outer(_AMP, deltas(p)), outer(_AMP, phases(p, -1))
    if op == "fftn" and source == "wave":
        return outer(_AMP, phases(k0, 1)), outer(_AMP * big, deltas(k0))
    if op == "ifftn" and source == "delta":
        return outer(_AMP, deltas(p)), outer(_AMP / big, phases(p, 1))
    if op == "ifftn" and source == "wave":
        return outer(_AMP, phases(k0, 1)), outer(_AMP, deltas([-k for k in k0]))
    if op == "ifft axis 2" and source == "delta":
        return outer(_AMP, deltas(p)), outer(_AMP / n[2], deltas(p)[:2] + phases(p, 1)[2:])
    if op == "ifft axis 2" and source == "wave":
        return (outer(_AMP, phases(k0, 1)),
                outer(_AMP, phases(k0, 1)[:2] + [_delta(n[2], -k0[2])]))
    if op == "rfftn" and source == "delta":
        want = phases(p, -1)
        return (outer(_REAL_AMP, deltas(p), real=True),
                outer(_REAL_AMP, want[:2] + [want[2][:half]]))
    if op == "rfftn" and source == "cosine":
        want = deltas(k0)
        return (outer(_REAL_AMP, phases(k0, 1), real=True),
                outer(_REAL_AMP * big / 2, want[:2] + [want[2][:half]]))
    if op == "irfftn" and source == "spectrum of a delta":
        spectrum = phases(p, -1)
        return (outer(_REAL_AMP, spectrum[:2] + [spectrum[2][:half]]),
                outer(_REAL_AMP, deltas(p), real=True))
    bins = {"delta inside": (k0[2], 2.0), "delta zero bin": (0, 1.0),
            "delta Nyquist bin": (n[2] // 2, 1.0)}
    if op == "irfftn" and source in bins:
        q2, weight = bins[source]
        if weight == 1.0 and q2 and n[2] % 2:
            raise ValueError("a Nyquist bin needs an even halved axis")
        q = (k0[0], k0[1], q2)
        spectrum = deltas(q)
        return (outer(_AMP, spectrum[:2] + [spectrum[2][:half]]),
                outer(_AMP * weight / big, phases(q, 1), real=True))
    raise ValueError(f"no source {source!r} for {op!r}")


def _make(vectors, real: bool):
    """The block ``outer(*vectors)`` (its real part where ``real``) on the device."""
    out = vectors[0][:, None, None] * vectors[1][None, :, None] * vectors[2][None, None, :]
    return out.real if real else out


def _sample(y, i0, i1, i2):
    return y[i0, i1, i2]


_sample_jit = jax.jit(_sample)


def _points(want: Separable, count: int, seed: int):
    """``count`` places in ``want``'s block: its largest value's first, then pseudo-random."""
    shape = want.shape
    peak = [int(np.argmax(np.abs(f))) for f in want.factors[0]]
    rng = np.random.default_rng(seed)
    return [np.concatenate([[peak[a]], rng.integers(0, shape[a], count - 1)]).astype(np.int32)
            for a in range(len(shape))]


def _transform(case: Case, shape, mesh, device):
    """The function running ``case``'s transform, the sharding its input is made in,
    and the engine that runs it."""
    op, runner = case.op, case.runner
    if runner == "jnp.fft":
        fn = {"fftn": jnp.fft.fftn, "ifftn": jnp.fft.ifftn, "rfftn": jnp.fft.rfftn,
              "ifft axis 2": lambda x: jnp.fft.ifft(x, axis=2),
              "irfftn": lambda x: jnp.fft.irfftn(x, s=shape)}[op]
        return jax.jit(fn), jax.sharding.make_single_device_sharding(device), "jnp.fft"
    if runner == "default":
        fn = {"fftn": pfft.fftn, "ifftn": pfft.ifftn, "rfftn": pfft.rfftn,
              "ifft axis 2": lambda x: pfft.ifft(x, axis=2),
              "irfftn": lambda x: pfft.irfftn(x, s=shape, axes=tuple(range(len(shape))))}[op]
        return (fn, jax.sharding.make_single_device_sharding(device),
                choice.engine_for_plan(None, [device]).name)
    kw = dict(kind="r2c") if case.real else dict(axes=(2,)) if op == "ifft axis 2" else {}
    dtype = np.float32 if case.real else np.complex64
    plan = pfft.plan(shape, dtype, mesh, engine=runner, **kw)
    if op in ("fftn", "rfftn"):
        return plan.forward, plan.in_sharding, plan.engine.name
    return plan.backward, plan.out_sharding, plan.engine.name


def _expected_engine(runner: str, plat: str, device) -> str:
    """The engine a runner must get: itself; on GPUs "auto" is the per-stage engine,
    on CPUs native where the kernels are built; "default", the one a plan naming none
    gets (``$PFFT_ENGINE``'s)."""
    if runner == "default":
        return choice.engine_for_plan(None, [device]).name
    if runner in REFERENCE_RUNNERS:
        return runner
    if runner == "auto" and plat == "cpu":
        return "native" if native.available("cpu") else "xla"
    return runner


def _run_one(case: Case, shapes_, device, mesh, tol: float, repeats: int) -> dict:
    """Run one case; its row (status "ok", "WRONG", "skipped: ..." or "error: ...")."""
    shape = shapes_[1] if case.real else shapes_[0]
    row = dict(op=case.op, source=case.source, runner=case.runner,
               shape="x".join(map(str, shape)), points=math.prod(shape), engine="",
               max_err=math.nan, sample_err=math.nan, scale=math.nan, tol=tol, ms=math.nan,
               status="")
    plat = "cpu" if device.platform == "cpu" else "gpu"
    if plat == "cpu" and case.runner == "native" and not native.available(plat):
        # on CPUs a check of this script (the kernels are the test suite's); on GPUs
        # the kernels must be there: the case fails below
        row["status"] = "skipped: native cpu engine unavailable"
        return row
    x = y = None
    try:
        given, want = problem(case.op, case.source, shape)
        fn, sharding, row["engine"] = _transform(case, shape, mesh, device)
        expected = _expected_engine(case.runner, plat, device)
        if row["engine"] != expected:
            raise RuntimeError(f"engine {row['engine']} ran, not {expected} "
                               f"({native.unavailable_reason(plat) or 'no reason given'})")
        vectors = [jax.device_put(f.astype(np.complex64), device) for f in given.factors[0]]
        x = jax.jit(_make, static_argnames="real", out_shardings=sharding)(
            vectors, real=given.real)
        y = fn(x)
        err, top = device_errors(y, want)
        index = _points(want, SAMPLES, seed=len(case.source))
        got = np.asarray(_sample_jit(y, *[jax.device_put(i, device) for i in index]))
        sample = float(np.max(np.abs(got - want.at(index)))) / top
        row.update(max_err=err / top, sample_err=sample, scale=top)
        ok = max(err / top, sample) <= tol and y.shape == want.shape
        row["status"] = "ok" if ok else "WRONG"
        del y
        y = None
        if repeats:                    # the checked call was the warm-up
            row["ms"] = 1e3 * median_time(fn, x, repeats=repeats, warmup=0)
    except Exception as exc:                      # noqa: BLE001 (reported, run goes on)
        traceback.print_exc(file=sys.stderr)
        row["status"] = "error: " + f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
    finally:
        del x, y
        gc.collect()
    return row


def run(cases_: list[Case], device, points: int = 2 ** 31, tol: float = TOL,
        repeats: int = 0, progress=print) -> list[dict]:
    """Run every case on ``device`` with blocks of ``points`` points; one row each,
    with the median time of ``repeats`` more calls (none: no time). Plans and compiled
    programs are dropped after each op's cases."""
    shapes_ = shapes(points)
    mesh = pfft.make_mesh((1, 1), [device])
    rows = []
    with jax.default_device(device):
        for i, case in enumerate(cases_):
            rows.append(_run_one(case, shapes_, device, mesh, tol, repeats))
            progress(_line(rows[-1]))
            if i + 1 == len(cases_) or cases_[i + 1].op != case.op:
                pfft.clear_plan_cache()
                jax.clear_caches()
    return rows


def _line(r: dict) -> str:
    return (f"{r['op']} of {r['source']} ({r['shape']}), {r['runner']}: {r['status']}"
            + (f", max error {r['max_err']:.2e}, sample {r['sample_err']:.2e} of "
               f"{r['scale']:.3g}" if not math.isnan(r["max_err"]) else ""))


def failures(rows: list[dict]) -> list[str]:
    """pfft's rows that are wrong or failed (skipped ones and the reference runners'
    are not counted)."""
    return [_line(r) for r in rows if r["runner"] not in REFERENCE_RUNNERS
            and (r["status"] == "WRONG" or r["status"].startswith("error"))]


COLUMNS = [("op", "transform", "{}"), ("source", "input", "{}"), ("runner", "runner", "{}"),
           ("engine", "engine", "{}"), ("shape", "block", "{}"),
           ("max_err", "largest error / largest value", "{:.2e}"),
           ("sample_err", "at 64 points, float64", "{:.2e}"), ("ms", "time (ms)", "{:.3g}"),
           ("status", "status", "{}")]


#: the GPU run's data in docs/data and the table it gives (``python -m benchmarks report``)
DOCS = {"huge_blocks_gpu.csv": ("gpu_huge_blocks.md",)}


def report(data: str, figures: str) -> list[str]:
    """``data/gpu_huge_blocks.md``: the table of a GPU run's ``huge_blocks_gpu.csv``
    (where ``data`` holds one) and its caption."""
    path = os.path.join(data, "huge_blocks_gpu.csv")
    if not os.path.isfile(path):
        return []
    rows = read_table_rows(path, text=("op", "source", "runner", "engine", "shape", "status"))
    rows = [{k: math.nan if v is None else v for k, v in r.items()} for r in rows]
    return [write_doc(os.path.join(data, "gpu_huge_blocks.md"), read_info(path),
                      markdown_table(rows, COLUMNS))]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="gpu")
    ap.add_argument("--points", type=int, default=2 ** 31,
                    help="points of each block, a power of two (default 2^31)")
    ap.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS))
    ap.add_argument("--runners", nargs="+", choices=RUNNERS, default=list(RUNNERS))
    ap.add_argument("--tol", type=float, default=TOL,
                    help="largest error allowed, over the largest exact value")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timed calls after the checked one, their median reported "
                         "(0: no time)")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    device = first_device(args.platform)
    info = run_info("benchmarks.huge_blocks", argv, where=str(device))
    started = time.monotonic()
    rows = run(cases(args.ops, args.runners), device, args.points, args.tol, args.repeats,
               progress=lambda s: print(s, flush=True))
    complex_shape, real_shape = shapes(args.points)
    header = (f"Blocks of {args.points} points on one {device.device_kind} "
              f"(complex64 {complex_shape}, float32 {real_shape}), every point against its "
              f"exact value, {info['date']}, jax {info['jax']} "
              f"({time.monotonic() - started:.0f} s): `{info['command']}`")
    text = header + "\n\n" + markdown_table(rows, COLUMNS)
    print("\n" + text)
    write_results(rows, text, args.out, f"huge_blocks_{args.platform}", info)
    failed = failures(rows)
    if failed:
        sys.exit(f"FAILED ({len(failed)} of {len(rows)}): " + "; ".join(failed))


if __name__ == "__main__":
    main()

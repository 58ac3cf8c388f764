"""Exact values of transforms of point sources, for checking large outputs on the device.

A block holding a few point sources (deltas) is a sum of separable terms: each term the
outer product of one vector per axis. Every stage of a slab or pencil chain maps such a
sum to another: a local FFT transforms each term's vector along its axes, a real
transform does too (its complex-to-real inverse keeps the real part: each term and its
conjugate, halved), and an exchange of :class:`benchmarks.device_program.CopyTransport`
cuts the scattered axis's vector into chunks (a matrix, written as a short sum of
separable terms by its singular value decomposition) and places each chunk's part of
the gathered axis's vector in the chunk's slot. So what one device of a plan computes
from such a block (:func:`benchmarks.device_program.block_math`) is known at every point
from vectors of a few thousand numbers, in float64 (:func:`through_chain`), and the
device compares its whole output with it in one pass (:func:`device_errors`), without
a copy of the block on the host.

- :class:`Separable`: ``(Re) sum_t outer(f_t0, f_t1, ...)``, its values at points and on
  the device;
- :func:`point_sources`: the input, a few deltas at pseudo-random places (where the
  chain ends in a complex-to-real transform, two of them on its zero and last bins with
  complex amplitudes: the bins whose imaginary parts numpy drops);
- :func:`through_chain`: :func:`~benchmarks.device_program.block_math` of it;
- :func:`device_errors`: the largest error of a device's output against it, and its
  largest value.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pfft.chain_search import Chain
from pfft.stages import Exchange, LocalFFT, RealFFT

__all__ = ["Separable", "point_sources", "halved_axis", "make_points", "through_chain",
           "hermitian_operator", "device_errors", "RANK_TOL"]

#: singular values of an exchange's chunk matrix below this share of its largest are
#: dropped (a sum of separable terms stays short): each drops at most that share of a
#: term, far below single precision
RANK_TOL = 1e-13


@dataclass
class Separable:
    """``sum_t outer(factors[t][0], factors[t][1], ...)``, of its real part where
    ``real``; each factor a 1-D complex128 vector, one per axis (the amplitudes folded
    into the first)."""

    factors: list[list[np.ndarray]]
    real: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(f) for f in self.factors[0])

    @property
    def rank(self) -> int:
        return len(self.factors)

    def stacked(self) -> list[np.ndarray]:
        """Per axis, the terms' vectors as a ``(rank, length)`` matrix."""
        return [np.stack([t[a] for t in self.factors]) for a in range(len(self.shape))]

    def at(self, index) -> np.ndarray:
        """The values at the points ``index`` (one integer array per axis, broadcast
        together), in float64."""
        index = [np.asarray(i) for i in index]
        out = np.zeros(np.broadcast_shapes(*(i.shape for i in index)), np.complex128)
        for term in self.factors:
            value = np.ones_like(out)
            for f, i in zip(term, index):
                value = value * f[i]
            out += value
        return out.real if self.real else out

    def dense(self) -> np.ndarray:
        """Every value (small blocks: the tests' check of this module)."""
        grids = np.meshgrid(*[np.arange(n) for n in self.shape], indexing="ij")
        return self.at(grids)


def point_sources(shape, real_in: bool, halved_axis: int | None = None,
                  count: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, Separable]:
    """``count`` deltas in a block of ``shape``: their places (``(count, ndim)``), their
    amplitudes (real where ``real_in``) and the block as a :class:`Separable`.

    ``halved_axis``: the axis a complex-to-real transform ends on; the first two deltas
    then lie on its first and last points (the zero and, n even, Nyquist bins), with
    complex amplitudes whose imaginary parts numpy's inverse drops.
    """
    rng = np.random.default_rng(seed)
    places = np.stack([rng.integers(0, n, count) for n in shape], axis=1)
    if halved_axis is not None:
        places[0, halved_axis], places[1, halved_axis] = 0, shape[halved_axis] - 1
    amps = rng.uniform(0.5, 1.5, count) * rng.choice([-1.0, 1.0], count)
    if not real_in:
        amps = amps * np.exp(2j * np.pi * rng.uniform(0, 1, count))
    terms = []                     # two deltas in one place add up, as on the device
    for p, a in zip(places, amps):
        vectors = [np.zeros(n, np.complex128) for n in shape]
        for v, i in zip(vectors, p):
            v[i] = 1.0
        vectors[0] = vectors[0] * a
        terms.append(vectors)
    return places, amps, Separable(terms)


def halved_axis(chain: Chain, inverse: bool) -> int | None:
    """The axis ``chain`` run backwards (``inverse``) ends on with a complex-to-real
    transform, or ``None``."""
    ends = [st.axis for st in chain.stages if isinstance(st, RealFFT)
            and not st.to_complex and inverse]
    return ends[-1] if ends else None


def make_points(shape, dtype):
    """A function making a block of ``shape`` and ``dtype`` on the device from the
    places (``(count, ndim)`` integers) and amplitudes :func:`point_sources` gives:
    zeros, each amplitude added at its place."""
    def make(places, amps):
        return jnp.zeros(shape, dtype).at[tuple(places.T)].add(amps.astype(dtype))
    return make


def hermitian_operator(f: np.ndarray, n: int) -> np.ndarray:
    """``L f``, whose real part is numpy's ``irfft(f, n)`` for any complex ``f`` (not
    only Hermitian half spectra): ``(1/n) sum_k w_k f_k exp(2 pi i k x / n)`` over the
    ``n//2 + 1`` bins, ``w_k`` 1 at the zero bin and (n even) the Nyquist bin, else 2:
    the real part drops the imaginary parts of those two, as numpy does."""
    half = n // 2 + 1
    g = np.zeros(n, np.complex128)
    m = min(half, len(f))
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0 and m == half:
        w[-1] = 1.0
    g[:m] = w * f[:m]
    return np.fft.ifft(g)


def _exchange(terms, st: Exchange, keep: int) -> list:
    """The stand-in exchange (:func:`~benchmarks.device_program.block_math`'s): the
    scattered axis cut into ``p`` chunks, stacked in reverse order along the gathered
    axis, which is cropped to ``keep``."""
    p, s, g = st.size, st.scatter, st.gather
    out = []
    for t in terms:
        chunk = -(-len(t[s]) // p)
        m = np.zeros(chunk * p, np.complex128)
        m[:len(t[s])] = t[s]
        u, sv, vh = np.linalg.svd(m.reshape(p, chunk), full_matrices=False)
        if not sv.size or sv[0] == 0:
            continue
        lg = len(t[g])
        for k in np.flatnonzero(sv > RANK_TOL * sv[0]):
            gathered = np.zeros(p * lg, np.complex128)
            for c in range(p):           # chunk c lands in slot p - 1 - c
                slot = p - 1 - c
                gathered[slot * lg:(slot + 1) * lg] = sv[k] * u[c, k] * t[g]
            new = list(t)
            new[g], new[s] = gathered[:keep], vh[k]
            out.append(new)
    return out


def through_chain(x: Separable, chain: Chain, inverse: bool = False) -> Separable:
    """:func:`benchmarks.device_program.block_math` of ``x``, term by term in float64.

    Raises
    ------
    ValueError
        For a stage a slab or pencil chain does not have.
    """
    terms = [list(t) for t in x.factors]
    real = x.real
    shape = list(chain.in_layout.shape)
    one_d = np.fft.ifft if inverse else np.fft.fft
    for st in chain.stages:
        if isinstance(st, LocalFFT):
            terms = [[one_d(f) if a in st.axes else f for a, f in enumerate(t)]
                     for t in terms]
        elif isinstance(st, RealFFT) and st.to_complex and not inverse:
            # rfftn of a real block: its fftn, the halved axis cut to n//2 + 1 points
            terms = [[np.fft.fft(f)[:st.half] if a == st.axis else
                      np.fft.fft(f) if a in st.axes else f for a, f in enumerate(t)]
                     for t in terms]
            shape[st.axis] = st.half
            real = False
        elif isinstance(st, RealFFT) and not st.to_complex and inverse:
            # numpy's irfftn: ifft along the other axes, then irfft along the halved one,
            # the real part of L f: each term and its conjugate, halved
            terms = [[hermitian_operator(f, st.n) if a == st.axis else
                      np.fft.ifft(f) if a in st.axes else f for a, f in enumerate(t)]
                     for t in terms]
            terms = [[f * (0.5 if a == 0 else 1.0) for a, f in enumerate(t)] for t in terms] \
                + [[np.conj(f) * (0.5 if a == 0 else 1.0) for a, f in enumerate(t)]
                   for t in terms]
            shape[st.axis] = st.n
            real = True
        elif isinstance(st, Exchange):
            terms = _exchange(terms, st, shape[st.gather] // st.gather_keep)
        else:
            raise ValueError(f"through_chain: no {'inverse' if inverse else 'forward'} slab "
                             f"or pencil chain has {st}")
    return Separable(terms, real)


def _rows_per_step(shape) -> int:
    """Rows of axis 0 compared in one step: about 2^24 points, a divisor of the axis."""
    rows = max(1, min(shape[0], 2 ** 24 // max(1, int(np.prod(shape[1:])))))
    while shape[0] % rows:
        rows -= 1
    return rows


def _errors(y, f0, f1, f2, real: bool):
    """max |y - want| and max |want| of a 3-D ``y``, ``want`` the sum of the outer
    products of the rows of ``f0``, ``f1``, ``f2`` (its real part where ``real``), made
    a slab of rows at a time (no block-sized copy): a matrix product over the terms at
    full single precision (no TF32)."""
    rows = _rows_per_step(y.shape)
    steps = y.shape[0] // rows

    def step(args):
        ys, fs = args                                  # (rows, n1, n2), (rank, rows)
        left = jnp.einsum("ri,rj->ijr", fs, f1).reshape(-1, f1.shape[0])
        want = jnp.matmul(left, f2, precision=lax.Precision.HIGHEST).reshape(ys.shape)
        if real:
            want = want.real
        return jnp.max(jnp.abs(ys - want)), jnp.max(jnp.abs(want))

    err, top = lax.map(step, (y.reshape((steps, rows) + y.shape[1:]),
                              f0.reshape(f0.shape[0], steps, rows).transpose(1, 0, 2)))
    return jnp.max(err), jnp.max(top)


_errors_jit = jax.jit(_errors, static_argnames="real")


def device_errors(y: jax.Array, want: Separable) -> tuple[float, float]:
    """The largest ``|y - want|`` over every point of the 3-D device array ``y``, and
    the largest ``|want|``, computed on ``y``'s device in single precision from
    ``want``'s vectors (one more block is never made).

    Raises
    ------
    ValueError
        Where ``y`` is not 3-D or its shape is not ``want``'s.
    """
    if y.ndim != 3 or tuple(y.shape) != want.shape:
        raise ValueError(f"device_errors: an output of shape {tuple(y.shape)} against "
                         f"values of shape {want.shape}")
    device = next(iter(y.devices()))
    f = [jax.device_put(m.astype(np.complex64), device) for m in want.stacked()]
    err, top = _errors_jit(y, *f, real=want.real)
    return float(err), float(top)

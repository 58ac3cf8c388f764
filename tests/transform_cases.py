"""The transforms every engine must compute as numpy and scipy do: one list of cases
that the CPU suite (tests/test_fftn.py, tests/test_rfftn.py, tests/test_r2r.py, each
case on its grid of simulated devices; tests/test_fftn.py all of them on one device
too) and the GPU suite (tests/test_gpu.py, on one GPU) both run through each engine,
"native", "xla" and "auto".

Each case is a call of a public function (``pfft.fftn``, ``pfft.irfft2``, ``pfft.dctn``
...) with its keywords, on a pseudo-random input: complex for the complex and the
inverse real transforms (irfftn, irfft, irfft2, hfft get a random half spectrum, not
Hermitian: numpy drops the imaginary parts of the bins it cannot hold, and so must
pfft), real for the others. The reference is ``numpy.fft`` or ``scipy.fft`` in float64
of the same input. Between them the cases take every function, every norm, float32 and
float64, odd and prime lengths, ``s`` and ``n`` that crop and pad, ``axes`` subsets in
and out of order, and batch axes; on CPUs slab and pencil grids, with lengths the grid
does not divide.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.fft

import pfft
from numerics import rel_err

__all__ = ["Case", "C2C", "REAL", "R2R", "CASES", "TOL", "check"]

#: relative L2 error allowed, by the precision of the input: the largest measured on
#: CPUs over these cases (float32: 2.8e-7, float64: 6.1e-16, both at the prime length
#: 4099, by DUCC and lax.fft alike) times 4 for float32, and 16 for float64, left wider
#: for cuFFT's prime lengths (Bluestein's algorithm: a transform of a padded length)
TOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-14}

# inputs that are real; every other function takes complex input
_REAL_IN = {"rfftn", "rfft", "rfft2", "ihfft", "dctn", "idctn", "dstn", "idstn"}
# outputs that are real
_REAL_OUT = {"irfftn", "irfft", "irfft2", "hfft", "dctn", "idctn", "dstn", "idstn"}
_R2R = {"dctn", "idctn", "dstn", "idstn"}


@dataclass(frozen=True)
class Case:
    """``pfft.<fn>(x, *args, **kw)`` of an input of ``shape`` in ``dtype``'s precision
    against ``numpy.fft.<fn>`` (``scipy.fft`` for the r2r functions) of the same input
    in float64; ``grid``: the CPU suite's device grid."""

    fn: str
    shape: tuple[int, ...]
    dtype: type
    grid: tuple[int, ...]
    kw: dict = field(default_factory=dict, compare=False)
    args: tuple = ()

    @property
    def id(self) -> str:
        kw = ",".join(f"{k}={v}" for k, v in self.kw.items()).replace(" ", "")
        args = "".join(f"type{a}," for a in self.args)
        precision = "f32" if np.dtype(self.dtype) == np.float32 else "f64"
        return f"{self.fn}-{'x'.join(map(str, self.shape))}-{precision}-{args}{kw}"

    @property
    def seed(self) -> int:
        """A seed of the case's own (the same input on every engine and platform)."""
        return sum(map(ord, self.id)) * 7919 % 2**31

    def input(self) -> np.ndarray:
        """The pseudo-random input, real or complex in the case's precision."""
        rng = np.random.default_rng(self.seed)
        x = rng.standard_normal(self.shape)
        if self.fn in _REAL_IN:
            return x.astype(self.dtype)
        x = x + 1j * rng.standard_normal(self.shape)
        return x.astype(np.result_type(self.dtype, np.complex64))

    def out_dtype(self) -> np.dtype:
        """The dtype pfft returns: the input's precision, real or complex."""
        real = np.dtype(self.dtype)
        return real if self.fn in _REAL_OUT else np.result_type(real, np.complex64)

    def reference(self, x: np.ndarray) -> np.ndarray:
        """numpy's (scipy's) result in float64 for input ``x``."""
        wide = x.astype(np.result_type(x.dtype, np.float64))
        lib = scipy.fft if self.fn in _R2R else np.fft
        kw = dict(self.kw)
        if kw.get("s") is not None and kw.get("axes") is None and self.fn.endswith("n"):
            kw["axes"] = tuple(range(x.ndim - len(kw["s"]), x.ndim))   # numpy's default,
        return getattr(lib, self.fn)(wide, *self.args, **kw)            # said explicitly


F32, F64 = np.float32, np.float64

# fftn, ifftn and numpy's 1-D and 2-D complex functions: a slab, a pencil and a pencil
# whose grid divides no length evenly, every norm; odd and prime lengths; axes subsets
# (a leading axis, a middle one, out of order); batch axes; s and n cropping and padding
C2C = [
    Case("fftn", (16, 12, 10), F32, (8,), dict(norm="backward")),
    Case("ifftn", (16, 12, 10), F64, (8,), dict(norm="ortho")),
    Case("fftn", (8, 12, 6), F64, (2, 4), dict(norm="ortho")),
    Case("ifftn", (8, 12, 6), F32, (2, 4), dict(norm="forward")),
    Case("fftn", (6, 10, 7), F32, (2, 2), dict(norm="forward")),
    Case("ifftn", (6, 10, 7), F64, (2, 2), dict(norm="backward")),
    Case("fftn", (9, 7, 11), F64, (1, 4), dict(axes=(0, 2))),
    Case("ifftn", (9, 7, 11), F32, (4,), dict(axes=(-2,), norm="ortho")),
    Case("fftn", (4099, 3, 2), F32, (1,)),
    Case("ifftn", (4099, 3, 2), F64, (2,), dict(axes=(0,), norm="forward")),
    Case("fftn", (3, 4, 5, 6), F64, (2, 2), dict(axes=(1, 2, 3))),
    Case("ifftn", (3, 4, 5, 6), F32, (2,), dict(axes=(3, 1, 2), norm="ortho")),
    Case("fftn", (13, 17, 5), F64, (4,), dict(s=(16, 9, 5), axes=(0, 1, 2), norm="forward")),
    Case("ifftn", (10, 8, 6), F32, (2, 2), dict(s=(7, 12), axes=(0, 2))),
    Case("fft", (8, 6, 10), F64, (2, 2), dict(axis=0)),
    Case("ifft", (8, 6, 10), F32, (2, 2), dict(n=7, axis=1, norm="ortho")),
    Case("fft", (1009,), F32, (1,), dict(norm="forward")),
    Case("ifft", (5, 31), F64, (2,), dict(n=37)),
    Case("fft2", (8, 6, 10), F32, (2, 4), dict(axes=(0, 2), norm="ortho")),
    Case("ifft2", (9, 7, 11), F64, (2, 2), dict(s=(5, 8), axes=(1, 0), norm="forward")),
    Case("fft2", (31, 37), F64, (2,)),
]

# rfftn, irfftn (random half spectra: not Hermitian) and the 1-D and 2-D real functions:
# even and odd halved lengths, a halved leading axis, a halved middle axis of 3 points
# (on GPUs its launches start at offsets no multiple of 16 bytes), s cropping and
# padding (the halved axis too), batch axes, prime lengths, every norm
REAL = [
    Case("rfftn", (16, 12, 10), F32, (8,)),
    Case("irfftn", (16, 12, 6), F64, (8,), dict(s=(16, 12, 10), axes=(0, 1, 2))),
    Case("rfftn", (8, 12, 9), F64, (2, 4), dict(norm="ortho")),
    Case("irfftn", (8, 12, 5), F32, (2, 4), dict(s=(8, 12, 9), axes=(0, 1, 2), norm="ortho")),
    Case("rfftn", (6, 10, 7), F32, (2, 2), dict(axes=(2, 0), norm="forward")),
    Case("irfftn", (4, 10, 7), F64, (2, 2), dict(s=(7, 6), axes=(2, 0), norm="forward")),
    Case("rfftn", (9, 7, 11), F64, (1, 4), dict(axes=(0, 1))),
    Case("irfftn", (9, 4, 11), F32, (4,), dict(axes=(0, 1))),
    Case("rfftn", (5, 8, 12), F32, (2,), dict(s=(6, 8, 10), axes=(0, 1, 2))),
    Case("irfftn", (6, 8, 7), F64, (2, 2), dict(s=(5, 8, 12), axes=(0, 1, 2), norm="ortho")),
    Case("rfftn", (3, 4, 5, 6), F64, (2, 2), dict(axes=(1, 2, 3), norm="forward")),
    Case("irfftn", (3, 4, 5, 4), F32, (2,), dict(axes=(1, 2, 3), s=(4, 5, 6))),
    Case("irfftn", (7, 11, 3), F64, (1, 1), dict(s=(7, 11, 5), axes=(0, 1, 2))),
    Case("irfftn", (2050, 3, 2), F32, (1,), dict(s=(4099,), axes=(0,))),
    Case("rfftn", (6, 3, 3), F32, (2,), dict(axes=(0, 1), norm="ortho")),
    Case("irfftn", (6, 2, 3), F64, (2,), dict(s=(6, 3), axes=(0, 1))),
    Case("rfft", (8, 6, 10), F64, (2, 2), dict(axis=0, norm="forward")),
    Case("irfft", (8, 6, 10), F32, (2, 2), dict(n=9)),
    Case("irfft", (6, 505), F64, (2,), dict(n=1009, norm="ortho")),
    Case("hfft", (8, 6, 10), F64, (2, 2), dict(axis=0)),
    Case("hfft", (5, 9), F32, (1,), dict(n=15, norm="ortho")),
    Case("ihfft", (8, 6, 10), F32, (2, 2), dict(axis=1, norm="ortho")),
    Case("rfft2", (8, 6, 10), F64, (2, 4), dict(axes=(0, 2))),
    Case("irfft2", (8, 6, 10), F32, (2, 2), dict(s=(5, 8), axes=(1, 0), norm="forward")),
    Case("irfft2", (9, 7, 4), F64, (4,), dict(norm="backward")),
]

# dctn, dstn and their inverses: every type and norm, float32 and float64, axes subsets,
# s cropping and padding, batch axes
R2R = [
    Case("dctn", (9, 8, 7), F64, (2, 2), args=(1,)),
    Case("idctn", (9, 8, 7), F32, (4,), dict(norm="ortho"), args=(2,)),
    Case("dctn", (9, 8, 7), F32, (2, 4), dict(norm="forward", axes=(2, 0)), args=(3,)),
    Case("idctn", (2, 6, 5, 4), F64, (2,), dict(axes=(1, 3), norm="backward"), args=(4,)),
    Case("dstn", (9, 8, 7), F64, (2, 2), dict(norm="ortho", axes=(0, 2)), args=(3,)),
    Case("idstn", (9, 8, 7), F32, (1, 4), args=(4,)),
    Case("dstn", (6, 5, 4), F64, (2,), dict(s=(7, 5, 3)), args=(1,)),
    Case("idstn", (11, 6, 5), F32, (2, 2), dict(norm="forward", axes=(1,)), args=(2,)),
]

CASES = C2C + REAL + R2R


def check(case: Case, put) -> float:
    """Run ``case`` on the array ``put(x)`` places (``x``: its numpy input), check
    pfft's shape and dtype against numpy's, and return the relative L2 error; a wrong
    shape or dtype fails the calling test."""
    x = case.input()
    want = case.reference(x)
    with warnings.catch_warnings():    # grids that cannot split some lengths: tested
        warnings.simplefilter("ignore", pfft.ReplicationWarning)    # in test_layouts.py
        got = getattr(pfft, case.fn)(put(x), *case.args, **case.kw)
    assert got.shape == want.shape, (case.id, got.shape, want.shape)
    assert got.dtype == case.out_dtype(), (case.id, got.dtype)
    return rel_err(got, want)

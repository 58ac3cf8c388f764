"""numpy's and scipy's own FFT tests, as installed with them, run on pfft's functions
on one device; ``test_reference_suites_mesh2x2.py`` and ``_mesh2x4.py`` run them on
meshes. :mod:`reference_suites` loads them (how, and what is left out and why).

``TestNumpyPocketfftOneDevice::TestFFT1D::test_fft`` is numpy's ``TestFFT1D::test_fft``
of ``numpy/fft/tests/test_pocketfft.py``, its ``np.fft.fft`` pfft's. The tests below
the suites check the loading itself: that the suites' FFT names reach pfft on their
setup, and that each entry of the table of left-out tests names a test.
"""
from __future__ import annotations

import functools
import importlib
import re

import jax
import numpy as np
import pytest

import pfft
import reference_suites as rs
from reference_suites import leave_out, xp  # noqa: F401  (the suites' fixtures)

globals().update(rs.suite_classes("OneDevice", __name__))

#: each suite's module loaded afresh on a setup (once), for the checks of the loading
_loaded = functools.cache(rs.load)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:2])


@pytest.mark.parametrize("entry", rs.LEFT_OUT, ids=lambda e: f"{e.suite}::{e.test}")
def test_every_left_out_entry_names_a_test(entry):
    """An entry names a test the installed suite has (a renamed test would leave the
    entry standing for nothing), where its package is as new as ``since``."""
    suite = next(s for s in rs.SUITES if s.name == entry.suite)
    installed = importlib.import_module(suite.package).__version__
    if entry.since and _version(installed) < _version(entry.since):
        pytest.skip(f"{suite.package} {installed} predates the test (new in {entry.since})")
    obj = _loaded(suite, rs.SETUPS[0])
    for part in entry.test.split("[")[0].split("::"):
        if part == "*":
            break
        assert hasattr(obj, part), (entry, installed)
        obj = getattr(obj, part)
    assert set(entry.setups) <= set(rs.ALL), entry


def test_left_out_patterns_match_whole_ids_brackets_literally():
    assert rs.left_out_reason("ScipyBasic", "OneDevice",
                              "test_fft_with_order[fft-F-clongdouble]") == rs.LONG_DOUBLE
    assert rs.left_out_reason("ScipyBasic", "OneDevice",
                              "test_fft_with_order[fft-F-complex64]") is None
    assert rs.left_out_reason("NumpyPocketfft", "OneDevice",
                              "TestFFT1D::test_identity_long_short[longdouble]") == rs.LONG_DOUBLE
    assert rs.left_out_reason("NumpyPocketfft", "OneDevice",
                              "TestFFT1D::test_identity_long_short[l]") is None
    # the thousands-of-shapes tests: on the meshes only, and not their longer-named kin
    assert rs.left_out_reason("NumpyPocketfft", "Mesh2x2", "TestFFT1D::test_identity")
    # on one device too where PFFT_TEST_REFERENCE_SHAPES=0 (make test-oldest)
    on_one = rs.left_out_reason("NumpyPocketfft", "OneDevice", "TestFFT1D::test_identity")
    assert (on_one is None) == rs.SHAPES_ON_ONE_DEVICE
    assert rs.left_out_reason("NumpyPocketfft", "Mesh2x2",
                              "TestFFT1D::test_identity_long_short[float32]") is None


#: how each suite's module reaches its FFT namespace
FFT_NAMESPACE = {"NumpyPocketfft": lambda m: m.np.fft, "NumpyHelper": lambda m: m.fft,
                 "ScipyBasic": lambda m: m.fft, "ScipyRealTransforms": lambda m: m.fft}


@pytest.mark.parametrize("setup", rs.SETUPS, ids=lambda s: s.name)
@pytest.mark.parametrize("suite", rs.SUITES, ids=lambda s: s.name)
def test_the_suites_fft_names_call_pfft_on_their_setup(suite, setup, monkeypatch):
    """The loaded module's FFT functions are pfft's (not numpy's or scipy's), an array
    input arrives on the setup's mesh, the result comes back as a writeable numpy
    array; the rest of numpy and scipy is the real thing."""
    module = _loaded(suite, setup)
    namespace = FFT_NAMESPACE[suite.name](module)
    assert isinstance(namespace, rs.FFTAdapter)
    assert set(suite.names) <= set(vars(namespace))
    if suite.name == "NumpyPocketfft":
        assert module.np.float32 is np.float32 and module.np.fft is not np.fft
    if suite.name == "ScipyRealTransforms":
        assert module.dct is namespace.dct and module.fftpack.__name__ == "scipy.fftpack"
    seen = []

    def spy(x, *args, **kwargs):
        seen.append(x)
        return jax.numpy.asarray(x) * 2

    for name in ("fft", "fftshift") + (("dct",) if "dct" in suite.names else ()):
        monkeypatch.setattr(pfft, name, spy)
        x = np.arange(8.0)
        y = getattr(namespace, name)(x)
        assert type(y) is np.ndarray and y.flags.writeable and np.array_equal(y, 2 * x)
        if setup.grid:
            assert isinstance(seen[-1], jax.Array)
            assert seen[-1].sharding.mesh.devices.shape == setup.grid
        else:
            assert seen[-1] is x

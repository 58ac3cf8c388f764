"""numpy's and scipy's own FFT test modules, as installed with them, run on pfft.

A suite (:data:`SUITES`) is one installed test module. :func:`load` executes its
source from the installed file under a new module name, with the names it imports
the FFT functions by bound to an adapter backed by pfft (:class:`FFTAdapter`):

- ``import numpy as np`` gives a namespace whose ``fft`` is the adapter and whose
  every other attribute is numpy's (``np.fft.fft`` is pfft's, ``np.float32`` numpy's);
- ``from numpy import fft``, ``import scipy.fft as fft`` and ``from scipy.fft import
  dct`` give the adapter itself;
- scipy's array-API test helpers ``make_xp_test_case`` and ``make_xp_pytest_param``
  read a capabilities table keyed by scipy's own functions: here they add no marks,
  as for scipy's numpy backend (no scipy.fft function skips or fails numpy there), and
  the marks scipy's conftest defines (``skip_xp_backends`` ...) are no-ops, as they
  are for numpy. Everything else (``numpy.testing``, ``scipy.fftpack``, the
  references the tests compare with) is the real module.

The binding is done by the module's own ``__import__`` (its ``__builtins__``), so the
names are pfft's from the first line on: the ``pytest.mark.parametrize`` lists built
at import hold the adapter's functions. Asserts are rewritten as pytest rewrites a
test module's, for its failure messages. The tests compare with float64 references:
they need x64 on, as tests/conftest.py sets it.

Each adapter function calls pfft's function of the same name, looked up at call time
(a function pfft lacks raises ``NotImplementedError`` naming it), passes every argument as
given, and returns the result as a writeable numpy array of pfft's dtype and shape
(numpy's tests write into results and call ndarray methods on them). On a mesh
(:class:`Setup`), the array input is first put on the mesh with
:func:`pfft.device_put`, so the transform runs distributed.

:func:`suite_classes` gives a test module one class per suite on a setup
(``TestNumpyPocketfftMesh2x2``, holding numpy's ``TestFFT1D`` ...); the module imports
the fixtures the suites need (:func:`xp`, scipy's array-API fixture on numpy, and
:func:`leave_out`). A test of numpy's or scipy's own machinery, which pfft does not
mirror, is left out: skipped with its reason (:data:`LEFT_OUT`). So is one that runs
thousands of shapes, on the meshes only (each shape is a plan of its own: minutes
there; it runs on one device). Every other test is numpy's or scipy's own, unchanged.
"""
from __future__ import annotations

import ast
import builtins
import functools
import importlib
import math
import os
import re
import sys
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NamedTuple

import jax
import numpy as np
import pytest

import pfft

#: the names of the suites' FFT namespaces: numpy.fft's functions, and scipy.fft's
#: transforms besides
NUMPY_FFT = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
             "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift",
             "fftfreq", "rfftfreq")
SCIPY_FFT = NUMPY_FFT + ("hfft2", "ihfft2", "hfftn", "ihfftn", "dct", "idct", "dst", "idst",
                         "dctn", "idctn", "dstn", "idstn")
#: the functions whose first argument is no array (nothing to put on a mesh)
NO_ARRAY = ("fftfreq", "rfftfreq")
#: marks scipy's conftest defines for its array-API backends: no-ops for numpy
SCIPY_MARKS = ("skip_xp_backends", "xfail_xp_backends", "uses_xp_capabilities",
               "array_api_backends")


@dataclass(frozen=True)
class Suite:
    """One installed test module: ``package``'s file at ``path``, and the function
    names its FFT namespace has (``names``)."""

    name: str
    package: str
    path: str
    names: tuple[str, ...]

    def file(self) -> Path:
        return Path(importlib.import_module(self.package).__file__).parent / self.path


SUITES = (
    Suite("NumpyPocketfft", "numpy", "fft/tests/test_pocketfft.py", NUMPY_FFT),
    Suite("NumpyHelper", "numpy", "fft/tests/test_helper.py", NUMPY_FFT),
    Suite("ScipyBasic", "scipy", "fft/tests/test_basic.py", SCIPY_FFT),
    Suite("ScipyRealTransforms", "scipy", "fft/tests/test_real_transforms.py", SCIPY_FFT),
)


@dataclass(frozen=True)
class Setup:
    """Where the transforms run: one device (``grid=()``: inputs passed as the tests
    give them), or a mesh of ``grid`` (the first devices of ``jax.devices()``)."""

    name: str
    grid: tuple[int, ...] = ()

    def mesh(self):
        return _mesh(self.grid) if self.grid else None

    def put(self, x):
        """``x`` on this setup's mesh (:func:`pfft.device_put`), where it is an array
        of numbers with at least one element; as it is otherwise (one device, a 0-d
        or empty array, a non-numeric one: the transform's own checks see it)."""
        if not self.grid:
            return x
        a = x if isinstance(x, (jax.Array, np.ndarray)) else np.asarray(x)
        if a.ndim == 0 or a.size == 0 or a.dtype.kind not in "biufc":
            return x
        with warnings.catch_warnings():
            # a small array leaves mesh axes idle: replicated there, as the warning says
            warnings.simplefilter("ignore", pfft.ReplicationWarning)
            return pfft.device_put(a, self.mesh())


SETUPS = (Setup("OneDevice"), Setup("Mesh2x2", (2, 2)), Setup("Mesh2x4", (2, 4)))


@functools.cache
def _mesh(grid: tuple[int, ...]):
    return pfft.make_mesh(grid, devices=jax.devices()[:math.prod(grid)])


def _as_numpy(y):
    """A result as a writeable numpy array, of pfft's dtype and shape."""
    return np.array(y) if isinstance(y, jax.Array) else y


def adapter_function(name: str, setup: Setup) -> Callable:
    """numpy's or scipy's ``name`` as pfft's function of that name on ``setup``."""
    def call(*args, **kwargs):
        fn = getattr(pfft, name, None)
        if fn is None:
            raise NotImplementedError(f"pfft.{name} does not exist (numpy's/scipy's "
                                      f"fft.{name} has no pfft counterpart)")
        if name not in NO_ARRAY:
            if args:
                args = (setup.put(args[0]),) + args[1:]
            else:
                kwargs = {k: setup.put(v) if k in ("a", "x") else v for k, v in kwargs.items()}
        return _as_numpy(fn(*args, **kwargs))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"pfft.{name} on {setup.name}, its result as a numpy array."
    return call


class FFTAdapter(types.ModuleType):
    """An FFT namespace (numpy.fft's or scipy.fft's names) whose functions are pfft's
    on one setup; any other name is an ``AttributeError``."""

    def __init__(self, suite: Suite, setup: Setup):
        super().__init__(f"{suite.package}.fft")
        for name in suite.names:
            setattr(self, name, adapter_function(name, setup))


class Overlay(types.ModuleType):
    """``base`` (a module, or any object) with some attributes replaced: every other
    attribute is ``base``'s."""

    def __init__(self, base: Any, **replaced):
        super().__init__(getattr(base, "__name__", type(base).__name__))
        self.__dict__.update(replaced)
        self._base = base

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


class _NoMark:
    """A mark that does nothing, however it is called or applied."""

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]                                 # applied: the object itself
        return self                                        # called with arguments


def _pytest_overlay():
    return Overlay(pytest, mark=Overlay(pytest.mark, **{m: _NoMark() for m in SCIPY_MARKS}))


def _array_api_overlay():
    """scipy's ``scipy._lib._array_api`` with its capability-table helpers for numpy's
    backend: no marks (a test case undecorated; a parameter as ``pytest.param``)."""
    real = importlib.import_module("scipy._lib._array_api")

    def make_xp_test_case(*funcs, **kwargs):
        return lambda test: test

    def make_xp_pytest_param(func, *args, **kwargs):
        return pytest.param(func, *args)

    return Overlay(real, make_xp_test_case=make_xp_test_case,
                   make_xp_pytest_param=make_xp_pytest_param)


def _importer(suite: Suite, setup: Setup) -> Callable:
    """The ``__import__`` of a suite's module on ``setup``: numpy's and scipy's FFT
    namespaces bound to the adapter (see the module docstring), the rest as usual."""
    adapter = FFTAdapter(suite, setup)
    bound = {"numpy": Overlay(np, fft=adapter), "pytest": _pytest_overlay()}
    if suite.package == "scipy":
        bound.update({"scipy": Overlay(importlib.import_module("scipy"), fft=adapter),
                      "scipy._lib._array_api": _array_api_overlay()})
    fft_modules = {f"{top}.fft" for top in ("numpy", "scipy") if top in bound}

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            top = name.partition(".")[0]
            if name in fft_modules and fromlist:           # from scipy.fft import dct
                return adapter
            if name in bound and (fromlist or name == top):  # from numpy import fft
                builtins.__import__(name, globals, locals, fromlist, level)
                return bound[name]
            if top in bound and not fromlist:              # import scipy.fft as fft
                builtins.__import__(name, globals, locals, fromlist, level)
                return bound[top]
        return builtins.__import__(name, globals, locals, fromlist, level)

    return __import__


def _compile(path: Path):
    """``path``'s code, its asserts rewritten as pytest rewrites a test module's (plain
    where pytest's rewriter cannot be reached)."""
    source = path.read_bytes()
    tree = ast.parse(source, str(path))
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
        rewrite_asserts(tree, source, str(path))
    except (ImportError, TypeError):                       # pragma: no cover - other pytest
        tree = ast.parse(source, str(path))
    return compile(tree, str(path), "exec", dont_inherit=True)


def load(suite: Suite, setup: Setup) -> types.ModuleType:
    """``suite``'s installed module executed with its FFT names bound to pfft on
    ``setup``, as module ``reference_suites.<suite>.<setup>``."""
    path = suite.file()
    name = f"{__name__}.{suite.name}.{setup.name}"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__package__ = f"{suite.package}.fft.tests"     # its relative imports: the real ones
    module.__builtins__ = {**builtins.__dict__, "__import__": _importer(suite, setup)}
    sys.modules.setdefault(name, module)            # the first load of a name keeps it
    exec(_compile(path), module.__dict__)
    return module


def collected(module: types.ModuleType) -> dict[str, Any]:
    """What pytest would collect from ``module``: its ``Test*`` classes and ``test*``
    functions (as static methods, for a class to hold them), defined in it."""
    out = {}
    for name, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if name.startswith("Test") and isinstance(obj, type):
            out[name] = obj
        elif name.startswith("test") and isinstance(obj, types.FunctionType):
            out[name] = staticmethod(obj)
    if hasattr(module, "pytestmark"):
        out["pytestmark"] = module.pytestmark
    return out


def suite_class(suite: Suite, setup: Setup, module_name: str) -> type:
    """A class ``Test<suite><setup>`` holding ``suite``'s tests on ``setup``, for the
    test module ``module_name`` to expose to pytest."""
    module = load(suite, setup)
    members = collected(module)
    own = members.pop("pytestmark", [])
    # numpy's small test arrays leave mesh axes idle: pfft warns that they replicate
    members["pytestmark"] = [pytest.mark.filterwarnings("ignore::pfft.ReplicationWarning")] \
        + (own if isinstance(own, list) else [own])
    return type(f"Test{suite.name}{setup.name}", (), {
        **members, "_suite": suite, "_setup": setup, "_module": module,
        "__module__": module_name})


def suite_classes(setup_name: str, module_name: str) -> dict[str, type]:
    """Every suite's class on the setup named ``setup_name`` (:func:`suite_class`)."""
    setup = next(s for s in SETUPS if s.name == setup_name)
    classes = (suite_class(suite, setup, module_name) for suite in SUITES)
    return {cls.__name__: cls for cls in classes}


# -- what is left out, and the fixtures the suites need -------------------------------

ALL = tuple(setup.name for setup in SETUPS)
MESHES = tuple(setup.name for setup in SETUPS if setup.grid)


class LeftOut(NamedTuple):
    """Tests of ``suite`` whose id in it (``Class::test[params]``) matches ``test``
    (``*``: any characters; the rest literal, brackets too), left out on ``setups``
    for ``reason``. ``since``: the first version of the suite's package that has the
    test (older ones lack it)."""

    suite: str
    test: str
    reason: str
    setups: tuple[str, ...] = ALL
    since: str | None = None


OUT = "numpy's out=: results written into a given numpy array (pfft returns new JAX arrays)"
THREADS = "numpy's/scipy's thread safety: Python threads calling their pocketfft at once"
FORK = "scipy's pocketfft after os.fork (multiprocessing); JAX does not support fork"
LONG_DOUBLE = "long double (float128, complex256): no JAX dtype"
ORDER = ("memory order (ndarray flags) of the numpy result, which the conversion to numpy "
         "sets, not pfft (a JAX array has no strides)")
SHAPES = "thousands of distinct shapes, each a plan of its own: minutes on a mesh"
IDENTITY_GRID = ("scipy's DCT/DST round trips over every type, norm, size, axis and "
                 "orthogonalize (about 1,300 cases, minutes on a mesh): on one device and on "
                 "the 2x4 mesh they run (and pass)")
OVERWRITE = ("scipy's overwrite_x over every type, dtype, norm and shape (about 1,500 "
             "cases, minutes on a mesh): the machinery of whether the input buffer is "
             "reused; on one device they run (and pass)")

#: numpy's and scipy's machinery that pfft does not mirror, and the long tests' meshes
LEFT_OUT = (
    LeftOut("NumpyPocketfft", "TestFFT1D::test_fft_out_argument[*", OUT),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_fft_inplace_out[*", OUT),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_fft_bad_out", OUT),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_ifft2_out", OUT, since="2.5"),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_irfft2_out", OUT, since="2.5"),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_hfft_out", OUT, since="2.5"),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_fftn_out_argument[*", OUT),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_fftn_out_and_s_interaction[*", OUT),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_irfftn_out_and_s_interaction[*", OUT),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_identity_long_short[longdouble]", LONG_DOUBLE),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_identity_long_short_reversed[longdouble]",
            LONG_DOUBLE),
    LeftOut("NumpyPocketfft", "test_fft_output_order[*", ORDER),
    LeftOut("NumpyPocketfft", "TestFFTThreadSafe::*", THREADS),
    LeftOut("NumpyPocketfft", "TestFFT1D::test_identity", SHAPES, MESHES),
    LeftOut("NumpyHelper", "TestFFTShift::test_equal_to_original", SHAPES, MESHES),
    LeftOut("ScipyBasic", "TestFFT::test_dtypes_nonstandard[longdouble]", LONG_DOUBLE),
    LeftOut("ScipyBasic", "test_fft_with_order[*-longdouble]", LONG_DOUBLE),
    LeftOut("ScipyBasic", "test_fft_with_order[*-clongdouble]", LONG_DOUBLE),
    LeftOut("ScipyBasic", "TestFFTThreadSafe::*", THREADS),
    LeftOut("ScipyBasic", "test_multiprocess[*", FORK),
    LeftOut("ScipyBasic", "TestFFT::test_identity_extensive[*", SHAPES, MESHES),
    LeftOut("ScipyRealTransforms", "test_identity_1d_overwrite[*", OVERWRITE, MESHES),
    LeftOut("ScipyRealTransforms", "test_identity_nd_overwrite[*", OVERWRITE, MESHES),
    LeftOut("ScipyRealTransforms", "test_identity_1d[*", IDENTITY_GRID, ("Mesh2x2",)),
    LeftOut("ScipyRealTransforms", "test_identity_nd[*", IDENTITY_GRID, ("Mesh2x2",)),
)


def _matches(pattern: str, test_id: str) -> bool:
    """Whether ``test_id`` matches ``pattern``, whose ``*`` stands for any characters."""
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), test_id) is not None


#: ``PFFT_TEST_REFERENCE_SHAPES=0`` (``make test-oldest``): the thousands-of-shapes tests
#: are left out on one device too (the newest jax end runs them), so that CI's two ends
#: fit its time
SHAPES_ON_ONE_DEVICE = os.environ.get("PFFT_TEST_REFERENCE_SHAPES", "1") != "0"


def left_out_reason(suite: str, setup: str, test_id: str) -> str | None:
    """Why the test ``test_id`` of ``suite`` is left out on ``setup`` (None: it runs)."""
    for entry in LEFT_OUT:
        setups = ALL if entry.reason == SHAPES and not SHAPES_ON_ONE_DEVICE else entry.setups
        if entry.suite == suite and setup in setups and _matches(entry.test, test_id):
            return entry.reason if setup in entry.setups else (
                f"{entry.reason}; on one device it runs on the newest jax end (make test)")
    return None


def _suite_and_id(node) -> tuple[type | None, str]:
    """The suite class a test node is in, and the test's id inside it."""
    chain = node.listchain()
    for i, parent in enumerate(chain):
        if isinstance(parent, pytest.Class) and hasattr(parent.obj, "_suite"):
            return parent.obj, "::".join(n.name for n in chain[i + 1:])
    return None, node.name


@pytest.fixture(autouse=True)
def leave_out(request):
    """Skip a suite's test that :data:`LEFT_OUT` names, with its reason."""
    cls, test_id = _suite_and_id(request.node)
    if cls is not None:
        reason = left_out_reason(cls._suite.name, cls._setup.name, test_id)
        if reason:
            pytest.skip(f"left out: {reason}")


@pytest.fixture(params=[pytest.param("numpy", id="numpy")])
def xp():
    """scipy's array-API fixture on its numpy backend: the namespace its conftest gives
    (the FFT functions the tests call are pfft's all the same)."""
    from scipy._lib._array_api import array_namespace

    return array_namespace(np.empty(0))

"""Test set-up: 8 simulated CPU devices (the default backend, a GPU beside them where
there is one) and float64, before JAX starts its backend."""
import itertools
import os

os.environ.setdefault("XLA_FLAGS", "")
if "xla_force_host_platform_device_count" not in os.environ["XLA_FLAGS"]:
    os.environ["XLA_FLAGS"] += " --xla_force_host_platform_device_count=8"

# pytest-xdist runs the suite in several processes (`make test`: TEST_WORKERS=2):
# on a GPU machine each would otherwise take 75 % of the GPU's memory at start
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# the CPU is JAX's default backend (the simulated devices), in this process and the
# ones the tests start; a GPU stays reachable as jax.devices("gpu")
from platforms import plugin_names, suite_platforms  # noqa: E402

os.environ["JAX_PLATFORMS"] = suite_platforms(os.environ, plugin_names())

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_platforms", os.environ["JAX_PLATFORMS"])   # if jax was imported first
jax.config.update("jax_enable_x64", os.environ.get("PFFT_TEST_X64", "1") != "0")
# JAX's dtype-promotion mode for the whole run (PFFT_TEST_PROMOTION=strict: as JAX's own
# test harness and strict JAX codebases run; pfft must give the same results)
jax.config.update("jax_numpy_dtype_promotion", os.environ.get("PFFT_TEST_PROMOTION", "standard"))

from hypothesis import settings, strategies as st  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from numerics import rel_err  # noqa: E402,F401  (re-exported to the tests)

settings.register_profile("pfft", deadline=None, print_blob=True, derandomize=True)
settings.load_profile("pfft")

# every 1-D and 2-D grid of 1, 2, 4 and 8 devices (slab and pencil)
GRIDS = [(1,), (2,), (4,), (8,), (1, 1), (1, 2), (2, 1), (1, 4), (4, 1), (2, 2),
         (1, 8), (8, 1), (2, 4), (4, 2)]

TOL = {np.complex64: 1e-6, np.complex128: 1e-12}

# Where a DeprecationWarning is raised for: JAX's code, or the code calling JAX (JAX
# points its warnings at the caller): pfft, its benchmarks, these tests.
DEPRECATION_SOURCES = r"(jax|jaxlib|pfft|benchmarks|conftest|test_\w+)(\.|$)"


def pytest_configure(config):
    """``PFFT_TEST_STRICT_DEPRECATIONS=1`` (``make test``): a DeprecationWarning from
    JAX fails the test that raised it, so that the next JAX release does not break
    pfft silently."""
    if os.environ.get("PFFT_TEST_STRICT_DEPRECATIONS", "0") not in ("", "0"):
        config.addinivalue_line("filterwarnings",
                                f"error::DeprecationWarning:{DEPRECATION_SOURCES}")


def pieces_moves(plan, reverse: bool = False) -> list:
    """How each stage of ``plan``'s chain (``reverse``: its backward chain) moves in
    the plan's program, in the chain's order: the :class:`pfft.pieces.Send` an
    exchange of pieces moves by, None for any other stage (the program's exchange
    steps are the chain's exchanges, in order)."""
    from pfft.autodiff import BACKWARD, FORWARD
    from pfft.program import AllToAll, PiecesMove
    from pfft.stages import Exchange

    chain = plan.chain.reversed() if reverse else plan.chain
    steps = [s for s in plan.programs[BACKWARD if reverse else FORWARD].steps
             if isinstance(s, (AllToAll, PiecesMove))]
    exchanges = [st for st in chain.stages if isinstance(st, Exchange)]
    assert len(steps) == len(exchanges), (steps, exchanges)
    sends = iter(s.move.send if isinstance(s, PiecesMove) else None for s in steps)
    return [next(sends) if isinstance(st, Exchange) else None for st in chain.stages]


def planned_collectives(plan, reverse: bool = False) -> dict[str, int]:
    """The collectives ``plan``'s program (``reverse``: its backward one) calls for:
    an exchange that moves pieces (:func:`pieces_moves`) is one swap (an all-to-all)
    or ``p - 1`` collective permutes; any other exchange is one all-to-all; a gather
    is one all-gather."""
    from pfft.hlo import COLLECTIVES
    from pfft.stages import Exchange, Gather

    chain = plan.chain.reversed() if reverse else plan.chain
    want = dict.fromkeys(COLLECTIVES, 0)
    for stage, send in zip(chain.stages, pieces_moves(plan, reverse)):
        if send and send.sign != 0:
            want["collective-permute"] += stage.size - 1
        elif isinstance(stage, Exchange):
            want["all-to-all"] += 1
        elif isinstance(stage, Gather):
            want["all-gather"] += 1
    return want


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


# the local FFT engines a plan can be asked for on CPUs ("auto" is "native" where the
# kernels are built, else "xla"; "cufft", "native" on GPUs, is "auto" here)
ENGINES = ["native", "xla", "auto"]


def engine_plan(shape, dtype, mesh, engine, **kw):
    """``pfft.plan(shape, dtype, mesh, engine=engine, **kw)``, checked to run that
    engine and not another in its place. "native" skips only where the CPU kernels
    cannot be built (:mod:`kernel_build`); elsewhere a missing library fails."""
    import pfft
    from kernel_build import cpu_kernels_expected, missing_kernels_reason
    from pfft.engines import native

    built = native.available("cpu")
    if engine == "native" and not built and not cpu_kernels_expected():
        pytest.skip(missing_kernels_reason())
    plan = pfft.plan(shape, dtype, mesh, engine=engine, **kw)
    want = {"native": "native", "xla": "xla", "auto": "native" if built else "xla"}[engine]
    assert plan.engine.name == want, (engine, plan.engine)
    return plan


def use_engine(engine, monkeypatch, devices) -> None:
    """Make ``engine`` the one that plans naming none run on ``devices``
    (``$PFFT_ENGINE``, as the public functions' plans read it), checked to be that
    engine and not a fallback: on CPUs "auto" is "native" where the kernels are
    built, else "xla"; "native" skips only where the CPU kernels cannot be built.
    Plans cached before are dropped (monkeypatch restores the variable after)."""
    import pfft
    from kernel_build import cpu_kernels_expected, missing_kernels_reason
    from pfft.engines import choice, native

    cpu = devices[0].platform == "cpu"
    built = native.available("cpu" if cpu else "gpu")
    if cpu and engine == "native" and not built and not cpu_kernels_expected():
        pytest.skip(missing_kernels_reason())
    monkeypatch.setenv("PFFT_ENGINE", engine)
    pfft.clear_plan_cache()
    want = {"native": "native", "xla": "xla",
            "auto": ("native" if built else "xla") if cpu else "auto"}[engine]
    got = choice.engine_for_plan(None, devices)
    assert got.name == want, (engine, got)


@pytest.fixture(scope="session")
def devices():
    assert len(jax.devices()) >= 8, "tests need 8 simulated CPU devices"
    return jax.devices()


NORMS = ["backward", "ortho", "forward"]


@st.composite
def transform_problems(draw, dtypes, more_axes=()):
    """A shape (batch axes in front), the axes and ``s`` to transform, a grid, dtype,
    norm and seed. ``more_axes(nd)`` adds choices of ``axes`` to the common ones."""
    core = draw(st.lists(st.integers(1, 40), min_size=3, max_size=3))
    batch = draw(st.lists(st.integers(1, 3), min_size=0, max_size=1))
    shape = tuple(batch + core)
    nd = len(shape)
    choices = [None, (-3, -2, -1), (nd - 1, nd - 3, nd - 2), (-2, -1), (-3,)]
    axes = draw(st.sampled_from(choices + [tuple(a) for a in more_axes(nd)]
                                if more_axes else choices))
    n_axes = nd if axes is None else len(axes)
    s = None
    if draw(st.booleans()) and draw(st.booleans()):
        s = tuple(draw(st.integers(1, 24)) for _ in range(n_axes))
    return dict(shape=shape, axes=axes, s=s, grid=draw(st.sampled_from(GRIDS)),
                dtype=draw(st.sampled_from(list(dtypes))), norm=draw(st.sampled_from(NORMS)),
                seed=draw(st.integers(0, 2**16)))


def numpy_axes(axes, s, ndim) -> tuple[int, ...]:
    """The axes numpy transforms for ``axes``/``s``: all of them, or the last ``len(s)``."""
    if axes is not None:
        return tuple(a % ndim for a in axes)
    return tuple(range(ndim - (ndim if s is None else len(s)), ndim))


def all_specs(ndim, names):
    """Every PartitionSpec of an ``ndim``-d array over mesh axes ``names``: each mesh
    axis on at most one array axis, several on one axis in every order."""
    for place in itertools.product(range(ndim + 1), repeat=len(names)):
        entries = [[m for m, a in zip(names, place) if a == axis] for axis in range(ndim)]
        multi = [i for i, e in enumerate(entries) if len(e) > 1]
        for orders in itertools.product(*(itertools.permutations(entries[i]) for i in multi)):
            e = list(entries)
            for i, order in zip(multi, orders):
                e[i] = list(order)
            yield P(*(None if not x else x[0] if len(x) == 1 else tuple(x) for x in e))

"""The default layout and the round trips on meshes of 16 to 256 simulated devices.

For every mesh (2-D grids of several aspect ratios and 1-D ones) and shapes that some
mesh axes cannot split (odd, prime, small, a batch axis): the default layout
(:func:`pfft.device_put`) uses every mesh axis wherever an even layout does, and the
most devices any even layout reaches where none does, as a brute-force enumeration
here finds (each mesh axis on any array axis or idle, several on one axis together);
``pfft.device_put`` warns exactly where no even layout uses every mesh axis, and
what it says of the idle mesh axes is true; and the round trips (``fftn``/``ifftn``,
``rfftn``/``irfftn`` with ``s``, ``dctn``/``idctn`` and the 1-D forms) end in the
input's sharding with numpy's (scipy's) float64 values.

Each device count runs in a subprocess of its own (JAX fixes the count as it starts),
all its meshes in one process, on small arrays; the 8-device cases run here, on the
suite's own devices.
"""
import itertools
import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import pfft
from conftest import rel_err
from pfft.layout import default_layout
from pfft.mesh_plan import ReplicationWarning

ROOT = Path(__file__).resolve().parents[1]

# float64 errors here are below 1e-15; an error this size is a wrong value, not rounding
TOL = 1e-12

# (shape, axes) whose default layout each mesh is checked for: odd, prime and small
# lengths, lengths only a product of mesh axes divides, a batch axis, 1-D transforms
LAYOUT_CASES = [((17, 33, 40), None), ((5, 7, 4), None), ((16, 20, 24), None),
                ((3, 16, 20, 24), (1, 2, 3)), ((13, 11, 7), None), ((9, 64, 5), None),
                ((1, 1, 64), None), ((2, 3, 256), None), ((12, 18), None),
                ((6, 128, 10), (1,)), ((16, 20, 24), (2,)), ((17, 33, 40), (0,)),
                ((256,), None), ((2, 4, 8, 16), None), ((32, 8, 3), (0, 1))]

# the round trips each mesh runs: (shape, axes, transforms); "fft", "rfft", "dct" are
# the 1-D forms along the one axis of axes. ODD: only 40 is even, so one mesh axis is
# idle throughout and rfftn all-gathers its spectrum (irfftn slices it back)
ODD = ((17, 33, 40), None, ("rfftn",))
FULL = ("fftn", "rfftn", "dctn")
ONE_D = ("fft", "rfft", "dct")
TRIPS = {
    16: {(4, 4): [ODD, ((16, 20, 24), None, FULL), ((17, 33, 40), (2,), ONE_D)],
         (2, 8): [ODD, ((3, 16, 20, 24), (1, 2, 3), FULL), ((6, 128, 10), (1,), ONE_D)],
         (8, 2): [((5, 7, 4), None, FULL), ((16, 20, 24), (2,), ONE_D)],
         (16,): [((1, 1, 64), None, FULL), ((17, 33, 40), (2,), ONE_D),
                 ((256,), (0,), ONE_D)]},
    32: {(4, 8): [ODD, ((9, 64, 5), None, FULL), ((32, 8, 3), (0, 1), FULL)],
         (8, 4): [((5, 7, 4), None, FULL), ((16, 20, 24), None, FULL)],
         (2, 16): [((12, 18), None, FULL), ((6, 128, 10), (1,), ONE_D)],
         (32,): [((2, 4, 8, 16), None, FULL)]},
    64: {(8, 8): [ODD, ((12, 18), None, FULL)],
         (4, 16): [ODD, ((16, 20, 24), None, FULL), ((3, 16, 20, 24), (1, 2, 3), FULL),
                   ((16, 20, 24), (2,), ONE_D)],
         (16, 4): [((13, 11, 7), None, FULL), ((16, 20, 24), (2,), ONE_D)],
         (64,): [((2, 3, 256), None, FULL)]},
    128: {(8, 16): [ODD, ((3, 16, 20, 24), (1, 2, 3), FULL)],
          (16, 8): [((13, 11, 7), None, FULL), ((9, 64, 5), None, FULL)],
          (2, 64): [ODD, ((6, 128, 10), (1,), ONE_D)],
          (128,): [((2, 3, 256), None, FULL)]},
    256: {(2, 128): [ODD, ((2, 3, 256), None, FULL)],
          (16, 16): [((16, 20, 24), None, FULL)],
          (256,): [((256,), (0,), ONE_D)]},
}

CHILD = r"""
import json, sys, warnings
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import scipy.fft as sf
import pfft
from pfft.mesh_plan import ReplicationWarning

config = json.loads(sys.argv[1])
warnings.simplefilter("ignore")          # the engine's notes; ReplicationWarning recorded


def spec_of(x):
    return [[] if e is None else [e] if isinstance(e, str) else list(e)
            for e in tuple(x.sharding.spec) + (None,) * (x.ndim - len(x.sharding.spec))]


def put(u, mesh, axes):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", ReplicationWarning)
        x = pfft.device_put(u, mesh, axes=axes)
    return x, [str(w.message) for w in record if issubclass(w.category, ReplicationWarning)]


def trip(name, x, u, axes):
    full = axes or tuple(range(u.ndim))
    s = [u.shape[a] for a in full]
    if name == "fftn":
        k = pfft.fftn(x, axes=axes)
        return k, np.fft.fftn(u, axes=full), pfft.ifftn(k, axes=axes)
    if name == "rfftn":
        k = pfft.rfftn(x, axes=axes)
        return k, np.fft.rfftn(u, axes=full), pfft.irfftn(k, s=s, axes=full)
    if name == "dctn":
        k = pfft.dctn(x, axes=axes)
        return k, sf.dctn(u, axes=full), pfft.idctn(k, axes=axes)
    (axis,) = axes
    if name == "fft":
        k = pfft.fft(x, axis=axis)
        return k, np.fft.fft(u, axis=axis), pfft.ifft(k, axis=axis)
    if name == "rfft":
        k = pfft.rfft(x, axis=axis)
        return k, np.fft.rfft(u, axis=axis), pfft.irfft(k, n=u.shape[axis], axis=axis)
    k = pfft.dct(x, axis=axis)
    return k, sf.dct(u, axis=axis), pfft.idct(k, axis=axis)


def rel(got, want):
    return float(np.linalg.norm(np.asarray(got) - want) / np.linalg.norm(want))


out = {"layouts": [], "trips": []}
rng = np.random.default_rng(7)
for grid, cases in config["grids"]:
    mesh = pfft.make_mesh(tuple(grid))
    sizes = [[m, int(n)] for m, n in mesh.shape.items()]
    for shape, axes in config["layouts"]:
        axes = None if axes is None else tuple(axes)
        x, said = put(np.zeros(shape), mesh, axes)
        out["layouts"].append(dict(grid=grid, mesh=sizes, shape=shape, axes=axes,
                                   spec=spec_of(x), warnings=said))
    for shape, axes, names in cases:
        axes = None if axes is None else tuple(axes)
        u = rng.standard_normal(shape)
        x, _ = put(u, mesh, axes)
        for name in names:
            k, want, back = trip(name, x, u, axes)
            out["trips"].append(dict(
                grid=grid, shape=shape, axes=axes, name=name, spec=spec_of(x),
                back_spec=spec_of(back), same=back.sharding.is_equivalent_to(x.sharding, x.ndim),
                forward=rel(k, want), back=rel(back, u)))
print(json.dumps(out))
"""


def _even_assignments(shape, mesh):
    """Every even layout, by brute force: per mesh axis an array axis or ``None``
    (idle), several mesh axes on one array axis together, each split axis's length a
    multiple of its devices. Yields each choice (per mesh axis, in ``mesh``'s order)
    with the mesh axes it leaves idle."""
    names = [m for m, _ in mesh]
    sizes = dict(mesh)
    for choice in itertools.product([None, *range(len(shape))], repeat=len(names)):
        parts = [1] * len(shape)
        for m, a in zip(names, choice):
            if a is not None:
                parts[a] *= sizes[m]
        if all(n % p == 0 for n, p in zip(shape, parts)):
            yield choice, [m for m, a in zip(names, choice) if a is None]


def _check_layout(case) -> list[str]:
    """What is wrong with one default layout and its warning (nothing: ``[]``)."""
    shape, mesh, spec, said = tuple(case["shape"]), case["mesh"], case["spec"], case["warnings"]
    sizes = dict(mesh)
    where = f"{case['grid']} {shape} axes={case['axes']}: {spec}"
    used = [m for entry in spec for m in entry]
    idle = [m for m, _ in mesh if m not in used]
    wrong = []
    if any(n % math.prod(sizes[m] for m in entry) for n, entry in zip(shape, spec)):
        wrong.append(f"{where} is uneven")
    layouts = list(_even_assignments(shape, mesh))
    whole = any(not left for _, left in layouts)
    most = max(math.prod(sizes[m] for m in sizes if m not in left) for _, left in layouts)
    if whole and idle:
        wrong.append(f"{where} leaves {idle} idle, but an even layout uses every mesh axis")
    if math.prod(sizes[m] for m in used) != most:
        wrong.append(f"{where} spreads over {math.prod(sizes[m] for m in used)} devices, "
                     f"an even layout over {most}")
    if len(said) != (0 if whole else 1):
        wrong.append(f"{where}: {len(said)} ReplicationWarning(s) from device_put: {said}")
    for text in said:
        one = len(idle) == 1
        head = (f"pfft.device_put: mesh {'axis' if one else 'axes'} "
                + " and ".join(f"{m!r} ({sizes[m]} devices)" for m in idle)
                + f" split{'s' if one else ''} no dimension of the array {shape}: ")
        if not text.startswith(head):
            wrong.append(f"{where}: the warning does not name the idle axes: {text}")
        if "no dimension's length can be shared out evenly" in text:
            if any(n % sizes[m] == 0 for m in idle for n in shape):
                wrong.append(f"{where}: a dimension is a multiple of an idle axis: {text}")
        elif f"no layout shares the array out evenly over all {math.prod(sizes.values())} " \
                "devices" not in text:
            wrong.append(f"{where}: the warning says neither reason: {text}")
    return wrong


def test_the_brute_force_finds_what_it_should():
    """The test's own enumeration, on cases worked out by hand."""
    def whole(shape, mesh):
        return any(not left for _, left in _even_assignments(shape, mesh))
    assert whole((16, 20, 24), [("x", 4), ("y", 16)])        # 'y' on 16, 'x' on 20 or 24
    assert whole((1, 64, 5), [("x", 4), ("y", 16)])          # both on 64
    assert not whole((5, 7, 4), [("x", 4), ("y", 2)])        # only 4 is even, 8 does not divide it
    assert not whole((17, 33, 40), [("x", 4), ("y", 4)])
    assert not whole((3, 3), [("x", 2)])
    assert whole((3, 3), [])


_RESULTS: dict[int, dict] = {}


def _result(count: int) -> dict:
    """What the subprocess with ``count`` devices found (run once per module: a file's
    tests stay in one worker)."""
    if count not in _RESULTS:
        trips = TRIPS[count]
        config = {"grids": [[list(grid), [[list(s), None if a is None else list(a), list(n)]
                                          for s, a, n in cases]]
                            for grid, cases in trips.items()],
                  "layouts": [[list(s), None if a is None else list(a)]
                              for s, a in LAYOUT_CASES]}
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": f"--xla_force_host_platform_device_count={count}"}
        proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(config)], env=env,
                              cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        _RESULTS[count] = json.loads(proc.stdout.strip().splitlines()[-1])
    return _RESULTS[count]


@pytest.mark.parametrize("count", sorted(TRIPS))
def test_the_default_layout_uses_every_mesh_axis_it_can(count):
    layouts = _result(count)["layouts"]
    assert len(layouts) == len(TRIPS[count]) * len(LAYOUT_CASES)
    wrong = [w for case in layouts for w in _check_layout(case)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("count", sorted(TRIPS))
def test_round_trips_end_in_the_input_sharding_with_numpy_values(count):
    trips = _result(count)["trips"]
    assert len(trips) == sum(len(names) for cases in TRIPS[count].values()
                             for _, _, names in cases)
    wrong = [(t["grid"], t["shape"], t["axes"], t["name"], t["spec"], t["back_spec"])
             for t in trips if not t["same"]]
    assert not wrong, wrong
    for t in trips:
        assert t["forward"] <= TOL and t["back"] <= TOL, t


# -- on the suite's 8 devices --------------------------------------------------------

def test_a_round_trip_with_an_idle_mesh_axis_comes_back_where_it_started():
    """(5, 7, 4) on 4x2: no layout splits it over all 8 devices ('x' takes the only
    even axis); rfftn all-gathers its spectrum, and irfftn runs that plan backwards,
    back into P(None, None, 'x'), not replicated."""
    mesh = pfft.make_mesh((4, 2))
    u = np.random.default_rng(1).standard_normal((5, 7, 4)).astype(np.float32)
    with pytest.warns(ReplicationWarning, match="no layout shares the array out evenly "
                      "over all 8 devices"):
        x = pfft.device_put(u, mesh)
    assert x.sharding.spec == P(None, None, "x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplicationWarning)
        k = pfft.rfftn(x)
        back = pfft.irfftn(k, s=u.shape, axes=(0, 1, 2))
    assert back.sharding.is_equivalent_to(x.sharding, 3), back.sharding.spec
    assert rel_err(k, np.fft.rfftn(u.astype(np.float64))) <= 1e-6
    assert rel_err(back, u) <= 1e-6


@pytest.mark.parametrize("shape, axes, mesh, split", [
    ((16, 20, 24), (0, 1, 2), (("x", 2), ("y", 4)), ("x", "y", None)),
    ((1, 64, 64), (0, 1, 2), (("x", 2), ("y", 4)), (None, ("x", "y"), None)),
    ((3, 16, 20, 24), (1, 2, 3), (("x", 2), ("y", 4)), (None, "x", "y", None)),
    # the first fit splits the last axis here though P('y', 'x', None) would not:
    # where it uses every mesh axis it stays (plans and their HLO do not change)
    ((4, 2, 4), (0, 1, 2), (("x", 2), ("y", 4)), ("x", None, "y")),
    # where it does not, the last transformed axis stays whole where it can
    ((16, 20, 24), (0, 1, 2), (("x", 4), ("y", 16)), ("y", "x", None)),
    ((3, 16, 20, 24), (1, 2, 3), (("x", 4), ("y", 16)), (None, "y", "x", None)),
    ((3, 16, 20, 24), (1, 2, 3), (("x", 8), ("y", 16)), (None, "y", None, "x")),
    ((4, 3, 3), (0, 1, 2), (("x", 2), ("y", 4)), ("y", None, None)),   # 4 devices, not 2
])
def test_which_layout_the_default_takes(shape, axes, mesh, split):
    assert default_layout(shape, axes, mesh).split == split


def test_a_plan_from_another_layout_names_the_layout_that_uses_every_mesh_axis():
    """'y' finds no axis in P(None, 'x', None) of (2, 4, 3) (2 and 3 are not multiples
    of 4), but P('x', 'y', None) splits the array over all 8 devices: the warning
    says so rather than that no dimension can be split."""
    mesh = pfft.make_mesh((2, 4))
    pfft.clear_plan_cache()
    with pytest.warns(ReplicationWarning) as record:
        pfft.plan((2, 4, 3), np.complex128, mesh, in_sharding=P(None, "x", None))
    (text,) = [str(w.message) for w in record if issubclass(w.category, ReplicationWarning)]
    assert "mesh axis 'y' (4 devices) splits no dimension of the array (2, 4, 3) in this " \
        "layout" in text and "P('x', 'y', None) splits it over all 8 devices" in text, text
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplicationWarning)
        x = pfft.device_put(np.ones((2, 4, 3)), mesh)
    assert x.sharding == NamedSharding(mesh, P("x", "y", None))

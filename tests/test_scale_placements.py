"""Every place a plan's program can apply its factor is reached with a factor not 1.

A plan scales once (numpy's ``norm``, the inverse's ``1/N``), and its program
(:mod:`pfft.program`) says where: fused into a transform whose engine fuses factors, in
the first copy an exchange or a transpose makes, in a pass of the CPU pieces kernel (each
way a stage's passes can go is a branch of its own, :data:`pfft.pieces.BRANCHES`), or in
a multiply at the end. Once the factor is applied the later steps get 1, so a defect
that applies it twice, or not at all, in one place shows only where that place gets
the factor. These tests enumerate plans (kinds, axes, input layouts, slab and pencil
grids, every engine: native with and without pieces, xla, and the per-stage engine
with the CPU kernels standing in for cuFFT), and

- check in every program of every plan that the factors it places multiply to the
  plan's factor (over what the engine's own transforms apply): once, whatever the
  place;
- list the places that get a factor not 1, and run one plan per place against numpy
  in float64 (forward and backward; the transposed maps of a gradient against
  numpy's map applied to a basis), so that each is checked with a factor that shows.
"""
import contextlib
import functools
import math
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft
from jax.sharding import PartitionSpec as P

import pfft
from conftest import random_array, rel_err
from pfft import pieces, program as prog
from pfft.autodiff import BACKWARD, FORWARD
from pfft.engines.per_stage import PerStageEngine

GRIDS = [(4,), (2, 2)]
SHAPES = [(8, 12, 6), (32, 16, 24)]
AXES = [(0, 1, 2), (1, 2), (0, 2), (0, 1), (2,), (0,)]
KINDS = ["c2c", "r2c", "dct", "mixed"]     # mixed: DCT-II on the first axis, FFTs after
ENGINES = ["native", "native without pieces", "xla", "per-stage"]
NORM = "ortho"

#: the places a factor not 1 lands in the enumerated plans: every one must be reached
#: and checked (a place that stops being reached, or a new one, shows here). The
#: factor goes to the first step that takes one, whose input is never pieces: the
#: branch "c2c: the other axes first" (input pieces cut along the kernel's axis) and
#: the pieces' assembling pass never get it
EXPECTED = {
    "transpose", "multiply at the end", "all-to-all, packed",
    "all-to-all, cut and stacked", "all-gather", "slice", "pieces pack",
    "fft by native", "rfft by native", "irfft by native",
    "fft by xla", "rfft by xla", "irfft by xla",
    "pieces: c2c: the kernel's axis first", "pieces: c2c: a pair",
    "pieces: r2c: the halved axis, the others in place",
    "pieces: r2c: the halved axis, then the others",
    "pieces: r2c: a pair with the cut axis",
    "pieces: c2r: the others first", "pieces: c2r: the halved axis alone",
    "pieces: c2r: a pair with the halved axis", "pieces: r2r",
}

def api_variants(is_real: bool) -> dict:
    """The variants a user's calls run: forward, backward and their transposes
    (gradients)."""
    return {"forward": FORWARD, "backward": BACKWARD,
            "grad of forward": FORWARD.transposed(is_real),
            "grad of backward": BACKWARD.transposed(is_real)}


@contextlib.contextmanager
def _engine(name: str):
    """Plans made inside name ``name``'s engine (the per-stage engine on CPU: patched
    in, as tests/test_engines.py does); the plan cache is cleared on both sides."""
    pfft.clear_plan_cache()
    mesh_plan = sys.modules["pfft.mesh_plan"]
    saved = mesh_plan.engine_for_plan
    if name == "per-stage":
        mesh_plan.engine_for_plan = lambda *a: PerStageEngine(1, "cpu")
    try:
        yield
    finally:
        mesh_plan.engine_for_plan = saved
        pfft.clear_plan_cache()


def _plan(grid, shape, kind, axes, spec, engine):
    mesh = pfft.make_mesh(grid)
    kw = {"c2c": {}, "r2c": dict(kind="r2c"), "dct": dict(kinds=("dct2",) * len(axes)),
          "mixed": dict(kinds=("dct2",) + ("fft",) * (len(axes) - 1))}[kind]
    if engine == "native without pieces":
        kw["fuse_exchanges"] = False
    dtype = np.float64 if kind in ("r2c", "dct") else np.complex128
    return pfft.plan(shape, dtype, mesh, axes=axes, norm=NORM, in_sharding=spec,
                     engine="xla" if engine == "xla" else None, **kw)


def _specs(grid) -> list:
    names = ("x", "y")[:len(grid)] if len(grid) == 2 else ("x",)
    out = [None] + [P(*[names[0] if i == j else None for i in range(3)]) for j in range(3)]
    if len(grid) == 2:
        out += [P(None, "x", "y"), P("x", None, "y")]
    return out


def _problems():
    for engine in ENGINES:
        for grid in GRIDS:
            for shape in SHAPES:
                for kind in KINDS:
                    for axes in AXES:
                        for spec in _specs(grid):
                            yield engine, grid, shape, kind, axes, spec


def _static_places(program) -> list[tuple[str, float]]:
    """(place, factor) for each step of ``program`` that applies a factor; a pieces
    pass is one place per branch (found when the program is traced)."""
    out = []
    for step in program.steps:
        if isinstance(step, prog.Reorder):
            out.append(("transpose", step.scale))
        elif isinstance(step, prog.Fft) and step.engine.fuses_scale:
            out.append((f"fft by {step.engine.name}", step.scale))
        elif isinstance(step, prog.RealFft) and step.engine.fuses_scale:
            kind = "rfft" if step.stage.to_complex else "irfft"
            out.append((f"{kind} by {step.engine.name}", step.scale))
        elif isinstance(step, prog.AllToAll):
            how = "cut and stacked" if step.split else "packed"
            out.append((f"all-to-all, {how}", step.scale))
        elif isinstance(step, prog.AllGather):
            out.append(("all-gather", step.scale))
        elif isinstance(step, prog.Slice):
            out.append(("slice", step.scale))
        elif isinstance(step, prog.FusedPasses):
            out.append(("pieces pass", step.scale))
        elif isinstance(step, prog.PiecesMove):
            out += [("pieces pack", step.pack_scale), ("pieces assemble", step.assemble_scale)]
        elif isinstance(step, prog.Rescale):
            out.append(("multiply at the end", step.scale))
    return out


def _natural(plan, variant) -> float:
    chain = plan.transform.chain_for(variant)
    shapes = [layout.shape for layout in (chain.in_layout,) + chain.layouts()]
    return prog.natural_scale(chain.stages, shapes, variant.inverse, plan.engine)


@contextlib.contextmanager
def _branch_spy(found: list):
    """Records into ``found`` the pieces branches that run with a factor not 1."""
    # every branch takes its stage's settings last (pieces.PassSettings: the factor)
    saved = dict(pieces.BRANCHES)

    def spy(name, fn):
        def run(*args):
            if args[-1].scale != 1.0:
                found.append(name)
            return fn(*args)
        return run
    for name, fn in saved.items():
        pieces.BRANCHES[name] = spy(name, fn)
    try:
        yield
    finally:
        pieces.BRANCHES.update(saved)


@functools.lru_cache(maxsize=None)
def placements():
    """Every enumerated plan with its programs' places: ``(plans, seen)``, ``seen``
    mapping each place that got a factor not 1 in a user's call (forward, backward,
    their gradients) to the first (problem, call) that put it there; and every
    (problem, variant, place) of any variant, with the product checks' failures."""
    plans, seen, anywhere, wrong = {}, {}, set(), []
    for problem in _problems():
        engine = problem[0]
        with _engine(engine):
            try:
                plan = _plan(*problem[1:], engine)
            except ValueError:           # an input layout that does not fit the shape
                continue
        plans[problem] = plan
        calls = {v: c for c, v in api_variants(plan.is_real).items()}
        for variant, program in plan.programs.items():
            places = _static_places(program)
            product = math.prod(f for _, f in places) * _natural(plan, variant)
            want = plan.transform.scale(variant.inverse)
            if not math.isclose(product, want, rel_tol=1e-12):
                wrong.append((problem, variant, places, want))
            for place, factor in places:
                if factor == 1.0:
                    continue
                names = [place]
                if place == "pieces pass":     # which branch: trace the program
                    found: list = []
                    with _branch_spy(found):
                        jax.jit(plan._entry(variant)).lower(plan._abstract_input(variant))
                    names = [f"pieces: {b}" for b in found]
                for name in names:
                    anywhere.add(name)
                    if variant in calls:
                        seen.setdefault(name, (problem, calls[variant]))
    return plans, seen, anywhere, wrong


def test_every_program_applies_its_factor_once():
    """In every program of every enumerated plan (every variant) the factors its steps
    apply, times what the engine's own transforms apply, are the plan's factor."""
    plans, _, _, wrong = placements()
    assert len(plans) > 500
    assert not wrong, wrong[:3]


def test_the_places_a_factor_lands_are_the_expected_ones():
    """The places a factor not 1 lands in any program are reached by a user's calls
    too (forward, backward, their gradients: where the next test checks them), and
    are the expected set."""
    _, seen, anywhere, _ = placements()
    assert anywhere <= set(seen), sorted(anywhere - set(seen))
    assert set(seen) == EXPECTED, (sorted(set(seen) - EXPECTED), sorted(EXPECTED - set(seen)))


def _numpy_map(kind: str, shape, axes, inverse: bool):
    """numpy's (scipy's) map of a plan, forward or inverse, ``norm`` as the plans'."""
    s = [shape[a] for a in axes]
    if kind == "c2c":
        fn = np.fft.ifftn if inverse else np.fft.fftn
        return lambda x: fn(x, axes=axes, norm=NORM)
    if kind == "r2c":
        if inverse:
            return lambda k: np.fft.irfftn(k, s=s, axes=axes, norm=NORM)
        return lambda x: np.fft.rfftn(x, axes=axes, norm=NORM)
    r2r = scipy.fft.idctn if inverse else scipy.fft.dctn
    if kind == "dct":
        return lambda x: r2r(x, 2, axes=axes, norm=NORM)
    fft = np.fft.ifftn if inverse else np.fft.fftn       # mixed: separable, in any order
    return lambda x: fft(r2r(x, 2, axes=axes[:1], norm=NORM), axes=axes[1:], norm=NORM)


def _transposed(fn, x_shape, x_complex: bool, cotangent):
    """What ``jax.grad`` of ``Re(sum(conj(c) * fn(x)))`` is, from numpy's ``fn`` applied
    to a basis (the loss is linear in ``x``): ``dL/dRe(x) - i dL/dIm(x)``, JAX's
    convention for a complex ``x``."""
    n = math.prod(x_shape)

    def loss(x):
        return np.real(np.sum(np.conj(cotangent) * fn(x)))
    basis = np.eye(n).reshape((n,) + tuple(x_shape))
    re = np.array([loss(e) for e in basis]).reshape(x_shape)
    if not x_complex:
        return re
    im = np.array([loss(1j * e) for e in basis]).reshape(x_shape)
    return re - 1j * im


@pytest.mark.parametrize("place", sorted(EXPECTED))
def test_each_place_with_a_factor_matches_numpy(place):
    """One plan per place, the call that puts a factor not 1 there, against numpy in
    float64: forward and backward directly, the gradients' transposed maps against
    numpy's map applied to a basis."""
    plans, seen, _, _ = placements()
    problem, call = seen[place]
    engine, grid, shape, kind, axes, spec = problem
    plan = plans[problem]
    rng = np.random.default_rng(sum(map(ord, place)))
    real_in = kind in ("r2c", "dct")
    x = random_array(rng, plan.in_shape, np.float64 if real_in else np.complex128)
    y = random_array(rng, plan.out_shape, np.float64 if kind == "dct" else np.complex128)
    with jax.set_mesh(plan.mesh):
        xs = jax.device_put(x, plan.in_sharding)
        ys = jax.device_put(y, plan.out_sharding)
        if call == "forward":
            got, want = plan.forward(xs), _numpy_map(kind, shape, axes, False)(x)
        elif call == "backward":
            got, want = plan.backward(ys), _numpy_map(kind, shape, axes, True)(y)
        elif call == "grad of forward":
            c = random_array(rng, plan.out_shape, y.dtype)
            got = jax.grad(lambda a: jnp.real(jnp.sum(jnp.conj(c) * plan.forward(a))))(xs)
            want = _transposed(_numpy_map(kind, shape, axes, False), x.shape, not real_in, c)
        else:
            c = random_array(rng, plan.in_shape, x.dtype)
            got = jax.grad(lambda a: jnp.real(jnp.sum(jnp.conj(c) * plan.backward(a))))(ys)
            want = _transposed(_numpy_map(kind, shape, axes, True), y.shape,
                               kind != "dct", c)
    assert rel_err(got, want) < 1e-12, (place, problem, call)

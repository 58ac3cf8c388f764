"""pfft.tune times candidate plans within a budget; wisdom round-trips through JSON.

No test asserts how long anything takes: the budget is checked with a fake clock."""
import json
import types

import jax
import numpy as np
import pytest

import pfft
from pfft import tuning, wisdom
from pfft.problem import Problem
from conftest import rel_err
from plan_steps import fft_steps


@pytest.fixture(autouse=True)
def _no_wisdom():
    pfft.forget_wisdom()
    yield
    pfft.forget_wisdom()


def test_candidate_grids_are_every_slab_and_pencil():
    assert tuning.candidate_grids(8) == [(8,), (2, 4), (4, 2)]
    assert tuning.candidate_grids(4) == [(4,), (2, 2)]
    assert tuning.candidate_grids(1) == [(1,)]


def test_tune_returns_the_fastest_plan_and_it_computes_the_same_numbers():
    devices = jax.devices()[:4]
    plan = pfft.tune((16, 12, 8), np.complex128, devices, repeats=2, progress=False)
    entry = wisdom.lookup(Problem((16, 12, 8), np.complex128, (0, 1, 2), kind="c2c"), devices)
    assert set(entry["timings_s"]) == {"4", "2x2"}
    assert entry["time_s"] == min(entry["timings_s"].values())
    assert "x".join(map(str, entry["grid"])) == min(entry["timings_s"],
                                                  key=entry["timings_s"].get)
    x = np.random.default_rng(0).standard_normal((16, 12, 8)) + 0j
    untuned = pfft.plan(x.shape, x.dtype, pfft.make_mesh((2, 2), devices))
    assert rel_err(plan.forward(x), untuned.forward(x)) <= 1e-12
    assert rel_err(plan.forward(x), np.fft.fftn(x)) <= 1e-12


def _clock_per_candidate(monkeypatch, seconds: float) -> None:
    """Give :func:`pfft.tune` a clock that stands still except when a candidate starts
    (its mesh is made), then jumps ``seconds``: the budget logic, not this machine's
    speed, decides which candidates are timed."""
    now = [0.0]
    make_mesh = tuning.make_mesh

    def mesh_and_tick(*args, **kwargs):
        now[0] += seconds
        return make_mesh(*args, **kwargs)
    monkeypatch.setattr(tuning, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(tuning, "make_mesh", mesh_and_tick)


@pytest.mark.parametrize("budget_s,timed", [(0.0, ["8"]), (15.0, ["8", "2x4"]),
                                            (25.0, ["8", "2x4", "4x2"])])
def test_tuning_starts_no_candidate_once_its_budget_is_spent(monkeypatch, budget_s, timed):
    """Candidates (8, 2x4, 4x2 for 8 devices) each take 10 s on the fake clock: one is
    always timed, and another is started only while the time spent is within budget."""
    _clock_per_candidate(monkeypatch, 10.0)
    plan = pfft.tune((8, 8, 8), np.complex64, 8, budget_s=budget_s, repeats=1,
                     progress=False)
    entry = wisdom.lookup(Problem((8, 8, 8), np.complex64, (0, 1, 2), kind="c2c"),
                          jax.devices()[:8])
    assert list(entry["timings_s"]) == timed
    assert "x".join(map(str, entry["grid"])) in timed
    x = np.random.default_rng(2).standard_normal((8, 8, 8)).astype(np.complex64)
    assert rel_err(plan.forward(x), np.fft.fftn(x.astype(np.complex128))) <= 1e-6


def test_tuning_with_room_times_every_candidate():
    full = pfft.tune((8, 8, 6), np.float32, 8, kind="r2c", spectra=("numpy", "padded"),
                     budget_s=600, repeats=1, progress=False)
    entry = wisdom.lookup(Problem((8, 8, 6), np.complex64, (0, 1, 2), kind="r2c"),
                          jax.devices()[:8])
    assert set(entry["timings_s"]) == {"8", "2x4", "4x2", "8 padded", "2x4 padded",
                                       "4x2 padded"}
    assert full.kind == "r2c"


def test_wisdom_round_trips_and_plan_reuses_it(tmp_path):
    devices = jax.devices()[:8]
    mesh = pfft.make_mesh((2, 4), devices)
    pfft.tune((8, 16, 8), np.complex64, mesh, repeats=1, progress=False)
    best = wisdom.lookup(Problem((8, 16, 8), np.complex64, (0, 1, 2), kind="c2c"), devices)
    path = tmp_path / "wisdom.json"
    pfft.save_wisdom(path)
    assert json.loads(path.read_text())["pfft_wisdom"] == 1
    pfft.forget_wisdom()
    assert pfft.plan((8, 16, 8), np.complex64, mesh, tune="wisdom").mesh is mesh  # none yet
    assert pfft.load_wisdom(path) == 1
    assert wisdom.lookup(Problem((8, 16, 8), np.complex64, (0, 1, 2), kind="c2c"),
                         devices) == best
    plan = pfft.plan((8, 16, 8), np.complex64, mesh, tune="wisdom")
    assert tuple(s for s in plan.mesh.devices.shape) == tuple(best["grid"])
    assert set(plan.mesh.devices.flat) == set(devices)
    x = np.random.default_rng(1).standard_normal((8, 16, 8)).astype(np.complex64)
    assert rel_err(plan.forward(x), np.fft.fftn(x)) <= 1e-6


def test_plan_can_measure_on_first_use_and_bad_wisdom_is_refused(tmp_path):
    mesh = pfft.make_mesh((4,))
    plan = pfft.plan((8, 8, 4), np.complex64, mesh, tune="measure")
    assert wisdom.lookup(Problem((8, 8, 4), np.complex64, (0, 1, 2), kind="c2c"),
                         list(mesh.devices.flat)) is not None
    assert set(plan.mesh.devices.flat) == set(mesh.devices.flat)
    with pytest.raises(ValueError, match="tune"):
        pfft.plan((8, 8, 4), np.complex64, mesh, tune="fast")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"something": "else"}))
    with pytest.raises(ValueError, match="not a pfft wisdom file"):
        pfft.load_wisdom(bad)


def test_tuning_real_to_real_and_mixed_plans():
    """kinds= and orthogonalize= are part of the problem: tuned, filed under their own
    wisdom key (not a plain FFT's), reused by plan(tune="wisdom"), right against scipy."""
    import scipy.fft

    pfft.forget_wisdom()
    devices = jax.devices()[:4]
    mesh = pfft.make_mesh((4,), devices)
    kinds = ("dct2", "fft", "rfft")
    best = pfft.tune((8, 8, 6), np.float64, mesh, kinds=kinds, repeats=1, progress=False)
    entry = wisdom.lookup(Problem((8, 8, 6), np.complex128, (0, 1, 2), kind="r2c", kinds=kinds),
                          devices)
    assert entry is not None and len(entry["timings_s"]) == 2          # slab 4 and 2x2
    assert wisdom.lookup(Problem((8, 8, 6), np.complex128, (0, 1, 2), kind="r2c"),
                         devices) is None                                  # a plain rfftn: none
    assert wisdom.lookup(Problem((8, 8, 6), np.complex128, (0, 1, 2), kind="r2c", kinds=kinds,
                                 orthogonalize=True), devices) is None
    again = pfft.plan((8, 8, 6), np.float64, mesh, kinds=kinds, tune="wisdom")
    assert again is best and tuple(again.mesh.devices.shape) == tuple(entry["grid"])
    x = np.random.default_rng(2).standard_normal((8, 8, 6))
    want = np.fft.rfftn(scipy.fft.dct(x, type=2, axis=0), axes=(1, 2))
    assert rel_err(again.forward(jax.device_put(x, again.in_sharding)), want) <= 1e-12
    # an all real-to-real plan is timed on real data and measured on first use
    plan = pfft.plan((8, 8, 6), np.float32, mesh, kinds=("dst1",) * 3, tune="measure")
    assert wisdom.lookup(Problem((8, 8, 6), np.float32, (0, 1, 2), kinds=("dst1",) * 3),
                         devices) is not None
    y = plan.forward(jax.device_put(x.astype(np.float32), plan.in_sharding))
    assert y.dtype == np.float32 and rel_err(y, scipy.fft.dstn(x, type=1)) <= 1e-6


# -- FFT steps: the engine of each measured and filed, later plans take it --------------
# engine="auto" chooses per FFT step only on GPUs; here the same per-step engine is built
# over the CPU kernels and lax.fft (pfft.engines.choice.per_stage_engine), so what is
# tested is the mechanism: timing, filing, the plans made afterwards.

@pytest.fixture
def per_step_auto(monkeypatch):
    from pfft import mesh_plan
    from pfft.engines import choice

    def engine(name, devices, fuse="auto"):
        return choice.per_stage_engine(devices or jax.devices()[:1], "cpu")
    monkeypatch.setattr(mesh_plan, "engine_for_plan", engine)


@pytest.mark.parametrize("kind,dtype", [("r2c", np.float32), ("c2c", np.complex64)])
def test_tune_times_each_fft_step_and_plans_made_after_take_the_faster(per_step_auto, kind,
                                                                      dtype):
    shape = (16, 12, 8)
    pfft.tune(shape, dtype, jax.devices()[:4], kind=kind, repeats=1, progress=False)
    filed = wisdom.stage_entries()
    assert filed
    for entry in filed.values():                  # the faster of the two, both timed
        assert set(entry["timings_s"]) == {"native", "xla"}
        assert entry["engine"] == min(entry["timings_s"], key=entry["timings_s"].get)
    for dims in ((4,), (2, 2)):                   # each candidate's steps were timed
        plan = pfft.plan(shape, dtype, pfft.make_mesh(dims, jax.devices()[:4]), kind=kind)
        steps = fft_steps(plan, "cpu")
        assert steps and all(key in filed for key, _ in steps)
        assert [name for _, name in steps] == [filed[key]["engine"] for key, _ in steps]
        x = np.random.default_rng(2).standard_normal(shape).astype(dtype)
        want = np.fft.rfftn(x) if kind == "r2c" else np.fft.fftn(x)
        y = plan.forward(x)
        assert rel_err(y, want) <= 2e-6
        assert rel_err(plan.backward(y), x) <= 2e-6


def test_a_filed_step_overrides_the_rule_and_forgetting_restores_it(per_step_auto):
    x = np.random.default_rng(3).standard_normal((8, 8, 8)).astype(np.complex64)
    ruled = pfft.plan(x.shape, x.dtype)
    assert ruled.fft_engines() == ["xla"]        # innermost axes: lax.fft, by the rule
    (key, _), = fft_steps(ruled, "cpu")[:1]
    wisdom.record_stage(key, {"engine": "native", "timings_s": {"native": 1.0, "xla": 2.0}})
    measured = pfft.plan(x.shape, x.dtype)
    assert measured is not ruled                  # the cache does not hand out the old plan
    assert measured.fft_engines() == ["native"]
    assert "by native" in str(measured)
    assert rel_err(measured.forward(x), np.fft.fftn(x)) <= 2e-6
    generation = wisdom.stage_generation()        # the same choice again changes nothing
    wisdom.record_stage(key, {"engine": "native", "timings_s": {"native": 1.5, "xla": 2.0}})
    assert wisdom.stage_generation() == generation and pfft.plan(x.shape, x.dtype) is measured
    pfft.forget_wisdom()
    assert pfft.plan(x.shape, x.dtype).fft_engines() == ["xla"]


def test_fft_step_wisdom_round_trips_and_bad_entries_are_refused(tmp_path):
    key = wisdom.stage_key("NVIDIA H200", np.complex64, (256, 256, 256), (0, 1, 2),
                           real=True, inverse=False, scale=1.0)
    assert json.loads(key)["shape"] == [256, 256, 256]
    wisdom.record_stage(key, {"engine": "xla", "timings_s": {"native": 2e-3, "xla": 1e-3}})
    assert wisdom.stage_choices("NVIDIA H200") == ((key, "xla"),)
    assert wisdom.stage_choices("NVIDIA H100 80GB HBM3") == ()
    path = tmp_path / "wisdom.json"
    pfft.save_wisdom(path)
    pfft.forget_wisdom()
    assert wisdom.stage_entries() == {}
    assert pfft.load_wisdom(path) == 1
    assert wisdom.stage_choices("NVIDIA H200") == ((key, "xla"),)
    grids_only = tmp_path / "grids.json"           # a file of grids alone loads
    grids_only.write_text(json.dumps({"pfft_wisdom": 1, "entries": {}}))
    assert pfft.load_wisdom(grids_only) == 0
    for bad in ({"engine": "cufft"}, "xla"):
        with pytest.raises(ValueError, match="bad FFT step entry"):
            wisdom.record_stage(key, bad)
    with pytest.raises(ValueError, match="bad FFT step entry"):
        wisdom.record_stage('{"shape": [4]}', {"engine": "xla"})
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"pfft_wisdom": 1, "entries": {},
                                  "stages": {key: {"engine": "fftw"}}}))
    with pytest.raises(ValueError, match="load_wisdom: bad FFT step entry"):
        pfft.load_wisdom(broken)


def test_stage_tuning_leaves_a_plan_that_does_not_choose_per_step_alone():
    plan = pfft.tune((8, 8, 8), np.complex64, 1, repeats=1, progress=False)
    assert not hasattr(plan.engine, "choose")     # CPU "auto": one engine for every step
    assert wisdom.stage_entries() == {}


def test_plan_measures_a_one_device_problem_once(per_step_auto):
    """``pfft.plan(..., tune="measure")`` on one device (no grid to choose) times its
    FFT steps when wisdom has nothing for the problem, and not again after."""
    shape = (16, 12, 8)
    plan = pfft.plan(shape, np.float32, kind="r2c", tune="measure")
    filed = wisdom.stage_entries()
    steps = fft_steps(plan, "cpu")
    assert steps and [name for _, name in steps] == [filed[k]["engine"] for k, _ in steps]
    generation = wisdom.stage_generation()
    again = pfft.plan(shape, np.float32, kind="r2c", tune="measure")
    assert again is plan and wisdom.stage_generation() == generation
    assert wisdom.stage_entries() == filed          # nothing timed the second time
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    assert rel_err(plan.forward(x), np.fft.rfftn(x)) <= 2e-6

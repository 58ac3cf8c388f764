"""The memory bounds a plan's compiled programs keep (:meth:`pfft.Plan.memory`, in
blocks of the device's forward input), shared by the CPU tests (``test_memory``) and
the GPU ones (``test_gpu``).

The goal is 3 blocks with the input kept and 2 with it donated: an out-of-place
transform or all-to-all holds its input and its output, and a kept argument one block
more. Where donation cannot be used (a real transform's output differs in size from
its input) the program is the same either way and nothing is aliased.

On CPU meshes XLA's all-to-all itself holds more than that (it cuts its operand into
slices, copies, and receives into new buffers: 4 - 1/p blocks kept, 3 donated,
measured by ``test_memory.test_xla_cpu_all_to_all_floor``); the mesh programs are held
to that floor. The programs that hold more than their bound are listed in ``OVER``
with their figure today, so that a change that holds more fails.
"""
import numpy as np

import pfft

N = 48
GRIDS = {"one": (1,), "slab": (8,), "pencil": (2, 4)}
# name -> (dtype, plan options, whether the forward input and output have one size)
KINDS = {
    "c2c": (np.complex64, dict(kind="c2c"), True),
    "r2c": (np.float32, dict(kind="r2c"), False),
    "dct": (np.float32, dict(kinds=("dct2",) * 3), True),
    "mixed": (np.complex64, dict(kinds=("fft", "fft", "dct2")), True),
    "padded": (np.float32, dict(kind="r2c", padding=1.5), False),
}
GOAL_KEPT, GOAL_DONATED = 3.0, 2.0
# on CPU meshes: XLA:CPU's all-to-all floor, the p - 1 slices of the largest group's
# exchange counted whole
MESH_KEPT, MESH_DONATED = 4.0, 3.0
# (kind, engine, grid) -> (kept, donated), the most blocks a direction holds where
# that is over the bound: DCT/DST through XLA's FFT (the xla engine's on CPUs, every
# engine's on GPUs: the reorders before the FFT, the recombination after it); the
# padded r2c forward (the finer grid's spectrum before its truncation); on CPU meshes
# the xla engine's programs, which hold what the same transform written by hand from
# jnp.fft and lax.all_to_all holds (out-of-place FFTs beside the collective's copies,
# the inverse's leading transpose a copy more: test_memory measures them)
OVER = {
    ("dct", "xla", "one"): (4.05, 3.05), ("mixed", "xla", "one"): (4.05, 3.05),
    ("padded", "native", "one"): (3.06, 3.06), ("padded", "xla", "one"): (3.06, 3.06),
    ("c2c", "xla", "slab"): (4.89, 2.89), ("c2c", "xla", "pencil"): (4.76, 3.76),
    ("r2c", "xla", "slab"): (5.06, 5.06), ("r2c", "xla", "pencil"): (5.06, 5.06),
    ("dct", "xla", "slab"): (5.09, 4.09), ("dct", "xla", "pencil"): (5.05, 4.05),
    ("mixed", "xla", "slab"): (4.05, 3.05), ("mixed", "xla", "pencil"): (5.05, 4.05),
}
SLACK = 0.01          # a few KiB of constants and flags ride on top of the blocks


def make_plan(kind: str, engine: str, mesh):
    """The plan of ``kind`` (a key of ``KINDS``) at ``N`` on ``mesh``."""
    dtype, options, _ = KINDS[kind]
    n = N * 2 // 3 if "padding" in options else N
    return pfft.plan((n,) * 3, dtype, mesh, engine=engine, **options)


def bounds(kind: str, engine: str, grid: str, *, through_xla: bool) -> tuple[float, float]:
    """(kept, donated) blocks a program of ``kind`` may hold; ``through_xla``: its DCTs
    and DSTs run through XLA's FFT whatever the engine (GPUs)."""
    if through_xla and kind in ("dct", "mixed"):
        engine = "xla"
    if (kind, engine, grid) in OVER:
        return OVER[kind, engine, grid]
    if grid == "one":
        return GOAL_KEPT, GOAL_DONATED
    spectrum = 1.0 if KINDS[kind][2] else 2 * (N // 2 + 1) / N     # the exchanged block
    return MESH_KEPT * spectrum, MESH_DONATED * spectrum


def check_within(report, kind: str, kept_bound: float, donated_bound: float) -> None:
    """Both directions of ``report`` (a :class:`pfft.memory.PlanMemory`) within the
    bounds, a donated input reused where sizes allow."""
    same_size = KINDS[kind][2]
    for name, direction in (("forward", report.forward), ("backward", report.backward)):
        kept, donated = direction["kept"], direction["donated"]
        assert kept.blocks <= kept_bound + SLACK, (kind, name, kept.blocks)
        if same_size:
            assert donated.aliased == donated.argument, (kind, name, "input not reused")
            assert donated.blocks <= donated_bound + SLACK, (kind, name, donated.blocks)
        else:    # no output the input's size: nothing to alias, the same program
            assert donated.aliased == 0 and donated.total == kept.total, (kind, name)

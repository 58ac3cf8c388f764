"""Draw which device holds which part of the array at each stage of a forward plan.

    python docs/layout_figures.py            (make figures; writes docs/figures/layouts.png)

The figure is drawn from pfft's own plan objects, not by hand: for a slab (4 devices)
and a pencil (2x2) grid, and for ``fftn`` and ``rfftn`` of an 8x8x8 array, each panel is
the layout (:meth:`pfft.chain_search.Chain.layouts`) after a local transform, its cells
coloured by the device JAX places them on (the layout's ``NamedSharding``). The halved
axis of ``rfftn`` shrinks from 8 to 5 points. The text the panels stand for (each
chain's layouts and stages, as ``print(plan)`` writes them) is stored in the PNG's
``Description``; ``tests/test_docs_build.py`` compares it with the plans pfft makes
now, so the committed figure cannot drift from the planner.
"""
from __future__ import annotations

import os
import pathlib
import sys

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "figures" / "layouts.png"
SHAPE = (8, 8, 8)
CASES = (("slab, 4 devices", (4,)), ("pencil, 2x2 devices", (2, 2)))
KINDS = (("fftn", "c2c", np.complex64), ("rfftn", "r2c", np.float32))


def plans():
    """``[(title, plan)]`` for every figure row: each grid with each transform."""
    import pfft

    return [(f"{name}: {grid_name}", pfft.plan(SHAPE, dtype, pfft.make_mesh(grid), kind=kind))
            for grid_name, grid in CASES for name, kind, dtype in KINDS]


def describe() -> str:
    """The plans the figure draws, in text (independent of the engine and machine)."""
    rows = []
    for title, plan in plans():
        chain = plan.chain
        lines = [f"in : {chain.in_layout}"] + [f"{i}. {s}" for i, s in enumerate(chain.stages, 1)]
        rows.append("\n".join([title] + lines + [f"out: {chain.out_layout}"]))
    return "\n\n".join(rows)


def panels(plan) -> list[tuple[object, str, tuple[int, ...]]]:
    """``[(layout, caption, transformed axes)]``: the input, then the layout after each
    local transform (the exchanges before it named in its caption), then the output
    where exchanges follow the last transform."""
    from pfft.stages import Exchange, Gather, LocalFFT, RealFFT, Resize, Scatter

    chain = plan.chain
    out = [(chain.in_layout, f"in  {chain.in_layout.spec}", ())]
    moves: list[str] = []
    for stage, layout in zip(chain.stages, chain.layouts()):
        if isinstance(stage, (Exchange, Gather, Scatter)):
            names = stage.mesh_axis if isinstance(stage.mesh_axis, str) else "+".join(stage.mesh_axis)
            what = {Exchange: "all_to_all", Gather: "all_gather", Scatter: "slice"}[type(stage)]
            moves.append(f"{what} '{names}'")
        elif isinstance(stage, (LocalFFT, RealFFT)):
            axes = ",".join(map(str, stage.axes))
            if isinstance(stage, RealFFT):
                fft = f"rfft axis {axes} ({stage.n}→{stage.half})"
            else:
                fft = f"fft axis {axes}"
            out.append((layout, " → ".join(moves + [fft]), tuple(stage.axes)))
            moves = []
        elif isinstance(stage, Resize):
            out[-1] = (layout,) + out[-1][1:]
    if moves:
        out.append((chain.out_layout, " → ".join(moves) + f"\nout  {chain.out_layout.spec}", ()))
    else:
        layout, caption, axes = out[-1]
        out[-1] = (layout, caption + f"\nout  {layout.spec}", axes)
    return out


def owners(layout, mesh) -> np.ndarray:
    """Index (in mesh order) of the device holding each element under ``layout``."""
    position = {d: i for i, d in enumerate(mesh.devices.flat)}
    owner = np.full(layout.shape, -1)
    for device, index in layout.sharding(mesh).devices_indices_map(layout.shape).items():
        owner[index] = position[device]
    return owner


def draw(path: pathlib.Path = OUT) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    rows = plans()
    width = max(len(panels(plan)) for _, plan in rows)
    colours = plt.get_cmap("tab10").colors
    fig = plt.figure(figsize=(2.6 * width, 2.9 * len(rows)))
    for r, (title, plan) in enumerate(rows):
        mesh = plan.mesh
        for c, (layout, caption, axes) in enumerate(panels(plan)):
            ax = fig.add_subplot(len(rows), width, r * width + c + 1, projection="3d")
            owner = owners(layout, mesh)
            faces = np.zeros(owner.shape + (4,))
            for d in range(mesh.devices.size):
                faces[owner == d] = to_rgba(colours[d], 0.9)
            ax.voxels(np.ones(owner.shape, bool), facecolors=faces, edgecolor=(1, 1, 1, 0.35),
                      linewidth=0.3)
            ax.set_box_aspect(layout.shape)
            ax.set_xlim(0, SHAPE[0]); ax.set_ylim(0, SHAPE[1]); ax.set_zlim(0, SHAPE[2])
            ax.set_xticks([]); ax.set_yticks([]); ax.set_zticks([])
            for a, label in enumerate((ax.set_xlabel, ax.set_ylabel, ax.set_zlabel)):
                label(f"axis {a}" + (" ✱" if a in axes else ""), fontsize=7, labelpad=-12)
            ax.view_init(elev=22, azim=-58)
            ax.set_title(caption, fontsize=7.5)
            if c == 0:
                ax.text2D(-0.12, 0.5, title, transform=ax.transAxes, rotation=90,
                          va="center", ha="center", fontsize=9, weight="bold")
    fig.suptitle(f"pfft forward plans on an {'x'.join(map(str, SHAPE))} array: colour = the "
                 "device holding each element, ✱ = the axes transformed in that panel "
                 "(generated by docs/layout_figures.py)", fontsize=9)
    fig.subplots_adjust(left=0.04, right=0.99, top=0.93, bottom=0.01, wspace=0.05, hspace=0.25)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80, metadata={"Description": describe(),
                                         "Software": "docs/layout_figures.py"})
    plt.close(fig)


def stored_description(path: pathlib.Path = OUT) -> str | None:
    """The plan text stored in the committed figure (``None`` without one)."""
    from PIL import Image

    with Image.open(path) as image:
        return image.text.get("Description")


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count=8".strip()
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    draw(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
    print(f"wrote {OUT if len(sys.argv) < 2 else sys.argv[1]}")

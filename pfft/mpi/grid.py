"""The process grid: a Cartesian MPI communicator and one sub-communicator per grid axis."""
from __future__ import annotations

import math
from typing import Sequence

from mpi4py import MPI

from ..grid import DEFAULT_AXIS_NAMES, dims_create
from ..transports.mpi import MPITransport
from .checks import check_environment, install_excepthook

__all__ = ["ProcessGrid"]


class ProcessGrid:
    """MPI ranks arranged as a 1-D (slab) or 2-D (pencil) grid, one JAX device per rank.

    Parameters
    ----------
    comm
        The communicator whose ranks take part (e.g. ``MPI.COMM_WORLD``).
    dims
        Grid shape: ``(p,)`` for a slab, ``(p, q)`` for a pencil grid with
        ``p * q == comm.size``. Default: as square as the rank count allows, the
        larger size last (:func:`pfft.dims_create`), so a prime count is a slab.
    abort_on_exception
        Install a ``sys.excepthook`` that calls ``MPI_Abort`` on ``COMM_WORLD`` when a
        rank dies of an uncaught exception, so that the other ranks, possibly waiting
        in a collective, do not hang (see :func:`pfft.mpi.install_excepthook`).

    Attributes
    ----------
    comm
        The Cartesian communicator (``comm.Create_cart(dims)``, ranks not reordered).
    dims, names
        Grid sizes and their mesh axis names (``("x", "y")`` or ``("x",)``).
    mesh_shape
        ``(name, size)`` for the axes of size above one: what plans distribute over
        (as :func:`pfft.grid.mesh_shape_of` reads a mesh).
    coords
        This rank's coordinate along each named axis.
    comms
        The sub-communicator along each axis of :attr:`mesh_shape` (``cart.Sub``) and, on a
        2-D grid, along both axes in each order (for an array axis split over both).

    Raises
    ------
    ValueError
        If ``dims`` has more than two sizes or their product is not ``comm.size``.
    RuntimeError
        If MPI is not initialised (or already finalised), or if this process sees
        more than one local JAX device (see :func:`pfft.mpi.check_local_devices`).

    Examples
    --------
    >>> from mpi4py import MPI                          # doctest: +SKIP
    >>> grid = ProcessGrid(MPI.COMM_WORLD)              # 4 ranks: a 2x2 pencil grid
    >>> grid.dims, grid.coords                          # doctest: +SKIP
    ((2, 2), {'x': 0, 'y': 1})
    """

    def __init__(self, comm: MPI.Comm, dims: Sequence[int] | None = None, *,
                 abort_on_exception: bool = True):
        if not MPI.Is_initialized() or MPI.Is_finalized():
            raise RuntimeError("ProcessGrid: MPI is not initialised (or already finalised); "
                               "import mpi4py.MPI with its default rc.initialize=True, or call "
                               "MPI.Init() first")
        if not isinstance(comm, MPI.Intracomm):
            raise TypeError(f"ProcessGrid: comm must be an mpi4py intracommunicator, got "
                            f"{type(comm).__name__}")
        size = comm.Get_size()
        dims = self._check_dims(dims, size)
        check_environment()
        if abort_on_exception:
            install_excepthook()
        self.dims = dims
        self.names = DEFAULT_AXIS_NAMES[len(dims)]
        self.comm = comm.Create_cart(list(dims), periods=[False] * len(dims), reorder=False)
        coords = self.comm.Get_coords(self.comm.Get_rank())
        self.coords = dict(zip(self.names, (int(c) for c in coords)))
        self.mesh_shape = tuple((m, p) for m, p in zip(self.names, dims) if p > 1)
        self.comms = {}
        for i, (m, p) in enumerate(zip(self.names, dims)):
            if p > 1:
                self.comms[m] = self.comm.Sub([j == i for j in range(len(dims))])
        coords = {m: self.coords[m] for m in self.comms}
        if len(self.mesh_shape) == 2:
            # an array axis split over both grid axes (``('x', 'y')``, the first major):
            # the ranks numbered in that order, as ``lax.axis_index`` numbers devices
            (a, pa), (b, pb) = self.mesh_shape
            for major, minor, n_minor in ((a, b, pb), (b, a, pa)):
                key = self.coords[major] * n_minor + self.coords[minor]
                self.comms[(major, minor)] = self.comm.Split(0, key)
                coords[(major, minor)] = key
        self.transport = MPITransport(self.comms, coords)
        self._regrids: dict[tuple[int, ...], ProcessGrid] = {}

    @staticmethod
    def _check_dims(dims, size: int) -> tuple[int, ...]:
        if dims is None:
            return dims_create(size, 2)
        try:
            dims = tuple(int(d) for d in dims)
        except TypeError:
            raise TypeError(f"ProcessGrid: dims must be a sequence of ints, got {dims!r}") from None
        if len(dims) not in (1, 2):
            raise ValueError(f"ProcessGrid: dims must have one (slab) or two (pencil) sizes, "
                             f"got {dims} ({len(dims)} sizes)")
        if any(d < 1 for d in dims):
            raise ValueError(f"ProcessGrid: dims must be positive, got {dims}")
        if math.prod(dims) != size:
            raise ValueError(f"ProcessGrid: dims {dims} make {math.prod(dims)} ranks, but the "
                             f"communicator has {size}")
        return dims

    def regrid(self, dims: Sequence[int]) -> "ProcessGrid":
        """The same ranks as a grid of shape ``dims`` (collective; made once per
        ``dims`` and kept): what tuning compares and ``tune="wisdom"`` plans on."""
        dims = self._check_dims(dims, self.size)
        if dims == self.dims:
            return self
        if dims not in self._regrids:
            self._regrids[dims] = ProcessGrid(self.comm, dims, abort_on_exception=False)
        return self._regrids[dims]

    @property
    def rank(self) -> int:
        """This process's rank in :attr:`comm`."""
        return self.comm.Get_rank()

    @property
    def size(self) -> int:
        """The number of ranks."""
        return self.comm.Get_size()

    def __repr__(self) -> str:
        shape = "x".join(map(str, self.dims))
        coords = ", ".join(f"{m}={c}" for m, c in self.coords.items())
        return f"ProcessGrid({shape} ({','.join(self.names)}), rank {self.rank} at {coords})"

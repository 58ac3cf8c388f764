"""Tools built on pfft's transforms: frequencies, halo exchange, spectral operators.

``pfft.fftfreq``/``pfft.rfftfreq`` are numpy's frequencies as jax arrays;
``pfft.halo_exchange``/``pfft.halo_reduce`` give every local block of a sharded
array its neighbours' edges (and add them back, the exact adjoint);
``pfft.fftshift``/``pfft.ifftshift`` roll sharded spectra by collective permutes;
:mod:`pfft.spectral` solves and differentiates on periodic grids;
``pfft.from_host``/``pfft.to_host`` move arrays between hosts and a mesh, also across
processes.
"""
from . import spectral
from .freq import fftfreq, r2rfreq, rfftfreq
from .halo import halo_exchange, halo_reduce
from .hosts import from_host, to_host
from .shift import fftshift, ifftshift

__all__ = ["fftfreq", "rfftfreq", "r2rfreq", "halo_exchange", "halo_reduce", "fftshift", "ifftshift",
           "spectral", "from_host", "to_host"]

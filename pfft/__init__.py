"""pfft: distributed, numpy-exact 3D FFTs for JAX on slab and pencil device grids.

>>> import numpy as np, pfft                                   # doctest: +SKIP
>>> mesh = pfft.make_mesh(8)                                   # doctest: +SKIP
>>> x = pfft.device_put(np.random.rand(64, 64, 64) + 0j, mesh)  # doctest: +SKIP
>>> k = pfft.fftn(x)                                           # doctest: +SKIP
"""
from .api import (device_put, fft, fft2, fftn, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ihfft,
                  ihfft2, ihfftn, irfft, irfft2,
                  irfftn, rfft, rfft2, rfftn)
from .config import show_config
from .grid import dims_create, make_mesh
from .layout import Layout
from .mesh_plan import (Plan, ReplicationWarning, clear_plan_cache, plan_cache_info,
                        set_plan_cache_size)
from .make_plan import plan
from .r2r import dct, dctn, dst, dstn, idct, idctn, idst, idstn
from .tuning import tune
from .wisdom import forget_wisdom, load_wisdom, save_wisdom
from .toolkit import (fftfreq, fftshift, from_host, halo_exchange, halo_reduce, ifftshift,
                      r2rfreq, rfftfreq, spectral, to_host)

__version__ = "0.1.0"

__all__ = ["fftn", "ifftn", "rfftn", "irfftn", "fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "fftshift", "ifftshift", "device_put",
           "hfftn", "ihfftn", "hfft2", "ihfft2",
           "dctn", "idctn", "dstn", "idstn", "dct", "idct", "dst", "idst",
           "make_mesh", "dims_create", "plan", "Plan", "ReplicationWarning",
           "Layout", "plan_cache_info", "set_plan_cache_size", "clear_plan_cache",
           "tune", "save_wisdom", "load_wisdom", "forget_wisdom",
           "fftfreq", "rfftfreq", "r2rfreq", "halo_exchange", "halo_reduce", "spectral", "show_config",
           "from_host", "to_host"]

"""The README's demo: a 128^3 complex FFT on 8 simulated CPU devices (2x4 grid).

Checks it against numpy in float64 and times it next to single-device jnp.fft.fftn.
"""
from __future__ import annotations

from .common import median_time, simulate_cpu_devices

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import pfft  # noqa: E402


def main(n: int = 128) -> None:
    mesh = pfft.make_mesh(8)
    print(f"pfft demo: {n}^3 complex64 on {mesh.devices.size} simulated CPU devices, "
          f"grid {' x '.join(f'{k}={v}' for k, v in mesh.shape.items())}")
    rng = np.random.default_rng(0)
    x_host = (rng.standard_normal((n, n, n)) + 1j * rng.standard_normal((n, n, n))).astype(np.complex64)
    x = pfft.device_put(x_host, mesh)
    plan = pfft.plan(x.shape, x.dtype, mesh)
    print(plan)
    k = plan.forward(x)
    ref = np.fft.fftn(x_host.astype(np.complex128))
    err = np.linalg.norm(np.asarray(k) - ref) / np.linalg.norm(ref)
    print(f"relative L2 error vs numpy float64: {err:.2e}  (bound 1e-6) -> "
          f"{'OK' if err <= 1e-6 else 'FAIL'}")
    fwd = jax.jit(plan.forward)
    single = jax.jit(jnp.fft.fftn)
    x1 = jax.device_put(x_host, jax.devices()[0])
    t_pfft = median_time(fwd, x, repeats=9)
    t_one = median_time(single, x1, repeats=9)
    print(f"pfft.fftn (2x4 grid): {t_pfft * 1e3:7.1f} ms   "
          f"jnp.fft.fftn (1 device): {t_one * 1e3:7.1f} ms   ratio {t_pfft / t_one:.2f}")
    print("(8 simulated devices share this machine's cores: the ratio measures "
          "distribution overhead, not scaling)")
    if err > 1e-6:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

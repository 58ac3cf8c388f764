"""jaxDecomp's ``pfft3d`` (pure-JAX backend) on simulated CPU devices; prints JSON rows.

Runs under a separate environment that has jaxDecomp (``benchmarks/suite.py``
starts it as a subprocess)::

    python3 -m venv .venv-peers && .venv-peers/bin/pip install jaxdecomp packaging
    .venv-peers/bin/python benchmarks/peers/jaxdecomp_bench.py --sizes 128 --grids 2x2 4

One JSON object per line on stdout: ``impl``, ``n``, ``dtype``, ``grid``, ``ms``
(median), ``rel_err`` (against ``numpy.fft.fftn`` in float64 on the same input as
the main suite: ``default_rng(0)``, real then imaginary part), ``single_ms`` (this
environment's one-device ``jnp.fft.fftn``), versions. A slab grid ``(p,)`` is run as
jaxDecomp's ``(p, 1)`` mesh. Output order is jaxDecomp's default (Y, Z, X).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

flags = os.environ.get("XLA_FLAGS", "")
if "xla_force_host_platform_device_count" not in flags:
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count=8".strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

jax.config.update("jax_enable_x64", True)

# the benchmarks' one timing harness (benchmarks/common.py: the standard library only,
# so it imports in this environment too, from the checkout this script is in)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from benchmarks.common import median_time  # noqa: E402


def median_ms(fn, x, repeats: int) -> float:
    """Median ms of ``fn(x)`` after a warm-up call (:func:`benchmarks.common.median_time`)."""
    return 1e3 * median_time(fn, x, repeats=repeats)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64])
    ap.add_argument("--dtypes", nargs="+", default=["complex64"])
    ap.add_argument("--grids", nargs="+", default=["2x2"])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    try:
        import jaxdecomp
        from jaxdecomp.fft import pfft3d
    except Exception as e:                          # noqa: BLE001 - report any import failure
        print(json.dumps({"impl": "jaxdecomp", "error": f"import failed: {e!r}"}), flush=True)
        return
    versions = {"jaxdecomp": getattr(jaxdecomp, "__version__", "?"), "jax": jax.__version__}
    for n in args.sizes:
        for dname in args.dtypes:
            dtype = np.dtype(dname)
            rng = np.random.default_rng(0)
            host = (rng.standard_normal((n, n, n)) + 1j * rng.standard_normal((n, n, n))).astype(dtype)
            ref = np.transpose(np.fft.fftn(host.astype(np.complex128)), (1, 2, 0))
            single = median_ms(jax.jit(jnp.fft.fftn), jax.device_put(host, jax.devices()[0]),
                               args.repeats)
            for g in args.grids:
                dims = tuple(int(v) for v in g.split("x"))
                pdims = dims if len(dims) == 2 else (dims[0], 1)
                row = {"impl": "jaxdecomp", "n": n, "dtype": dtype.name, "grid": g,
                       "single_ms": single, **versions}
                try:
                    devices = np.array(jax.devices()[:pdims[0] * pdims[1]]).reshape(pdims)
                    mesh = Mesh(devices, ("x", "y"),
                                axis_types=(jax.sharding.AxisType.Auto,) * 2)
                    x = jax.device_put(host, NamedSharding(mesh, P("x", "y")))
                    fwd = jax.jit(pfft3d)
                    k = np.asarray(fwd(x))
                    row["rel_err"] = float(np.linalg.norm(k - ref) / np.linalg.norm(ref))
                    del k
                    row["ms"] = median_ms(fwd, x, args.repeats)
                    del x
                except Exception as e:              # noqa: BLE001 - a peer's failure is a result
                    row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                print(json.dumps(row), flush=True)
                print(f"jaxdecomp {n}^3 {dtype.name} {g}: {row.get('ms', row.get('error'))}",
                      file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()

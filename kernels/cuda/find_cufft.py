"""Print the cuFFT root (with include/cufft.h and lib/libcufft.so.*) to build against.

Looks at $CUFFT_ROOT, then the nvidia-cufft wheels of this Python (CUDA 13:
nvidia/cu13, CUDA 12: nvidia/cufft) and of the environment pip installs into when it
builds in isolation ($VIRTUAL_ENV, $CONDA_PREFIX), then kernels/build/cufft (a wheel
unpacked by `make -C kernels cuda`; not with --installed, which `pip install .` uses:
only a cuFFT the user's environment has), then /usr/local/cuda. Prints nothing if none.
"""
import glob
import os
import sys

WHEEL_DIRS = ("nvidia/cu13", "nvidia/cufft")


def candidates(installed_only: bool):
    if os.environ.get("CUFFT_ROOT"):
        yield os.environ["CUFFT_ROOT"]
    for entry in sys.path:
        for sub in WHEEL_DIRS:
            yield os.path.join(entry, sub)
    for prefix in (os.environ.get("VIRTUAL_ENV"), os.environ.get("CONDA_PREFIX")):
        for site in glob.glob(os.path.join(prefix, "lib*", "python3*", "site-packages")
                              if prefix else ""):
            for sub in WHEEL_DIRS:
                yield os.path.join(site, sub)
    if not installed_only:
        here = os.path.dirname(os.path.abspath(__file__))
        for sub in WHEEL_DIRS:
            yield os.path.join(here, "..", "build", "cufft", sub)
    yield "/usr/local/cuda"


for root in candidates("--installed" in sys.argv[1:]):
    libs = glob.glob(os.path.join(root, "lib*", "libcufft.so*"))
    if os.path.isfile(os.path.join(root, "include", "cufft.h")) and libs:
        print(os.path.abspath(root))
        break

"""Print the cuFFT root (with include/cufft.h and lib/libcufft.so.*) to build against.

Looks at $CUFFT_ROOT, then the nvidia-cufft wheels importable by this Python
(CUDA 13: nvidia/cu13, CUDA 12: nvidia/cufft), then kernels/build/cufft (a wheel
unpacked by `make -C kernels cuda`), then /usr/local/cuda. Prints nothing if none.
"""
import glob
import os
import sys


def candidates():
    if os.environ.get("CUFFT_ROOT"):
        yield os.environ["CUFFT_ROOT"]
    for entry in sys.path:
        for sub in ("nvidia/cu13", "nvidia/cufft"):
            yield os.path.join(entry, sub)
    here = os.path.dirname(os.path.abspath(__file__))
    for sub in ("nvidia/cu13", "nvidia/cufft"):
        yield os.path.join(here, "..", "build", "cufft", sub)
    yield "/usr/local/cuda"


for root in candidates():
    libs = glob.glob(os.path.join(root, "lib*", "libcufft.so*"))
    if os.path.isfile(os.path.join(root, "include", "cufft.h")) and libs:
        print(os.path.abspath(root))
        break

# Cross-compiling the CPU kernels for 64-bit Arm Linux from an x86-64 machine with
# Debian's cross toolchain (g++-aarch64-linux-gnu):
#
#   make -C kernels cpu-aarch64 PYTHON=.venv/bin/python
#
# The library cannot run here; tests/test_wheel.py checks that it builds and exports
# the same handlers as the native one: the sources must build for Arm too.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

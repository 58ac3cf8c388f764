"""What a plan's compiled programs hold on a device, before they run.

:meth:`pfft.plan_core.PlanCore.memory` compiles the forward and backward programs of a
plan for one device's block (XLA's own accounting: ``memory_analysis()`` of the
compiled executable), twice each: with the caller keeping its input, and with the
input donated (``jax.jit(..., donate_argnums=0)``), where XLA may write the output
over it. A program holds its argument, its output and its temporaries at once; a
donated argument aliased to the output is counted once.

Figures are bytes per device and, in :attr:`ProgramMemory.blocks`, multiples of the
device's block of the plan's forward input (a real plan's real input: its complex
spectrum is about two such blocks). The FFT library's work area is part of the
temporaries and is reported beside them: the largest one a step of the program asks
XLA for (cuFFT's, through pfft's GPU kernels). XLA's own FFT and the CPU kernels
allocate theirs outside XLA's accounting (a few lines of the transform on CPUs).
"""
from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["ProgramMemory", "PlanMemory", "measure", "program_memory", "compiled_memory"]

# a workspace result of one of pfft's custom calls in compiled HLO text: "u8[123]"
_WORKSPACE = re.compile(r"custom_call_target=\"pfft_")
_U8 = re.compile(r"\bu8\[(\d+)\]")


@dataclass(frozen=True)
class ProgramMemory:
    """One compiled program's memory on a device, in bytes.

    Attributes
    ----------
    argument, output, temporaries
        XLA's allocations for them.
    aliased
        Argument bytes the output reuses (a donated input).
    work_area
        Of the temporaries: the largest FFT work area a step asks XLA for.
    block
        Bytes of the device's block of the plan's forward input: the unit of
        :attr:`blocks`.
    """

    argument: int
    output: int
    temporaries: int
    aliased: int
    work_area: int
    block: int

    @property
    def total(self) -> int:
        """Bytes held at once: argument, output and temporaries, aliases once."""
        return self.argument + self.output + self.temporaries - self.aliased

    @property
    def blocks(self) -> float:
        """:attr:`total` in blocks of the forward input."""
        return self.total / self.block


@dataclass(frozen=True)
class PlanMemory:
    """Both directions of a plan, with the input kept and donated.

    ``forward``/``backward`` map ``"kept"`` and ``"donated"`` to a
    :class:`ProgramMemory`. ``print()`` gives a table in blocks and MiB."""

    forward: dict
    backward: dict

    @property
    def peak(self) -> int:
        """The most bytes any of the four programs holds (kept input: the default)."""
        return max(p.total for d in (self.forward, self.backward) for p in d.values())

    def __str__(self) -> str:
        lines = ["program   input    blocks   MiB   (argument + output + temporaries"
                 " - aliased; FFT work area)"]
        for name, progs in (("forward", self.forward), ("backward", self.backward)):
            for how, p in progs.items():
                lines.append(f"{name:9} {how:8} {p.blocks:6.2f} {p.total / 2**20:9.1f}   "
                             f"({_mib(p.argument)} + {_mib(p.output)} + "
                             f"{_mib(p.temporaries)} - {_mib(p.aliased)}; "
                             f"{_mib(p.work_area)})")
        return "\n".join(lines)


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f}"


def work_area_bytes(hlo_text: str) -> int:
    """The largest work area one of pfft's kernels asks XLA for in ``hlo_text``."""
    sizes = [int(n) for line in hlo_text.splitlines() if _WORKSPACE.search(line)
             for n in _U8.findall(line.split("custom-call(")[0])]
    return max(sizes, default=0)


def compiled_memory(compiled, block: int) -> ProgramMemory | None:
    """XLA's accounting of the compiled executable ``compiled`` (``None`` where the
    backend gives none); ``block``: the unit of :attr:`~ProgramMemory.blocks`."""
    m = compiled.memory_analysis()
    if m is None:                                   # pragma: no cover - backend without it
        return None
    return ProgramMemory(int(m.argument_size_in_bytes), int(m.output_size_in_bytes),
                         int(m.temp_size_in_bytes), int(m.alias_size_in_bytes),
                         work_area_bytes(compiled.as_text()), int(block))


def program_memory(fn, arg, *, donate: bool, block: int) -> ProgramMemory:
    """The memory of ``jax.jit(fn)`` compiled for ``arg`` (a ``ShapeDtypeStruct``),
    the argument ``donate``-d or kept; ``block``: the unit of :attr:`~ProgramMemory.blocks`."""
    import jax

    with warnings.catch_warnings():
        # a donated input no output can reuse (a real transform's sizes differ):
        # XLA keeps it, and the figures say so (nothing aliased)
        warnings.filterwarnings("ignore", message="Some donated buffers were not usable")
        compiled = jax.jit(fn, donate_argnums=(0,) if donate else ()).lower(arg).compile()
    return compiled_memory(compiled, block)


def measure(plan, variants) -> PlanMemory:
    """:class:`PlanMemory` of ``plan`` (a :class:`pfft.plan_core.PlanCore`), its
    ``variants`` ``(forward, backward)`` compiled as :meth:`plan.run` runs them."""
    args = [plan._abstract_input(variant) for variant in variants]
    block = math.prod(_device_shape(args[0])) * np.dtype(args[0].dtype).itemsize
    return PlanMemory(*({how: program_memory(plan._entry(variant), arg,
                                             donate=how == "donated", block=block)
                         for how in ("kept", "donated")}
                        for variant, arg in zip(variants, args)))


def _device_shape(arg) -> tuple[int, ...]:
    """The shape of one device's part of ``arg`` (a ``ShapeDtypeStruct``)."""
    sharding = getattr(arg, "sharding", None)
    if sharding is None:
        return tuple(arg.shape)
    return tuple(sharding.shard_shape(arg.shape))

"""Reading compiled HLO text: which collectives a function compiles to.

One home for the count that :meth:`pfft.Plan.collectives` reports and that tests and
benchmarks assert on.

The counts come from the text XLA prints for a compiled executable
(``jax.jit(f).lower(x).compile().as_text()``), one instruction per line::

    %ppermute.6 = c128[4,5,9]{2,1,0} collective-permute(%ffi_call.25), channel_id=1, ...
    %all-to-all = (c128[4,5,9]{2,1,0}, c128[4,5,9]{2,1,0}) all-to-all(%a, %b), ...

An asynchronous collective prints as a ``-start``/``-done`` pair (or as an
``async-start`` whose called computation holds the collective itself); each is counted
once: the ``-start`` half, or the wrapped instruction.
"""
from __future__ import annotations

import re

__all__ = ["COLLECTIVES", "opcodes", "count_collectives"]

COLLECTIVES = ("all-to-all", "collective-permute", "all-gather", "all-reduce",
               "reduce-scatter", "collective-broadcast")

# `[ROOT ]%name = <shape> <opcode>(`: the shape is one token or a parenthesised tuple
# (which may hold spaces); the opcode is the first lower-case word followed by `(`
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")
_OPCODE = re.compile(r"(?:^|\s)([a-z][a-z0-9\-]*)\(")


def opcodes(hlo_text: str) -> list[str]:
    """The opcode of every instruction in ``hlo_text``, in order of appearance."""
    out = []
    for line in hlo_text.splitlines():
        m = _INSTRUCTION.match(line)
        if m is None:
            continue
        op = _OPCODE.search(m.group(1))
        if op is not None:
            out.append(op.group(1))
    return out


def count_collectives(hlo_text: str) -> dict[str, int]:
    """How many of each collective (:data:`COLLECTIVES`) ``hlo_text`` holds.

    ``X-start`` counts as one ``X`` and ``X-done`` as none, so a synchronous and an
    asynchronous collective count alike. Every key of :data:`COLLECTIVES` is present.
    """
    counts = dict.fromkeys(COLLECTIVES, 0)
    for op in opcodes(hlo_text):
        if op.endswith("-done"):
            continue
        base = op[:-len("-start")] if op.endswith("-start") else op
        if base in counts:
            counts[base] += 1
    return counts

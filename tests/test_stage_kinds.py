"""Each kind of stage holds all its rules, and :data:`pfft.stages.STAGE_KINDS` lists
every kind a chain may hold."""
from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from pfft import chain_search, executor, program
from pfft.stage_kinds.base import Movement, OnOneAxis

from pfft.chain_search import Chain, after, build_chain
from pfft.layout import Layout
from pfft.stages import STAGE_KINDS, LocalFFT, Stage

RULES = ("inverse", "__str__", "after", "batched", "natural_scale", "resolve")


@pytest.mark.parametrize("kind", STAGE_KINDS, ids=lambda k: k.__name__)
def test_every_kind_defines_its_rules(kind):
    """A kind has each rule (its own or a family's, never ``object``'s), and says
    whether it is a local transform."""
    for rule in RULES:
        assert getattr(kind, rule, None) not in (None, getattr(object, rule, None)), (
            kind.__name__, rule)
    assert isinstance(kind.local_transform, bool)


def test_the_table_is_the_union():
    """``Stage`` is exactly the kinds of the table."""
    assert typing.get_args(Stage) == STAGE_KINDS


def test_local_transforms_have_a_pieces_form():
    """The kinds the pieces kernel runs are the local transforms (a route chosen when
    the program is made, and the passes it runs); data movements have no pieces
    form."""
    for kind in STAGE_KINDS:
        for hook in ("pieces_route", "pieces_pass"):
            assert callable(getattr(kind, hook, None)) == kind.local_transform, (kind, hook)


GRID = (("x", 2), ("y", 2))


def _chains():
    """Chains holding every kind of stage."""
    from pfft.engines.r2r import R2R

    yield build_chain(Layout((8, 12, 6), ("x", "y", None), GRID), (0, 1, 2))
    yield build_chain(Layout((8, 12, 6), ("x", None, None), GRID), (0, 1, 2), kind="r2c",
                      dealiased={0: 6, 2: 4})
    yield build_chain(Layout((8, 12, 6), ("x", "y", None), GRID), (0, 1, 2),
                      r2r=[(0, R2R("dct", 2, 8))])
    yield build_chain(Layout((3, 5, 7), ("x", "y", None), GRID), (0, 1, 2))


def test_the_chains_hold_every_kind():
    """The chains below reach every kind of the table."""
    assert {type(st) for chain in _chains() for st in chain.stages} == set(STAGE_KINDS)


def test_batched_stages_leave_the_batched_layouts():
    """Every kind's ``batched`` and ``after`` agree: a batched chain's stages leave the
    chain's layouts with the batch axis in front, and its inverse is the inverse's
    batched form."""
    for chain in _chains():
        batched = chain.with_leading_axis(3)
        assert batched.layouts() == tuple(lay.with_leading_axis(3) for lay in chain.layouts())
        assert batched.reversed() == chain.reversed().with_leading_axis(3)
        layout = chain.in_layout
        for st in chain.stages:
            assert after(layout, st) == st.after(layout)
            layout = st.after(layout)
            assert st.inverse().inverse() == st


@dataclass(frozen=True)
class _Conjugate(Movement, OnOneAxis):
    """A kind of stage made for the test: complex conjugation (``axis`` is only where it
    is printed), every rule defined here."""

    axis: int

    def inverse(self) -> "_Conjugate":
        return self

    def __str__(self) -> str:
        return f"conjugate, axis {self.axis} (local)"

    def after(self, layout: Layout) -> Layout:
        return layout

    def resolve(self, walk, at) -> None:
        walk.add(_Conj(self))


@dataclass(frozen=True)
class _Conj:
    """The step of :class:`_Conjugate`."""

    stage: _Conjugate

    def run(self, data, transport):
        return data.conj()

    def __str__(self) -> str:
        return str(self.stage)


def test_a_new_kind_is_one_class_and_its_entry(monkeypatch):
    """A kind defined in one place and entered in the table is planned around, batched,
    resolved, printed and run, with no other code changed."""
    from pfft.engines.xla import ENGINE
    from pfft.transports import xla as transport

    monkeypatch.setattr(chain_search, "STAGE_KINDS", STAGE_KINDS + (_Conjugate,))
    layout = Layout((4, 6), (None, None), ())
    chain = Chain(layout, layout, (LocalFFT((0, 1)), _Conjugate(0)))
    assert chain.layouts() == (layout, layout)
    assert chain.with_leading_axis(2).stages[1] == _Conjugate(1)
    prog = program.resolve(chain, inverse=False, weighted=False, scale=1.0,
                           dtype=np.complex64, engine=ENGINE, transport=transport)
    assert prog.lines()[-1] == "conjugate, axis 0 (local) [block (4, 6)]"
    x = np.arange(24, dtype=np.complex64).reshape(4, 6) * (1 + 2j)
    got = executor.run_program(x, prog, transport)
    np.testing.assert_allclose(np.asarray(got), np.fft.fft2(x).conj(), rtol=1e-5, atol=1e-3)

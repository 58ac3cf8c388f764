"""Each kind of stage holds all its rules, and :data:`pfft.stages.STAGE_KINDS` lists
every kind a chain may hold."""
from __future__ import annotations

import typing

import pytest

from pfft.chain_search import after, build_chain
from pfft.layout import Layout
from pfft.stages import STAGE_KINDS, Stage

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
    """The kinds the pieces kernel runs are the local transforms; data movements
    have no pieces form."""
    for kind in STAGE_KINDS:
        assert callable(getattr(kind, "pieces_pass", None)) == kind.local_transform, kind


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

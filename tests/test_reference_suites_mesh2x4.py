"""numpy's and scipy's own FFT tests, as installed with them, run on pfft's functions
on a 2x4 mesh: each array input put there with :func:`pfft.device_put`, the
transforms distributed. :mod:`reference_suites` loads them (how, and what is left out
and why); ``test_reference_suites.py`` runs them on one device. A module of its own,
so that pytest-xdist's ``--dist loadfile`` gives each setup to a worker of its own.
"""
import reference_suites as rs
from reference_suites import leave_out, xp  # noqa: F401  (the suites' fixtures)

globals().update(rs.suite_classes("Mesh2x4", __name__))

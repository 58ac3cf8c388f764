"""pfft's functions take few parameters: where more belong together, they travel as one
value (a :class:`pfft.problem.Problem`, a :class:`pfft.interfaces.PiecesPass`, ...).

Read from the sources with :mod:`ast`, so every module counts (``pfft.mpi`` too, whose
imports need MPI). A parameter is anything a caller can pass: positional-only,
positional, keyword-only, ``*args`` and ``**kwargs``; a method's ``self`` or ``cls``
is not. The public functions whose signatures mirror numpy's, scipy's or pfft's own
documented API keep them (:data:`MIRRORS`).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the most parameters a function of pfft takes
MOST = 8
#: public signatures that mirror an API users already call: (module file, function)
MIRRORS = {
    ("pfft/make_plan.py", "plan"),          # pfft.plan
    ("pfft/mpi/make_plan.py", "plan"),      # pfft.mpi.plan, pfft.plan's with a grid
    ("pfft/tuning.py", "tune"),             # pfft.tune
    ("pfft/mpi/tuning.py", "tune"),         # pfft.mpi.tune
    ("pfft/r2r.py", "dctn"),                # scipy.fft.dctn and its kin
    ("pfft/r2r.py", "idctn"),
    ("pfft/r2r.py", "dstn"),
    ("pfft/r2r.py", "idstn"),
    ("pfft/r2r.py", "dct"),                 # scipy.fft.dct and its kin
    ("pfft/r2r.py", "idct"),
    ("pfft/r2r.py", "dst"),
    ("pfft/r2r.py", "idst"),
} | {("pfft/api.py", name) for name in (    # numpy.fft's and scipy.fft's FFTs (numpy's
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn",    # out=, scipy's
    "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2", "hfftn",      # overwrite_x=,
    "ihfftn", "hfft2", "ihfft2")}                                         # workers=, plan=)


def parameter_count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters ``fn`` takes, ``self`` and ``cls`` left out."""
    a = fn.args
    count = (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
             + (a.vararg is not None) + (a.kwarg is not None))
    first = (a.posonlyargs + a.args)[:1]
    if first and first[0].arg in ("self", "cls"):
        count -= 1
    return count


def functions(path: Path):
    """Every function and method defined in ``path``, nested ones included."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def test_the_count_sees_every_kind_of_parameter():
    source = ("def f(self, a, /, b, *args, c, **kw): pass\n"
              "def g(x, y=1): pass\n"
              "async def h(cls, *, z): pass\n")
    counts = {fn.name: parameter_count(fn) for fn in ast.walk(ast.parse(source))
              if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert counts == {"f": 5, "g": 2, "h": 1}


def test_no_function_takes_more_than_eight_parameters():
    """Settings that travel together are one value; only the public signatures that
    mirror numpy's, scipy's and pfft's documented API take more."""
    over = []
    for path in sorted((ROOT / "pfft").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        for fn in functions(path):
            count = parameter_count(fn)
            if count > MOST and (where, fn.name) not in MIRRORS:
                over.append(f"{where}:{fn.lineno} {fn.name} ({count})")
    assert not over, f"functions with more than {MOST} parameters: " + ", ".join(over)


def test_every_mirror_is_a_function_of_pfft():
    """An exemption names a function that is there (a renamed one would leave it
    standing for nothing)."""
    present = {(path, fn.name) for path, _ in MIRRORS
               for fn in functions(ROOT / path)}
    assert MIRRORS <= present, sorted(MIRRORS - present)

"""Sphinx configuration: Markdown pages and the notebooks (MyST-NB), and an API reference
from numpy-style docstrings.

Build: ``make docs`` or ``sphinx-build -W -b html docs docs/_build/html``.

The notebooks of ``notebooks/`` are shown with the outputs committed in them (they are
not run at build: ``make notebooks`` runs them and stores their outputs, and
``tests/test_notebooks.py`` fails where a notebook's code changed since its outputs
were made). They are copied into ``docs/notebooks/`` (not tracked) for Sphinx.
"""
import os
import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def _copy_notebooks() -> None:
    target = HERE / "notebooks"
    target.mkdir(exist_ok=True)
    sources = sorted((HERE.parent / "notebooks").glob("*.ipynb"))
    for stale in set(target.glob("*.ipynb")) - {target / s.name for s in sources}:
        stale.unlink()
    for source in sources:
        copy = target / source.name
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            shutil.copyfile(source, copy)


_copy_notebooks()

project = "pfft"
author = "pfft developers"
copyright = "pfft developers"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
nb_execution_mode = "off"           # the committed outputs (see above)
nb_merge_streams = True
root_doc = "index"
# data/*.md: tables the benchmark commands write, included by the pages that show them
exclude_patterns = ["_build", "**.ipynb_checkpoints", "data/*.md"]

myst_heading_anchors = 3             # "#getting-started" style links to headings
myst_enable_extensions = ["dollarmath"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

html_theme = "alabaster"
html_title = "pfft"
# wide enough for the code cells of the notebooks and the layout figure's captions
html_theme_options = {"page_width": "1240px", "body_max_width": "none", "sidebar_width": "220px"}

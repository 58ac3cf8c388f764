"""Sphinx configuration: Markdown pages (MyST) and an API reference from numpy-style docstrings.

Build: ``make docs`` or ``sphinx-build -W -b html docs docs/_build/html``.
"""
import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "pfft"
author = "pfft developers"
copyright = "pfft developers"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

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

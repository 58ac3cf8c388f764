"""The Sphinx docs build without a warning; the API reference covers the public API; every
image in the site is a valid file, every notebook page shows a figure, and the layout
figure is the planner's current one."""
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytest.importorskip("sphinx", reason="sphinx is not installed (pip install -e '.[docs]')")
pytest.importorskip("myst_parser", reason="myst-parser is not installed (pip install -e '.[docs]')")
pytest.importorskip("myst_nb", reason="myst-nb is not installed (pip install -e '.[docs]')")


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    return out / "html"


def test_docs_build_without_warnings(html):
    pages = {p.stem for p in html.glob("*.html")}
    sources = {p.stem for p in (ROOT / "docs").glob("*.md")}
    assert sources <= pages, sources - pages


def test_reference_covers_the_public_api(html):
    import pfft

    text = (html / "reference.html").read_text()
    public = [name for name in pfft.__all__ if callable(getattr(pfft, name))]
    missing = [name for name in public if f'id="pfft.{name}"' not in text]
    assert not missing, f"docs/reference.md does not document {missing}"
    for name in pfft.spectral.__all__:
        assert f'id="pfft.spectral.{name}"' in text, name


def test_every_image_in_the_site_is_a_valid_image_file(html):
    from PIL import Image

    count = 0
    for page in html.rglob("*.html"):
        for src in re.findall(r'<img[^>]*\ssrc="([^"]+)"', page.read_text()):
            if src.startswith("data:"):
                continue
            path = (page.parent / src.split("#")[0].split("?")[0]).resolve()
            assert path.is_file(), f"{page.relative_to(html)}: <img src={src!r}> does not resolve"
            with Image.open(path) as image:
                image.verify()              # raises on a truncated or broken file
            count += 1
    assert count >= 6, count                # the notebooks' figures, layouts, benchmarks


def test_every_notebook_page_shows_a_figure(html):
    pages = sorted((html / "notebooks").glob("*.html"))
    assert {p.stem for p in pages} == {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    for page in pages:
        assert re.search(r"<img[^>]*\ssrc=", page.read_text()), f"{page.name} has no figure"


def test_layout_figure_draws_the_plans_pfft_makes_now():
    spec = importlib.util.spec_from_file_location("layout_figures",
                                                  ROOT / "docs" / "layout_figures.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    assert figures.stored_description() == figures.describe(), \
        "the planner changed: run `make figures` (python docs/layout_figures.py)"


def test_every_committed_figure_is_drawn_by_make_figures_and_shown():
    spec = importlib.util.spec_from_file_location("make_figures", ROOT / "docs" / "make_figures.py")
    make_figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_figures)
    committed = {p.name for p in (ROOT / "docs" / "figures").glob("*.png")}
    assert committed == set(make_figures.figures_drawn()), \
        "docs/make_figures.py (python -m benchmarks report) must redraw every image under docs/figures/"
    pages = " ".join(p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    unused = [name for name in committed if f"figures/{name}" not in pages]
    assert not unused, f"committed figures no page shows: {unused}"


def test_every_table_a_page_includes_is_in_docs_data():
    """Each `{include}` of a page names a file that exists (the tables `python -m
    benchmarks report` writes, and the GPU run's)."""
    for page in (ROOT / "docs").glob("*.md"):
        for name in re.findall(r"```\{include\} (\S+)", page.read_text()):
            assert (page.parent / name).is_file(), f"{page.name} includes {name}, which is missing"

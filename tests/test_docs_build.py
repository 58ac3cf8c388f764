"""The Sphinx docs build without a warning; the API reference covers the public API."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytest.importorskip("sphinx", reason="sphinx is not installed (pip install -e '.[docs]')")
pytest.importorskip("myst_parser", reason="myst-parser is not installed (pip install -e '.[docs]')")


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

"""The notebooks in notebooks/ run top to bottom; each asserts its key result in a cell."""
import json
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

WHY = "is not installed (pip install -e '.[docs]'; make test installs it)"
nbformat = pytest.importorskip("nbformat", reason=f"nbformat {WHY}")
nbclient = pytest.importorskip("nbclient", reason=f"nbclient {WHY}")
pytest.importorskip("ipykernel", reason=f"ipykernel {WHY}")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """A kernel spec that runs this interpreter, whatever kernels the machine has."""
    path = tmp_path_factory.mktemp("jupyter")
    spec = path / "kernels" / "pfft-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "pfft tests", "language": "python"}))
    return str(path)


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, kernel, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", kernel)
    monkeypatch.setenv("PYTHONPATH",
                       os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name="pfft-test", timeout=300,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()                    # raises CellExecutionError, with the cell, on failure
    last = nb.cells[-1]
    text = "".join(o.get("text", "") for o in last.get("outputs", []))
    assert "ok" in text, f"{path.name}: the last cell did not report its checks: {text!r}"

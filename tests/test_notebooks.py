"""The notebooks in notebooks/ run top to bottom (each asserts its key result in its
last cell), and the outputs committed in them, which the docs show, are those of
their current code (docs/notebook_outputs.py; `make notebooks` refreshes them)."""
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

WHY = "is not installed (pip install -e '.[docs]'; make test installs it)"
nbformat = pytest.importorskip("nbformat", reason=f"nbformat {WHY}")
nbclient = pytest.importorskip("nbclient", reason=f"nbclient {WHY}")
pytest.importorskip("ipykernel", reason=f"ipykernel {WHY}")

_spec = importlib.util.spec_from_file_location("notebook_outputs",
                                               ROOT / "docs" / "notebook_outputs.py")
outputs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(outputs)


def _images(nb) -> int:
    return sum("image/png" in o.get("data", {})
               for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs)


def _last_text(nb) -> str:
    return "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []))


@pytest.fixture(scope="module")
def environment(tmp_path_factory):
    return outputs.notebook_environment(outputs.kernel_path(tmp_path_factory.mktemp("jupyter")))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3, NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_outputs_are_current(path):
    nb = nbformat.read(path, as_version=4)
    stale = f"{path.name}: run `make notebooks` (or python docs/notebook_outputs.py {path.name})"
    assert nb.metadata.get(outputs.DIGEST_KEY) == outputs.source_digest(nb), \
        f"{stale}: its cells changed after its outputs were stored"
    counts = [cell.execution_count for cell in nb.cells if cell.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), f"{stale}: not run top to bottom once"
    assert not any(o.output_type == "error" for cell in nb.cells if cell.cell_type == "code"
                   for o in cell.outputs), f"{path.name}: a stored output is an error"
    assert _images(nb) >= 1, f"{path.name}: no figure in its stored outputs"
    assert "ok" in _last_text(nb), f"{path.name}: the stored last cell did not report its checks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, environment, monkeypatch):
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    nb = outputs.execute(path, timeout=300)   # raises CellExecutionError, with the cell
    assert "ok" in _last_text(nb), \
        f"{path.name}: the last cell did not report its checks: {_last_text(nb)!r}"
    assert _images(nb) >= 1, f"{path.name}: drew no figure"

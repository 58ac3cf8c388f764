"""Run the notebooks of ``notebooks/`` and store their outputs in them.

    python docs/notebook_outputs.py [notebooks/01_quickstart.ipynb ...]   (make notebooks)

The docs show the notebooks with the outputs committed in them (``nb_execution_mode =
"off"`` in ``docs/conf.py``). Each run records a digest of the notebook's cells in its
metadata (``pfft_source_sha256``); ``tests/test_notebooks.py`` recomputes it and fails
where a cell changed after its outputs were made, and runs every notebook afresh.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
DIGEST_KEY = "pfft_source_sha256"
KERNEL = "pfft-notebooks"


def source_digest(nb) -> str:
    """SHA-256 of the notebook's cells (type and source), not of its outputs."""
    cells = [[cell["cell_type"], cell["source"]] for cell in nb["cells"]]
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()


def kernel_path(directory: str | os.PathLike) -> str:
    """A Jupyter data directory with a kernel spec running this interpreter (whatever
    kernels the machine has); put it in ``JUPYTER_PATH``."""
    spec = pathlib.Path(directory) / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "pfft notebooks", "language": "python"}))
    return str(directory)


def notebook_environment(jupyter_path: str) -> dict[str, str]:
    """The environment variables a notebook runs under: pfft importable from this
    checkout, matplotlib without a display."""
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {"JUPYTER_PATH": jupyter_path, "PYTHONPATH": python_path, "MPLBACKEND": "Agg"}


def execute(path: pathlib.Path, timeout: int = 600):
    """Run the notebook at ``path`` top to bottom in a fresh kernel and return it with
    its outputs (raises ``nbclient.exceptions.CellExecutionError`` naming the cell that
    failed). The caller sets :func:`notebook_environment`."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=timeout,
                                     record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb


def store(path: pathlib.Path) -> float:
    """Run ``path`` and write it back with its outputs and digest; returns seconds."""
    import nbformat

    start = time.perf_counter()
    nb = execute(path)
    nb.metadata[DIGEST_KEY] = source_digest(nb)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    paths = [pathlib.Path(p).resolve() for p in (argv or [])] or sorted(NOTEBOOKS.glob("*.ipynb"))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(notebook_environment(kernel_path(tmp)))
        for path in paths:
            print(f"{path.relative_to(ROOT)}: running ...", flush=True)
            seconds = store(path)
            print(f"{path.relative_to(ROOT)}: outputs stored ({seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

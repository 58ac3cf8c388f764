"""The Python examples in README.md and docs/*.md run as a reader runs them.

- Each page's ``python`` blocks run in order, in a fresh Python with no device settings
  from outside (no ``XLA_FLAGS``, no ``JAX_NUM_CPU_DEVICES``; JAX on its CPU platform,
  as on the machine of a reader without a GPU): a page that needs several devices asks
  for them in its first block, as its reader must.
- Each section (the blocks under one heading) also runs alone after the page's first
  block, so that a section copied on its own runs; a section that uses ``mesh`` makes
  it itself (the mesh is not left over from another section).
- A block whose first line says ``mpirun -n N`` (``# save as example.py, run: mpirun -n
  4 python example.py``) needs MPI: it runs under ``mpirun`` where the suite runs MPI
  (mpi4py, mpi4jax and mpich's ``mpirun``, as ``tests/test_mpi.py``), and is skipped
  with the reason elsewhere. A block whose first line says ``needs a GPU`` runs only
  where JAX has a GPU.
- Counts and names in the prose match the tree: the notebooks.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
# what sets the number of simulated CPU devices; the pages' readers have none of it
DEVICE_SETTINGS = ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "JAX_PLATFORMS")
ASKS_FOR_DEVICES = ("xla_force_host_platform_device_count", "jax_num_cpu_devices")
FENCE = re.compile(r"^```(\S*)")


@dataclass(frozen=True)
class Block:
    page: str
    line: int          # of the opening fence
    section: str       # the heading above it
    code: str

    @property
    def needs(self) -> str:
        """"mpi:N", "gpu" or "" (runs anywhere), from its first line."""
        first = self.code.lstrip().splitlines()[0] if self.code.strip() else ""
        if (m := re.search(r"#.*\bmpirun -n (\d+)", first)):
            return f"mpi:{m.group(1)}"
        return "gpu" if re.search(r"#.*needs a GPU", first, flags=re.I) else ""

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.section})"


def blocks(page: pathlib.Path) -> list[Block]:
    """The page's ``python`` (or ``py``) code blocks, with the heading each is under."""
    out, section, fence, code, start = [], "(top)", None, [], 0
    for i, line in enumerate(page.read_text().splitlines(), 1):
        if fence is None:
            if (m := FENCE.match(line)):
                fence, code, start = m.group(1), [], i
            elif line.startswith("#"):
                section = line.lstrip("#").strip()
        elif line.startswith("```"):
            if fence in ("python", "py"):
                out.append(Block(page.name, start, section, "\n".join(code) + "\n"))
            fence = None
        else:
            code.append(line)
    return out


def reader_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in DEVICE_SETTINGS}
    env["JAX_PLATFORMS"] = "cpu"
    return env


def run_python(code: str, *, stdin: str = "", env=None, timeout=600):
    return subprocess.run([sys.executable, "-c", code], input=stdin, env=env or reader_env(),
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def local_blocks(page) -> list[Block]:
    return [b for b in blocks(page) if not b.needs]


RUN_PAGES = [p for p in PAGES if local_blocks(p)]


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: p.name)
def test_page_runs_in_order_in_a_fresh_python(page):
    code = "".join(f"# {b}\n{b.code}" for b in local_blocks(page))
    proc = run_python(code)
    assert proc.returncode == 0, f"{page.name}, its blocks in order:\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: p.name)
def test_page_asks_for_its_devices_in_its_first_block(page):
    """A page that makes a mesh (or uses several devices) sets them up first."""
    first, *rest = local_blocks(page)
    text = "".join(b.code for b in [first] + rest)
    if "make_mesh" in text or "jax.devices()" in text:
        assert any(s in first.code for s in ASKS_FOR_DEVICES), (
            f"{first}: {page.name} makes a mesh but its first block does not ask for "
            f"several CPU devices (os.environ['XLA_FLAGS'] = "
            f"'--xla_force_host_platform_device_count=8' before importing jax)")


def _sections(page) -> list[tuple[str, list[Block]]]:
    out: dict[str, list[Block]] = {}
    for b in local_blocks(page):
        out.setdefault(b.section, []).append(b)
    return list(out.items())


def _names(code: str) -> tuple[set[str], set[str]]:
    """(names read, names bound) at any depth in ``code``."""
    read, bound = set(), set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
    return read, bound


@pytest.mark.parametrize("page", [p for p in RUN_PAGES if len(_sections(p)) > 1],
                         ids=lambda p: p.name)
def test_each_section_runs_alone_after_the_first_block(page):
    first = local_blocks(page)[0]
    sections = [(title, "".join(b.code for b in bs)) for title, bs in _sections(page)]
    for title, code in sections[1:]:
        read, bound = _names(code)
        assert "mesh" not in read or "mesh" in bound, (
            f"{page.name}, section {title!r}: uses `mesh` without making it "
            f"(mesh = pfft.make_mesh(...)): copied alone it would not know which mesh")
    runner = r"""
import json, sys, traceback
first, sections = json.loads(sys.stdin.read())
ns = {"__name__": "__main__"}
exec(compile(first, "<the page's first block>", "exec"), ns)
failed = []
for title, code in sections:
    try:
        exec(compile(code, f"<section {title!r}>", "exec"), dict(ns))
    except Exception:
        failed.append(f"section {title!r}:\n{traceback.format_exc()}")
sys.exit("\n".join(failed) or None)
"""
    proc = run_python(runner, stdin=json.dumps([first.code, sections[1:]]))
    assert proc.returncode == 0, f"{page.name}, sections alone:\n{proc.stderr[-4000:]}"


# -- blocks that need MPI or a GPU ------------------------------------------------------

NEEDY = [b for p in PAGES for b in blocks(p) if b.needs]


def _mpi_missing() -> str:
    from test_mpi import MPIRUN
    missing = [m for m in ("mpi4py", "mpi4jax") if importlib.util.find_spec(m) is None]
    if missing:
        return f"needs {' and '.join(missing)} (`make install` installs them)"
    if not MPIRUN.exists():
        return f"no mpirun next to {sys.executable} (`pip install mpich`)"
    return ""


def _gpu_missing() -> str:
    probe = run_python("import jax; print(any(d.platform == 'gpu' for d in jax.devices()))",
                       env={k: v for k, v in os.environ.items() if k not in DEVICE_SETTINGS},
                       timeout=300)
    return "" if probe.stdout.strip().endswith("True") else "no GPU here"


@pytest.mark.parametrize("block", NEEDY, ids=str)
def test_block_that_needs_mpi_or_a_gpu(block, tmp_path):
    if block.needs == "gpu":
        if (why := _gpu_missing()):
            pytest.skip(f"{block}: needs a GPU: {why}")
        env = {k: v for k, v in os.environ.items() if k not in DEVICE_SETTINGS}
        proc = run_python(block.code, env=env)
        assert proc.returncode == 0, f"{block}:\n{proc.stderr[-3000:]}"
        return
    if (why := _mpi_missing()):
        pytest.skip(f"{block}: needs MPI: {why}")
    from test_mpi import mpi_env, run_mpi_argv
    script = tmp_path / "example.py"
    script.write_text(block.code)
    n = int(block.needs.split(":")[1])
    code, out, took = run_mpi_argv(n, [script], tmp_path, timeout=600, env=mpi_env())
    assert code is not None, f"{block}: mpirun -n {n} timed out after {took:.0f} s:\n{out[-4000:]}"
    assert code == 0, f"{block}: mpirun -n {n} exited {code}:\n{out[-4000:]}"


# -- the prose against the tree ----------------------------------------------------------

NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten "
                                      "eleven twelve".split())}


def test_toolkit_counts_and_names_the_notebooks():
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    text = (ROOT / "docs" / "toolkit.md").read_text()
    section = text[text.index("## Notebooks"):]
    section = section[:section.find("\n## ", 1) if "\n## " in section[1:] else None]
    m = re.search(r"`notebooks/` has (\w+)", section)
    assert m, "docs/toolkit.md's Notebooks section no longer says how many there are"
    said = NUMBERS.get(m.group(1).lower(), m.group(1))
    assert said == len(notebooks), (f"docs/toolkit.md says notebooks/ has {m.group(1)}; it "
                                    f"has {len(notebooks)}: {notebooks}")
    index = (ROOT / "docs" / "index.md").read_text()
    for name in notebooks:
        assert name in section, f"docs/toolkit.md's Notebooks section does not name {name}"
        assert f"notebooks/{name}.ipynb" in index, f"docs/index.md does not link {name}"

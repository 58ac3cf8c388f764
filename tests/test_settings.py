"""pfft's environment variables have one home, pfft/settings.py: every ``PFFT_*``
variable the library or its kernels name is one it lists, only it reads the
environment, the C++ libraries get their settings from it when they are loaded, and
``pfft.show_config`` lists them all."""
import ast
import re
import types
from pathlib import Path

import pytest

import pfft
from pfft import settings
from pfft.engines import _kernels

ROOT = Path(__file__).resolve().parents[1]
TOKEN = re.compile(r"PFFT_[A-Z0-9_]+")


def _python_sources():
    return sorted((ROOT / "pfft").rglob("*.py"))


def _kernel_sources():
    return sorted(p for p in (ROOT / "kernels").rglob("*")
                  if p.is_file() and "build" not in p.relative_to(ROOT / "kernels").parts
                  and p.suffix in (".cc", ".cu", ".h", ".txt", ".cmake", ".py", "")
                  and p.name != "Makefile")


def test_every_pfft_variable_the_python_names_is_a_setting():
    """Any ``PFFT_*`` name in pfft/ (code, docstrings, comments) is a variable
    pfft.settings lists, or an option of the kernels' build."""
    known = settings.NAMES | set(settings.BUILD_OPTIONS)
    for path in _python_sources():
        unknown = set(TOKEN.findall(path.read_text())) - known
        assert not unknown, f"{path.relative_to(ROOT)} names {sorted(unknown)}"


def test_only_the_settings_module_reads_pfft_variables():
    """No other module of pfft/ looks a ``PFFT_*`` variable up in ``os.environ``."""
    for path in _python_sources():
        if path.name == "settings.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(TOKEN, node.value):
                pytest.fail(f"{path.relative_to(ROOT)} holds the name {node.value!r}: read "
                            f"it through pfft.settings")


def test_the_kernels_read_no_environment_and_name_only_known_variables():
    """The C++ reads no environment (the loader passes its settings); every variable
    its comments and messages name (``$PFFT_X``, or in a string) and every option its
    build takes is known to pfft.settings. Macros (``#define PFFT_X``) and CMake's own
    variables (``${PFFT_X}``, ``set(PFFT_X ...)`` without CACHE) are names, not settings."""
    known = settings.NAMES | set(settings.BUILD_OPTIONS)
    for path in _kernel_sources():
        text = path.read_text()
        rel = path.relative_to(ROOT)
        if path.suffix in (".cc", ".cu", ".h"):
            assert "getenv" not in text, f"{rel} reads the environment"
        named = set(re.findall(r"\$(PFFT_[A-Z0-9_]+)", text))
        for literal in re.findall(r'"([^"\n]*)"', text):
            named |= set(re.findall(r"(?<!\{)(PFFT_[A-Z0-9_]+)", literal))
        options = set(re.findall(r"option\((PFFT_[A-Z0-9_]+)", text))
        options |= set(re.findall(r"set\((PFFT_[A-Z0-9_]+)[^)]*CACHE", text))
        assert not named - known, f"{rel} names {sorted(named - known)}"
        assert options <= set(settings.BUILD_OPTIONS), f"{rel} takes {sorted(options)}"


def test_every_setting_is_read_where_its_default_applies(monkeypatch):
    """Unset, each accessor gives the default it documents; set, the value."""
    for v in settings.VARIABLES:
        monkeypatch.delenv(v.name, raising=False)
    assert settings.engine() == "auto" and settings.num_threads() is None
    assert settings.kernels_dir() is None and settings.pieces_batch() == 0
    assert settings.cufft_plan_cache() is None and settings.current() == {}
    assert settings.hugepage_advice()
    for name, value in [("PFFT_ENGINE", "XLA"), ("PFFT_NUM_THREADS", "0"),
                        ("PFFT_PIECES_BATCH", "32"), ("PFFT_CUFFT_PLAN_CACHE", "8"),
                        ("PFFT_NO_HUGEPAGE_ADVICE", "1")]:
        monkeypatch.setenv(name, value)
    assert settings.engine() == "xla" and settings.num_threads() == 1
    assert settings.pieces_batch() == 32 and settings.cufft_plan_cache() == 8
    assert not settings.hugepage_advice()
    monkeypatch.setenv("PFFT_PIECES_BATCH", "lots")          # not a number: the default
    assert settings.pieces_batch() == 0


def test_the_loader_passes_the_libraries_their_settings(monkeypatch):
    """A loaded library gets its settings through its C setters, not the environment."""
    calls = []

    def recorder(name):
        return lambda value: calls.append((name, value.value))
    lib = types.SimpleNamespace(**{n: recorder(n) for n in (
        "pfft_cpu_set_hugepage_advice", "pfft_cpu_set_pieces_batch",
        "pfft_cuda_set_plan_cache_size")})
    monkeypatch.setenv("PFFT_NO_HUGEPAGE_ADVICE", "1")
    monkeypatch.setenv("PFFT_PIECES_BATCH", "8")
    monkeypatch.setenv("PFFT_CUFFT_PLAN_CACHE", "3")
    _kernels._configure("cpu", lib)
    _kernels._configure("cuda", lib)
    assert calls == [("pfft_cpu_set_hugepage_advice", 0), ("pfft_cpu_set_pieces_batch", 8),
                     ("pfft_cuda_set_plan_cache_size", 3)]
    calls.clear()
    monkeypatch.delenv("PFFT_CUFFT_PLAN_CACHE")
    _kernels._configure("cuda", lib)                           # unset: the library's 64
    assert calls == []


def test_show_config_lists_every_setting(monkeypatch, capsys):
    monkeypatch.setenv("PFFT_PIECES_BATCH", "8")
    pfft.show_config()
    out = capsys.readouterr().out
    assert "PFFT_PIECES_BATCH=8" in out
    for v in settings.VARIABLES:
        assert v.name in out, v.name

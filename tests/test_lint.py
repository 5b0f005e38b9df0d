"""The code base stays ruff- and mypy-clean (configuration in pyproject.toml)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "tool, args",
    [("ruff", ["check", "minitensor", "tests", "projects", "benchmarks"]), ("mypy", [])],
)
def test_tool_is_clean(tool: str, args: list[str]) -> None:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed (pip install -e '.[dev]')")
    result = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr

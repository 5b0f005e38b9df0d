"""Per-op kernel modules for the ``fast`` backend, written to disk so Numba's cache works.

Numba only caches module-level functions of real source files (``cache=True``), keyed by the
file's path and timestamp. So for each (family, op) we copy the template
:mod:`minitensor.backends.fast_kernels` into ``<cache dir>/<fingerprint>/<family>_<op>.py`` with the
op name filled in, import it, and let Numba cache the compiled kernels next to it in
``__pycache__``. The fingerprint hashes everything the compiled code depends on (template,
operators, the index functions, Numba/NumPy/Python versions), so a change anywhere gets a fresh directory
instead of stale machine code. Files are only ever created, never rewritten, so their timestamps
(and with them Numba's cache entries) stay valid; creation is atomic, so concurrent processes
(pytest-xdist) are safe.

The cache directory is ``$MINITENSOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/minitensor/kernels``
(``~/.cache/minitensor/kernels``), else a per-user temp directory when that is not writable.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import re
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

import numba
import numpy as np

from .. import operators, tensor_data

FAMILY_PLACEHOLDER = {"map": "UNARY", "zip": "BINARY", "reduce": "REDUCE", "matmul": None}

_lock = threading.Lock()
_modules: dict[tuple[str, str], ModuleType] = {}
_directory: Path | None = None


TEMPLATE = Path(__file__).with_name("fast_kernels.py")


def _read(module: ModuleType | Path) -> str:
    path = module if isinstance(module, Path) else Path(module.__file__)  # type: ignore[arg-type]
    return path.read_text(encoding="utf-8")


def fingerprint() -> str:
    """Hash of everything generated kernels depend on."""
    digest = hashlib.sha256()
    index_math = [inspect.getsource(f) for f in (tensor_data.index_to_position, tensor_data.to_index, tensor_data.broadcast_index)]
    for part in (_read(TEMPLATE), _read(operators), *index_math, numba.__version__, np.__version__, sys.version):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    """Where generated kernel modules live (see the module docstring)."""
    explicit = os.environ.get("MINITENSOR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "minitensor" / "kernels"


def kernel_directory() -> Path:
    """The fingerprinted directory for this installation, created on first use."""
    global _directory
    if _directory is None:
        name = fingerprint()
        for root in (cache_root(), Path(tempfile.gettempdir()) / f"minitensor-kernels-{os.getuid()}"):
            try:
                directory = root / name
                directory.mkdir(parents=True, exist_ok=True)
                if os.access(directory, os.W_OK):
                    _directory = directory
                    break
            except OSError:
                continue
        else:
            raise OSError(f"no writable cache directory for minitensor kernels (tried {cache_root()})")
    return _directory


def generate_source(family: str, op: str) -> str:
    """The template's text with the op of ``family`` set to ``op``."""
    text = _read(TEMPLATE)
    placeholder = FAMILY_PLACEHOLDER[family]
    if placeholder is None:
        return text
    line = re.compile(rf'^{placeholder} = "[a-z_]+"$', re.MULTILINE)
    text, count = line.subn(f"{placeholder} = {op!r}".replace("'", '"'), text)
    if count != 1:
        raise RuntimeError(f"template has no line for {placeholder}")
    return text


def _write_once(path: Path, text: str) -> None:
    """Create ``path`` with ``text`` unless it exists; never rewrite it (its timestamp keys Numba's cache)."""
    if path.exists():
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            os.link(tmp, path)  # atomic and exclusive: a concurrent writer's file wins, ours is dropped
        except FileExistsError:
            pass
        except OSError:  # no hard links on this filesystem
            if not path.exists():
                os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def kernel_module(family: str, op: str = "") -> ModuleType:
    """The imported kernel module for ``op`` of ``family`` ("map", "zip", "reduce" or "matmul")."""
    key = (family, op)
    module = _modules.get(key)
    if module is not None:
        return module
    with _lock:
        if key in _modules:
            return _modules[key]
        stem = f"{family}_{op}" if op else family
        path = kernel_directory() / f"{stem}.py"
        _write_once(path, generate_source(family, op))
        name = f"_minitensor_kernels_{path.parent.name}_{stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _modules[key] = module
        return module

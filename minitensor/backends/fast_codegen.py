"""Per-op kernel modules for the ``fast`` backend, written to disk so Numba's cache works.

Numba only caches module-level functions of real source files (``cache=True``), keyed by the
file's path and timestamp. So for each (family, op, compute type) we copy the template
:mod:`minitensor.backends.fast_kernels` into ``<cache dir>/<fingerprint>/<family>_<op>_<f|i>.py``
with the names filled in, import it, and let Numba cache the compiled kernels next to it in
``__pycache__``. The op-independent kernels (:mod:`minitensor.backends.fast_extra_kernels`) are
copied the same way, as family "extra" (and the fused row kernels of
:mod:`minitensor.backends.fast_fused_kernels` as family "fused", the map/zip walkers of
:mod:`minitensor.backends.fast_walk_kernels` as family "walk"). An op's element-wise loops are compiled as C functions
per operand dtypes, which the walkers call by address (:mod:`minitensor.backends.fast_compile`: that and the
cross-process compile lock). The fingerprint hashes everything the compiled code depends on (templates, the operator
modules, :mod:`minitensor.backends.fast_math`, the index functions, Numba/NumPy/Python versions), so a change anywhere
gets a fresh directory instead of stale machine code.

Nothing from the cache directory is trusted blindly: family, op and compute type are checked
against fixed tables before they reach the source text or a file name; a module file whose text
differs from what :func:`generate_source` makes is atomically replaced (Numba then recompiles, as
the timestamp changed); the module is executed from the checked text, not re-read; and the
directory must belong to the current user and not be writable by anyone else. Files are created
atomically, so concurrent processes (pytest-xdist) are safe.

The cache directory is ``$MINITENSOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/minitensor/kernels``
(``~/.cache/minitensor/kernels``), else a per-user temp directory when that is not usable. Each process
touches its fingerprint directory; sibling fingerprint directories of ours unused for ``STALE_DAYS`` are
deleted (old installations). The first time a module is compiled on a machine, one notice goes to stderr.

Other generated kernels (the fused element-wise loops of :mod:`minitensor.compiler.fuse`) go through
:func:`generated_module`: same directory and checks, with the file named by a hash of the generated text.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import numba
import numpy as np

from .. import operators, tensor_data
from .fast_compile import serialize_compiles

FAMILY_PLACEHOLDER: dict[str, str | None] = {
    "map": "UNARY", "zip": "BINARY", "reduce": "REDUCE", "matmul": None, "extra": None, "fused": None, "walk": None,
}
"""Kernel families and the template name each rebinds to its op (None: the family takes no op)."""
FAMILY_OPS: dict[str, Mapping[str, object]] = {"map": operators.UNARY_OPS, "zip": operators.BINARY_OPS, "reduce": operators.REDUCE_OPS}
"""The operator table an op of each op-taking family must come from."""
COMPUTE_TYPES = {"float64": "f", "int64": "i"}
"""Types the template kernels can read values as, and the file-name suffix of each."""
DEFAULT_COMPUTE = "float64"

TEMPLATE = Path(__file__).with_name("fast_kernels.py")
EXTRA_TEMPLATE = Path(__file__).with_name("fast_extra_kernels.py")
FUSED_TEMPLATE = Path(__file__).with_name("fast_fused_kernels.py")
WALK_TEMPLATE = Path(__file__).with_name("fast_walk_kernels.py")
MATH_SOURCE = Path(__file__).with_name("fast_math.py")
MATH32_SOURCE = Path(__file__).with_name("fast_math32.py")
INTRINSICS_SOURCE = Path(__file__).with_name("fast_intrinsics.py")
ROWS_SOURCE = Path(__file__).with_name("fast_fused_rows.py")
"""Not templates: the vectorisable exp/log/tanh/sigmoid (float64 and float32 outputs), the LLVM intrinsics under them
and the fused kernels' row helpers, which the kernels import (so they are part of the fingerprint)."""
OP_FREE_TEMPLATES = {"extra": EXTRA_TEMPLATE, "fused": FUSED_TEMPLATE, "walk": WALK_TEMPLATE}
"""The op-free families (their kernels take their types from their arguments) and the template each copies."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

STALE_DAYS = 30
"""Fingerprint directories not used for this many days are pruned."""
COMPILE_NOTICE = "minitensor: compiling fast-backend kernels on first use, once per machine; later runs load them from"

_lock = threading.Lock()
_noticed = False
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_modules: dict[tuple[str, str, str, bool], ModuleType] = {}
_directory: Path | None = None


def _read(module: ModuleType | Path) -> str:
    path = module if isinstance(module, Path) else Path(module.__file__)  # type: ignore[arg-type]
    return path.read_text(encoding="utf-8")


def fingerprint() -> str:
    """Hash of everything generated kernels depend on."""
    digest = hashlib.sha256()
    index_math = [inspect.getsource(f) for f in (tensor_data.index_to_position, tensor_data.to_index, tensor_data.broadcast_index)]
    templates = [_read(path) for path in (TEMPLATE, EXTRA_TEMPLATE, FUSED_TEMPLATE, WALK_TEMPLATE, MATH_SOURCE,
                                          MATH32_SOURCE, INTRINSICS_SOURCE, ROWS_SOURCE)]
    scalar_ops = [_read(importlib.import_module(name)) for name in operators.JIT_MODULES]
    for part in (*templates, *scalar_ops, *index_math, numba.__version__, np.__version__, sys.version):
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


def _private(directory: Path) -> bool:
    """True when ``directory`` is ours and only we can write to it (group/other write bits of our own one are dropped)."""
    getuid = getattr(os, "getuid", None)
    info = directory.stat()
    if getuid is not None:
        if info.st_uid != getuid():
            return False
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            os.chmod(directory, stat.S_IMODE(info.st_mode) & ~(stat.S_IWGRP | stat.S_IWOTH))
    return os.access(directory, os.W_OK)


def prune_stale(root: Path, keep: str, max_age_days: float = STALE_DAYS) -> list[Path]:
    """Delete fingerprint directories under ``root`` other than ``keep`` that we own and nobody used for
    ``max_age_days`` (directories of other users and other names are left alone); returns those removed."""
    removed: list[Path] = []
    cutoff = time.time() - max_age_days * 86400
    getuid = getattr(os, "getuid", None)
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if entry.name == keep or not _FINGERPRINT.fullmatch(entry.name):
            continue
        try:
            info = entry.lstat()
            if not stat.S_ISDIR(info.st_mode) or (getuid is not None and info.st_uid != getuid()) or info.st_mtime > cutoff:
                continue
            shutil.rmtree(entry)
            removed.append(entry)
        except OSError:
            continue  # in use or vanished: try again next time
    return removed


def _notice_first_compile(path: Path) -> None:
    """One line on stderr, once per process, when ``path``'s kernels have no Numba cache yet."""
    global _noticed
    cached = path.parent / "__pycache__"
    if _noticed or (cached.is_dir() and any(cached.glob(f"{path.stem}.*.nbi"))):
        return
    _noticed = True
    print(f"{COMPILE_NOTICE} {path.parent}", file=sys.stderr, flush=True)


def kernel_directory() -> Path:
    """The fingerprinted directory for this installation, created on first use."""
    global _directory
    if _directory is None:
        name = fingerprint()
        user = getattr(os, "getuid", lambda: "user")()
        for root in (cache_root(), Path(tempfile.gettempdir()) / f"minitensor-kernels-{user}"):
            try:
                directory = root / name
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                if _private(directory):
                    _directory = directory
                    os.utime(directory)  # mark it used, so pruning keeps it
                    prune_stale(root, keep=name)
                    break
            except OSError:
                continue
        else:
            raise OSError(f"no private writable cache directory for minitensor kernels (tried {cache_root()})")
    return _directory


def validate(family: str, op: str = "", compute: str = DEFAULT_COMPUTE) -> None:
    """Raise ValueError unless ``family`` is known, ``op`` is in that family's operator table ("" for
    families without ops) and ``compute`` is a known compute type (only the default for "extra" and "fused")."""
    if not isinstance(family, str) or family not in FAMILY_PLACEHOLDER:
        raise ValueError(f"unknown kernel family {family!r}; known: {', '.join(FAMILY_PLACEHOLDER)}")
    if FAMILY_PLACEHOLDER[family] is None:
        if op != "":
            raise ValueError(f"kernel family {family!r} takes no op, got {op!r}")
    elif not isinstance(op, str) or op not in FAMILY_OPS[family] or not _NAME.fullmatch(op):
        raise ValueError(f"unknown op {op!r} for kernel family {family!r}")
    if not isinstance(compute, str) or compute not in COMPUTE_TYPES:
        raise ValueError(f"unknown compute type {compute!r}; known: {', '.join(COMPUTE_TYPES)}")
    if family in OP_FREE_TEMPLATES and compute != DEFAULT_COMPUTE:
        raise ValueError(f"the {family} kernels take their types from their arguments; they have no compute type")


def _rebind(text: str, name: str, value: str) -> str:
    """``text`` with its one line ``name = "..."`` set to ``value`` (already validated)."""
    line = re.compile(rf'^{name} = "[A-Za-z0-9_]+"$', re.MULTILINE)
    text, count = line.subn(lambda _: f'{name} = "{value}"', text)
    if count != 1:
        raise RuntimeError(f"template has no line for {name}")
    return text


def generate_source(family: str, op: str = "", compute: str = DEFAULT_COMPUTE, parallel: bool = True) -> str:
    """The source of the kernel module for ``op`` of ``family`` reading values as ``compute``.

    ``parallel=False`` builds the same kernels without Numba's thread pool (``prange`` runs as
    ``range``): about a third of the compile time, and no pool wake-up per call, for small work.
    Raises ValueError for anything :func:`validate` rejects, so no caller can put other text in.
    """
    validate(family, op, compute)
    variant = "parallel" if parallel else "serial"
    if family in OP_FREE_TEMPLATES:
        return _rebind(_read(OP_FREE_TEMPLATES[family]), "PARALLEL", variant)
    text = _rebind(_rebind(_read(TEMPLATE), "COMPUTE", compute), "PARALLEL", variant)
    placeholder = FAMILY_PLACEHOLDER[family]
    return text if placeholder is None else _rebind(text, placeholder, op)


def module_stem(family: str, op: str = "", compute: str = DEFAULT_COMPUTE, parallel: bool = True) -> str:
    """The file name (without .py) of a kernel module, e.g. ``map_exp_f``, ``matmul_i``, ``extra``;
    serial builds end in ``_s`` (``map_exp_f_s``)."""
    validate(family, op, compute)
    suffix = "" if parallel else "s"
    if family in OP_FREE_TEMPLATES:
        return "_".join(part for part in (family, suffix) if part)
    return "_".join(part for part in (family, op, COMPUTE_TYPES[compute], suffix) if part)


def _read_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def ensure_file(path: Path, text: str) -> None:
    """Make ``path`` hold exactly ``text``, leaving a correct file untouched (its timestamp keys Numba's cache).

    A missing file is created exclusively (a concurrent writer's identical file wins); a file with
    other contents is replaced by a fresh one under a temp name and ``os.replace``, so a reader
    never sees a partial file.
    """
    current = _read_or_none(path)
    if current == text:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if current is None:
            try:
                os.link(tmp, path)
                return
            except FileExistsError:
                if _read_or_none(path) == text:
                    return
            except OSError:  # no hard links on this filesystem
                pass
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def kernel_module(family: str, op: str = "", compute: str = DEFAULT_COMPUTE, parallel: bool = True) -> ModuleType:
    """The imported kernel module for ``op`` of ``family`` ("map", "zip", "reduce", "matmul", "extra", "fused" or
    "walk").

    ``compute`` ("float64" or "int64") is the type the kernels read values as; ``parallel`` picks the
    thread-pool build or the serial one. Raises ValueError for an unknown family, op or compute type.
    """
    key = (family, op, compute, bool(parallel))
    try:
        module = _modules.get(key)
    except TypeError:  # unhashable: not a name; generate_source below raises ValueError
        module = None
    if module is not None:
        return module
    with _lock:
        text = generate_source(family, op, compute, parallel)  # validates before key is hashed or a path is made
        if key in _modules:
            return _modules[key]
        module = _write_and_import(module_stem(family, op, compute, parallel), text, {})
        _modules[key] = module
        return module


def _write_and_import(stem: str, text: str, scope: Mapping[str, Any]) -> ModuleType:
    """``text`` written (atomically, if the file differs) as ``<kernel directory>/<stem>.py`` and imported with the
    names of ``scope`` bound first; compiles of its kernels are serialised across processes. The checked text itself
    is executed: neither the file nor a bytecode cache is read back. Called under ``_lock``."""
    path = kernel_directory() / f"{stem}.py"
    ensure_file(path, text)
    _notice_first_compile(path)
    name = f"_minitensor_kernels_{path.parent.name}_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(scope)
    sys.modules[name] = module
    try:
        exec(compile(text, str(path), "exec"), module.__dict__)  # noqa: S102 - the checked text, ours
    except BaseException:
        del sys.modules[name]
        raise
    serialize_compiles(module, path.with_suffix(".lock"))
    return module


GENERATED_PREFIX = "generated_"
"""File-name prefix of the modules :func:`generated_module` writes (the rest is a hash of their text)."""
_generated: dict[str, ModuleType] = {}


def generated_module(text: str, scope: Mapping[str, Any]) -> ModuleType:
    """Write ``text`` (kernel source that minitensor generated itself, never user input) into the kernel directory
    as ``generated_<sha256(text)[:16]>.py`` and import it with the names of ``scope`` bound first, so that its
    ``cache=True`` kernels are loaded from Numba's disk cache by later processes instead of compiled again.

    The same guarantees as :func:`kernel_module`: the file name comes from the hash of the text, a file holding other
    text is atomically replaced, the checked text itself is executed (the file is not read back), and compiles are
    serialised across processes. Raises TypeError for non-string text and SyntaxError for text that is not Python.
    """
    if not isinstance(text, str):
        raise TypeError(f"generated kernel source must be str, got {type(text).__name__}")
    module = _generated.get(text)
    if module is not None:
        return module
    compile(text, "<generated kernel>", "exec")  # a SyntaxError before anything is written
    with _lock:
        if text in _generated:
            return _generated[text]
        module = _write_and_import(GENERATED_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:16], text, scope)
        _generated[text] = module
        return module

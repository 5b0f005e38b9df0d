"""``mt.asarray``: torch.asarray, a tensor from any data that shares a tensor's storage when it can.

A Tensor comes back itself when neither ``dtype`` nor ``device`` changes it (``copy=True`` copies it; converting
copies, which ``copy=False`` forbids, raising ValueError, as torch). Everything else (numbers, nested lists, NumPy
arrays and scalars, objects with ``__array__``) is copied into new storage: minitensor's backends own their storage,
so ``copy=False`` raises for these too (torch shares a NumPy array's memory there). ``requires_grad=None`` keeps a
tensor's flag (torch 2.13's default); True or False sets it, on a detached alias when it differs from the input's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .backends import Backend, get_backend
from .creation import tensor
from .dtypes import as_dtype
from .tensor import Tensor


def asarray(obj: Any, *, dtype: Any = None, device: str | Backend | None = None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """``obj`` as a tensor of ``dtype`` on ``device`` (see the module docstring for sharing and ``copy``)."""
    if isinstance(obj, Tensor):
        out = obj
        if device is not None and get_backend(device) is not out.backend:
            out = out.to(get_backend(device))
        if dtype is not None and as_dtype(dtype) != out.dtype:
            out = out.cast(as_dtype(dtype))
        if out is not obj and copy is False:
            raise ValueError(f"asarray(copy=False): can't alias the {obj.dtype} tensor on {obj.backend.name!r} into "
                             f"dtype {out.dtype} on {out.backend.name!r}")
        if out is obj and copy:
            out = obj.clone()
    else:
        if copy is False:
            raise ValueError(f"asarray(copy=False): can't alias {type(obj).__name__} data into a tensor (minitensor "
                             "copies everything that is not already a tensor)")
        if isinstance(obj, np.generic) or (not isinstance(obj, (np.ndarray, list, tuple)) and hasattr(obj, "__array__")):
            obj = np.asarray(obj)  # NumPy scalars and array-likes keep their dtype, as arrays do
        out = tensor(obj, dtype=dtype, device=device)
    if requires_grad is not None and bool(requires_grad) != out.requires_grad:
        out = out.detach()
        if requires_grad:
            out.requires_grad_(True)
    return out


__all__ = ["asarray"]

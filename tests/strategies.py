"""Hypothesis strategies shared by every backend's tests: shapes, layouts and broadcast pairs.

A drawn tensor comes with its NumPy twin. Its layout is contiguous, permuted (strides out of order)
or sliced (every other element of a larger buffer), so kernels see non-contiguous strides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import minitensor as mt

# The CUDA simulator runs each thread in Python: keep its tensors tiny.
MAX_SIZE = {"simple": 4, "fast": 5, "cuda": 3}
MAX_DIMS = {"simple": 4, "fast": 4, "cuda": 3}
LAYOUTS = ("contiguous", "permuted", "sliced")


@dataclass
class Drawn:
    """A tensor and the NumPy array it equals."""

    array: np.ndarray
    tensor: mt.Tensor

    def __repr__(self) -> str:
        return f"Drawn(shape={self.array.shape}, strides={self.tensor.strides}, array={self.array.tolist()})"


def shapes(backend: str, min_dims: int = 0, min_size: int = 1) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes for ``backend``'s tests; ``min_size=0`` lets dims be empty."""
    return st.lists(st.integers(min_size, MAX_SIZE[backend]), min_size=min_dims, max_size=MAX_DIMS[backend]).map(tuple)


@st.composite
def broadcast_shapes(draw: Any, backend: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast: the second drops leading dims and sets some dims to 1."""
    shape = draw(shapes(backend))
    drop = draw(st.integers(0, len(shape)))
    other = [1 if draw(st.booleans()) else s for s in shape[drop:]]
    pair = (shape, tuple(other))
    return pair if draw(st.booleans()) else (pair[1], pair[0])


def make_tensor(array: np.ndarray, backend: str, layout: str, perm_seed: int = 0, dtype: Any = np.float64) -> mt.Tensor:
    """A leaf tensor equal to ``array`` whose strides follow ``layout``."""
    array = array.astype(dtype)
    if layout == "permuted" and array.ndim >= 2:
        order = np.random.default_rng(perm_seed).permutation(array.ndim)
        base = mt.tensor(np.ascontiguousarray(array.transpose(order)), backend=backend, dtype=dtype)
        t = base.permute(*np.argsort(order).tolist())
    elif layout == "sliced" and array.ndim >= 1:
        wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), dtype=dtype)
        wide[..., ::2] = array
        t = mt.tensor(wide, backend=backend, dtype=dtype)[..., ::2]
    else:
        t = mt.tensor(array, backend=backend, dtype=dtype)
    return t.detach().requires_grad_(t.dtype.kind == "f")


@st.composite
def drawn_tensors(
    draw: Any,
    backend: str,
    shape: tuple[int, ...] | None = None,
    low: float = -2.0,
    high: float = 2.0,
    unique: bool = False,
    away_from_zero: float = 0.0,
    dtype: Any = np.float64,
) -> Drawn:
    """A tensor of a random (or given) shape and layout, with values in [low, high]."""
    if shape is None:
        shape = draw(shapes(backend))
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False, width=64)
    if away_from_zero:
        elements = elements.filter(lambda v: abs(v) >= away_from_zero)
    if unique:
        # Values at least 0.04 apart, so finite differences never straddle a tie.
        n = int(np.prod(shape))
        order = np.array(draw(st.permutations(range(n)))) if n else np.zeros(0)
        jitter = draw(arrays(np.float64, n, elements=st.floats(0.0, 0.01)))
        array = (low + (order + 0.5) * (high - low) / max(n, 1) * 0.99 + jitter * (high - low) / max(n, 1) / 10).reshape(shape)
    else:
        array = draw(arrays(np.float64, shape, elements=elements))
    layout = draw(st.sampled_from(LAYOUTS))
    seed = draw(st.integers(0, 2**16))
    t = make_tensor(array, backend, layout, seed, dtype)
    return Drawn(array.astype(dtype), t)


def central_difference(fn: Any, arrays_in: list[np.ndarray], weight: np.ndarray, eps: float = 1e-6) -> list[np.ndarray]:
    """d/dx_i sum(weight * fn(*arrays)) by central differences on the NumPy function ``fn``."""
    grads = []
    for i, x in enumerate(arrays_in):
        g = np.zeros_like(x, dtype=np.float64)
        for idx in np.ndindex(*x.shape):
            up = [a.astype(np.float64).copy() for a in arrays_in]
            down = [a.astype(np.float64).copy() for a in arrays_in]
            up[i][idx] += eps
            down[i][idx] -= eps
            g[idx] = (np.sum(weight * fn(*up)) - np.sum(weight * fn(*down))) / (2 * eps)
        grads.append(g)
    return grads


def examples(backend: str) -> int:
    """Examples per property for ``backend`` under the loaded profile (the CUDA simulator gets few)."""
    from hypothesis import settings

    base = settings.default.max_examples
    return max(3, base // 6) if backend == "cuda" else base


def run_property(backend: str, body: Any) -> None:
    """Run ``body(data)`` as a hypothesis property with the example budget of ``backend``."""
    from hypothesis import given, settings

    settings(max_examples=examples(backend))(given(st.data())(body))()

"""``mt.gradient``: torch.gradient, the derivative of sampled values estimated by finite differences along dims.

Interior points take the second-order central difference: (f[i+1] - f[i-1]) / 2h for uniform spacing h, and for
coordinates x with left and right steps hl, hr the weights -hr / (hl (hl + hr)), (hr - hl) / (hl hr) and
hl / (hr (hl + hr)) of f[i-1], f[i], f[i+1] (exact for quadratics). The two end points take one-sided differences
of first (``edge_order=1``) or second (``edge_order=2``) order. Everything is narrow and arithmetic, so autodiff
differentiates it; integer input gives the default float dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import ShapeError
from .tensor_data import normalize_dim
from .tensor_join import cat
from .tensor_math import _float_input, _is_tensor

if TYPE_CHECKING:
    from .tensor import Tensor


def _uniform(f: Tensor, d: int, h: float, edge_order: int) -> Tensor:
    """The gradient of ``f`` along ``d`` for samples ``h`` apart."""
    n = f.shape[d]

    def at(i: int, length: int = 1) -> Tensor:
        return f.narrow(d, i % n, length)

    interior = (at(2, n - 2) - at(0, n - 2)) / (2.0 * h)
    if edge_order == 1:
        first, last = (at(1) - at(0)) / h, (at(-1) - at(-2)) / h
    else:
        first = (at(0) * -1.5 + at(1) * 2.0 - at(2) * 0.5) / h
        last = (at(-3) * 0.5 - at(-2) * 2.0 + at(-1) * 1.5) / h
    return cat([first, interior, last], d)


def _coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    """The gradient of ``f`` along ``d`` for samples at the (1-D) coordinates ``x``."""
    n = f.shape[d]
    x = x.cast(f.dtype).reshape(*(n if i == d else 1 for i in range(f.dims)))
    dx = x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)

    def at(t: Tensor, i: int, length: int = 1) -> Tensor:
        return t.narrow(d, i % t.shape[d], length)

    hl, hr = at(dx, 0, n - 2), at(dx, 1, n - 2)
    interior = (at(f, 0, n - 2) * (-hr / (hl * (hl + hr))) + at(f, 1, n - 2) * ((hr - hl) / (hl * hr))
                + at(f, 2, n - 2) * (hl / (hr * (hl + hr))))
    if edge_order == 1:
        first = (at(f, 1) - at(f, 0)) / at(dx, 0)
        last = (at(f, -1) - at(f, -2)) / at(dx, -1)
    else:
        a, b = at(dx, 0), at(dx, 1)
        first = (at(f, 0) * (-(2.0 * a + b) / (a * (a + b))) + at(f, 1) * ((a + b) / (a * b))
                 + at(f, 2) * (-a / (b * (a + b))))
        a, b = at(dx, -2), at(dx, -1)
        last = (at(f, -3) * (b / (a * (a + b))) + at(f, -2) * (-(a + b) / (a * b))
                + at(f, -1) * ((2.0 * b + a) / (b * (a + b))))
    return cat([first, interior, last], d)


def gradient(input: Tensor, *, spacing: Any = 1, dim: int | Sequence[int] | None = None,  # noqa: A002
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of ``input``'s samples along each of ``dim`` (default: every dim), one tensor per dim, as
    ``torch.gradient``: ``spacing`` is one number for every dim, or a list with a number (uniform steps) or a 1-D
    tensor of coordinates for each; ``edge_order`` 1 or 2 is the order of the one-sided differences at the ends."""
    if not _is_tensor(input):
        raise TypeError(f"gradient(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if edge_order not in (1, 2):
        raise ValueError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order!r}")
    dims = list(range(input.dims)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, input.dims) for d in dims]
    for d in dims:
        if dims.count(d) > 1:
            raise ShapeError(f"dim {d} appears multiple times in the list of dims {dims}")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            given = "was not given" if dim is None else f"is {dim!r}"
            raise ShapeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                             f"{len(dims)} (one per dim), since the dim argument {given}, but got a list of length "
                             f"{len(spacing)}")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    f = _float_input(input)
    out = []
    for d, step in zip(dims, steps):
        n = f.shape[d]
        if n < edge_order + 1:
            raise ShapeError(f"torch.gradient expected each dimension size to be at least edge_order+1 (= "
                             f"{edge_order + 1}), got size {n} at dim {d} (shape {input.shape})")
        if _is_tensor(step) and step.dims > 0:
            if step.dims != 1 or step.shape[0] != n:
                raise ShapeError(f"torch.gradient: the coordinates for dim {d} must be 1-D of its length {n}, got "
                                 f"shape {step.shape}")
            out.append(_coordinates(f, d, step, edge_order))
        else:
            out.append(_uniform(f, d, float(step), edge_order))
    return tuple(out)


__all__ = ["gradient"]

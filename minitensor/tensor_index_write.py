"""Writing whole entries along a dim by index (the ``IndexWriteMethods`` mixin) and the matching ``mt.`` functions:
index_fill, index_copy, and their in-place forms index_fill_ and index_copy_ (methods only, as in PyTorch).

Each is a composition: a bool mask of the written entries (an ``index_add`` of ones) selects, by ``where``, between
input and the value or the source scattered by ``index_add``. Gradients follow PyTorch: none to input's written
entries, the sum over the written entries to a 0-d tensor value, and the gradient gathered at ``index`` to source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import dtypes
from . import tensor_functions as F
from .errors import DTypeError, IndexOutOfRangeError, ShapeError
from .index_key import INDEX_DTYPES
from .tensor_data import normalize_dim
from .tensor_index import index_add
from .tensor_inplace import _inplace

if TYPE_CHECKING:
    from .tensor import Tensor


def _is_tensor(x: Any) -> bool:
    """Every Tensor is an IndexWriteMethods (tensor.py imports this module, so Tensor itself is not importable here)."""
    return isinstance(x, IndexWriteMethods)


def _entries(input: Tensor, dim: int, index: Tensor, name: str, negative: bool) -> tuple[int, Tensor, Tensor]:  # noqa: A002
    """(dim, 1-D int64 index with negative entries wrapped if ``negative``, bool mask of the written entries shaped to
    broadcast against input) for a checked call on a tensor of at least 1 dim."""
    if not _is_tensor(index) or index.dtype not in INDEX_DTYPES:
        got = f"a {index.dtype} tensor" if _is_tensor(index) else type(index).__name__
        raise DTypeError(f"{name}(): index must be an int64 or int32 tensor, got {got}")
    input._check_backend(index)
    if index.dims > 1:
        raise ShapeError(f"{name}(): index must be a vector (0-d or 1-D), got shape {index.shape}")
    d = normalize_dim(dim, input.dims)
    n = input.shape[d]
    flat = index.reshape(index.numel()).cast(dtypes.int64)
    if flat.numel():
        lo, hi = int(flat.amin().item()), int(flat.amax().item())
        low = -n if negative else 0
        if lo < low or hi >= n:
            bad = lo if lo < low else hi
            raise IndexOutOfRangeError(f"{name}(): index {bad} is out of range for dim {dim} of size {n} (shape {input.shape}); "
                                       f"valid indices are [{low}, {n})")
        if lo < 0:
            flat = flat.remainder(n)
    hits = input._lift(0, dtypes.int64).expand(n).index_add(0, flat, flat._lift(1, dtypes.int64).expand(flat.numel())) > 0
    shape = [1] * input.dims
    shape[d] = n
    return d, flat, hits.reshape(*shape)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:  # noqa: A002 - PyTorch's names
    """A copy of input with the entries ``index`` (0-d or 1-D; negative ones count from the end) along ``dim`` set to
    ``value`` (a number or a 0-d tensor, which gets the summed gradient of the filled elements)."""
    if _is_tensor(value):
        input._check_backend(value)
        if value.dims != 0:
            raise ShapeError(f"index_fill(): value must be a number or a 0-d tensor, got a tensor of shape {value.shape}")
        fill = value.cast(input.dtype)
    else:
        fill = input._lift(value, input.dtype)
    x = input.reshape(1) if input.dims == 0 else input
    _, _, hits = _entries(x, dim, index, "index_fill", True)
    out = F.Where.apply(hits, fill, x)
    return out.reshape(()) if input.dims == 0 else out


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """A copy of input with ``source``'s i-th entry along ``dim`` written at entry ``index[i]`` (1-D, in range,
    source of input's shape but len(index) along dim). Repeated indices are undefined in PyTorch; here they sum."""
    if not _is_tensor(source):
        raise TypeError(f"index_copy(): argument 'source' must be Tensor, not {type(source).__name__}")
    input._check_backend(source)
    if source.dtype != input.dtype:
        raise DTypeError(f"index_copy(): self and source expected to have the same dtype, but got {input.dtype} and {source.dtype}")
    x = input.reshape(1) if input.dims == 0 else input
    src = source.reshape(1) if source.dims == 0 else source
    d, flat, hits = _entries(x, dim, index, "index_copy", False)
    expected = x.shape[:d] + (flat.numel(),) + x.shape[d + 1:]
    if src.shape != expected:
        raise ShapeError(f"index_copy(): source {source.shape} must be {expected} for input {input.shape}, dim {dim}, "
                         f"index {index.shape}")
    out = F.Where.apply(hits, index_add(x._zeros(x.shape), d, flat, src), x)
    return out.reshape(()) if input.dims == 0 else out


class IndexWriteMethods:
    """index_fill / index_copy methods of Tensor, out-of-place and in place (those return the tensor itself)."""

    def index_fill(self, dim: int, index: Tensor, value: Any) -> Tensor:
        return index_fill(self, dim, index, value)  # type: ignore[arg-type]

    def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return index_copy(self, dim, index, source)  # type: ignore[arg-type]

    def index_fill_(self: Any, dim: int, index: Any, value: Any) -> Any:
        return _inplace(self, lambda x: index_fill(x, dim, index, value))

    def index_copy_(self: Any, dim: int, index: Any, source: Any) -> Any:
        return _inplace(self, lambda x: index_copy(x, dim, index, source))


__all__ = ["index_fill", "index_copy"]

"""Linear layers and shape helpers: ``F.linear``, ``nn.Linear``, ``nn.Identity``, ``nn.Flatten``, ``nn.Unflatten``."""

from __future__ import annotations

import math
from typing import Any

from ..autodiff import Context, is_grad_enabled
from ..creation import empty
from ..module import Module, Parameter
from ..tensor import Tensor, _result
from ..tensor_data import TensorData
from ..tensor_functions import TensorFunction
from . import init
from .common import bias_bound, check_sizes, factory, tensor_args

__all__ = ["linear", "Linear", "Identity", "Flatten", "Unflatten"]


@tensor_args("input", "weight")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002 - torch's name
    """``input @ weight.T + bias`` with ``weight`` of shape (out_features, in_features).

    A float input with matching weight and bias (same backend and dtype) runs as one :class:`Addmm` node, a
    batched one on its (rows, in_features) view when its leading dims merge without a copy; anything else (mixed
    dtypes, a bad shape with its error) goes through matmul and add."""
    if _fusable(input, weight, bias):
        return Addmm.apply(input, weight, bias)  # type: ignore[no-any-return]
    if input.dims > 2 and input._data.is_contiguous():
        rows = input.reshape(-1, input.shape[-1])
        if _fusable(rows, weight, bias):
            return Addmm.apply(rows, weight, bias).view(*input.shape[:-1], weight.shape[0])  # type: ignore[no-any-return]
    out = input @ weight.transpose(0, 1)
    return out + bias if bias is not None else out


def _fusable(x: Tensor, weight: Tensor, bias: Tensor | None) -> bool:
    xd, wd = x._data, weight._data
    if xd.dims != 2 or wd.dims != 2 or xd.shape[1] != wd.shape[1] or xd.dtype != wd.dtype or xd.dtype.kind != "f":
        return False
    if x.backend is not weight.backend:
        return False
    if bias is None:
        return True
    bd = bias._data
    return bd.shape == (wd.shape[0],) and bd.dtype == xd.dtype and bias.backend is x.backend


def _transposed(data: TensorData) -> TensorData:
    """The transposed view of a 2-D TensorData."""
    (rows, cols), (row_stride, col_stride) = data.shape, data.strides
    return TensorData.trusted(data.storage, (cols, rows), (col_stride, row_stride), data.size)


WT_COPY_MIN_ROWS = 512
"""Rows of x from which Addmm copies W^T to a contiguous buffer before the product (see Addmm)."""


class Addmm(TensorFunction):
    """out = x W^T + b for x (N, in), W (out, in), b (out,) or None: one matmul and one in-place add. Gradients:
    d W (x), d^T x (W, contiguous), sum over rows of d (b). On a BLAS backend (``use_blas``) with at least
    WT_COPY_MIN_ROWS rows the matmul reads a contiguous copy of W^T, which the x gradient reads again (measured with
    OpenBLAS at one thread on the GPT's shapes, 2048 rows: both products 5-12% faster than on W's transposed view, the
    copy included); with few rows the copy costs as much as the product (64 x 784 @ 784 x 128: 106 us of copy in a
    compiled MLP step, 113 us of matmul), so W's transposed view is read directly."""

    higher_order = True

    @staticmethod
    def forward(ctx: Context, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:  # type: ignore[override]
        need_x, need_w = ctx.needs_input_grad[:2]
        backend, wd = x.backend, weight._data
        wt = _transposed(wd)
        if getattr(backend, "use_blas", False) and x._data.shape[0] >= WT_COPY_MIN_ROWS:
            wt = backend.empty(wt.shape, wd.dtype)
            backend.map("id", _transposed(wd), wt)
        ctx.save_for_backward(x if need_w else None, weight if need_x else None, wt if need_x else None)
        out = backend.empty((x._data.shape[0], wd.shape[0]), wd.dtype)
        backend.matmul(x._data, wt, out)
        if bias is not None:
            backend.zip("add", out, bias._data, out)
        return _result(out, backend)

    @staticmethod
    def backward(ctx: Context, d: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:  # type: ignore[override]
        x, weight, wt = ctx.saved_values
        need_x, need_w, need_b = ctx.needs_input_grad
        if is_grad_enabled():  # create_graph: the same formulas from differentiable ops
            return (d @ weight if need_x else None, d.transpose(0, 1) @ x if need_w else None,
                    d.sum(0) if need_b else None)
        backend, dd = d.backend, d._data
        grad_x = grad_w = None
        if need_x:  # d W
            wd = weight._data
            if wd.dtype == dd.dtype and weight.backend is backend:
                grad_x = _result(backend.empty((dd.shape[0], wd.shape[1]), dd.dtype), backend)
                backend.matmul(dd, _transposed(wt), grad_x._data)  # W itself, or W^T's contiguous copy transposed
            else:  # the general route (promotion, backend check)
                grad_x = d._matmul(weight)
        if need_w:  # d^T x
            xd = x._data
            if xd.dtype == dd.dtype and x.backend is backend:
                grad_w = _result(backend.empty((dd.shape[1], xd.shape[1]), dd.dtype), backend)
                backend.matmul(_transposed(dd), xd, grad_w._data)
            else:
                grad_w = d._view_of(_transposed(dd))._matmul(x)
        grad_b = None
        if need_b:
            out = backend.empty((1, dd.shape[1]), dd.dtype)
            backend.reduce("sum", dd, 0, out)
            grad_b = _result(TensorData.trusted(out.storage, (dd.shape[1],), None, out.size), backend)
        return grad_x, grad_w, grad_b


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features), PyTorch's layout and default init."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None,
                 *, backend: Any = None):
        super().__init__()
        check_sizes("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        kw = factory(device, dtype, backend)
        self.weight = Parameter(empty(out_features, in_features, **kw))
        self.bias = Parameter(empty(out_features, **kw)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default init: kaiming_uniform_(a=sqrt(5)) weight, U(-1/sqrt(in), 1/sqrt(in)) bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = bias_bound(self.in_features)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        parameters = self._parameters  # read directly: Module.__getattr__ is slower
        weight = parameters["weight"] if "weight" in parameters else self.weight
        return linear(x, weight, parameters["bias"] if "bias" in parameters else self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Flatten(Module):
    """Merge dims ``start_dim``..``end_dim`` into one (default keeps the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...]):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Identity(Module):
    """Returns its input (arguments to the constructor are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x



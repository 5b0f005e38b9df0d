"""Gradients of a convolution with respect to its input and its weight, given the output's gradient
(``torch.nn.grad``).

``conv2d_input(input_size, weight, grad_output)`` is what ``conv2d(x, weight)``'s backward passes to ``x`` (of shape
``input_size``); ``conv2d_weight(input, weight_size, grad_output)`` what it passes to ``weight``. Both run conv's own
backward code rather than new kernels: the input gradient is conv's col2im (:func:`.conv_transpose.conv_transpose2d`,
the adjoint of conv2d, with the output padding that restores ``input_size``), the weight gradient is the backward of
the matmul inside conv, ``grad_output^T @ im2col(input)`` per group, on the same windows conv reads. Each is
differentiable in the tensors it takes, as PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor
from .conv import Im2Col, _tuple, pad
from .conv_transpose import conv_transpose1d, conv_transpose2d, conv_transpose3d

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]

_CONV_TRANSPOSE = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}


def _settings(name: str, nd: int, stride: Any, padding: Any, dilation: Any, groups: Any
              ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
    """``stride``, ``padding``, ``dilation`` as ``nd``-tuples and ``groups`` checked (ints only, as PyTorch)."""
    if isinstance(padding, str):
        raise TypeError(f"{name}: padding must be an int or a tuple of {nd} ints, got {padding!r}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
    return (_tuple(stride, nd, "stride", 1), _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation", 1),
            groups)


def _check_shapes(name: str, nd: int, input_shape: tuple[int, ...], weight_shape: tuple[int, ...],
                  grad_output: Tensor, stride: tuple[int, ...], padding: tuple[int, ...], dilation: tuple[int, ...],
                  groups: int) -> tuple[int, ...]:
    """The output padding of the transposed conv that gives back ``input_shape`` (the rows conv's last window
    never reaches); ShapeError unless conv of that input with that weight has ``grad_output``'s shape."""
    what = f"{name}: input {input_shape}, weight {weight_shape}, grad_output {grad_output.shape}"
    if len(input_shape) != nd + 2 or len(weight_shape) != nd + 2 or grad_output.dims != nd + 2:
        raise ShapeError(f"{what}: all three must be {nd + 2}-D (batch, channels, *spatial)")
    out_c, cg, kernel = weight_shape[0], weight_shape[1], weight_shape[2:]
    spatial = input_shape[2:]
    extent = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    sizes = tuple((s + 2 * p - e) // st + 1 for s, p, e, st in zip(spatial, padding, extent, stride))
    expected = (input_shape[0], out_c, *sizes)
    if input_shape[1] != cg * groups or out_c % groups or grad_output.shape != expected:
        raise ShapeError(f"{what}, stride {stride}, padding {padding}, dilation {dilation}, groups {groups}: conv of "
                         f"that input with that weight gives an output of shape {expected} (and needs "
                         f"{cg * groups} input channels, out_channels divisible by groups)")
    if any(s + 2 * p < e for s, p, e in zip(spatial, padding, extent)):
        raise ShapeError(f"{what}: the padded input is smaller than the dilated kernel {tuple(extent)}")
    return tuple((s + 2 * p - e) % st for s, p, e, st in zip(spatial, padding, extent, stride))


def _conv_input(name: str, nd: int, input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Any,
                padding: Any, dilation: Any, groups: Any) -> Tensor:
    """d conv / d input: the transposed conv of ``grad_output`` with ``weight``, sized back to ``input_size``."""
    step, pads, dil, groups = _settings(name, nd, stride, padding, dilation, groups)
    shape = tuple(int(s) for s in input_size)
    extra = _check_shapes(name, nd, shape, weight.shape, grad_output, step, pads, dil, groups)
    return _CONV_TRANSPOSE[nd](grad_output, weight, None, step, pads, extra, groups, dil)


def _conv_weight(name: str, nd: int, input: Tensor, weight_size: Sequence[int], grad_output: Tensor,  # noqa: A002
                 stride: Any, padding: Any, dilation: Any, groups: Any) -> Tensor:
    """d conv / d weight: ``grad_output^T @ im2col(input)`` for each group, shaped ``weight_size``."""
    step, pads, dil, groups = _settings(name, nd, stride, padding, dilation, groups)
    shape = tuple(int(s) for s in weight_size)
    _check_shapes(name, nd, input.shape, shape, grad_output, step, pads, dil, groups)
    out_c, cg, kernel = shape[0], shape[1], shape[2:]
    x = pad(input, [p for p in reversed(pads) for _ in range(2)])
    cols = Im2Col.apply(x, kernel, step, dil, grad_output.shape[2:])  # (B, *O, C, *K)
    n, k = cols.shape[0] * math.prod(grad_output.shape[2:]), cg * math.prod(kernel)
    rows = grad_output.permute(0, *range(2, nd + 2), 1).reshape(n, out_c)
    if groups == 1:
        grad = rows.transpose(0, 1) @ cols.reshape(n, k)
    else:  # (G, O/G, N) @ (G, N, K) -> (G, O/G, K)
        g = rows.view(n, groups, out_c // groups).permute(1, 2, 0)
        grad = g @ cols.reshape(n, groups, k).permute(1, 0, 2)
    return grad.reshape(*shape)


def conv1d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv1d(x, weight, stride=, padding=, dilation=, groups=)`` with respect to ``x`` (of shape
    ``input_size``, (N, C, L)) given the output's gradient ``grad_output`` (N, O, L_out)."""
    return _conv_input("conv1d_input", 1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: Any = 1,  # noqa: A002
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv1d(input, w, stride=, padding=, dilation=, groups=)`` with respect to ``w`` (of shape
    ``weight_size``, (O, C/groups, K)) given the output's gradient ``grad_output``."""
    return _conv_weight("conv1d_weight", 1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv2d(x, weight, ...)`` with respect to ``x`` (of shape ``input_size``, (N, C, H, W))
    given the output's gradient ``grad_output`` (N, O, H_out, W_out)."""
    return _conv_input("conv2d_input", 2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: Any = 1,  # noqa: A002
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv2d(input, w, ...)`` with respect to ``w`` (of shape ``weight_size``, (O, C/groups, KH,
    KW)) given the output's gradient ``grad_output``."""
    return _conv_weight("conv2d_weight", 2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv3d(x, weight, ...)`` with respect to ``x`` (of shape ``input_size``, (N, C, D, H, W))
    given the output's gradient ``grad_output``."""
    return _conv_input("conv3d_input", 3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: Any = 1,  # noqa: A002
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv3d(input, w, ...)`` with respect to ``w`` (of shape ``weight_size``, (O, C/groups, KD,
    KH, KW)) given the output's gradient ``grad_output``."""
    return _conv_weight("conv3d_weight", 3, input, weight_size, grad_output, stride, padding, dilation, groups)

"""Planning a ``fast`` backend call: which kernel runs and the layout arguments it gets, cached per layout.

A plan broadcasts nothing itself (the caller passes operands already expanded to the output shape); it drops size-1
dims, orders and merges dims so the innermost loop is as long and as contiguous as possible
(:mod:`minitensor.backends.layout`), and picks a kernel: for map and zip the op-free walker (flat when every operand is
one contiguous run) with the op's loop by address, for reductions the inner, outer or row kernel. Values are read as
int64 when every input is an integer or bool tensor (exact integer arithmetic), else as float64
(:func:`compute_type`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..operators import INTEGER_KINDS
from ..tensor_data import TensorData
from .fast_codegen import DEFAULT_COMPUTE
from .fast_launch import find_kernel, run_address, streams, use_parallel
from .fast_numpy import map_twin, math_route, zip_twin
from .layout import cached, chunking, coalesce, planned_layout

BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


SPLIT_MIN_LENGTH = 1 << 16  # folds at least this long into fewer outputs than threads are split


_reduce_plans: dict[tuple, tuple[str, tuple]] = {}


def reduce_plan(a: TensorData, dim: int, out: TensorData) -> tuple[str, tuple]:
    """The reduce kernel's name and its arguments after the storages, cached per layout like ``planned_layout``."""
    return cached(_reduce_plans, (a.shape, a.strides, out.strides, dim), lambda: make_reduce_plan(a, dim, out))


def make_reduce_plan(a: TensorData, dim: int, out: TensorData) -> tuple[str, tuple]:
    """Reduce ``a`` along ``dim`` into ``out``: order and merge the kept dims, pick the kernel (outer: the reduced dim
    is not the most contiguous; rows: each fold one contiguous run, the runs and outputs one after another; else
    inner)."""
    length = a.shape[dim]
    stride = a.strides[dim] if length > 1 else 0
    dims = [(a.shape[i], [out.strides[i], a.strides[i]]) for i in range(a.dims) if i != dim and a.shape[i] != 1]
    dims.sort(key=lambda d: -abs(d[1][1]))  # a's most contiguous output dim last
    shape, strides = coalesce(dims, 2)
    inner = int(shape[-1])
    if inner > 1 and abs(int(strides[1, -1])) < abs(stride):
        # The reduced dim is not the most contiguous: run the inner loop along the output's last dim.
        outer_shape, outer_strides = shape[:-1].copy(), np.ascontiguousarray(strides[:, :-1])
        rows = int(np.prod(outer_shape))
        tiles_wanted = -(-16 // rows)
        tile = min(8192, max(256, -(-inner // tiles_wanted)))
        so, sa = int(strides[0, -1]), int(strides[1, -1])
        return "reduce_outer", (outer_shape, outer_strides, inner, so, sa, length, stride, tile)
    n_chunks, per_chunk = chunking(shape, min_chunk=max(1, 16384 // max(length, 1)))
    if stride == 1 and shape.size == 1 and (shape[0] == 1 or (strides[0, 0] == 1 and strides[1, 0] == length)):
        return "reduce_rows_kernel", (int(shape[0]), length, n_chunks, per_chunk)  # rows one after another
    return "reduce_inner", (shape, strides, length, stride, n_chunks, per_chunk)


def map_plan(op: str, a: TensorData, out: TensorData) -> tuple[Any, Any, Callable[..., Any], tuple]:
    """(NUMPY_MATH function or None, exact NumPy twin or None, kernel, layout arguments) of ``map(op, a, out)``;
    ``out`` is not empty."""
    fn = math_route(op, out.size, out.dtype)
    if not (a.dtype == out.dtype and out.dtype in BLAS_DTYPES and a.shape == out.shape):
        fn = None
    twin = map_twin(op, a, out)
    return (fn, twin, *elementwise_kernel("map", op, [a], out, lazy=bool(twin or fn)))


def zip_plan(op: str, a: TensorData, b: TensorData, out: TensorData) -> tuple[Any, Callable[..., Any], tuple]:
    """(exact NumPy twin or None, kernel, layout arguments) of ``zip(op, a, b, out)``; ``out`` is not empty."""
    twin = zip_twin(op, a, b, out)
    return (twin, *elementwise_kernel("zip", op, [a, b], out, lazy=twin is not None))


def elementwise_kernel(family: str, op: str, inputs: list[TensorData], out: TensorData,
                       lazy: bool) -> tuple[Callable[..., Any], tuple]:
    """The ``family`` ("map" or "zip") walker for this call (:mod:`minitensor.backends.fast_walk_kernels`) and its
    arguments after the storages: the flat kernel (total, chunks, chunk size) when every operand is one contiguous
    run from its storage's start (or the call has one element), else the general kernel with the planned layout
    (shape, strides, chunks, chunk size); then the address of the op's loop for these dtypes (on the flat kernel
    with an output of ``fast_launch.STREAM_FROM`` bytes or more, its streaming loop, unless the op is
    ``fast_launch.COMPUTE_BOUND``). ``lazy``: the walker
    and the loop are found (and compiled) at the first call, and the address is not among the arguments."""
    shape, strides, n_chunks, per_chunk = planned_layout(out, inputs)
    flat = shape.size == 1 and (shape[0] == 1 or bool((strides == 1).all()))
    layout: tuple[Any, ...]
    if flat:
        name, layout = f"{family}_flat_kernel", (int(shape[0]), n_chunks, per_chunk)
    else:  # the general walker takes the storages as bytes, with the item sizes (operands', then out's)
        sizes = tuple(x.dtype.itemsize for x in (*inputs, out))
        name, layout = f"{family}_kernel", (sizes, shape, strides, n_chunks, per_chunk)
    parallel = use_parallel(out.size)
    compute, dtypes = compute_type(*inputs), [x.dtype for x in inputs]
    stream = flat and streams(out.size * out.dtype.itemsize, op)  # an output too large for the cache: stream it

    def walker() -> Callable[..., Any]:
        kernel = find_kernel(name, "walk", "", DEFAULT_COMPUTE, parallel)
        return kernel if flat else on_bytes(kernel, len(inputs) + 1)

    if not lazy:
        return walker(), (*layout, run_address(family, op, compute, out.dtype, *dtypes, stream=stream))
    found: list[tuple[Callable[..., Any], int]] = []

    def call(*args: Any) -> Any:
        if not found:
            found.append((walker(), run_address(family, op, compute, out.dtype, *dtypes, stream=stream)))
        kernel, run = found[0]
        return kernel(*args, run)

    return call, layout


BYTES = np.dtype(np.uint8)


def bytes_of(storage: np.ndarray) -> np.ndarray:
    """``storage`` (1-D, C-contiguous, as every storage here) as its bytes: what the general walkers take."""
    return storage.view(BYTES)


def on_bytes(kernel: Callable[..., Any], storages: int) -> Callable[..., Any]:
    """``kernel`` (a general walker) called with its first ``storages`` arguments, storages, as their bytes."""
    def map_call(a: np.ndarray, out: np.ndarray, *rest: Any) -> Any:
        return kernel(bytes_of(a), bytes_of(out), *rest)

    def zip_call(a: np.ndarray, b: np.ndarray, out: np.ndarray, *rest: Any) -> Any:
        return kernel(bytes_of(a), bytes_of(b), bytes_of(out), *rest)

    call: Callable[..., Any] = map_call if storages == 2 else zip_call
    return functools.update_wrapper(call, kernel, assigned=("__name__", "__qualname__", "__doc__"), updated=())


def compute_type(*inputs: TensorData) -> str:
    """The compute type: int64 when every input holds integers or bools (exact arithmetic), else float64."""
    for x in inputs:
        if x.storage.dtype.kind not in INTEGER_KINDS:
            return "float64"
    return "int64"


def lift_scalar(data: TensorData) -> TensorData:
    """A 0-d tensor as shape (1,) over the same element (row kernels need a dim); others unchanged."""
    return TensorData(data.storage, (1,), (0,)) if data.dims == 0 else data


def check_op(op: str, ops: dict) -> None:
    """Raise KeyError for an op name that is not in ``ops`` (before any kernel module is generated)."""
    if op not in ops:
        raise KeyError(f"unknown op {op!r}; known: {', '.join(sorted(ops))}")


def split_factor(length: int, most: int = 64) -> int:
    """The largest divisor of ``length`` up to ``most`` (1 when there is none)."""
    return next((p for p in range(min(most, length), 1, -1) if length % p == 0), 1)


def matrix_layout(rows: int, cols: int, row_stride: int, col_stride: int) -> str | None:
    """The BLAS layout of a (rows, cols) block with these strides, or None: "row" when elements of a row are adjacent
    and rows at least ``cols`` apart (C order, or a column slice of a wider row-major matrix, such as one attention
    head's columns), "col" for the transpose (Fortran order, or a row slice of one)."""
    if (cols == 1 or col_stride == 1) and (rows == 1 or row_stride >= cols):
        return "row"
    if (rows == 1 or row_stride == 1) and (cols == 1 or col_stride >= rows):
        return "col"
    return None

"""The ``simple`` backend: plain Python loops over the general strided case.

This is the readable reference every other backend is tested against. It is slow by design.
Values are read as Python ints when every input is an integer or bool tensor, else as floats.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..operators import BINARY_OPS, INTEGER_KINDS, REDUCE_OPS, UNARY_OPS, reduce_start
from ..tensor_data import TensorData, broadcast_index, index_to_position, to_index
from .base import HostBackend


def reader(*inputs: TensorData) -> Callable[[Any], Any]:
    """``int`` when every input holds integers or bools (exact arithmetic), else ``float``."""
    return int if all(x.dtype.kind in INTEGER_KINDS for x in inputs) else float


def positions(out: TensorData, *inputs: TensorData) -> Any:
    """For each element of ``out`` in row-major order: (out position, position of each broadcast input)."""
    out_index = np.zeros(out.dims, dtype=np.int64)
    in_indices = [np.zeros(x.dims, dtype=np.int64) for x in inputs]
    for ordinal in range(out.size):
        to_index(ordinal, out.shape_array, out_index)
        found = []
        for x, index in zip(inputs, in_indices):
            broadcast_index(out_index, out.shape_array, x.shape_array, index)
            found.append(index_to_position(index, x.strides_array))
        yield index_to_position(out_index, out.strides_array), found


def rows(a: TensorData, dim: int) -> Any:
    """For each position of ``a`` along the dims other than ``dim``: the storage positions along ``dim``."""
    outer = TensorData(a.storage, a.shape[:dim] + (1,) + a.shape[dim + 1 :], a.strides)
    step = a.strides[dim]
    for start, _ in positions(outer):
        yield [start + k * step for k in range(a.shape[dim])]


def sort_key(value: Any) -> tuple[bool, Any]:
    """NaN above every number."""
    is_nan = isinstance(value, float) and math.isnan(value)
    return (is_nan, 0.0 if is_nan else value)


class SimpleBackend(HostBackend):
    name = "simple"

    def map(self, op: str, a: TensorData, out: TensorData) -> None:
        fn, read = UNARY_OPS[op], reader(a)
        for po, (pa,) in positions(out, a):
            out.storage[po] = fn(read(a.storage[pa]))

    def zip(self, op: str, a: TensorData, b: TensorData, out: TensorData) -> None:
        fn, read = BINARY_OPS[op], reader(a, b)
        for po, (pa, pb) in positions(out, a, b):
            out.storage[po] = fn(read(a.storage[pa]), read(b.storage[pb]))

    def reduce(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        fn, read = REDUCE_OPS[op][0], reader(a)
        start = reduce_start(op, read is int)
        for po, (pa,) in positions(out, a):
            acc = start
            for k in range(a.shape[dim]):
                acc = fn(acc, read(a.storage[pa + k * a.strides[dim]]))
            out.storage[po] = acc

    def matmul(self, a: TensorData, b: TensorData, out: TensorData) -> None:
        inner, read = a.shape[-1], reader(a, b)
        out_index = np.zeros(out.dims, dtype=np.int64)
        a_index = np.zeros(a.dims, dtype=np.int64)
        b_index = np.zeros(b.dims, dtype=np.int64)
        for ordinal in range(out.size):
            to_index(ordinal, out.shape_array, out_index)
            broadcast_index(out_index, out.shape_array, a.shape_array, a_index)
            broadcast_index(out_index, out.shape_array, b.shape_array, b_index)
            a_index[-2] = out_index[-2]
            b_index[-1] = out_index[-1]
            acc = read(0)
            for k in range(inner):
                a_index[-1] = k
                b_index[-2] = k
                x = read(a.storage[index_to_position(a_index, a.strides_array)])
                y = read(b.storage[index_to_position(b_index, b.strides_array)])
                acc += x * y
            out.storage[index_to_position(out_index, out.strides_array)] = acc

    def where(self, cond: TensorData, a: TensorData, b: TensorData, out: TensorData) -> None:
        for po, (pc, pa, pb) in positions(out, cond, a, b):
            out.storage[po] = a.storage[pa] if cond.storage[pc] else b.storage[pb]

    def gather(self, a: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        out_index = np.zeros(out.dims, dtype=np.int64)
        for ordinal in range(out.size):
            to_index(ordinal, out.shape_array, out_index)
            chosen = int(index.storage[index_to_position(out_index, index.strides_array)])
            a_index = out_index.copy()
            a_index[dim] = chosen
            out.storage[index_to_position(out_index, out.strides_array)] = a.storage[index_to_position(a_index, a.strides_array)]

    def scatter_add(self, src: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        src_index = np.zeros(src.dims, dtype=np.int64)
        for ordinal in range(src.size):
            to_index(ordinal, src.shape_array, src_index)
            out_index = src_index.copy()
            out_index[dim] = int(index.storage[index_to_position(src_index, index.strides_array)])
            po = index_to_position(out_index, out.strides_array)
            out.storage[po] = out.storage[po] + src.storage[index_to_position(src_index, src.strides_array)]

    def scan(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        fn, read = REDUCE_OPS[op][0], reader(a)
        start = reduce_start(op, read is int)
        for a_row, out_row in zip(rows(a, dim), rows(out, dim)):
            acc = start
            for pa, po in zip(a_row, out_row):
                acc = fn(acc, read(a.storage[pa]))
                out.storage[po] = acc

    def sort(self, a: TensorData, dim: int, descending: bool, values: TensorData, indices: TensorData) -> None:
        read = reader(a)
        for a_row, v_row, i_row in zip(rows(a, dim), rows(values, dim), rows(indices, dim)):
            row = [read(a.storage[p]) for p in a_row]
            # Python's sort is stable in both directions (reverse=True keeps equal items in order).
            order = sorted(range(len(row)), key=lambda k: sort_key(row[k]), reverse=descending)
            for k, (pv, pi) in enumerate(zip(v_row, i_row)):
                values.storage[pv] = row[order[k]]
                indices.storage[pi] = order[k]


backend = SimpleBackend()

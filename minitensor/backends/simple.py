"""The ``simple`` backend: plain Python loops over the general strided case.

This is the readable reference every other backend is tested against. It is slow by design.
"""

from __future__ import annotations

import numpy as np

from ..operators import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from ..tensor_data import TensorData, broadcast_index, index_to_position, to_index
from .base import HostBackend


class SimpleBackend(HostBackend):
    name = "simple"

    def map(self, op: str, a: TensorData, out: TensorData) -> None:
        fn = UNARY_OPS[op]
        out_index = np.zeros(out.dims, dtype=np.int64)
        a_index = np.zeros(a.dims, dtype=np.int64)
        for ordinal in range(out.size):
            to_index(ordinal, out.shape_array, out_index)
            broadcast_index(out_index, out.shape_array, a.shape_array, a_index)
            value = a.storage[index_to_position(a_index, a.strides_array)]
            out.storage[index_to_position(out_index, out.strides_array)] = fn(float(value))

    def zip(self, op: str, a: TensorData, b: TensorData, out: TensorData) -> None:
        fn = BINARY_OPS[op]
        out_index = np.zeros(out.dims, dtype=np.int64)
        a_index = np.zeros(a.dims, dtype=np.int64)
        b_index = np.zeros(b.dims, dtype=np.int64)
        for ordinal in range(out.size):
            to_index(ordinal, out.shape_array, out_index)
            broadcast_index(out_index, out.shape_array, a.shape_array, a_index)
            broadcast_index(out_index, out.shape_array, b.shape_array, b_index)
            x = float(a.storage[index_to_position(a_index, a.strides_array)])
            y = float(b.storage[index_to_position(b_index, b.strides_array)])
            out.storage[index_to_position(out_index, out.strides_array)] = fn(x, y)

    def reduce(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        fn, start = REDUCE_OPS[op]
        out_index = np.zeros(out.dims, dtype=np.int64)
        for ordinal in range(out.size):
            to_index(ordinal, out.shape_array, out_index)
            a_index = out_index.copy()
            acc = start
            for k in range(a.shape[dim]):
                a_index[dim] = k
                acc = fn(acc, float(a.storage[index_to_position(a_index, a.strides_array)]))
            out.storage[index_to_position(out_index, out.strides_array)] = acc

    def matmul(self, a: TensorData, b: TensorData, out: TensorData) -> None:
        inner = a.shape[-1]
        out_index = np.zeros(out.dims, dtype=np.int64)
        a_index = np.zeros(a.dims, dtype=np.int64)
        b_index = np.zeros(b.dims, dtype=np.int64)
        for ordinal in range(out.size):
            to_index(ordinal, out.shape_array, out_index)
            broadcast_index(out_index, out.shape_array, a.shape_array, a_index)
            broadcast_index(out_index, out.shape_array, b.shape_array, b_index)
            a_index[-2] = out_index[-2]
            b_index[-1] = out_index[-1]
            acc = 0.0
            for k in range(inner):
                a_index[-1] = k
                b_index[-2] = k
                x = float(a.storage[index_to_position(a_index, a.strides_array)])
                y = float(b.storage[index_to_position(b_index, b.strides_array)])
                acc += x * y
            out.storage[index_to_position(out_index, out.strides_array)] = acc


backend = SimpleBackend()

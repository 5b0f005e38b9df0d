"""The ``fast`` backend: parallel Numba kernels on 1-D NumPy storage.

Python code here only plans a call (:mod:`minitensor.backends.fast_plan`: the kernel and its layout arguments,
cached per layout) and runs it. The kernels (template :mod:`minitensor.backends.fast_kernels`, instantiated per op
and compute type by :mod:`minitensor.backends.fast_codegen`, and the op-free
:mod:`minitensor.backends.fast_extra_kernels`) are compiled lazily per (op, dtypes) on first use and cached on disk,
so later processes load them instead of compiling. Map and zip run on op-free walkers
(:mod:`minitensor.backends.fast_walk_kernels`, compiled per dtypes) that call the op's loop by address. Small calls of
the common ops (under ``TWIN_BELOW`` elements) run an exact NumPy twin instead (:mod:`minitensor.backends.fast_numpy`):
the same bits, no compile on a first run.

Values are read as int64 when every input of a map, zip, reduce, scan or matmul is an integer or
bool tensor (exact integer arithmetic), else as float64, and converted on store to ``out``'s dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from ..operators import BINARY_OPS, INTEGER_KINDS, REDUCE_OPS, UNARY_OPS
from ..tensor_data import MAX_DIMS, TensorData, normalize_dim
from .base import HostBackend, strided_view
from .fast_codegen import DEFAULT_COMPUTE
from .fast_fused import FusedKernels
from .fast_launch import find_kernel, launch, lazy_kernel, use_parallel
from .fast_numpy import (  # noqa: F401 - NUMPY_MATH and THREADED_MATH_MIN are part of this module's interface
    NUMPY_MATH,
    THREADED_MATH_MIN,
    gather_twin,
    map_twin,
    math_route,
    numpy_math,
    reduce_math,
    reduce_twin,
    scatter_add_twin,
    where_twin,
    zip_twin,
)
from .fast_plan import (
    BLAS_DTYPES,
    SPLIT_MIN_LENGTH,
    check_op,
    compute_type,
    lift_scalar,
    map_plan,
    matrix_layout,
    reduce_plan,
    split_factor,
    zip_plan,
)
from .layout import cached, coalesce, planned_layout, row_plan

_blas_views: dict[tuple, tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]] = {}
"""(shape, byte strides) of the three NumPy views (from each storage's start) a BLAS matmul of this layout runs on."""
_ndarray = np.ndarray
_map_plans: dict[tuple, tuple[Any, Any, Callable[..., Any], tuple]] = {}
_zip_plans: dict[tuple, tuple[Any, Callable[..., Any], tuple]] = {}
_reduce_calls: dict[tuple, tuple[Any, Any, Callable[..., Any], tuple]] = {}
_twins: dict[tuple, Any] = {}  # (method, dtypes, shapes, strides, dim) -> exact NumPy twin or None


class FastBackend(FusedKernels, HostBackend):
    """Parallel Numba kernels. Like dense matmuls (BLAS), float ``exp``, ``log``, ``tanh`` and ``sigmoid`` are
    delegated to NumPy's vectorised loops (``NUMPY_MATH``; from KERNEL_MATH_FROM elements, exp and log, tanh where
    NumPy's loops are not SIMD, and float32 sigmoid run the kernels: :func:`math_route`), and small work with an exact NumPy twin runs it
    (:mod:`minitensor.backends.fast_numpy`); ``use_blas=False`` / ``use_numpy_math=False`` / ``use_numpy_twins=False``
    force the Numba kernels (tests, benchmarks)."""

    name = "fast"

    def __init__(self, use_blas: bool = True, use_numpy_math: bool = True, use_numpy_twins: bool = True) -> None:
        self.use_blas = use_blas
        self.use_numpy_math = use_numpy_math
        self.use_numpy_twins = use_numpy_twins

    def _twin(self, key: tuple, make: Callable[[], Any]) -> Any:
        """The exact NumPy twin cached under ``key`` (None: run the kernel), or None when twins are off."""
        if not self.use_numpy_twins:
            return None
        return cached(_twins, key, lambda: make() or False) or None

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        if type(shape) is not tuple or len(shape) > MAX_DIMS or not all([type(n) is int and n >= 0 for n in shape]):
            return super().empty(shape, dtype)  # normalised (or refused) the general way
        size = math.prod(shape)
        return TensorData.trusted(np.empty(size, dtype=dtype), shape, None, size)

    # map, zip and reduce look their plan (kernel and layout arguments) up by op, dtypes, shapes and strides:
    # a training loop repeats a few hundred calls, so after the first step each costs a dict lookup.

    def map(self, op: str, a: TensorData, out: TensorData) -> None:
        key = (op, a.dtype, out.dtype, a.shape, a.strides, out.shape, out.strides)
        plan = _map_plans.get(key)
        if plan is None:
            check_op(op, UNARY_OPS)
            if out.size == 0:
                return
            plan = cached(_map_plans, key, lambda: map_plan(op, a, out))
        fn, twin, kernel, layout = plan
        if twin is not None and self.use_numpy_twins:
            twin(a.storage, out.storage)
        elif fn is not None and self.use_numpy_math:
            with np.errstate(all="ignore"):  # IEEE results (inf on overflow, nan below 0), no warnings: as the kernels
                numpy_math(fn, strided_view(a), strided_view(out, writeable=True))
        else:
            kernel(a.storage, out.storage, *layout)

    def zip(self, op: str, a: TensorData, b: TensorData, out: TensorData) -> None:
        key = (op, a.dtype, b.dtype, out.dtype, a.shape, a.strides, b.shape, b.strides, out.shape, out.strides)
        plan = _zip_plans.get(key)
        if plan is None:
            check_op(op, BINARY_OPS)
            if out.size == 0:
                return
            plan = cached(_zip_plans, key, lambda: zip_plan(op, a, b, out))
        twin, kernel, layout = plan
        if twin is not None and self.use_numpy_twins:
            twin(a.storage, b.storage, out.storage)
        else:
            kernel(a.storage, b.storage, out.storage, *layout)

    def reduce(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        key = (op, a.dtype, out.dtype, a.shape, a.strides, dim, out.strides)
        plan = _reduce_calls.get(key)
        if plan is None:
            check_op(op, REDUCE_OPS)
            if out.size == 0:
                return
            dim = normalize_dim(dim, a.dims)
            length = a.shape[dim]
            parts = split_factor(length) if length >= SPLIT_MIN_LENGTH and out.size < numba.get_num_threads() else 1
            if parts > 1:
                self._reduce_split(op, a, dim, out, parts)
                return
            twin, math_route = reduce_twin(op, a, dim, out), reduce_math(op, a, dim, out)
            kernel, args = reduce_plan(a, dim, out)
            lookup = lazy_kernel if twin or math_route else find_kernel
            found = lookup(kernel, "reduce", op, compute_type(a), use_parallel(a.size))
            plan = cached(_reduce_calls, key, lambda: (twin, math_route, found, args))
        twin, math_route, kernel_fn, args = plan
        if twin is not None and self.use_numpy_twins:
            twin(a.storage, out.storage)
        elif math_route is not None and self.use_numpy_math:
            math_route(a.storage, out.storage)
        else:
            kernel_fn(a.storage, out.storage, *args)

    def _reduce_split(self, op: str, a: TensorData, dim: int, out: TensorData, parts: int) -> None:
        """Long fold into few outputs: fold ``parts`` slices of ``dim`` in parallel, then fold the partials."""
        length, stride = a.shape[dim], a.strides[dim]
        split = TensorData(
            a.storage,
            a.shape[:dim] + (parts, length // parts) + a.shape[dim + 1 :],
            a.strides[:dim] + (stride * (length // parts), stride) + a.strides[dim + 1 :],
        )
        partial = self.empty(out.shape[:dim] + (parts, 1) + out.shape[dim + 1 :], np.dtype(compute_type(a)))
        self.reduce(op, split, dim + 1, partial)
        self.reduce(op, TensorData(partial.storage, out.shape[:dim] + (parts,) + out.shape[dim + 1 :]), dim, out)

    def matmul(self, a: TensorData, b: TensorData, out: TensorData) -> None:
        if out.size == 0:
            return
        key = (a.dtype, b.dtype, out.dtype, a.shape, a.strides, b.shape, b.strides, out.shape, out.strides, self.use_blas)
        views = _blas_views.get(key)
        if views is not None:  # a dense float product seen before: BLAS on views of the three storages
            (a_shape, a_strides), (b_shape, b_strides), (o_shape, o_strides) = views
            np.matmul(_ndarray(a_shape, a.dtype, a.storage, 0, a_strides), _ndarray(b_shape, b.dtype, b.storage, 0, b_strides),
                      out=_ndarray(o_shape, out.dtype, out.storage, 0, o_strides))
            return
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = out.shape[:-2]
        a = a if a.shape[:-2] == batch else a.expand(batch + (m, k))
        b = b if b.shape[:-2] == batch else b.expand(batch + (k, n))
        a_layout = matrix_layout(m, k, a.strides[-2], a.strides[-1])
        b_layout = matrix_layout(k, n, b.strides[-2], b.strides[-1])
        blas = self.use_blas and k > 0 and a.dtype == b.dtype == out.dtype and out.dtype in BLAS_DTYPES
        if blas and a_layout and b_layout:
            # Dense float blocks (row- or column-major): NumPy's matmul, i.e. BLAS on the same storage.
            a_view, b_view, out_view = strided_view(a), strided_view(b), strided_view(out, writeable=True)
            np.matmul(a_view, b_view, out=out_view)
            cached(_blas_views, key, lambda: tuple((v.shape, v.strides) for v in (a_view, b_view, out_view)))
        else:
            dims = [(size, [out.strides[i], a.strides[i], b.strides[i]]) for i, size in enumerate(batch) if size != 1]
            batch_shape, batch_strides = coalesce(dims, 3)
            mat_strides = np.array([out.strides[-2:], a.strides[-2:], b.strides[-2:]], dtype=np.int64)
            work = out.size * k
            args = (a.storage, b.storage, out.storage, batch_shape, batch_strides, mat_strides, m, k, n, 32, 256)
            launch(work, "matmul_tiled", "matmul", "", compute_type(a, b), *args)

    # --- kernels beyond the four ---

    def where(self, cond: TensorData, a: TensorData, b: TensorData, out: TensorData) -> None:
        """Element-wise like zip (cond read as nonzero); values are copied, converted only on store."""
        if out.size == 0:
            return
        key = ("where", cond.dtype, a.dtype, b.dtype, out.dtype, cond.shape, cond.strides, a.shape, a.strides, b.shape,
               b.strides, out.shape, out.strides)
        twin = self._twin(key, lambda: where_twin(cond, a, b, out))
        if twin is not None:
            twin(cond.storage, a.storage, b.storage, out.storage)
            return
        args = (cond.storage, a.storage, b.storage, out.storage, *planned_layout(out, [cond, a, b]))
        launch(out.size, "where_kernel", "extra", "", DEFAULT_COMPUTE, *args)

    def add_scaled(self, a: TensorData, b: TensorData, alpha: TensorData, out: TensorData) -> None:
        """One pass in float64 (a + alpha b rounded once, as an FMA would), float data only; else the default."""
        if out.size == 0:
            return
        if out.dtype.kind != "f" or a.dtype.kind != "f" or b.dtype.kind != "f" or alpha.size != 1:
            super().add_scaled(a, b, alpha, out)
            return
        scale = TensorData(alpha.storage, (1,), (0,)) if alpha.dims == 0 else alpha
        args = (a.storage, b.storage, scale.storage, out.storage, *planned_layout(out, [a, b]))
        launch(out.size, "add_scaled_kernel", "extra", "", DEFAULT_COMPUTE, *args)

    def gather(self, a: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        """Parallel over out's elements: out and index walked like an element-wise op, a offset by index * stride."""
        if out.size == 0:
            return
        a, index, out = lift_scalar(a), lift_scalar(index), lift_scalar(out)
        dim = normalize_dim(dim, out.dims)
        key = ("gather", dim, a.dtype, out.dtype, a.shape, a.strides, index.shape, index.strides, out.strides)
        twin = self._twin(key, lambda: gather_twin(a, dim, index, out))
        if twin is not None:
            twin(a.storage, index.storage, out.storage)
            return
        # a seen with out's shape and no step along dim: the kernel adds index * stride itself.
        a_rest = TensorData(a.storage, out.shape, a.strides[:dim] + (0,) + a.strides[dim + 1 :])
        args = (a.storage, index.storage, out.storage, *planned_layout(out, [index, a_rest]), a.strides[dim])
        launch(out.size, "gather_kernel", "extra", "", DEFAULT_COMPUTE, *args)

    def scatter_add(self, src: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        """Parallel over the positions off ``dim``, serial along it, so no two threads add into one element.

        Adds are exact int64 for an integer/bool ``out``, float64 (rounded on store) otherwise.
        """
        if src.size == 0:
            return
        src, index, out = lift_scalar(src), lift_scalar(index), lift_scalar(out)
        dim = normalize_dim(dim, src.dims)
        key = ("scatter_add", dim, src.dtype, out.dtype, src.shape, src.strides, index.shape, index.strides, out.shape, out.strides)
        twin = self._twin(key, lambda: scatter_add_twin(src, dim, index, out))
        if twin is not None:
            twin(src.storage, index.storage, out.storage)
            return
        rows, strides, n_chunks, per_chunk = row_plan(src.shape, dim, [out, src, index])
        compute = np.int64 if out.dtype.kind in INTEGER_KINDS else np.float64
        steps = (src.strides[dim], index.strides[dim], out.strides[dim])
        args = (src.storage, index.storage, out.storage, rows, strides, src.shape[dim], *steps, n_chunks, per_chunk, compute)
        launch(src.size, "scatter_add_kernel", "extra", "", DEFAULT_COMPUTE, *args)

    def scan(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        """Parallel over rows along ``dim``; each row folds serially from the op's start value (int64 or float64)."""
        check_op(op, REDUCE_OPS)
        if out.size == 0:
            return
        a, out = lift_scalar(a), lift_scalar(out)
        dim = normalize_dim(dim, a.dims)
        rows, strides, n_chunks, per_chunk = row_plan(a.shape, dim, [out, a])
        args = (a.storage, out.storage, rows, strides, a.shape[dim], a.strides[dim], out.strides[dim], n_chunks, per_chunk)
        launch(a.size, "scan_kernel", "reduce", op, compute_type(a), *args)

    def sort(self, a: TensorData, dim: int, descending: bool, values: TensorData, indices: TensorData) -> None:
        """A stable merge sort of each row along ``dim`` in a's own dtype (exact for int64), rows in parallel."""
        if a.size == 0:
            return
        a, values, indices = lift_scalar(a), lift_scalar(values), lift_scalar(indices)
        dim = normalize_dim(dim, a.dims)
        length = a.shape[dim]
        rows, strides, n_chunks, per_chunk = row_plan(a.shape, dim, [values, indices, a])
        steps = (a.strides[dim], values.strides[dim], indices.strides[dim])
        args = (a.storage, values.storage, indices.storage, rows, strides, length, *steps, n_chunks, per_chunk, bool(descending))
        launch(a.size * max(1, length.bit_length()), "sort_kernel", "extra", "", DEFAULT_COMPUTE, *args)


backend = FastBackend()

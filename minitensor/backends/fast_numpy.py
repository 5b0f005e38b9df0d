"""NumPy routes of the ``fast`` backend: calls that need no compiled kernel.

Two kinds:

* **Twins** (``MAP_TWINS``, ``ZIP_TWINS``, ``REDUCE_TWINS`` and :func:`where_twin`, :func:`gather_twin`,
  :func:`scatter_add_twin`): NumPy calls whose result equals the Numba kernel's **bit for bit** (a nan's sign and
  payload aside: NumPy's sqrt(-1) is -nan, the kernel's +nan) for the dtypes
  :func:`twin_dtypes` admits. They are exact because each is one correctly rounded IEEE operation (``+ - * /``, sqrt,
  a comparison, a copy or cast) or integer arithmetic: computing a float32 ``+ - * /`` or sqrt in float64 and rounding
  once (what the kernels do) gives the float32 result. The backend takes them for work under ``TWIN_BELOW`` elements,
  so a first run compiles no kernel for the common ops (a Numba compile is ~0.3-1 s each); a twin call costs about a
  microsecond more than a launch of the compiled kernel (which ``mt.compile`` binds instead). Larger work goes to the
  parallel Numba kernels; since both routes give the same bits, which one ran never shows in a result.
  tests/test_fast_numpy.py holds each twin to that.
* **Math** (``NUMPY_MATH``, :func:`reduce_math`): exp, log, tanh and sigmoid on float data run NumPy's SIMD loops at
  every size, and small float sums and products one NumPy
  reduction (no compile); their results are within a few ulps of the kernels', not identical. The backend's
  ``use_numpy_math`` switch covers them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from ..tensor_data import TensorData
from .fast_codegen import DEFAULT_COMPUTE, kernel_module
from .fast_intrinsics import cpu_has

TWIN_BELOW = 1 << 17  # elements of work under which an exact NumPy twin runs instead of a Numba kernel
BLOCK = 1 << 16  # elements per L2-sized block of a multi-pass formula (sigmoid)
THREADED_MATH_MIN = 1 << 18  # contiguous elements from which a NumPy math call is split over the Numba thread count

F32, F64, I64, BOOL = (np.dtype(t) for t in (np.float32, np.float64, np.int64, np.bool_))
FLOATS = (F32, F64)


# --- twins ---------------------------------------------------------------------------------------


def _relu(x: np.ndarray, out: np.ndarray) -> None:
    np.maximum(x, 0, out=out)  # nan stays nan; max(-0.0, 0) is +0.0 as the kernel's (checked by the twin tests)


def _ufunc1(ufunc: np.ufunc) -> Callable[[np.ndarray, np.ndarray], None]:
    def call(x: np.ndarray, out: np.ndarray) -> None:
        ufunc(x, out=out)

    return call


def _ufunc2(ufunc: np.ufunc) -> Callable[[np.ndarray, np.ndarray, np.ndarray], None]:
    def call(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        ufunc(x, y, out=out)

    return call


def _copy(x: np.ndarray, out: np.ndarray) -> None:
    np.copyto(out, x, casting="unsafe")


MAP_TWINS: dict[str, Callable[..., None]] = {
    "id": _copy, "neg": _ufunc1(np.negative), "sq": _ufunc1(np.square), "sqrt": _ufunc1(np.sqrt),
    "inv": _ufunc1(np.reciprocal), "relu": _relu, "logical_not": _ufunc1(np.logical_not),
}
ZIP_TWINS: dict[str, Callable[..., None]] = {
    "add": _ufunc2(np.add), "sub": _ufunc2(np.subtract), "mul": _ufunc2(np.multiply), "div": _ufunc2(np.true_divide),
    "lt": _ufunc2(np.less), "gt": _ufunc2(np.greater), "le": _ufunc2(np.less_equal), "ge": _ufunc2(np.greater_equal),
    "eq": _ufunc2(np.equal), "ne": _ufunc2(np.not_equal),
}
"""(relu's backward has no one-pass exact NumPy form: a masked copy costs ~90 us on 8k elements, its kernel 2 us.)"""
REDUCE_TWINS: dict[str, np.ufunc] = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}
"""Integer reductions only: exact in any order (int64 wraps as the kernel's does)."""
INT_REDUCE_START = {"sum": 0, "prod": 1, "max": np.iinfo(np.int64).min, "min": np.iinfo(np.int64).max}

COMPARISONS = frozenset({"lt", "gt", "le", "ge", "eq", "ne"})
INTEGER_EXACT = frozenset({"add", "sub", "mul", "neg", "sq"})
"""Ops whose int64 NumPy loop wraps exactly like the kernel's int64 arithmetic."""
QUIET = frozenset({"add", "sub", "mul", "div", "sq", "sqrt", "inv", "id"})
"""Ops whose NumPy loops can raise floating-point warnings (overflow, 0/0, sqrt(-1), a cast to float32 overflowing):
run under ``np.errstate(all="ignore")``, since the kernels give the same IEEE results silently."""


def twin_dtypes(op: str, inputs: tuple[np.dtype, ...], out: np.dtype) -> bool:
    """Whether ``op``'s twin is exact for these input dtypes and ``out`` dtype (else the kernel runs)."""
    if op in COMPARISONS:
        return out == BOOL and inputs[0] == inputs[1] and inputs[0] in (F32, F64, I64, BOOL)
    if op == "logical_not":
        return out == BOOL and inputs[0] in (F32, F64, I64, BOOL)
    if op == "id":  # casts that are exact (or correctly rounded) in both: not float -> int, which is undefined on nan
        (x,) = inputs
        return x == out or (x in (BOOL, I64, F32, F64) and out in FLOATS) or (x == BOOL and out == I64) or (
            x in (I64, F32, F64) and out == BOOL)
    if any(x != out for x in inputs):
        return False
    return out in FLOATS or (out == I64 and op in INTEGER_EXACT)


try:  # NumPy 2 keeps the error state in a context variable: setting it directly costs ~0.1 us, np.errstate ~1 us
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj  # type: ignore[attr-defined]

    _IGNORE = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # pragma: no cover - another NumPy: the public context manager
    _extobj_contextvar = None


def _ignoring_fp_errors(call: Callable[..., None]) -> Callable[..., None]:
    """``call`` with NumPy's floating-point warnings off (``np.errstate(all="ignore")``) for its duration."""
    if _extobj_contextvar is None:  # pragma: no cover

        def quiet_slow(*storages: np.ndarray) -> None:
            with np.errstate(all="ignore"):
                call(*storages)

        return quiet_slow
    set_state, reset_state = _extobj_contextvar.set, _extobj_contextvar.reset

    def quiet(*storages: np.ndarray) -> None:
        token = set_state(_IGNORE)
        try:
            call(*storages)
        finally:
            reset_state(token)

    return quiet


_ndarray = np.ndarray


def _dense(data: TensorData, shape: tuple[int, ...]) -> bool:
    """``data`` is the first ``size`` elements of its storage in row-major order, with ``shape`` (a property of its
    shape and strides alone, which key the plans)."""
    return data.shape == shape and data.is_contiguous()


def bound_views(fn: Callable[..., None], datas: list[TensorData], quiet: bool, *extra: Any,
                elementwise: bool = False) -> Callable[..., None] | None:
    """``fn(*views, *extra)`` as a function of the storages, each view with its TensorData's shape and strides (None
    when NumPy cannot view one in place, e.g. a negative stride). ``elementwise`` calls whose operands are each the
    start of their storage in row-major order, with one shape, pass the 1-D storages (no views to build)."""
    if elementwise and not extra and all(_dense(d, datas[-1].shape) for d in datas):
        n = datas[-1].size  # a later call with this plan may bring longer storages (a scalar viewing a buffer's tail)
        if len(datas) == 2:

            def flat(x: np.ndarray, out: np.ndarray) -> None:
                fn(x if x.size == n else x[:n], out if out.size == n else out[:n])
        elif len(datas) == 3:

            def flat(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:  # type: ignore[misc]
                fn(x if x.size == n else x[:n], y if y.size == n else y[:n], out if out.size == n else out[:n])
        else:

            def flat(*storages: np.ndarray) -> None:  # type: ignore[misc]
                fn(*[x if x.size == n else x[:n] for x in storages])
        return _ignoring_fp_errors(flat) if quiet else flat
    specs = []
    for data in datas:
        storage = data.storage
        strides = tuple([s * storage.itemsize for s in data.strides])
        try:
            _ndarray(data.shape, storage.dtype, storage, 0, strides)
        except (TypeError, ValueError):
            return None
        specs.append((data.shape, storage.dtype, strides))
    if len(specs) == 2:
        (s0, d0, t0), (s1, d1, t1) = specs

        def call(x: np.ndarray, out: np.ndarray) -> None:
            fn(_ndarray(s0, d0, x, 0, t0), _ndarray(s1, d1, out, 0, t1), *extra)
    elif len(specs) == 3:
        (s0, d0, t0), (s1, d1, t1), (s2, d2, t2) = specs

        def call(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:  # type: ignore[misc]
            fn(_ndarray(s0, d0, x, 0, t0), _ndarray(s1, d1, y, 0, t1), _ndarray(s2, d2, out, 0, t2), *extra)
    else:
        def call(*storages: np.ndarray) -> None:  # type: ignore[misc]
            fn(*[_ndarray(s, d, x, 0, t) for (s, d, t), x in zip(specs, storages)], *extra)
    return _ignoring_fp_errors(call) if quiet else call


def map_twin(op: str, a: TensorData, out: TensorData) -> Callable[..., None] | None:
    """``map(op, a, out)`` as an exact NumPy call of the two storages, or None."""
    fn = MAP_TWINS.get(op)
    if fn is None or out.size >= TWIN_BELOW or not twin_dtypes(op, (a.dtype,), out.dtype):
        return None
    return bound_views(fn, [a, out], op in QUIET, elementwise=True)


def zip_twin(op: str, a: TensorData, b: TensorData, out: TensorData) -> Callable[..., None] | None:
    """``zip(op, a, b, out)`` as an exact NumPy call of the three storages, or None."""
    fn = ZIP_TWINS.get(op)
    if fn is None or out.size >= TWIN_BELOW or not twin_dtypes(op, (a.dtype, b.dtype), out.dtype):
        return None
    return bound_views(fn, [a, b, out], op in QUIET, elementwise=True)


def _reduce(ufunc: np.ufunc, start: int, dim: int) -> Callable[[np.ndarray, np.ndarray], None]:
    def call(a: np.ndarray, out: np.ndarray) -> None:
        ufunc.reduce(a, axis=dim, out=out, keepdims=True, initial=start)

    return call


def reduce_twin(op: str, a: TensorData, dim: int, out: TensorData) -> Callable[..., None] | None:
    """An int64 ``reduce(op, a, dim, out)`` as an exact NumPy reduction of the two storages, or None."""
    if op not in REDUCE_TWINS or a.size >= TWIN_BELOW or a.dtype != I64 or out.dtype != I64 or a.dims == 0:
        return None
    return bound_views(_reduce(REDUCE_TWINS[op], int(INT_REDUCE_START[op]), dim), [a, out], False)


def _where(cond: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    np.copyto(out, np.where(cond, a, b))  # a temporary: out may be a or b


def where_twin(cond: TensorData, a: TensorData, b: TensorData, out: TensorData) -> Callable[..., None] | None:
    """``where`` as an exact NumPy call of the four storages, or None."""
    if out.size >= TWIN_BELOW or cond.dtype != BOOL or not (a.dtype == b.dtype == out.dtype):
        return None
    return bound_views(_where, [cond, a, b, out], False, elementwise=True)


def _open_grid(shape: tuple[int, ...], dim: int) -> list[Any]:
    """Index arrays that broadcast over ``shape``, one per dim (``dim``'s left None for the index values)."""
    nd = len(shape)
    return [None if d == dim else np.arange(n).reshape([n if i == d else 1 for i in range(nd)]) for d, n in enumerate(shape)]


def _gather(a: np.ndarray, index: np.ndarray, out: np.ndarray, grid: list[Any], dim: int) -> None:
    key = list(grid)
    key[dim] = index
    out[...] = a[tuple(key)]


def gather_twin(a: TensorData, dim: int, index: TensorData, out: TensorData) -> Callable[..., None] | None:
    """``gather`` (indices already checked in range) as an exact NumPy copy of the three storages, or None."""
    if out.size >= TWIN_BELOW or out.dims == 0 or not (a.dims == index.dims == out.dims) or a.dtype != out.dtype:
        return None
    return bound_views(_gather, [a, index, out], False, _open_grid(index.shape, dim), dim)


def _scatter_add(src: np.ndarray, index: np.ndarray, out: np.ndarray, grid: list[Any], dim: int) -> None:
    key = list(grid)
    key[dim] = index
    np.add.at(out, tuple(key), src)  # in index order, one rounded add at a time: the kernel's order


def scatter_add_twin(src: TensorData, dim: int, index: TensorData, out: TensorData) -> Callable[..., None] | None:
    """``scatter_add`` as an exact NumPy ``add.at`` of the three storages, or None."""
    if src.size >= TWIN_BELOW or src.dims == 0 or src.shape != index.shape or src.dtype != out.dtype:
        return None
    if out.dtype not in (F32, F64, I64) or src.dims != out.dims:
        return None
    return bound_views(_scatter_add, [src, index, out], out.dtype != I64, _open_grid(index.shape, dim), dim)


# --- math ------------------------------------------------------------------------------------------


def _float_fold(ufunc: np.ufunc, dim: int) -> Callable[[np.ndarray, np.ndarray], None]:
    def call(a: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, ufunc.reduce(a, axis=dim, dtype=np.float64, keepdims=True), casting="unsafe")

    return call


def reduce_math(op: str, a: TensorData, dim: int, out: TensorData) -> Callable[..., None] | None:
    """A small float ``sum``/``prod`` as one NumPy reduction in float64 (the kernels' accumulator type; NumPy adds
    pairwise, the kernel in its vectorised order: equal within rounding, not bit for bit), or None."""
    if op not in ("sum", "prod") or a.size >= TWIN_BELOW or a.dims == 0 or a.dtype not in FLOATS:
        return None
    return bound_views(_float_fold(np.add if op == "sum" else np.multiply, dim), [a, out], True)


def numpy_sigmoid(x: np.ndarray, out: np.ndarray) -> None:
    """out = 1 / (1 + e^-x), overflow-free: with t = e^-|x| (NumPy's exp), 1 / (1 + t) for x >= 0 and t / (1 + t)
    below (the reference formula's two branches). Contiguous data goes in L2-sized blocks, the last pass a Numba
    kernel, so memory is read and written once; other layouts take the same formula in NumPy passes."""
    if x.flags.c_contiguous and out.flags.c_contiguous:
        x, out = x.reshape(-1), out.reshape(-1)
        finish = kernel_module("extra", "", DEFAULT_COMPUTE, parallel=False).sigmoid_finish_kernel
        t = np.empty(min(BLOCK, x.size), x.dtype)
        for start in range(0, x.size, BLOCK):
            xb = x[start : start + BLOCK]
            tb = t[: xb.size]
            np.abs(xb, out=tb)
            np.negative(tb, out=tb)
            np.exp(tb, out=tb)
            finish(xb, tb, out[start : start + BLOCK])
        return
    t = np.exp(-np.abs(x))
    np.divide(np.where(x >= 0, 1, t), t + 1, out=out)


NUMPY_MATH: dict[str, Callable[..., Any]] = {
    "exp": lambda x, out: np.exp(x, out=out),
    "log": lambda x, out: np.log(x, out=out),
    "tanh": lambda x, out: np.tanh(x, out=out),
    "sigmoid": numpy_sigmoid,
}
"""Maps NumPy's SIMD loops do several times faster than a per-element ``math`` call (float in, same float out):
``fn(x, out)`` on NumPy views. Same results as the kernels within a few ulps, nan/inf where they have them."""
KERNEL_MATH_FROM = TWIN_BELOW
"""Elements from which a long call may run the Numba kernel (:mod:`minitensor.backends.fast_math`) instead of NumPy's
loop (:func:`math_route` says which ops). Smaller calls stay on NumPy's loops, which compile nothing."""
KERNEL_BEATS_SIMD = ("exp", "log")
"""Ops whose kernel outruns even NumPy's AVX-512 loops (10^7 elements, one thread, an Ice Lake Xeon, NumPy time /
kernel time: exp 1.06-1.11, log 1.04-1.07, float32 exp 1.08-1.09, float32 log 1.03-1.04; two threads against NumPy's
loop split over both: 1.0-1.5) and is more accurate (NumPy's float32 exp and log are 2-3 ulps off). tanh's kernel is
not (0.86-0.95), so it takes NumPy's loop where that is SIMD."""
NUMPY_SIMD_MATH = cpu_has("avx512f")
"""Whether NumPy's exp/log/tanh loops are SIMD on this CPU for both float dtypes (NumPy dispatches them on
AVX-512F). Without it they are scalar, and the kernels win by far (10^7 elements, one thread, Zen 3: exp 101 ms, the
kernel 29; tanh 176 / 58; log 52 / 39; float32 exp 24 / 9.5, tanh 39 / 18)."""


def math_route(op: str, size: int, dtype: np.dtype) -> Callable[..., Any] | None:
    """The NumPy loop ``map(op)`` takes for ``size`` elements of ``dtype`` (float, one shape in and out), or None for
    the Numba kernel. From KERNEL_MATH_FROM elements: exp and log take the kernel (:data:`KERNEL_BEATS_SIMD`), tanh
    too where NumPy's loops are not SIMD, float32 sigmoid (computed in float64, rounded once) everywhere (10^7
    elements, one thread: 34 ms against 80-107 for the NumPy formula). float64 sigmoid always takes NumPy's formula:
    its kernel is too often 1 ulp off the correctly rounded value where the gradient y (1 - y) cancels (x ~ 25)."""
    if size >= KERNEL_MATH_FROM:
        kernel = {"sigmoid": dtype == F32, "tanh": not NUMPY_SIMD_MATH}.get(op, op in KERNEL_BEATS_SIMD)
        if kernel:
            return None
    return NUMPY_MATH.get(op)


_math_pool: Any = None


def _quiet(fn: Callable[..., Any], x: np.ndarray, out: np.ndarray) -> None:
    """``fn(x, out)`` with IEEE results and no warnings in a pool thread (NumPy's error state is per thread)."""
    with np.errstate(all="ignore"):
        fn(x, out)


def numpy_math(fn: Callable[..., Any], x: np.ndarray, out: np.ndarray) -> None:
    """``fn(x, out)``; a long contiguous call is split into one piece per Numba thread, run on a small thread pool
    (NumPy's loops release the GIL), so the NumPy route uses as many cores as the kernels would."""
    threads = numba.get_num_threads() if x.size >= THREADED_MATH_MIN else 1
    if threads == 1 or not (x.flags.c_contiguous and out.flags.c_contiguous):
        fn(x, out)
        return
    global _math_pool
    if _math_pool is None or _math_pool._max_workers < threads:
        from concurrent.futures import ThreadPoolExecutor

        _math_pool = ThreadPoolExecutor(threads, thread_name_prefix="minitensor-math")
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    bounds = [x.size * i // threads for i in range(threads + 1)]
    pieces = [(flat_x[lo:hi], flat_out[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
    futures = [_math_pool.submit(_quiet, fn, *piece) for piece in pieces[1:]]
    fn(*pieces[0])
    for future in futures:
        future.result()

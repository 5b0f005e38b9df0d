"""Fuzz the public API with junk arguments: every call works or raises an error a Python user would catch.

Each example picks a public entry point (creation, ops, shape ops, indexing, nn layers, losses, optimizers,
save/load) and calls it with arguments drawn from a mix of junk (None, strings, NaN/inf, negative and huge
sizes, nested lists, bools) and real tensors of random shapes (zero-size included) and dtypes. Allowed outcomes:
a result whose shape is consistent with its data, or a ``MinitensorError`` / a built-in error a caller would
expect (TypeError, ValueError, IndexError, KeyError, NotImplementedError, OverflowError, ZeroDivisionError,
MemoryError for sizes beyond memory). Never AttributeError, AssertionError, RecursionError or a crash deep inside a
kernel. Files: a failed save leaves no file behind, and a corrupt file raises CheckpointError.
The simple backend is used: argument checks live above the backends.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitensor as mt
from minitensor import nn, optim
from minitensor.checkpoint import CheckpointError
from minitensor.nn import functional as F

EXPECTED = (mt.MinitensorError, TypeError, ValueError, IndexError, KeyError, NotImplementedError, OverflowError,
            ZeroDivisionError, MemoryError)
HUGE = 10**15  # no machine holds this many elements: allocation must fail fast, never start a hang

sizes = st.sampled_from([-1, 0, 1, 2, 3, HUGE])
junk = st.one_of(
    st.none(), st.booleans(), sizes, st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["", "a", "cuda", "float"]),
    st.lists(sizes, max_size=3), st.tuples(sizes, sizes), st.just(slice(None, None, -1)), st.just(Ellipsis),
    st.just(object()), st.just({"a": 1}),
)


@st.composite
def tensors(draw: st.DrawFn) -> mt.Tensor:
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    dtype = draw(st.sampled_from(["float32", "float64", "int64", "bool"]))
    values = draw(st.sampled_from([0.0, 1.0, -2.0, np.nan, np.inf, 1e38]))
    data = np.full(shape, values).astype(dtype) if dtype != "bool" else np.full(shape, bool(values == values))
    grad = dtype.startswith("float") and draw(st.booleans())
    return mt.tensor(data, backend="simple", requires_grad=grad)


arg = st.one_of(junk, tensors())


def _layer(cls: Any) -> Callable[..., Any]:
    return lambda *a: cls(*a, backend="simple")


ENTRY_POINTS: dict[str, tuple[Callable[..., Any], int]] = {
    # creation
    "zeros": (lambda *a: mt.zeros(*a, backend="simple"), 2),
    "full": (lambda a, b: mt.full(a, b, backend="simple"), 2),
    "tensor": (lambda a: mt.tensor(a, backend="simple"), 1),
    "arange": (lambda a, b, c: mt.arange(a, b, c, backend="simple"), 3),
    "linspace": (lambda a, b, c: mt.linspace(a, b, c, backend="simple"), 3),
    "eye": (lambda a: mt.eye(a, backend="simple"), 1),
    "randint": (lambda a, b, c: mt.randint(a, b, c, backend="simple"), 3),
    # element-wise and reductions
    "add": (lambda a, b: a + b, 2),
    "div": (lambda a, b: a / b, 2),
    "floordiv": (lambda a, b: a // b, 2),
    "pow": (lambda a, b: a**b if isinstance(a, mt.Tensor) or isinstance(b, mt.Tensor) else mt.pow(a, b), 2),  # no int**HUGE
    "matmul": (lambda a, b: a @ b, 2),
    "compare": (lambda a, b: a < b, 2),
    "clamp": (lambda t, a, b: t.clamp(a, b), 3),
    "where": (lambda c, a, b: mt.where(c, a, b), 3),
    "sum": (lambda t, d: t.sum(d), 2),
    "max": (lambda t, d: t.max(d), 2),
    "argmax": (lambda t, d: t.argmax(d), 2),
    "topk": (lambda t, k: t.topk(k), 2),
    "sort": (lambda t, d: t.sort(d), 2),
    "cumsum": (lambda t, d: t.cumsum(d), 2),
    "lerp": (lambda t, e, w: mt.lerp(t, e, w), 3),
    "addcdiv": (lambda t, a, b: mt.addcdiv(t, a, b), 3),
    "logaddexp": (lambda a, b: mt.logaddexp(a, b), 2),
    "hypot": (lambda a, b: mt.hypot(a, b), 2),
    "xlogy": (lambda a, b: mt.xlogy(a, b), 2),
    "nanmean": (lambda t, d: t.nanmean(d), 2),
    "var_mean": (lambda t, d: mt.var_mean(t, d), 2),
    "aminmax": (lambda t, d: t.aminmax(dim=d), 2),
    "diff": (lambda t, n, d: t.diff(n, d), 3),
    "softmax_method": (lambda t, d: t.softmax(d), 2),
    "copysign": (lambda a, b: mt.copysign(a, b), 2),
    "heaviside": (lambda a, b: mt.heaviside(a, b), 2),
    "float_power": (lambda a, b: mt.float_power(a, b), 2),
    "fmax": (lambda a, b: mt.fmax(a, b), 2),
    "logit": (lambda t, e: t.logit(e), 2),
    "frac_sinc_signbit": (lambda t: (t.frac(), t.sinc(), t.signbit()), 1),
    "special": (lambda t: (t.lgamma(), t.digamma(), t.erfinv(), t.erfc(), mt.special.log_ndtr(t)), 1),
    "polygamma": (lambda t, n: t.polygamma(n), 2),
    "det_slogdet_inverse": (lambda t: (t.det(), t.slogdet(), t.logdet(), t.inverse()), 1),
    "linalg_solve": (lambda a, b, left: mt.linalg.solve(a, b, left=left), 3),
    "cholesky": (lambda t, upper: mt.linalg.cholesky(t, upper=upper), 2),
    "lu_factor": (lambda t: mt.linalg.lu_factor(t), 1),
    "renorm": (lambda t, p, d, m: t.renorm(p, d, m), 4),
    "trace": (lambda t: t.trace(), 1),
    "kron": (lambda a, b: mt.kron(a, b), 2),
    "cross": (lambda a, b, d: mt.cross(a, b, d), 3),
    "inner": (lambda a, b: mt.inner(a, b), 2),
    "addmm": (lambda t, a, b: mt.addmm(t, a, b), 3),
    "addmv": (lambda t, a, b: mt.addmv(t, a, b), 3),
    "baddbmm": (lambda t, a, b: mt.baddbmm(t, a, b), 3),
    "block_diag": (lambda a, b: mt.block_diag(a, b), 2),
    "cartesian_prod": (lambda a, b: mt.cartesian_prod(a, b), 2),
    "cdist": (lambda a, b, p: mt.cdist(a, b, p), 3),
    "dist": (lambda a, b, p: mt.dist(a, b, p), 3),
    "tensor_split": (lambda t, s, d: t.tensor_split(s, d), 3),
    "rot90": (lambda t, k, d: t.rot90(k, d), 3),
    "take": (lambda t, i: t.take(i), 2),
    "cummax": (lambda t, d: t.cummax(d), 2),
    "logcumsumexp": (lambda t, d: t.logcumsumexp(d), 2),
    "searchsorted": (lambda s, v, r: mt.searchsorted(s, v, right=r), 3),
    "bucketize": (lambda t, b: mt.bucketize(t, b), 2),
    "kthvalue": (lambda t, k, d: t.kthvalue(k, d), 3),
    "msort_nanmedian": (lambda t, d: (t.msort(), t.nanmedian(d)), 2),
    "quantile": (lambda t, q, d, m: t.quantile(q, d, interpolation=m), 4),
    "nanquantile": (lambda t, q, d: t.nanquantile(q, d), 3),
    "bincount": (lambda t, w, n: t.bincount(w, n), 3),
    "unique": (lambda t, i, c: t.unique(return_inverse=i, return_counts=c), 3),
    "cov": (lambda t, f, w: t.cov(fweights=f, aweights=w), 3),
    "corrcoef": (lambda t: t.corrcoef(), 1),
    "atleast_nd": (lambda a, b: (mt.atleast_1d(a, b), mt.atleast_2d(a), mt.atleast_3d([a, b])), 2),
    "dstack_column_stack": (lambda a, b: (mt.dstack([a, b]), mt.column_stack([a, b])), 2),
    "diag_embed": (lambda t, o, a, b: t.diag_embed(o, a, b), 4),
    "vander": (lambda t, n, i: mt.vander(t, n, i), 3),
    "index_fill": (lambda t, d, i, v: t.index_fill(d, i, v), 4),
    "index_copy": (lambda t, d, i, s: t.index_copy(d, i, s), 4),
    "scatter_reduce": (lambda t, d, i, s: (t.scatter_reduce(d, i, s, "mean"), t.scatter_reduce(d, i, s, "prod", include_self=False)), 4),
    "scatter_reduce_": (lambda t, d, i, s: t.detach().scatter_reduce_(d, i, s, "amax"), 4),
    "slice_scatter": (lambda t, s, d, a, b: t.slice_scatter(s, d, a, b), 5),
    "select_scatter": (lambda t, s, d, i: t.select_scatter(s, d, i), 4),
    "diagonal_scatter": (lambda t, s, o, d: t.diagonal_scatter(s, o, d), 4),
    "narrow_copy": (lambda t, d, s, n: t.narrow_copy(d, s, n), 4),
    "mode": (lambda t, d, k: t.mode(d, k), 3),
    "histc": (lambda t, b, lo, hi: t.histc(b, lo, hi), 4),
    "chain_matmul": (lambda a, b: mt.chain_matmul(a, b), 2),
    "multi_dot": (lambda a, b, c: mt.linalg.multi_dot([a, b, c]), 3),
    "combinations": (lambda t, r, w: mt.combinations(t, r, w), 3),
    # shape ops and indexing
    "view": (lambda t, s: t.view(s), 2),
    "reshape": (lambda t, s: t.reshape(s), 2),
    "permute": (lambda t, s: t.permute(s), 2),
    "transpose": (lambda t, a, b: t.transpose(a, b), 3),
    "expand": (lambda t, s: t.expand(s), 2),
    "broadcast_to": (lambda t, s: t.broadcast_to(s), 2),
    "broadcast_tensors": (lambda a, b: mt.broadcast_tensors(a, b), 2),
    "meshgrid": (lambda a, b: mt.meshgrid(a, b), 2),
    "new_zeros": (lambda t, s: t.new_zeros(s), 2),
    "new_tensor": (lambda t, x: t.new_tensor(x), 2),
    "unsqueeze": (lambda t, d: t.unsqueeze(d), 2),
    "squeeze": (lambda t, d: t.squeeze(d), 2),
    "flip": (lambda t, d: t.flip(d), 2),
    "repeat": (lambda t, s: t.repeat(s), 2),
    "cat": (lambda a, b: mt.cat([a, b]), 2),
    "getitem": (lambda t, k: t[k], 2),
    "setitem": (lambda t, k, v: t.detach().__setitem__(k, v), 3),
    "gather": (lambda t, d, i: t.gather(d, i), 3),
    "masked_fill": (lambda t, m, v: t.masked_fill(m, v), 3),
    "to": (lambda t, x: t.to(x), 2),
    "item": (lambda t: t.item(), 1),
    "backward": (lambda t, g: t.backward(g), 2),
    # nn
    "Linear": (_layer(nn.Linear), 2),
    "Conv2d": (_layer(nn.Conv2d), 3),
    "LayerNorm": (_layer(nn.LayerNorm), 1),
    "Embedding": (_layer(nn.Embedding), 2),
    "BatchNorm1d": (_layer(nn.BatchNorm1d), 1),
    "MultiheadAttention": (_layer(nn.MultiheadAttention), 2),
    "Dropout": (lambda p: nn.Dropout(p), 1),
    "softmax": (lambda t, d: F.softmax(t, d), 2),
    "pad": (lambda t, p: F.pad(t, p), 2),
    "conv2d": (lambda a, b: F.conv2d(a, b), 2),
    "max_pool2d": (lambda t, k: F.max_pool2d(t, k), 2),
    "cross_entropy": (lambda a, b: F.cross_entropy(a, b), 2),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), 2),
    "binary_cross_entropy": (lambda a, b: F.binary_cross_entropy(a, b), 2),
    "one_hot": (lambda t, n: F.one_hot(t, n), 2),
    # optim
    "SGD": (lambda lr, m: optim.SGD([mt.zeros(2, backend="simple", requires_grad=True)], lr=lr, momentum=m), 2),
    "Adam": (lambda lr, b: optim.Adam([mt.zeros(2, backend="simple", requires_grad=True)], lr=lr, betas=b), 2),
    "optimizer_params": (lambda p: optim.SGD(p, lr=0.1), 1),
}


METHODS = {"clamp", "sum", "max", "argmax", "topk", "sort", "cumsum", "nanmean", "aminmax", "diff", "softmax_method",
           "logit", "frac_sinc_signbit", "special", "polygamma", "det_slogdet_inverse", "renorm", "trace", "tensor_split",
           "rot90", "take", "cummax", "logcumsumexp",
           "kthvalue", "msort_nanmedian", "quantile", "nanquantile", "bincount", "unique", "cov", "corrcoef", "diag_embed",
           "index_fill", "index_copy", "scatter_reduce", "scatter_reduce_", "slice_scatter", "select_scatter", "diagonal_scatter",
           "narrow_copy", "mode", "histc",
           "broadcast_to", "new_zeros", "new_tensor", "view", "reshape", "permute", "transpose", "expand",
           "unsqueeze", "squeeze", "flip", "repeat", "getitem", "setitem", "gather", "masked_fill", "to", "item", "backward"}


def _check_result(result: Any) -> None:
    """A returned tensor's metadata agrees with its data (no silently wrong shape)."""
    for value in result if isinstance(result, tuple) else (result,):
        if isinstance(value, mt.Tensor):
            assert all(isinstance(s, int) and s >= 0 for s in value.shape), value.shape
            try:
                array = value.numpy()
            except MemoryError:  # a legal view too large to copy out (x.expand(10**15)): only for huge element counts
                assert value.numel() * value.dtype.itemsize > 2**40, value.shape
                continue
            assert array.shape == value.shape


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(name=st.sampled_from(sorted(ENTRY_POINTS)), data=st.data())
def test_public_api_survives_junk(name: str, data: st.DataObject) -> None:
    fn, arity = ENTRY_POINTS[name]
    receiver = name in METHODS  # a method: its first argument is a real tensor
    args = [data.draw(tensors() if receiver and i == 0 else arg, label=f"arg{i}") for i in range(arity)]
    try:
        result = fn(*args)
    except EXPECTED:
        return
    _check_result(result)


@settings(max_examples=40, deadline=None)
@given(blob=st.binary(max_size=300), cut=st.integers(0, 400))
def test_corrupt_checkpoint_files_raise_checkpoint_error(tmp_path_factory: Any, blob: bytes, cut: int) -> None:
    folder = tmp_path_factory.mktemp("ckpt")
    good = folder / "good.safetensors"
    mt.save({"w": mt.ones(3, backend="simple")}, good)
    raw = good.read_bytes()
    for bad in (blob, raw[:cut], raw[:cut] + blob):
        path = folder / "bad.safetensors"
        path.write_bytes(bad)
        try:
            loaded = mt.load(path, backend="simple")
        except CheckpointError:
            continue
        assert bad == raw or set(loaded) <= {"w"}  # only an intact prefix (the whole file) may load


@settings(max_examples=60, deadline=None)
@given(key=junk, value=arg)
def test_failed_save_leaves_no_file(tmp_path_factory: Any, key: Any, value: Any) -> None:
    folder: Path = tmp_path_factory.mktemp("save")
    path = folder / "out.safetensors"
    try:
        mt.save({key: value}, path)
    except EXPECTED:
        assert os.listdir(folder) == []  # neither the target nor a temp file
        return
    assert os.listdir(folder) == ["out.safetensors"]

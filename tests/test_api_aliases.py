"""The top-level names added by minitensor/functional_aliases.py against PyTorch: signatures (from torch's operator
schemas), values and gradients of the nn.functional aliases, the in-place forms, as_strided / index_put / put /
masked_scatter, window functions, finfo/iinfo, type queries, print options, thread count and their errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import check

import minitensor as mt
from minitensor import functional_aliases as FA
from minitensor import printing
from minitensor.errors import DTypeError, IndexOutOfRangeError, ShapeError

torch = pytest.importorskip("torch")

CUDA = [pytest.param("cuda", marks=pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend"))]
RNG = np.random.default_rng(7)


def arr(*shape: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, shape)


def ints(values: list) -> np.ndarray:
    return np.array(values, dtype=np.int64)


# --- signatures ---

SKIP_ARGS = {"dtype", "layout", "device", "pin_memory", "out", "backend", "requires_grad"}


def torch_params(name: str) -> list[tuple[str, bool]] | None:
    """(name, keyword-only) of torch.<name>'s parameters, from its longest operator schema (self is 'input')."""
    schemas = [s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}") if not s.overload_name.endswith("out")]
    if not schemas:
        return None
    best = max(schemas, key=lambda s: len([a for a in s.arguments if not a.kwarg_only]))
    return [("input" if a.name == "self" else a.name, a.kwarg_only) for a in best.arguments if a.name not in SKIP_ARGS]


def our_params(fn) -> list[tuple[str, bool]]:
    params = inspect.signature(fn).parameters.values()
    return [(p.name, p.kind is p.KEYWORD_ONLY) for p in params if p.name not in SKIP_ARGS]


def test_every_alias_has_torchs_parameters() -> None:
    checked = []
    for name in FA.__all__:
        if name in FA.INPLACE_FORMS:
            continue
        expected = torch_params(name)
        if expected is None:
            continue
        assert our_params(getattr(mt, name)) == expected, name
        checked.append(name)
    assert {"conv2d", "layer_norm", "batch_norm", "embedding", "dropout", "kl_div", "as_strided", "index_put",
            "hamming_window", "kaiser_window", "rsub", "result_type", "can_cast"} <= set(checked)
    assert len(checked) >= 50, checked


def test_optional_aliases_follow_nn_functional() -> None:
    for name, needs in FA.NEEDS_F.items():
        assert hasattr(mt, name) == all(hasattr(mt.nn.functional, n) for n in needs), name
    assert mt.functional_aliases.__all__ == sorted(FA._EXPORTS)


def test_inplace_forms_are_torchs_set_of_our_methods() -> None:
    ours = {n for n in dir(mt.Tensor) if n.endswith("_") and not n.startswith("_") and hasattr(torch, n)}
    exported = {n for n in FA.__all__ if n.endswith("_")}
    assert ours - {"index_put_"} <= set(FA.INPLACE_FORMS)
    assert ours <= exported
    assert all(hasattr(torch, n) for n in exported), exported - {n for n in exported if hasattr(torch, n)}


@pytest.mark.parametrize("name", ["conv1d", "layer_norm", "exp_", "as_strided", "index_put", "is_nonzero", "numel"])
def test_tensor_first_aliases_raise_torchs_type_error(name: str) -> None:
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor, not NoneType"):
        getattr(mt, name)(None, None)


# --- values and gradients of the nn.functional aliases ---


def _const(L, like, values):
    return like.new_tensor(values)


RM, RV, W4 = arr(3), arr(3, low=0.5, high=2.0), arr(4, low=0.5)
F_CASES = {
    "conv1d": (lambda L, x, w, b: L.conv1d(x, w, b, 1, 1), (arr(2, 2, 5), arr(3, 2, 3), arr(3))),
    "conv2d": (lambda L, x, w: L.conv2d(x, w, None, 2, 1, 1, 1), (arr(1, 2, 5, 5), arr(3, 2, 3, 3))),
    "conv_transpose1d": (lambda L, x, w: L.conv_transpose1d(x, w, None, 2), (arr(1, 2, 4), arr(2, 3, 3))),
    "conv_transpose2d": (lambda L, x, w: L.conv_transpose2d(x, w, padding=1), (arr(1, 2, 3, 3), arr(2, 1, 3, 3))),
    "layer_norm": (lambda L, x, w, b: L.layer_norm(x, (4,), w, b, 1e-5, True), (arr(2, 3, 4), arr(4), arr(4))),
    "group_norm": (lambda L, x, w, b: L.group_norm(x, 2, w, b, 1e-5, True), (arr(2, 4, 3), arr(4), arr(4))),
    "batch_norm": (lambda L, x, w, b: L.batch_norm(x, w, b, _const(L, x, RM), _const(L, x, RV), False, 0.1, 1e-5, True),
                   (arr(4, 3, 2), arr(3), arr(3))),
    "batch_norm_training": (lambda L, x: L.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, True), (arr(4, 3, 2),)),
    "instance_norm": (lambda L, x, w, b: L.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
                      (arr(2, 3, 4), arr(3), arr(3))),
    "embedding": (lambda L, w, i: L.embedding(w, i, 1), (arr(4, 3), ints([[0, 1], [3, 1]]))),
    "bilinear": (lambda L, a, b, w, c: L.bilinear(a, b, w, c), (arr(2, 3), arr(2, 2), arr(4, 3, 2), arr(4))),
    "pixel_shuffle": (lambda L, x: L.pixel_shuffle(x, 2), (arr(1, 4, 2, 3),)),
    "pixel_unshuffle": (lambda L, x: L.pixel_unshuffle(x, 2), (arr(1, 1, 4, 2),)),
    "channel_shuffle": (lambda L, x: L.channel_shuffle(x, 2), (arr(1, 4, 2, 2),)),
    "cosine_similarity": (lambda L, a, b: L.cosine_similarity(a, b, 1, 1e-8), (arr(3, 4), arr(3, 4))),
    "pairwise_distance": (lambda L, a, b: L.pairwise_distance(a, b, 3.0, 1e-6, True), (arr(3, 4), arr(3, 4))),
    "pdist": (lambda L, x: L.pdist(x, 2.0), (arr(4, 3),)),
    "dropout": (lambda L, x: (L.dropout(x, 0.4, False), L.dropout(x, 0.0, True)), (arr(3, 4),)),
    "feature_dropout": (lambda L, x: L.feature_dropout(x, 0.4, False), (arr(2, 3, 4),)),
    "alpha_dropout": (lambda L, x: L.alpha_dropout(x, 0.3, False), (arr(3, 4),)),
    "feature_alpha_dropout": (lambda L, x: L.feature_alpha_dropout(x, 0.3, False), (arr(2, 3, 4),)),
    "max_pool1d": (lambda L, x: L.max_pool1d(x, 2), (arr(2, 3, 6),)),
    "max_pool2d": (lambda L, x: L.max_pool2d(x, 2, 1, 1), (arr(1, 2, 4, 4),)),
    "avg_pool1d": (lambda L, x: L.avg_pool1d(x, 3, 2, 1), (arr(2, 2, 7),)),
    "adaptive_avg_pool1d": (lambda L, x: L.adaptive_avg_pool1d(x, 3), (arr(2, 2, 7),)),
    "adaptive_max_pool1d": (lambda L, x: L.adaptive_max_pool1d(x, 3), (arr(2, 2, 7),)),
    "threshold": (lambda L, x: L.threshold(x, 0.1, 20.0), (arr(3, 4),)),
    "selu": (lambda L, x: L.selu(x), (arr(3, 4),)),
    "celu": (lambda L, x: L.celu(x, 0.5), (arr(3, 4),)),
    "prelu": (lambda L, x, w: L.prelu(x, w), (arr(2, 3, 4), arr(3))),
    "rrelu": (lambda L, x: L.rrelu(x, 0.1, 0.3, False), (arr(3, 4),)),
    "hardshrink": (lambda L, x: L.hardshrink(x, 0.3), (arr(3, 4),)),
    "kl_div": (lambda L, x, t: (L.kl_div(x, t, 1), L.kl_div(x, t, 2, log_target=True), L.kl_div(x, t)), (arr(3, 4), arr(3, 4))),
    "binary_cross_entropy_with_logits": (
        lambda L, x, t: (L.binary_cross_entropy_with_logits(x, t, _const(L, x, W4), _const(L, x, W4[::-1].copy()), 2),
                         L.binary_cross_entropy_with_logits(x, t)), (arr(3, 4), arr(3, 4, low=0.0))),
}  # fmt: skip


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", sorted(F_CASES))
def test_functional_alias_matches_torch(backend: str, name: str) -> None:
    alias = name.removesuffix("_training")
    if not hasattr(mt, alias):
        pytest.skip(f"nn.functional has no {alias}")
    fn, arrays = F_CASES[name]
    check(backend, fn, *arrays, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_functional_aliases_write_into_their_input(backend: str) -> None:
    x = arr(3, 4)
    for name, args in (("selu_", ()), ("celu_", (0.5,)), ("threshold_", (0.1, 2.0)), ("rrelu_", (0.1, 0.3, False)),
                       ("dropout_", (0.5, False)), ("feature_dropout_", (0.5, False))):
        if not hasattr(mt, name):
            continue
        ours, theirs = mt.tensor(x, backend=backend), torch.tensor(x)
        assert getattr(mt, name)(ours, *args) is ours
        getattr(torch, name)(theirs, *args)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, err_msg=name)


def test_dropout_forms_drop_and_scale() -> None:
    mt.manual_seed(0)
    x = mt.ones(200, 50, dtype="float64")
    y = mt.dropout(x, 0.25, True).numpy()
    assert set(np.unique(y)) <= {0.0, 4.0 / 3.0} and 0.2 < (y == 0).mean() < 0.3
    z = mt.feature_dropout(mt.ones(100, 30, 4, dtype="float64"), 0.5, True).numpy()
    assert (z.min(-1) == z.max(-1)).all() and 0.4 < (z == 0).mean() < 0.6  # whole channels
    assert (mt.feature_dropout(x, 1.0, True).numpy() == 0).all()
    with pytest.raises(ShapeError, match="at least 2 dims"):
        mt.feature_dropout(mt.ones(3), 0.5, True)


# --- in-place forms ---

INPLACE_ARGS = {"clamp_": (-0.2, 0.3), "clip_": (0.2,), "fill_": (2.5,), "round_": (), "logit_": (0.05,),
                "nan_to_num_": (0.0,), "xlogy_": ("other",), "clamp_min_": (0.4,), "clamp_max_": (0.5,),
                "ldexp_": ("other",), "addmv_": ("mat", "vec"), "as_strided_": ((2, 2), (1, 3), 1), "resize_as_": ("other",)}
MATRIX_VECTOR = {"mat": arr(2, 3), "vec": arr(3)}
"""addmv_'s operands: its input is the first row of the usual base (a vector of 2)."""
INTEGER_FORMS = {"gcd_", "lcm_"}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_forms_match_torch(backend: str) -> None:
    x = arr(2, 3, low=0.1, high=0.9)
    for name in FA.INPLACE_FORMS:
        if name in INTEGER_FORMS:
            base, other = ints([[4, 6, 9], [12, 5, 0]]), ints([[6, 4, 3], [8, 10, 7]])
        else:
            base = x + 1.0 if name.startswith(("acosh", "arccosh")) else x
            other = x[::-1].copy()
        if name == "addmv_":
            base = base[0, :2].copy()
        args = tuple(other if a == "other" else MATRIX_VECTOR.get(a, a) for a in INPLACE_ARGS.get(name, ()))
        if name in INTEGER_FORMS:
            args = (other,)
        ours, theirs = mt.tensor(base, backend=backend), torch.tensor(base)
        our_args = tuple(mt.tensor(a, backend=backend) if isinstance(a, np.ndarray) else a for a in args)
        their_args = tuple(torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args)
        assert getattr(mt, name)(ours, *our_args) is ours, name
        getattr(torch, name)(theirs, *their_args)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7, err_msg=name)


# --- as_strided, masked_scatter, index_put, put, small ops ---

X34 = arr(3, 4)
IDX = ints([0, 2, 0, 2])
OPS = {
    "as_strided": (lambda L, x: L.as_strided(x, (2, 2), (1, 4), 1), (X34,)),
    "as_strided_overlap": (lambda L, x: x.as_strided((3, 3), (1, 1)), (X34,)),
    "as_strided_of_view": (lambda L, x: L.as_strided(x[1:], (3,), (3,)), (X34,)),
    "as_strided_offset_of_view": (lambda L, x: x.t()[1:].as_strided((2, 2), (2, 1), 5), (X34,)),
    "as_strided_write": (lambda L, x: _strided_write(x), (X34,)),
    "masked_scatter": (lambda L, x, s: L.masked_scatter(x, x > 0, s), (X34, arr(12))),
    "masked_scatter_broadcast": (lambda L, x, s: x.masked_scatter(x[0] > 0, s), (X34, arr(4, 4))),
    "masked_scatter_": (lambda L, x, s: (x * 1).masked_scatter_(x > 0.2, s), (X34, arr(13))),
    "index_put": (lambda L, x, v, i: L.index_put(x, (i[:2],), v), (X34, arr(2, 4), IDX)),
    "index_put_accumulate": (lambda L, x, v, i: L.index_put(x, (i, i[:1] + 1), v, True), (X34, arr(4), IDX)),
    "index_put_none": (lambda L, x, v, i: x.index_put((None if L is mt else L.arange(3)[:, None], i), v, accumulate=True),
                       (X34, arr(3, 1), IDX)),
    "index_put_mask": (lambda L, x, v: x.index_put((x > 0,), v[0]), (X34, arr(1))),
    "index_put_": (lambda L, x, v, i: (x * 1).index_put_((i, i), v, True), (X34, arr(1), IDX)),
    "put": (lambda L, x, s, i: L.put(x, i[:2] + 1, s[:2]), (X34, arr(4), IDX)),
    "put_accumulate": (lambda L, x, s, i: x.put(i - 1, s, True), (X34, arr(4), IDX)),
    "put_": (lambda L, x, s, i: (x * 1).put_(i.reshape(2, 2), s.reshape(2, 2), accumulate=True), (X34, arr(4), IDX)),
    "argwhere": (lambda L, x: (L.argwhere(x > 0), L.argwhere(x[0, 0] > 0), x.argwhere()), (X34,)),
    "split_with_sizes": (lambda L, x: L.split_with_sizes(x, [1, 3], 1) + x.split_with_sizes([2, 1]), (X34,)),
    "rsub": (lambda L, x, y: (L.rsub(x, y, alpha=2), L.rsub(x, 2.5), L.rsub(y.long(), 1.5)), (X34, arr(4))),
}  # fmt: skip


def _strided_write(x):
    h = x * 1
    h.as_strided((2,), (5,), 1).mul_(3.0)
    return h * h


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_match_torch(backend: str, name: str) -> None:
    fn, arrays = OPS[name]
    check(backend, fn, *arrays, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", CPU_BACKENDS + CUDA)
def test_as_strided_and_index_put_on_every_backend(backend: str) -> None:
    check(backend, lambda L, x, v, i: L.index_put(x.as_strided((2, 2), (1, 3), 1), (i,), v, True), X34, arr(2), ints([1, 1]))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_as_strided_shares_storage(backend: str) -> None:
    x = mt.tensor(X34, backend=backend)
    view = mt.as_strided(x, (2, 3), (4, 1), 1)
    assert view._base is x and view.storage_offset() == 1 and view.stride() == (4, 1)
    x.view(-1)[5].fill_(100.0)
    assert view[1, 0].item() == 100.0
    view[0, 0] = -7.0
    assert x[0, 1].item() == -7.0
    assert x[1:].storage_offset() == 4 and x.t()[1].storage_offset() == 1
    leaf = mt.tensor(X34, backend=backend, requires_grad=True)
    with pytest.raises(mt.GradientError, match="view of a leaf"):
        leaf.as_strided((2,), (1,)).mul_(2.0)


def test_write_errors() -> None:
    x = mt.tensor(X34, dtype="float32")
    with pytest.raises(ShapeError, match=r"need a storage of 14 elements, but input's storage holds 12"):
        x.as_strided((2, 2), (1, 8), 4)
    with pytest.raises(ShapeError, match="negative strides"):
        mt.as_strided(x, (3,), (-1,))
    with pytest.raises(ShapeError, match="mismatch in length"):
        mt.as_strided(x, (3,), (1, 1))
    with pytest.raises(DTypeError, match="self.dtype = Float and values.dtype = Double"):
        mt.index_put(x, (mt.tensor([0]),), mt.tensor([1.0], dtype="float64"))
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        mt.index_put(x, mt.tensor([0]), mt.tensor([1.0]))
    with pytest.raises(DTypeError, match="int64, int32 or bool"):
        x.index_put((mt.tensor([0.0]),), mt.tensor([1.0]))
    with pytest.raises(IndexOutOfRangeError, match=r"out of range \[-12, 12\)"):
        x.put(mt.tensor([12]), mt.tensor([1.0]))
    with pytest.raises(ShapeError, match=r"source.numel\(\) = 2 and index.numel\(\) = 1"):
        x.put_(mt.tensor([1]), mt.tensor([1.0, 2.0]))
    with pytest.raises(ShapeError, match="mask has 12 True elements but source of shape"):
        x.masked_scatter(x == x, mt.ones(3))
    with pytest.raises(DTypeError, match="mask must be a bool tensor"):
        x.masked_scatter(mt.ones(3, 4), mt.ones(12))
    with pytest.raises(ShapeError, match=r"do not sum to the size 4"):
        mt.split_with_sizes(x, [1, 2], 1)
    with pytest.raises(TypeError, match="split_sizes"):
        x.split_with_sizes(2)


# --- creation ---


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(n: int, periodic: bool) -> None:
    calls = [("hann_window", ()), ("hamming_window", ()), ("hamming_window", (0.5, 0.4)), ("blackman_window", ()),
             ("bartlett_window", ()), ("kaiser_window", ()), ("kaiser_window", (5.0,))]
    for name, extra in calls:
        for dtype in ("float32", "float64"):
            got = getattr(mt, name)(n, periodic, *extra, dtype=dtype)
            want = getattr(torch, name)(n, periodic, *extra, dtype=getattr(torch, dtype))
            assert got.dtype == np.dtype(dtype) and got.shape == tuple(want.shape), (name, dtype)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=3e-7, err_msg=f"{name}{extra} {dtype}")
    np.testing.assert_allclose(mt.hann_window(n).numpy(), torch.hann_window(n).numpy(), atol=1e-6)


@pytest.mark.parametrize("backend", CPU_BACKENDS + CUDA)
def test_window_and_scalar_tensor_backends(backend: str) -> None:
    w = mt.kaiser_window(4, backend=backend, requires_grad=True)
    assert w.backend.name == backend and w.requires_grad
    s = mt.scalar_tensor(3, backend=backend)
    assert s.shape == () and s.dtype == mt.float32 and s.item() == 3.0
    assert mt.scalar_tensor(True, dtype="int64").item() == 1 and mt.scalar_tensor(2.5, dtype="float64").dtype == mt.float64


def test_creation_errors() -> None:
    with pytest.raises(ValueError, match="non-negative window_length, got window_length=-1"):
        mt.hann_window(-1)
    with pytest.raises(DTypeError, match="floating point dtype, got int64"):
        mt.bartlett_window(4, dtype="int64")
    with pytest.raises(TypeError, match="window_length"):
        mt.blackman_window(4.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a number"):
        mt.scalar_tensor("1")


# --- type information ---


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_finfo_matches_torch(dtype: str) -> None:
    ours, theirs = mt.finfo(getattr(mt, dtype)), torch.finfo(getattr(torch, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs) and ours == mt.finfo(dtype)
    assert mt.finfo().dtype == "float32"


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_iinfo_matches_torch(dtype: str) -> None:
    ours, theirs = mt.iinfo(getattr(mt, dtype)), torch.iinfo(getattr(torch, dtype))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


def test_info_errors() -> None:
    with pytest.raises(TypeError, match="floating point dtype, got int32"):
        mt.finfo(mt.int32)
    with pytest.raises(TypeError, match="integer dtype, got float32"):
        mt.iinfo(mt.float32)
    with pytest.raises(TypeError, match="bool is not supported"):
        mt.iinfo(mt.bool)


DTYPES = ["bool", "int32", "int64", "float32", "float64"]


def test_type_queries_match_torch() -> None:
    for a in DTYPES:
        for b in DTYPES:
            assert mt.promote_types(a, b).name == str(torch.promote_types(getattr(torch, a), getattr(torch, b)))[6:]
            assert mt.can_cast(a, b) == torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)
    operands = [np.array([1, 2], np.int32), np.array(3.0, np.float64), np.array([True]), 2, 2.5, True]

    def lib(L, v):
        return (mt.tensor(v) if L is mt else torch.tensor(v)) if isinstance(v, np.ndarray) else v

    for a in operands:
        for b in operands:
            assert mt.result_type(lib(mt, a), lib(mt, b)).name == str(torch.result_type(lib(torch, a), lib(torch, b)))[6:]
    x = mt.tensor([[0.5]])
    assert mt.is_tensor(x) and mt.is_tensor(mt.nn.Parameter(x)) and not mt.is_tensor(np.ones(1))
    assert mt.is_floating_point(x) and not mt.is_floating_point(x.long()) and not mt.is_complex(x)
    assert mt.is_nonzero(x) and not mt.is_nonzero(mt.tensor([False])) and mt.numel(x) == 1
    assert mt.is_same_size(x, mt.zeros(1, 1)) and not x.is_same_size(mt.zeros(1))
    for bad in (mt.zeros(0), mt.zeros(2)):
        with pytest.raises(ShapeError, match="Boolean value of Tensor with (no values|more than one value) is ambiguous"):
            mt.is_nonzero(bad)
    with pytest.raises(TypeError, match="argument 'other' must be a Tensor or a number"):
        mt.result_type(x, "a")


# --- print options and threads ---


@pytest.fixture
def print_options():
    saved = dict(printing._options)
    yield
    printing._options.clear()
    printing._options.update(saved)


def test_set_printoptions_changes_repr(print_options) -> None:
    x = mt.tensor([1.23456789, 2.0])
    assert "1.2345679" in repr(x)  # NumPy's defaults until set
    mt.set_printoptions(precision=2)
    assert "1.23," in repr(x) and "1.235" not in repr(x)
    mt.set_printoptions(sci_mode=True)
    assert "1.23e+00" in repr(x)
    mt.set_printoptions(sci_mode=False, threshold=5, edgeitems=1)
    assert "..." in repr(mt.arange(10.0)) and "e+" not in repr(mt.tensor([1e9]))
    mt.set_printoptions(profile="full")
    assert "..." not in repr(mt.arange(2000.0))
    mt.set_printoptions(profile="short", linewidth=20)
    assert len(repr(mt.arange(6.0)).splitlines()) > 1
    with pytest.raises(ValueError, match="profile must be one of"):
        mt.set_printoptions(profile="long")
    with pytest.raises(ValueError, match="precision must be a non-negative whole number"):
        mt.set_printoptions(precision=-1)


def test_num_threads_are_numbas() -> None:
    import numba

    before = mt.get_num_threads()
    assert before == numba.get_num_threads() >= 1
    try:
        mt.set_num_threads(1)
        assert mt.get_num_threads() == numba.get_num_threads() == 1
        np.testing.assert_allclose((mt.ones(1 << 16) * 2).sum().item(), 2 << 16)
    finally:
        mt.set_num_threads(before)
    with pytest.raises(ValueError, match=r"must be in \[1, \d+\]"):
        mt.set_num_threads(0)
    with pytest.raises(ValueError, match="got 100000"):
        mt.set_num_threads(100000)
    with pytest.raises(TypeError, match="must be int, not float"):
        mt.set_num_threads(1.0)  # type: ignore[arg-type]

"""The small conveniences of tensor_methods_extra.py against torch: dtype shortcuts, device and layout queries,
sum_to_size, new_empty_strided, post-accumulate-grad hooks and bit shifts. Values, dtypes, shapes and gradients are
compared with torch 2.13 on the same inputs; errors with torch's (minitensor's typed subclasses).

The bulk runs on the CPU backends; one tiny case runs on every backend (cuda under Numba's simulator).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import DTypeError, GradientError, ShapeError

torch = pytest.importorskip("torch")

WEIGHTS = np.linspace(-1.3, 2.0, 64)


def tensors(array: np.ndarray, backend: str, requires_grad: bool = False) -> tuple[Any, Any]:
    """The same array as a minitensor tensor on ``backend`` and as a torch tensor."""
    return (mt.tensor(array, backend=backend, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def same(got: Any, want: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Equal shapes, dtypes and values (nan where torch has nan)."""
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(force=True), rtol=rtol, atol=atol, equal_nan=True)


def weighted(x: Any, lib: Any) -> Any:
    """A fixed weighted sum of x's elements (the loss of the gradient checks)."""
    w = np.ascontiguousarray(WEIGHTS[: x.numel()].reshape(tuple(x.shape)))
    return (x * (torch.tensor(w, dtype=x.dtype) if lib is torch else mt.tensor(w, dtype=x.dtype, backend=x.backend))).sum()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_dtype_and_device_queries_match_torch(dtype: str) -> None:
    x, tx = mt.zeros(2, dtype=dtype, backend="simple"), torch.zeros(2, dtype=getattr(torch, dtype))
    assert x.is_signed() is tx.is_signed()
    for query in ("is_cpu", "is_cuda", "is_sparse", "is_quantized", "is_meta"):
        assert getattr(x, query) is getattr(tx, query), query
    assert x.get_device() == tx.get_device() == -1
    assert x.layout == mt.strided and tx.layout == torch.strided and x.layout != "strided"
    assert isinstance(x.layout, mt.layout) and repr(mt.strided) == "minitensor.strided"
    for method, name in (("byte", "uint8"), ("char", "int8"), ("short", "int16")):
        assert str(getattr(tx, method)().dtype) == f"torch.{name}"
        with pytest.raises(DTypeError, match=name):
            getattr(x, method)()


SUM_TO = [((2, 3), (1, 3)), ((2, 3), (3,)), ((2, 3), (2, 1)), ((2, 3), (1, 1)), ((2, 3), ()), ((4, 1, 3), (1, 3)),
          ((2, 3), (2, 3)), ((1, 3), (3,)), ((0, 3), (1, 3))]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shapes", SUM_TO, ids=str)
def test_sum_to_size_matches_torch(backend: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    shape, size = shapes
    array = np.linspace(-2, 3, int(np.prod(shape))).reshape(shape)
    results = []
    for lib in (mt, torch):
        kw = {"backend": backend} if lib is mt else {}
        a = lib.tensor(array, requires_grad=True, **kw)
        out = a.sum_to_size(*size) if size else a.sum_to_size(size)
        assert (out is a) == (tuple(size) == shape)
        weighted(out, lib).backward() if out.numel() else out.sum().backward()
        results.append((out, a.grad))
    same(results[0][0], results[1][0], rtol=1e-12)
    same(results[0][1], results[1][1], rtol=1e-12)
    ints, tints = mt.tensor(np.ones(shape, np.int32), backend=backend), torch.ones(shape, dtype=torch.int32)
    same(ints.sum_to_size(*size) if size else ints.sum_to_size(size), tints.sum_to_size(*size) if size else tints.sum_to_size(size))


def test_sum_to_size_errors_match_torch() -> None:
    x, tx = tensors(np.zeros((2, 3)), "simple")
    for size in ((1, 1, 3), (2, 2), (3, 3)):
        with pytest.raises(ShapeError, match="expandable"):
            x.sum_to_size(*size)
        with pytest.raises(RuntimeError, match="expandable"):
            tx.sum_to_size(*size)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_new_empty_strided_matches_torch(backend: str) -> None:
    x, tx = mt.ones(2, dtype="float64", backend=backend), torch.ones(2, dtype=torch.float64)
    for size, stride, kwargs in [((2, 3), (1, 2), {}), ((2, 3), (3, 1), {"dtype": "int32"}), ((0, 4), (4, 1), {}),
                                 ((3,), (2,), {"requires_grad": True}), ((), (), {"dtype": "float32"})]:
        out = x.new_empty_strided(size, stride, **kwargs)
        tkwargs = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
        want = tx.new_empty_strided(size, stride, **tkwargs)
        assert out.shape == tuple(want.shape) and out.stride() == want.stride()
        assert out.dtype.name == str(want.dtype).removeprefix("torch.") and out.requires_grad == want.requires_grad
        assert out.backend is x.backend and out.is_leaf
    with pytest.raises(ShapeError):
        x.new_empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError):
        tx.new_empty_strided((2, 3), (1,))
    with pytest.raises(TypeError):
        x.new_empty_strided((2,), (1,), mt.float32)  # dtype is keyword-only, as in torch


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_post_accumulate_grad_hooks_match_torch(backend: str) -> None:
    logs = []
    for lib in (mt, torch):
        kw = {"backend": backend} if lib is mt else {}
        a = lib.tensor([1.0, 2.0], requires_grad=True, **kw)
        log: list[Any] = []
        a.register_hook(lambda g, log=log: log.append(("grad", g.tolist())) or g * 2)
        first = a.register_post_accumulate_grad_hook(lambda t, a=a, log=log: log.append(("post", t is a, t.grad.tolist())))
        a.register_post_accumulate_grad_hook(lambda t, log=log: log.append(("second", t.grad.tolist())))
        (a * 3).sum().backward()
        (a * a).sum().backward()
        lib.autograd.grad((a * 5).sum(), a)  # no .grad accumulated: no post hook
        first.remove()
        (a * 1).sum().backward()
        logs.append(log)
        with pytest.raises(GradientError if lib is mt else RuntimeError, match="non-leaf"):
            (a * 2).register_post_accumulate_grad_hook(lambda t: None)
        with pytest.raises(GradientError if lib is mt else RuntimeError, match="require"):
            lib.ones(2, **kw).register_post_accumulate_grad_hook(lambda t: None)
        b = lib.tensor([1.0], requires_grad=True, **kw)
        b.register_post_accumulate_grad_hook(lambda t, lib=lib, kw=kw: lib.ones(1, **kw))
        with pytest.raises(RuntimeError, match="return None"):
            (b * 1).sum().backward()
    assert logs[0] == logs[1]


SHIFTS = [np.array([5, -5, 1, -1, 7, 0, 123456789, -987654321, 2**62 + 3, -2**62 - 3, 2**63 - 1, -2**63])]
COUNTS = np.array([0, 1, 3, 31, 32, 33, 62, 63, 64, 65, -1, -3])


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
def test_bit_shifts_match_torch(backend: str, dtype: str, name: str) -> None:
    values = np.repeat(SHIFTS[0][:, None], len(COUNTS), 1).astype(dtype)  # int32: the low 32 bits (numpy wraps)
    counts = np.broadcast_to(COUNTS, values.shape).astype(dtype)
    x, tx = mt.tensor(values, backend=backend), torch.tensor(values)
    c, tc = mt.tensor(counts, backend=backend), torch.tensor(counts)
    same(getattr(x, name)(c), getattr(tx, name)(tc))
    same(getattr(mt, name)(x, 3), getattr(torch, name)(tx, 3))
    same(getattr(mt, name)(7, c[:, :4]), getattr(torch, name)(7, tc[:, :4]))
    same(getattr(x, name)(mt.tensor(2, backend=backend)), getattr(tx, name)(torch.tensor(2)))  # 0-d int64: x's dtype
    same(getattr(x, name)(c.long()), getattr(tx, name)(tc.long()))  # int32 with an int64 tensor: int64
    op = {"bitwise_left_shift": lambda a, b: a << b, "bitwise_right_shift": lambda a, b: a >> b}[name]
    same(op(x, 2), op(tx, 2))
    same(op(100, x[:1, :4].abs()), op(100, tx[:1, :4].abs()))
    y, ty = x.t(), tx.t()
    assert getattr(y, name + "_")(c.t()) is y
    getattr(ty, name + "_")(tc.t())
    same(x, tx)
    before = id(x)
    if name == "bitwise_left_shift":
        x <<= 1
        tx <<= 1
    else:
        x >>= 1
        tx >>= 1
    assert id(x) == before
    same(x, tx)


def test_bit_shift_dtype_rules_and_errors_match_torch() -> None:
    same(mt.tensor([True, False]) << 1, torch.tensor([True, False]) << 1)
    same(mt.tensor([True, False]) >> 1, torch.tensor([True, False]) >> 1)
    for fails in (lambda lib: lib.tensor([1.5]) << 1, lambda lib: lib.tensor([1]) << 1.5,
                  lambda lib: lib.tensor([True]).bitwise_left_shift(lib.tensor([True])),
                  lambda lib: lib.tensor([True]).bitwise_left_shift_(1), lambda lib: lib.tensor([4.0]).bitwise_right_shift_(1)):
        with pytest.raises(DTypeError):
            fails(mt)
        with pytest.raises(RuntimeError):
            fails(torch)
    with pytest.raises(TypeError, match=r"^bitwise_left_shift\(\): argument 'input'"):
        mt.bitwise_left_shift(None, None)


def test_conveniences_on_every_backend(backend: str) -> None:
    x = mt.tensor([[3, -8], [1, 2]], backend=backend)
    assert x.is_cuda == (backend == "cuda") and x.is_cpu == (backend != "cuda")
    assert x.get_device() == (0 if backend == "cuda" else -1) and x.layout is mt.strided
    same(x << mt.tensor([1, 2], backend=backend), torch.tensor([[3, -8], [1, 2]]) << torch.tensor([1, 2]))
    same(x.sum_to_size(1, 2), torch.tensor([[3, -8], [1, 2]]).sum_to_size(1, 2))
    y = x.new_empty_strided((2, 2), (1, 2))
    assert y.stride() == (1, 2) and y.backend is x.backend

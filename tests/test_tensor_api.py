"""The PyTorch-familiar Tensor surface and its error messages, on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import (
    BackendError,
    DTypeError,
    GradientError,
    IndexOutOfRangeError,
    NonContiguousError,
    PermutationError,
    RaggedDataError,
    ShapeError,
)


def test_creation_and_properties(backend: str) -> None:
    t = mt.tensor([[1, 2, 3], [4, 5, 6]], backend=backend)
    assert t.shape == (2, 3) and t.size() == (2, 3) and t.size(-1) == 3 and t.numel() == 6 and t.dim() == 2
    assert t.dtype == np.int64 and mt.tensor([1.0], backend=backend).dtype == np.float32
    assert mt.tensor([True], backend=backend).dtype == np.bool_
    assert t.backend.name == backend
    assert t.to_numpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    assert mt.zeros(2, 3, backend=backend).to_numpy().sum() == 0.0
    assert mt.ones((2, 2), backend=backend, dtype="float32").dtype == np.float32
    r = mt.rand(3, 4, backend=backend)
    assert r.shape == (3, 4) and 0.0 <= r.to_numpy().min() and r.to_numpy().max() < 1.0
    f32 = mt.from_numpy(np.ones((2,), dtype=np.float32), backend=backend)
    assert f32.dtype == np.float32
    assert mt.tensor(2.5, backend=backend).item() == 2.5
    assert mt.tensor(np.arange(4), backend=backend).dtype == np.int64
    assert mt.tensor(np.arange(4.0), backend=backend).dtype == np.float64


def test_python_floats_convert_once_to_the_requested_dtype(backend: str) -> None:
    """Python floats go straight to ``dtype`` (torch.tensor's rule): 0.1 and 1e308 are not rounded through float32."""
    values = [0.1, 1e308, 5e-324, -2.5]
    for data in (values, [values], 0.1):
        got = mt.tensor(data, dtype=mt.float64, backend=backend).to_numpy()
        np.testing.assert_array_equal(got, np.array(data, np.float64))
    assert mt.tensor(values, backend=backend).dtype == np.float32  # no dtype: the default float dtype, as before
    assert mt.tensor([1.7, -2.7], dtype=mt.int64, backend=backend).to_numpy().tolist() == [1, -2]


def test_scalars_on_either_side(backend: str) -> None:
    t = mt.tensor([1.0, 2.0, 4.0], backend=backend)
    np.testing.assert_allclose((2.0 - t).to_numpy(), [1.0, 0.0, -2.0])
    np.testing.assert_allclose((8.0 / t).to_numpy(), [8.0, 4.0, 2.0])
    np.testing.assert_allclose((t * 3).to_numpy(), [3.0, 6.0, 12.0])
    np.testing.assert_allclose((1 + t).to_numpy(), [2.0, 3.0, 5.0])
    np.testing.assert_allclose((t < 2.0).to_numpy(), [1.0, 0.0, 0.0])
    np.testing.assert_allclose((t == 2.0).to_numpy(), [0.0, 1.0, 0.0])
    np.testing.assert_allclose((-t).to_numpy(), [-1.0, -2.0, -4.0])


def test_full_reductions_are_zero_dimensional(backend: str) -> None:
    t = mt.tensor(np.arange(6.0).reshape(2, 3), backend=backend)
    for out, expected in ((t.sum(), 15.0), (t.mean(), 2.5), (t.max(), 5.0), (t.min(), 0.0)):
        assert out.shape == () and out.item() == expected
    assert t.sum(1, keepdim=True).shape == (2, 1)
    assert t.all().item() == 0.0 and (t + 1.0).all().item() == 1.0


def test_to_moves_between_backends_and_casts(backend: str) -> None:
    t = mt.tensor([1.0, 2.0], backend="simple", requires_grad=True)
    moved = t.to(backend)
    assert moved.backend.name == backend
    (moved * moved).sum().backward()
    np.testing.assert_allclose(t.grad.to_numpy(), [2.0, 4.0])
    assert moved.to("float32").dtype == np.float32


def test_detach_and_no_grad(backend: str) -> None:
    x = mt.tensor([1.0, 2.0], backend=backend, requires_grad=True)
    assert x.detach().history is None and not x.detach().requires_grad
    with mt.no_grad():
        y = x * 2.0
    assert not y.requires_grad and y.history is None
    assert (x * 2.0).requires_grad


def test_grad_accumulates_over_reuse(backend: str) -> None:
    x = mt.tensor([1.0, -2.0], backend=backend, requires_grad=True)
    (x * x + x).sum().backward()
    np.testing.assert_allclose(x.grad.to_numpy(), [3.0, -3.0])
    (x * 1.0).sum().backward()
    np.testing.assert_allclose(x.grad.to_numpy(), [4.0, -2.0])


def test_backward_with_explicit_gradient(backend: str) -> None:
    x = mt.tensor([[1.0, 2.0]], backend=backend, requires_grad=True)
    (x * 3.0).backward(mt.tensor([[1.0, 10.0]], backend=backend))
    np.testing.assert_allclose(x.grad.to_numpy(), [[3.0, 30.0]])


def test_repr_is_readable(backend: str) -> None:
    text = repr(mt.tensor([1.0, 2.0], backend=backend))
    assert text.startswith("tensor([1., 2.]") and backend in text


def test_error_messages_name_shapes_and_values(backend: str) -> None:
    a = mt.tensor(np.zeros((2, 3)), backend=backend)
    b = mt.tensor(np.zeros((4, 5)), backend=backend)
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4, 5\)"):
        a + b
    with pytest.raises(ShapeError, match=r"2x3 and 4x5"):
        a @ b
    with pytest.raises(PermutationError, match=r"\(1, 1\)"):
        a.permute(1, 1)
    with pytest.raises(NonContiguousError, match=r"\(3, 2\)"):
        a.T.view(6)
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4,\)"):
        a.view(4)
    with pytest.raises(GradientError, match=r"\(2, 3\)"):
        a.detach().requires_grad_().exp().backward()
    with pytest.raises(IndexOutOfRangeError, match="index 5"):
        a[5]
    with pytest.raises(IndexOutOfRangeError, match="dim 2"):
        a.sum(2)
    with pytest.raises(ShapeError, match=r"item\(\).*\(2, 3\)"):
        a.item()


def test_constructor_errors() -> None:
    with pytest.raises(RaggedDataError, match=r"data\[0\] has shape \(2,\) but data\[1\] has shape \(3,\)"):
        mt.tensor([[1, 2], [1, 2, 3]], backend="simple")
    with pytest.raises(DTypeError, match="int8"):
        mt.tensor([1, 2], backend="simple", dtype="int8")
    with pytest.raises(BackendError, match="'tpu'.*simple, fast, cuda"):
        mt.tensor([1.0], backend="tpu")


def test_mixing_backends_is_an_error(backend: str) -> None:
    other = "simple" if backend != "simple" else "fast"
    a = mt.tensor([1.0], backend=backend)
    try:
        b = mt.tensor([1.0], backend=other)
    except BackendError:
        pytest.skip(f"{other} backend not available")
    with pytest.raises(BackendError, match=f"'{backend}'.*'{other}'.*\\.to\\(\\)"):
        a + b


def test_env_var_selects_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINITENSOR_BACKEND", "simple")
    assert mt.tensor([1.0]).backend.name == "simple"
    monkeypatch.setenv("MINITENSOR_BACKEND", "nope")
    with pytest.raises(BackendError, match="MINITENSOR_BACKEND"):
        mt.tensor([1.0])


def test_creation_rejects_non_integer_sizes_and_junk_data() -> None:
    for bad in ((2.5,), ("3",), ([2, 1.5],)):
        with pytest.raises(ShapeError, match="sequence of ints"):
            mt.zeros(*bad)
    with pytest.raises(mt.DTypeError):
        mt.tensor([1, None])
    with pytest.raises(mt.DTypeError):
        mt.tensor(np.array(["a"]))
    assert mt.zeros(np.int64(2), mt.tensor(3)).shape == (2, 3)


def test_function_forms_raise_type_error_for_a_non_tensor_and_lift_a_leading_number() -> None:
    """Every tensor-first ``mt.`` function raises PyTorch's TypeError, naming itself, for a non-tensor input (not an
    AttributeError from inside); a number before a tensor is lifted, as ``torch.add(2, x)``."""
    import inspect

    import torch

    from minitensor import function_forms

    wrapped = [name for name in dir(mt) if getattr(getattr(mt, name), "__wrapped__", None) is not None
               and list(inspect.signature(getattr(mt, name)).parameters)[0] in function_forms.TENSOR_FIRST]
    assert {"sum", "atan2", "softmax", "lerp", "gather", "matmul", "reshape"} <= set(wrapped), wrapped
    for name in wrapped:
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument '(input|a)' \(position 1\) must be Tensor, not NoneType"):
            getattr(mt, name)(None, None)
    x = np.array([1.5, -2.0, 3.0], dtype=np.float32)
    for name in ("add", "sub", "mul", "maximum", "atan2"):
        got = getattr(mt, name)(2, mt.tensor(x))
        want = getattr(torch, name)(torch.tensor(2) if name in ("maximum", "atan2") else 2, torch.tensor(x))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        assert got.dtype == np.float32

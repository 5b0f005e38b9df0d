"""minitensor.testing (assert_close, assert_allclose, make_tensor) against torch.testing.

Every assert_close case is built the same way for both libraries and run through both: they must both pass, or both
raise the same kind of error with the same message (after spelling library names alike: ``torch.float32`` and
minitensor's ``float32``, ``torch.Size`` and ``minitensor.Size``, class paths).
"""

from __future__ import annotations

import collections
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt

NAN, INF = float("nan"), float("inf")


def normalized(text: str) -> str:
    """A message with library-specific spellings made alike."""
    text = re.sub(r"<class '[\w.]*?\.?(\w+)'>", r"<class '\1'>", text)
    text = text.replace("minitensor.Size(", "Size(").replace("torch.Size(", "Size(")
    return re.sub(r"torch\.(float32|float64|int32|int64|bool)\b", r"\1", text)


def outcome(check: Callable[..., None], *args: Any, **kwargs: Any) -> tuple[str, str]:
    try:
        check(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the kind and message are what is compared
        kind = next(k for k in (AssertionError, TypeError, ValueError, RuntimeError) if isinstance(error, k))
        return kind.__name__, normalized(str(error))
    return "ok", ""


def T(lib: Any, data: Any, dtype: str = "float32", backend: str = "fast") -> Any:
    """A tensor of ``lib`` from ``data`` (minitensor's on ``backend``)."""
    array = np.array(data)
    if lib is torch:
        return torch.tensor(array, dtype=getattr(torch, dtype))
    return mt.tensor(array, dtype=getattr(mt, dtype), backend=backend)


Case = Callable[[Any, str], tuple[Any, Any, dict[str, Any]]]
CASES: dict[str, Case] = {
    "equal": lambda lib, b: (T(lib, [1.0, 2.0], backend=b), T(lib, [1.0, 2.0], backend=b), {}),
    "float32 within atol": lambda lib, b: (T(lib, [1.0, 2.0], backend=b), T(lib, [1.000005, 2.0], backend=b), {}),
    "float32 beyond": lambda lib, b: (T(lib, [1.0, 2.0, 3.0], backend=b), T(lib, [1.0, 2.0001, 2.5], backend=b), {}),
    "float64 within": lambda lib, b: (T(lib, [1.0], "float64", b), T(lib, [1.0 + 1e-8], "float64", b), {}),
    "float64 beyond": lambda lib, b: (T(lib, [[1.0, 5.0]], "float64", b), T(lib, [[1.0 + 1e-6, 5.0]], "float64", b), {}),
    "greatest index": lambda lib, b: (T(lib, [1.0, 2.0, 3.0, 4.0], backend=b), T(lib, [1.5, 2.0, 0.0, 4.2], backend=b), {}),
    "int64": lambda lib, b: (T(lib, [1, 2, 3], "int64", b), T(lib, [1, 3, 3], "int64", b), {}),
    "int32 rtol": lambda lib, b: (T(lib, [1, 2], "int32", b), T(lib, [1, 3], "int32", b), {"rtol": 0.5, "atol": 0}),
    "bool": lambda lib, b: (T(lib, [True, False], "bool", b), T(lib, [True, True], "bool", b), {}),
    "dtype": lambda lib, b: (T(lib, [1.0], backend=b), T(lib, [1.0], "float64", b), {}),
    "dtype unchecked": lambda lib, b: (T(lib, [1.0, 2.0], backend=b), T(lib, [1.0, 2.00001], "float64", b),
                                       {"check_dtype": False}),
    "int vs float unchecked": lambda lib, b: (T(lib, [1, 2], "int64", b), T(lib, [1.0, 2.5], backend=b),
                                              {"check_dtype": False}),
    "shape": lambda lib, b: (T(lib, [1.0, 2.0], backend=b), T(lib, [[1.0, 2.0]], backend=b), {}),
    "nan": lambda lib, b: (T(lib, [NAN, 1.0], backend=b), T(lib, [NAN, 1.0], backend=b), {}),
    "nan equal_nan": lambda lib, b: (T(lib, [NAN, 1.0], backend=b), T(lib, [NAN, 1.0], backend=b), {"equal_nan": True}),
    "nan vs number": lambda lib, b: (T(lib, [1.0, NAN], backend=b), T(lib, [1.0, 2.0], backend=b), {"equal_nan": True}),
    "inf": lambda lib, b: (T(lib, [INF, -INF], backend=b), T(lib, [INF, -INF], backend=b), {}),
    "inf vs -inf": lambda lib, b: (T(lib, [INF, 1.0], backend=b), T(lib, [-INF, 1.0], backend=b), {}),
    "zero expected": lambda lib, b: (T(lib, [0.5, 1.0], backend=b), T(lib, [0.0, 1.0], backend=b), {}),
    "0-d": lambda lib, b: (T(lib, 1.5, backend=b), T(lib, 1.25, backend=b), {}),
    "0-d int": lambda lib, b: (T(lib, 3, "int64", b), T(lib, 4, "int64", b), {}),
    "empty": lambda lib, b: (T(lib, np.zeros((2, 0)), backend=b), T(lib, np.zeros((2, 0)), backend=b), {}),
    "given tolerances": lambda lib, b: (T(lib, [1.0, 2.0], backend=b), T(lib, [1.1, 2.0], backend=b),
                                        {"rtol": 0.0, "atol": 0.2}),
    "zero tolerances": lambda lib, b: (T(lib, [1.0, 2.0], backend=b), T(lib, [1.0, 2.000001], backend=b),
                                       {"rtol": 0, "atol": 0}),
    "only rtol": lambda lib, b: (T(lib, [1.0], backend=b), T(lib, [1.0], backend=b), {"rtol": 1e-3}),
    "only atol": lambda lib, b: (1.0, 1.0, {"atol": 1e-3}),
    "stride": lambda lib, b: (T(lib, [[1.0, 3.0], [2.0, 4.0]], backend=b), T(lib, [[1.0, 2.0], [3.0, 4.0]], backend=b).t(),
                              {"check_stride": True}),
    "stride unchecked": lambda lib, b: (T(lib, [[1.0, 3.0], [2.0, 4.0]], backend=b),
                                        T(lib, [[1.0, 2.0], [3.0, 4.0]], backend=b).t(), {}),
    "msg": lambda lib, b: (T(lib, [1.0], backend=b), T(lib, [2.0], backend=b), {"msg": "custom"}),
    "msg callable": lambda lib, b: (T(lib, [1.0], backend=b), T(lib, [2.0], backend=b),
                                    {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}),
    "subclass": lambda lib, b: (lib.nn.Parameter(T(lib, [1.0], backend=b)), T(lib, [1.0], backend=b), {}),
    "subclass strict": lambda lib, b: (lib.nn.Parameter(T(lib, [1.0], backend=b)), T(lib, [1.0], backend=b),
                                       {"allow_subclasses": False}),
    "floats": lambda lib, b: (1.0, 1.0 + 1e-8, {}),
    "floats differ": lambda lib, b: (1.0, 1.001, {}),
    "ints differ": lambda lib, b: (1, 2, {}),
    "float vs int": lambda lib, b: (1.0, 1, {}),
    "float vs int unchecked": lambda lib, b: (1.0, 1, {"check_dtype": False}),
    "numpy scalar": lambda lib, b: (np.float64(2.0), 2.0, {}),
    "bools": lambda lib, b: (True, False, {}),
    "numpy bool": lambda lib, b: (np.bool_(True), True, {}),
    "bool vs int": lambda lib, b: (True, 1, {}),
    "none": lambda lib, b: (None, None, {}),
    "none vs number": lambda lib, b: (None, 1, {}),
    "numpy arrays": lambda lib, b: (np.array([1.0, 2.0]), np.array([1.0, 2.5]), {}),
    "numpy equal": lambda lib, b: (np.array([[1, 2]]), np.array([[1, 2]]), {}),
    "numpy vs tensor": lambda lib, b: (np.array([1.0]), T(lib, [1.0], backend=b), {}),
    "tensor vs number": lambda lib, b: (T(lib, 1.0, backend=b), 1.0, {}),
    "string": lambda lib, b: ("a", "a", {}),
    "sequences": lambda lib, b: ([T(lib, [1.0], backend=b), 2.0, np.array(3.0)],
                                 (T(lib, [1.0], backend=b), 2.0, np.array(3.0)), {}),
    "sequence item": lambda lib, b: ([T(lib, [1.0], backend=b), [2.0, 3.0]], [T(lib, [1.0], backend=b), [2.0, 3.5]], {}),
    "sequence length": lambda lib, b: ([1.0, 2.0], [1.0], {}),
    "mappings": lambda lib, b: (collections.OrderedDict(a=T(lib, [1.0], backend=b), b=2.0),
                                {"b": 2.0, "a": T(lib, [1.0], backend=b)}, {}),
    "mapping keys": lambda lib, b: ({"a": 1.0, "c": 2.0}, {"a": 1.0, "b": 2.0}, {}),
    "mapping value": lambda lib, b: ({"a": 1.0, "b": [T(lib, [1, 2], "int64", b)]},
                                     {"a": 1.0, "b": [T(lib, [1, 5], "int64", b)]}, {"msg": lambda m: m + "!"}),
}


KIND_ONLY = {"bool vs int"}
"""Cases where torch's message is its internal "unexpected exception" text: the kind (RuntimeError) must agree."""


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_agrees_with_torch(name: str, backend: str) -> None:
    """Same pass/fail, same error kind, same message."""
    ours = outcome(mt.testing.assert_close, *CASES[name](mt, backend)[:2], **CASES[name](mt, backend)[2])
    theirs = outcome(torch.testing.assert_close, *CASES[name](torch, backend)[:2], **CASES[name](torch, backend)[2])
    if name in KIND_ONLY:
        assert ours[0] == theirs[0] != "ok"
    else:
        assert ours == theirs


def test_assert_close_devices() -> None:
    """Tensors on two backends differ in device, unless check_device=False (then they are compared on the CPU)."""
    a, b = mt.tensor([1.0, 2.0], backend="simple"), mt.tensor([1.0, 2.0], backend="fast")
    with pytest.raises(AssertionError, match="The values for attribute 'device' do not match: simple != fast."):
        mt.testing.assert_close(a, b)
    mt.testing.assert_close(a, b, check_device=False)
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        mt.testing.assert_close(a, mt.tensor([1.0, 3.0], backend="fast"), check_device=False)


@pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend")
def test_assert_close_on_cuda() -> None:
    a, b = mt.tensor([1.0, 2.0], backend="cuda"), mt.tensor([1.0, 2.5], backend="cuda")
    mt.testing.assert_close(a, a.clone())
    with pytest.raises(AssertionError, match=r"Greatest absolute difference: 0.5 at index \(1,\)"):
        mt.testing.assert_close(a, b)


ALLCLOSE_CASES: list[tuple[Any, Any, dict[str, Any]]] = [
    ([1.0, 2.0], [1.0, 2.0001], {}),
    ([1.0, 2.0], [1.0, 2.001], {}),
    ([1.0, NAN], [1.0, NAN], {}),
    ([1, 2], [1, 3], {}),
    ([1.0, 2.0], [1.0, 2.1], {"rtol": 0.1, "atol": 0.0}),
]


@pytest.mark.parametrize("case", range(len(ALLCLOSE_CASES)))
def test_assert_allclose_agrees_with_torch(case: int) -> None:
    """The deprecated assert_allclose: a FutureWarning, looser defaults, NaN equal, lists accepted."""
    actual, expected, kwargs = ALLCLOSE_CASES[case]
    results = []
    for lib in (mt, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.append(outcome(lib.testing.assert_allclose, T(lib, actual), expected, **kwargs))
        assert [w.category for w in caught] == [FutureWarning]
    assert results[0] == results[1]


DTYPES = ["float32", "float64", "int32", "int64", "bool"]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 0)])
def test_make_tensor(backend: str, dtype: str, shape: tuple[int, ...]) -> None:
    """Shape, dtype, device and torch's default ranges; ``make_tensor(2, 3)`` and ``make_tensor((2, 3))`` alike."""
    x = mt.testing.make_tensor(shape, dtype=getattr(mt, dtype), device=backend)
    assert x.shape == shape and x.dtype == getattr(mt, dtype) and x.backend.name == backend
    assert mt.testing.make_tensor(*shape, dtype=getattr(mt, dtype), device=backend).shape == shape
    values = x.to_numpy()
    low, high = {"float32": (-9, 9), "float64": (-9, 9), "int32": (-9, 10), "int64": (-9, 10), "bool": (0, 2)}[dtype]
    assert ((values >= low) & (values < high)).all()
    assert not x.requires_grad


@pytest.mark.parametrize("dtype", DTYPES)
def test_make_tensor_options(dtype: str) -> None:
    """noncontiguous, bounds (rounded up for integers), exclude_zero and requires_grad as torch's."""
    ours, theirs = getattr(mt, dtype), getattr(torch, dtype)
    for lib, d in ((mt, ours), (torch, theirs)):
        x = lib.testing.make_tensor(3, 4, dtype=d, device="cpu", noncontiguous=True)
        assert tuple(x.shape) == (3, 4) and not x.is_contiguous()
        assert lib.testing.make_tensor(1, dtype=d, device="cpu", noncontiguous=True).is_contiguous()
        if dtype != "bool":
            x = lib.testing.make_tensor(200, dtype=d, device="cpu", low=2.5, high=5.5)
            values = np.asarray(x.numpy() if lib is torch else x.to_numpy())
            assert values.min() >= 2.5 and values.max() < (6 if dtype.startswith("int") else 5.5)
        if dtype in ("int32", "int64", "bool"):
            x = lib.testing.make_tensor(50, dtype=d, device="cpu", exclude_zero=True, **({} if dtype == "bool" else {"low": 0, "high": 2}))
            assert (x == 1).all()
        else:
            assert lib.testing.make_tensor(2, dtype=d, device="cpu", requires_grad=True).requires_grad


@pytest.mark.parametrize("kwargs", [
    {"requires_grad": True}, {"low": 3, "high": 3}, {"low": 5, "high": 1}, {"low": NAN}, {"low": 2**40, "high": 2**41},
    {"noncontiguous": True, "memory_format": object()},
])
def test_make_tensor_errors(kwargs: dict[str, Any]) -> None:
    """torch's ValueErrors (int32 here), with its messages."""
    memory = kwargs.get("memory_format")
    ours = outcome(mt.testing.make_tensor, 3, dtype=mt.int32, device="cpu", **kwargs)
    theirs = outcome(torch.testing.make_tensor, 3, dtype=torch.int32, device="cpu", **kwargs)
    assert ours[0] == theirs[0] == "ValueError"
    assert ours[1].replace(repr(memory), "M").replace(str(memory), "M") == theirs[1].replace(str(memory), "M")


def test_make_tensor_equal_bounds_warns() -> None:
    for lib in (mt, torch):
        with pytest.warns(FutureWarning, match="low==high"):
            x = lib.testing.make_tensor(3, dtype=lib.float64, device="cpu", low=2.0, high=2.0)
        assert (x == 2.0).all()

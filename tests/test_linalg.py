"""Linear algebra on every backend: matmul's 1-D/2-D/batched rules, mm/bmm/mv/dot/outer, einsum and tensordot.

Forward results are compared with NumPy and gradients with central differences (float64) over drawn sizes
(zero included) and non-contiguous layouts; a table of einsum equations and the 1-D matmul rules are compared
with PyTorch; integer products must be exact; contractions must run on the backend's matmul kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import central_difference, drawn_tensors, examples, make_tensor, run_property

import minitensor as mt
from minitensor.errors import DTypeError, IndexOutOfRangeError, ShapeError


def cap(backend: str) -> int:
    """Largest size of a drawn dim (the CUDA simulator runs each thread in Python)."""
    return 2 if backend == "cuda" else 3


def check_backward(fn: Callable, np_fn: Callable, drawn: list[Any], seed: int = 0) -> None:
    """Gradient of sum(w * fn(inputs)) matches central differences of the NumPy function."""
    out = fn(*[d.tensor for d in drawn])
    weight = np.random.default_rng(seed).uniform(-1.0, 1.0, out.shape)
    (out * mt.tensor(weight, backend=out.backend, dtype=out.dtype)).sum().backward()
    for d, g in zip(drawn, central_difference(np_fn, [d.array for d in drawn], weight)):
        assert d.tensor.grad is not None and d.tensor.grad.shape == d.array.shape
        np.testing.assert_allclose(d.tensor.grad.to_numpy(), g, rtol=1e-5, atol=1e-5)


def check_forward_and_backward(fn: Callable, np_fn: Callable, drawn: list[Any]) -> None:
    out = fn(*[d.tensor for d in drawn])
    expected = np.asarray(np_fn(*[d.array for d in drawn]))
    assert out.shape == expected.shape and out.dtype == np.float64
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-10, atol=1e-12)
    check_backward(fn, np_fn, drawn)


@st.composite
def batch_pair(draw: Any, backend: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two batch shapes that broadcast (up to 2 dims, 1 on cuda): the second drops leading dims and sets some to 1."""
    shape = tuple(draw(st.lists(st.integers(1, cap(backend)), max_size=1 if backend == "cuda" else 2)))
    other = tuple(1 if draw(st.booleans()) else s for s in shape[draw(st.integers(0, len(shape))) :])
    return (shape, other) if draw(st.booleans()) else (other, shape)


# --- matmul and the fixed-rank products ---

MATMUL_KINDS = ["1d@1d", "1d@2d", "2d@1d", "2d@2d", "1d@nd", "nd@1d", "nd@nd"]


def test_matmul_rules_match_numpy(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(MATMUL_KINDS))
        n, k, m = (data.draw(st.integers(0, cap(backend))) for _ in range(3))
        batch_a, batch_b = data.draw(batch_pair(backend)) if kind == "nd@nd" else ((), ())
        if kind == "1d@nd":
            batch_b = batch_b or (data.draw(st.integers(1, cap(backend))),)
        if kind == "nd@1d":
            batch_a = batch_a or (data.draw(st.integers(1, cap(backend))),)
        left, right = kind.split("@")
        shape_a = (k,) if left == "1d" else batch_a + (n, k)
        shape_b = (k,) if right == "1d" else batch_b + (k, m)
        a, b = data.draw(drawn_tensors(backend, shape_a)), data.draw(drawn_tensors(backend, shape_b))
        check_forward_and_backward(lambda x, y: x @ y, np.matmul, [a, b])

    run_property(backend, body)


FIXED_RANK: dict[str, tuple[Callable, Callable, Callable]] = {
    # name -> (minitensor fn, NumPy fn, shapes from sizes (b, n, k, m))
    "mm": (mt.mm, np.matmul, lambda b, n, k, m: [(n, k), (k, m)]),
    "bmm": (mt.bmm, np.matmul, lambda b, n, k, m: [(b, n, k), (b, k, m)]),
    "mv": (mt.mv, np.matmul, lambda b, n, k, m: [(n, k), (k,)]),
    "dot": (mt.dot, np.dot, lambda b, n, k, m: [(k,), (k,)]),
    "vdot": (mt.vdot, np.vdot, lambda b, n, k, m: [(k,), (k,)]),
    "outer": (mt.outer, np.outer, lambda b, n, k, m: [(n,), (m,)]),
}


@pytest.mark.parametrize("name", sorted(FIXED_RANK))
def test_fixed_rank_products(backend: str, name: str) -> None:
    fn, np_fn, shapes_of = FIXED_RANK[name]

    def body(data: st.DataObject) -> None:
        sizes = [data.draw(st.integers(0, cap(backend))) for _ in range(4)]
        drawn = [data.draw(drawn_tensors(backend, s)) for s in shapes_of(*sizes)]
        check_forward_and_backward(fn, np_fn, drawn)

    settings(max_examples=max(3, examples(backend) // 3))(given(st.data())(body))()


def test_tensor_methods_and_operators(backend: str) -> None:
    rng = np.random.default_rng(4)
    m_np, v_np, b_np = rng.normal(size=(2, 3)), rng.normal(size=3), rng.normal(size=(2, 3, 2))
    m, v, b = (mt.tensor(x, backend=backend) for x in (m_np, v_np, b_np))
    cases = [
        (m.matmul(m.T), m_np @ m_np.T),
        (m.mm(m.T), m_np @ m_np.T),
        (m.mv(v), m_np @ v_np),
        (v.dot(v), v_np @ v_np),
        (v.vdot(v), v_np @ v_np),
        (v.outer(v), np.outer(v_np, v_np)),
        (v.ger(v), np.outer(v_np, v_np)),
        (b.transpose(1, 2).bmm(b), b_np.transpose(0, 2, 1) @ b_np),
        (v_np @ m.T, v_np @ m_np.T),  # __rmatmul__ of a NumPy array
    ]
    for out, expected in cases:
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12)


MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3,)),
    ((2, 3), (3, 2)),
    ((3,), (2, 3, 2)),
    ((2, 2, 3), (3,)),
    ((2, 1, 2, 3), (2, 3, 1)),
    ((1, 3), (2, 3, 2)),
    ((2, 0), (0, 3)),
    ((0,), (0,)),
    ((0, 2), (2,)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_rules_match_torch(backend: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=s) for s in shapes]
    ours = [make_tensor(x, backend, "sliced") for x in arrays]
    theirs = [torch.tensor(x, requires_grad=True) for x in arrays]
    out, expected = ours[0] @ ours[1], torch.matmul(*theirs)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    weight = rng.normal(size=out.shape)
    (out * mt.tensor(weight, backend=backend)).sum().backward()
    (expected * torch.tensor(weight)).sum().backward()
    for t, x in zip(ours, theirs):
        np.testing.assert_allclose(t.grad.to_numpy(), x.grad.numpy(), rtol=1e-12, atol=1e-12)


# --- integer exactness and dtypes ---

INT_PRODUCTS: dict[str, tuple[Callable, Callable, list[tuple[int, ...]]]] = {
    "matmul": (lambda a, b: a @ b, torch.matmul, [(2, 2, 3), (3, 2)]),
    "matmul_1d": (lambda a, b: a @ b, torch.matmul, [(3,), (2, 3, 2)]),
    "mm": (mt.mm, torch.mm, [(2, 3), (3, 2)]),
    "bmm": (mt.bmm, torch.bmm, [(2, 2, 3), (2, 3, 2)]),
    "mv": (mt.mv, torch.mv, [(2, 3), (3,)]),
    "dot": (mt.dot, torch.dot, [(3,), (3,)]),
    "einsum": (lambda a, b: mt.einsum("bij,jk->bki", a, b), lambda a, b: torch.einsum("bij,jk->bki", a, b), [(2, 2, 3), (3, 2)]),
    "tensordot": (mt.tensordot, torch.tensordot, [(2, 3, 2), (3, 2, 2)]),
}


@pytest.mark.parametrize("name", sorted(INT_PRODUCTS))
def test_int64_products_are_exact(backend: str, name: str) -> None:
    """Products of about 2^60 (beyond float64's 53 bits) come out exact and int64, as in PyTorch."""
    fn, torch_fn, shapes = INT_PRODUCTS[name]
    rng = np.random.default_rng(6)
    arrays = [rng.integers(-(2**30), 2**30, size=s, dtype=np.int64) for s in shapes]
    arrays[0].flat[0] = 2**30 + 1  # (2^30 + 1) * odd is odd and above 2^53: float64 would round it
    arrays[1].flat[0] = 2**30 - 1
    out = fn(*[mt.tensor(x, backend=backend) for x in arrays])
    expected = torch_fn(*[torch.tensor(x) for x in arrays])
    assert out.dtype == mt.int64 and expected.dtype == torch.int64
    np.testing.assert_array_equal(out.to_numpy(), expected.numpy())


@pytest.mark.parametrize(
    "dtype_a, dtype_b, expected",
    [
        ("float32", "float32", "float32"),
        ("float32", "float64", "float64"),
        ("float64", "float32", "float64"),
        ("int64", "float32", "float32"),
        ("int32", "int32", "int32"),
        ("int32", "int64", "int64"),
    ],
)
def test_dtype_promotion(backend: str, dtype_a: str, dtype_b: str, expected: str) -> None:
    """PyTorch rejects mixed dtypes in matmul; minitensor promotes them as element-wise ops do."""
    rng = np.random.default_rng(7)
    a_np, b_np = rng.integers(-3, 4, size=(2, 3)), rng.integers(-3, 4, size=(3, 2))
    a, b = mt.tensor(a_np, dtype=dtype_a, backend=backend), mt.tensor(b_np, dtype=dtype_b, backend=backend)
    want = torch.matmul(torch.tensor(a_np, dtype=getattr(torch, expected)), torch.tensor(b_np, dtype=getattr(torch, expected)))
    for out in (a @ b, mt.einsum("ij,jk->ik", a, b), mt.tensordot(a, b, 1), a.mm(b), a[0].dot(b[:, 0])):
        assert out.dtype == np.dtype(expected)
    np.testing.assert_array_equal((a @ b).to_numpy(), want.numpy())
    if a.is_floating_point():
        a.requires_grad_(True)
        (a @ b).sum().backward()
        assert a.grad is not None and a.grad.dtype == a.dtype


def test_einsum_sum_of_int32_is_int64_like_torch(backend: str) -> None:
    x = mt.tensor([[1, 2], [3, 4]], dtype="int32", backend=backend)
    assert mt.einsum("ij->", x).dtype == mt.int64 and torch.einsum("ij->", torch.tensor(x.to_numpy())).dtype == torch.int64
    assert mt.einsum("ij,jk->ik", x, x).dtype == mt.int32


# --- einsum ---

# Equations NumPy evaluates too: forward and backward against np.einsum over drawn sizes and layouts.
EQUATIONS = [
    "ij,jk->ik",
    "bij,bjk->bik",
    "ij->ji",
    "ii->i",
    "ii",
    "i,i->",
    "i,j->ij",
    "ij->",
    "...ij,...jk->...ik",
    "bhqd,bhkd->bhqk",
    "ijk,ikl->ijl",
    "ij,jk",
    "ij,jk,kl->il",
    "...ii->...i",
    "iij->ji",
    "ij,ij->ij",
    "ij,kj->",
    "ij,jk->k",
    "ijk->kji",
    "ab,bc,cd,de",
    "bi,bj->bij",
    "ij,j->i",
    "i,i,i->i",
]
CUDA_EQUATIONS = ["ij,jk->ik", "ii->i", "...ij,...jk->...ik", "ij,jk,kl->il"]


def operand_shapes(equation: str, sizes: dict[str, int], ellipses: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The shape of each operand of ``equation``: ``sizes[letter]`` per letter, ``ellipses[i]`` for operand i's '...'."""
    shapes = []
    for i, spec in enumerate(equation.split("->")[0].split(",")):
        head, _, tail = spec.partition("...")
        shape = [sizes[c] for c in head] + (list(ellipses[i]) if "..." in spec else []) + [sizes[c] for c in tail]
        shapes.append(tuple(shape))
    return shapes


@pytest.mark.parametrize("backend, equation", [(b, e) for b in BACKENDS for e in (CUDA_EQUATIONS if b == "cuda" else EQUATIONS)], ids=str)
def test_einsum_matches_numpy(backend: str, equation: str) -> None:
    letters = sorted({c for c in equation if c.isalpha()})

    def body(data: st.DataObject) -> None:
        sizes = {c: data.draw(st.integers(1, cap(backend))) for c in letters}
        empty = data.draw(st.sampled_from([None] * 3 + letters))
        if empty is not None:
            sizes[empty] = 0
        ellipses = list(data.draw(batch_pair(backend))) + [()]
        drawn = [data.draw(drawn_tensors(backend, s)) for s in operand_shapes(equation, sizes, ellipses)]
        np_fn = lambda *xs: np.einsum(equation, *xs)  # noqa: E731
        check_forward_and_backward(lambda *ts: mt.einsum(equation, *ts), np_fn, drawn)

    settings(max_examples=max(3, examples(backend) // 2))(given(st.data())(body))()


# Equation -> operand shapes, compared with torch.einsum (float64) forward and backward.
TORCH_TABLE: dict[str, list[tuple[int, ...]]] = {
    "ij,jk->ik": [(2, 3), (3, 2)],
    "bij,bjk->bik": [(2, 2, 3), (2, 3, 2)],
    "ij->ji": [(2, 3)],
    "ii->i": [(3, 3)],
    "ii": [(3, 3)],
    "ii->": [(3, 3)],
    "i,i->": [(3,), (3,)],
    "i,j->ij": [(3,), (2,)],
    "ij->": [(2, 3)],
    "...ij,...jk->...ik": [(2, 1, 2, 3), (3, 3, 2)],
    "bhqd,bhkd->bhqk": [(1, 2, 3, 2), (1, 2, 2, 2)],
    "ijk,ikl->ijl": [(2, 2, 3), (2, 3, 2)],
    "ij,jk": [(2, 3), (3, 2)],
    "ba,ac": [(2, 3), (3, 2)],
    "ij,jk,kl->il": [(2, 3), (3, 2), (2, 3)],
    "...ij->ij": [(2, 2, 3)],
    "...ii->...i": [(2, 3, 3)],
    "ij,jk->ik (j broadcast)": [(2, 1), (3, 2)],
    "bij,jk->bik (b broadcast)": [(1, 2, 3), (3, 2)],
    "i j , j k -> i k": [(2, 3), (3, 2)],
    "Ab,bC->CA": [(2, 3), (3, 2)],
    "iij,jk->ik": [(2, 2, 3), (3, 2)],
    "ij,jk->ik (k = 0)": [(2, 0), (0, 3)],
    "ij,jk->ik (i = 0)": [(0, 3), (3, 2)],
    "i,->i": [(3,), ()],
}
CUDA_TABLE = ["ij,jk->ik", "ii->i", "...ij,...jk->...ik", "ij,jk,kl->il", "ij,jk->ik (j broadcast)", "bhqd,bhkd->bhqk"]


@pytest.mark.parametrize("backend, case", [(b, c) for b in BACKENDS for c in (CUDA_TABLE if b == "cuda" else TORCH_TABLE)], ids=str)
def test_einsum_matches_torch(backend: str, case: str) -> None:
    equation = case.split(" (")[0]
    rng = np.random.default_rng(8)
    arrays = [rng.normal(size=s) for s in TORCH_TABLE[case]]
    ours = [make_tensor(x, backend, layout, seed) for seed, (x, layout) in enumerate(zip(arrays, ["permuted", "sliced", "contiguous"]))]
    theirs = [torch.tensor(x, requires_grad=True) for x in arrays]
    out, expected = mt.einsum(equation, *ours), torch.einsum(equation, *theirs)
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.to_numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    weight = rng.normal(size=out.shape)
    (out * mt.tensor(weight, backend=backend)).sum().backward()
    (expected * torch.tensor(weight)).sum().backward()
    for t, x in zip(ours, theirs):
        np.testing.assert_allclose(t.grad.to_numpy(), x.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_einsum_call_forms(backend: str) -> None:
    """Operands one by one, as one list, or in PyTorch's sublist form give the same result."""
    rng = np.random.default_rng(9)
    a_np, b_np = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    a, b = mt.tensor(a_np, backend=backend), mt.tensor(b_np, backend=backend)
    expected = a_np @ b_np
    for out in (
        mt.einsum("ij,jk->ik", a, b),
        mt.einsum("ij,jk->ik", [a, b]),
        mt.einsum("ij,jk", (a, b)),
        mt.einsum(a, [0, 1], b, [1, 2], [0, 2]),
    ):
        np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(mt.einsum(a, [Ellipsis, 1], [1]).to_numpy(), a_np.sum(0), rtol=1e-12)


def test_einsum_diagonal_is_a_view(backend: str) -> None:
    x = mt.tensor(np.arange(9.0).reshape(3, 3), backend=backend, requires_grad=True)
    d = mt.einsum("ii->i", x)
    assert d._data.storage is x._data.storage and d.strides == (4,)
    np.testing.assert_array_equal(d.to_numpy(), [0.0, 4.0, 8.0])
    (d * mt.tensor([1.0, 2.0, 3.0], backend=backend)).sum().backward()
    np.testing.assert_array_equal(x.grad.to_numpy(), np.diag([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    "equation, shapes, matmuls",
    [
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 3)], 1),
        ("bhqd,bhkd->bhqk", [(2, 2, 3, 3), (2, 2, 3, 3)], 1),
        ("ij,jk,kl->il", [(3, 4), (4, 3), (3, 4)], 2),
        ("ijk,ikl->ijl", [(2, 3, 4), (2, 4, 3)], 1),
        ("ab,bc->", [(3, 4), (4, 3)], 1),
    ],
)
def test_einsum_contracts_on_the_matmul_kernel(
    backend: str, monkeypatch: pytest.MonkeyPatch, equation: str, shapes: list[tuple[int, ...]], matmuls: int
) -> None:
    """Each contraction is one backend.matmul call; no kernel writes anything as large as the broadcast product."""
    be = mt.get_backend(backend)
    calls: dict[str, list[int]] = {"matmul": [], "map": [], "zip": [], "reduce": []}
    for name, sizes in calls.items():
        original = getattr(be, name)

        def wrapped(*args: Any, _original: Any = original, _sizes: list[int] = sizes) -> Any:
            _sizes.append(args[-1].size)
            return _original(*args)

        monkeypatch.setattr(be, name, wrapped)
    operands = [mt.tensor(np.ones(s), backend=backend) for s in shapes]
    out = mt.einsum(equation, *operands)
    labels = {c: n for spec, s in zip(equation.split("->")[0].split(","), shapes) for c, n in zip(spec, s)}
    full = int(np.prod(list(labels.values())))
    assert len(calls["matmul"]) == matmuls
    assert max(calls["map"] + calls["zip"] + calls["reduce"] + [0]) < full
    np.testing.assert_allclose(out.to_numpy(), np.einsum(equation, *[np.ones(s) for s in shapes]))


# --- tensordot ---


def test_tensordot_matches_numpy(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        size = st.integers(0, cap(backend))
        free_a = tuple(data.draw(st.lists(size, max_size=2)))
        shared = tuple(data.draw(st.lists(size, max_size=3 - len(free_a) if backend == "cuda" else 2)))
        free_b = tuple(data.draw(st.lists(size, max_size=1)))
        if data.draw(st.booleans()):
            a = data.draw(drawn_tensors(backend, free_a + shared))
            b = data.draw(drawn_tensors(backend, shared + free_b))
            dims: Any = len(shared)
            np_dims: Any = len(shared)
        else:  # dim lists, in a shuffled order
            order = data.draw(st.permutations(range(len(shared))))
            a = data.draw(drawn_tensors(backend, shared + free_a))
            b = data.draw(drawn_tensors(backend, free_b + tuple(shared[o] for o in order)))
            dims_a = list(range(len(shared)))
            dims_b = [len(free_b) + order.index(d) for d in dims_a]
            dims = (dims_a, [d - b.array.ndim for d in dims_b])  # negative dims too
            np_dims = (dims_a, dims_b)
        check_forward_and_backward(lambda x, y: mt.tensordot(x, y, dims), lambda x, y: np.tensordot(x, y, np_dims), [a, b])

    run_property(backend, body)


def test_tensordot_matches_torch(backend: str) -> None:
    rng = np.random.default_rng(10)
    a_np, b_np = rng.normal(size=(3, 2, 2)), rng.normal(size=(2, 2, 3))
    a, b = mt.tensor(a_np, backend=backend), mt.tensor(b_np, backend=backend)
    ta, tb = torch.tensor(a_np), torch.tensor(b_np)
    for dims in (0, 1, 2, ([1, 2], [0, 1]), ([0], [2]), ([-1, 1], [1, 0])):
        np.testing.assert_allclose(mt.tensordot(a, b, dims).to_numpy(), torch.tensordot(ta, tb, dims).numpy(), rtol=1e-12)


# --- errors ---


def t(*shape: int) -> mt.Tensor:
    return mt.zeros(*shape, backend="simple")


ERRORS: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("matmul 0-d", lambda: t() @ t(2, 2), ShapeError, "at least 1D, but they are 0D and 2D"),
    ("matmul 2-d", lambda: t(2, 3) @ t(4, 5), ShapeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    ("matmul 1-d", lambda: t(3) @ t(4), ShapeError, "expected tensor [3] and src [4]"),
    ("matmul vec@mat", lambda: t(3) @ t(4, 5), ShapeError, "cannot be multiplied (1x3 and 4x5)"),
    ("matmul mat@vec", lambda: t(2, 3) @ t(4), ShapeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    ("matmul batch", lambda: t(2, 2, 3) @ t(3, 3, 5), ShapeError, "(2, 2, 3) and (3, 3, 5)"),
    ("mm 1-d", lambda: mt.mm(t(3), t(3, 4)), ShapeError, "self must be a matrix"),
    ("mm 3-d", lambda: t(2, 3).mm(t(2, 3, 4)), ShapeError, "mat2 must be a matrix"),
    ("mm inner", lambda: mt.mm(t(2, 3), t(4, 4)), ShapeError, "(2x3 and 4x4)"),
    ("bmm 2-d", lambda: mt.bmm(t(2, 3), t(3, 4)), ShapeError, "batch1 must be a 3D tensor"),
    ("bmm batch", lambda: mt.bmm(t(2, 2, 3), t(3, 3, 4)), ShapeError, "to be: [2, 3] but got: [3, 3]"),
    ("bmm inner", lambda: mt.bmm(t(2, 2, 3), t(2, 4, 4)), ShapeError, "to be: [2, 3] but got: [2, 4]"),
    ("mv", lambda: mt.mv(t(2, 3), t(4)), ShapeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    ("mv 2-d vec", lambda: mt.mv(t(2, 3), t(3, 1)), ShapeError, "vector + matrix @ vector expected, got 1, 2, 2"),
    ("dot 2-d", lambda: mt.dot(t(2, 3), t(3)), ShapeError, "1D tensors expected, but got 2D and 1D tensors"),
    ("dot length", lambda: t(3).dot(t(4)), ShapeError, "but got 3 and 4 elements respectively"),
    ("outer 2-d", lambda: mt.outer(t(3), t(3, 1)), ShapeError, "outer: Expected 1-D argument vec2, but got 2-D"),
    ("einsum fewer", lambda: mt.einsum("ij,jk", t(2, 3)), ShapeError, "fewer operands were provided"),
    ("einsum more", lambda: mt.einsum("ij", t(2, 3), t(3)), ShapeError, "more operands were provided"),
    ("einsum none", lambda: mt.einsum("ij"), ShapeError, "at least one operand"),
    ("einsum size", lambda: mt.einsum("ij,jk->ik", t(2, 3), t(4, 5)), ShapeError, "subscript j has size 4 for operand 1"),
    ("einsum count", lambda: mt.einsum("ij,jk->ik", t(2, 3, 4), t(3, 5)), ShapeError, "subscripts in the equation (2) does not match"),
    ("einsum count ...", lambda: mt.einsum("...ijk", t(2, 3)), ShapeError, "(3) is more than the number of dimensions (2)"),
    ("einsum diagonal", lambda: mt.einsum("ii->i", t(2, 3)), ShapeError, "subscript i is repeated for operand 0"),
    ("einsum output twice", lambda: mt.einsum("ij->ii", t(2, 3)), ShapeError, "output subscript i appears more than once"),
    ("einsum output unknown", lambda: mt.einsum("ij->k", t(2, 3)), ShapeError, "output subscript k does not appear"),
    ("einsum bad char", lambda: mt.einsum("i1->i", t(2, 3)), ShapeError, "invalid subscript given at index 1"),
    ("einsum bad dots", lambda: mt.einsum("i..j->ij", t(2, 3)), ShapeError, "not part of any ellipsis"),
    ("einsum two ellipses", lambda: mt.einsum("i...j...->ij", t(2, 3)), ShapeError, "an ellipsis was already found"),
    ("einsum ellipsis", lambda: mt.einsum("...i,...i", t(2, 3), t(3, 3)), ShapeError, "'...' dim 0 has size 3 for operand 1"),
    ("tensordot size", lambda: mt.tensordot(t(2, 3, 4), t(4, 4, 5)), ShapeError, "first has size 3 in dim 1 and second has size 4"),
    ("tensordot lists", lambda: mt.tensordot(t(2, 3), t(3, 4), ([1, 0], [0])), ShapeError, "same length"),
    ("tensordot negative", lambda: mt.tensordot(t(2, 3), t(3, 4), -1), ShapeError, "dims >= 0"),
    ("tensordot too many", lambda: mt.tensordot(t(2, 3), t(3, 4), 3), ShapeError, "dims=3"),
    ("tensordot repeated", lambda: mt.tensordot(t(3, 3), t(3, 3), ([1, 1], [0, 1])), ShapeError, "appears multiple times"),
    ("matmul bool", lambda: t(2, 2).bool() @ t(2, 2).bool(), DTypeError, "\"matmul\" not implemented for 'Bool'"),
    ("einsum bool", lambda: mt.einsum("ij->", t(2, 2).bool()), DTypeError, "not implemented for 'Bool'"),
    ("tensordot dim range", lambda: mt.tensordot(t(3, 3), t(3, 3), ([2], [0])), IndexOutOfRangeError, "dim 2 is out of range"),
]


@pytest.mark.parametrize("name, fn, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_typed_and_name_the_shapes(name: str, fn: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        fn()
    assert message in str(info.value)
    assert isinstance(info.value, ValueError | IndexError | TypeError)

"""Module/Parameter tree behaviour, compared with torch.nn.Module on the same tree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import minitensor as mt
from minitensor import Module, Parameter, Scalar, nn


def _tree(lib: Any) -> Any:
    """The same module tree in minitensor (``lib=mt``) or torch: own params, children, buffers, a shared child."""

    class Inner(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.p1 = lib.nn.Parameter(lib.ones(2))
            self.register_buffer("count", lib.zeros(1))
            self.register_buffer("scratch", lib.zeros(3), persistent=False)

    class Outer(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.top = lib.nn.Parameter(lib.zeros(3))
            self.m1 = Inner()
            self.seq = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), Inner())
            self.shared = self.m1
            self.blocks = lib.nn.ModuleList([Inner(), Inner()])
            self.heads = lib.nn.ModuleDict({"a": lib.nn.Linear(3, 1), "b": Inner()})
            self.not_a_param = 5

    return Outer()


def test_names_and_traversal_match_torch() -> None:
    mine, theirs = _tree(mt), _tree(torch)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in mine.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in mine.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(mine.state_dict()) == list(theirs.state_dict())  # non-persistent buffers left out
    assert [n for n, _ in mine.named_parameters(recurse=False)] == ["top"]
    assert len(list(mine.parameters())) == len(list(theirs.parameters()))
    assert [n for n, _ in mine.seq[1:].named_modules()] == [n for n, _ in theirs.seq[1:].named_modules()]
    visited: list[str] = []
    mine.apply(lambda m: visited.append(type(m).__name__))
    theirs_visited: list[str] = []
    theirs.apply(lambda m: theirs_visited.append(type(m).__name__))
    assert visited == theirs_visited


def test_parameter_is_a_tensor_leaf() -> None:
    p = Parameter(mt.tensor([1.0, 2.0], backend="simple"))
    assert isinstance(p, mt.Tensor) and p.requires_grad and p.is_leaf
    assert p.shape == (2,) and p.numel() == 2
    y = p @ mt.tensor([3.0, 4.0], backend="simple")
    assert type(y) is mt.Tensor
    y.backward()
    assert p.grad.tolist() == [3.0, 4.0]
    assert not Parameter(mt.ones(1), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:")
    with pytest.raises(TypeError, match="Parameter takes a Tensor"):
        Parameter([1.0])  # type: ignore[arg-type]


def test_modes_zero_grad_and_requires_grad() -> None:
    m = _tree(mt)
    assert m.training
    m.eval()
    assert not any(c.training for c in m.modules())
    m.train()
    assert all(c.training for c in m.modules())
    lin = m.seq[0]
    lin(mt.ones(4, 2)).sum().backward()
    assert lin.weight.grad is not None
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(lin.weight.grad.numpy(), 0.0)
    m.zero_grad()
    assert lin.weight.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_assignment_rules_match_torch() -> None:
    m = _tree(mt)
    with pytest.raises(TypeError, match="parameter 'top'"):
        m.top = mt.zeros(3)  # a plain tensor cannot replace a parameter (torch raises TypeError too)
    m.top = None
    assert "top" not in dict(m.named_parameters())
    with pytest.raises(TypeError, match="buffer 'count'"):
        m.m1.count = 3
    m.m1.count = mt.ones(1)
    assert m.state_dict()["m1.count"].tolist() == [1.0]
    with pytest.raises(AttributeError, match="nope"):
        _ = m.nope
    del m.heads
    assert "heads" not in dict(m.named_children())
    with pytest.raises(AttributeError, match="super\\(\\).__init__"):

        class Broken(Module):
            def __init__(self) -> None:
                self.x = Parameter(mt.ones(1))

        Broken()


def test_replacing_a_child_parameter_or_buffer_keeps_its_place() -> None:
    """Assigning an existing child, parameter or buffer anew (``seq[i] = m``, ``m.top = Parameter(...)``,
    ``register_buffer``/``add_module`` again) replaces it where it was, as in torch: the same name order."""
    names = []
    for lib in (mt, torch):
        m = _tree(lib)
        m.seq[0] = lib.nn.Linear(2, 3)
        m.m1 = lib.nn.Linear(1, 1)
        m.top = lib.nn.Parameter(lib.ones(3))
        m.seq[2].register_buffer("count", lib.ones(1))
        m.add_module("seq", m.seq)
        m.seq[2].p1 = lib.nn.Parameter(lib.zeros(2))
        names.append(([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
                      [n for n, _ in m.named_modules()], list(m.state_dict())))
    assert names[0] == names[1]
    assert names[0][0][0] == "top"


def test_containers_index_like_torch() -> None:
    mine = nn.ModuleList([nn.Linear(1, 1) for _ in range(4)])
    theirs = torch.nn.ModuleList([torch.nn.Linear(1, 1) for _ in range(4)])
    for ml in (mine, theirs):
        ml.append(type(ml[0])(2, 2))
        ml.insert(1, type(ml[0])(3, 3))
        del ml[0]
        ml[-1] = type(ml[0])(5, 5)
    assert [m.in_features for m in mine] == [m.in_features for m in theirs]
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert len(mine[1:3]) == 2 and isinstance(mine[1:3], nn.ModuleList)
    with pytest.raises(IndexError):
        mine[10]
    d = nn.ModuleDict({"x": nn.ReLU()})
    d["y"] = nn.Tanh()
    assert list(d) == ["x", "y"] and "y" in d and len(d) == 2
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    seq.append(nn.Linear(3, 1))
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_state_dict_round_trip_from_torch_and_in_place_load() -> None:
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    mine = nn.Sequential(nn.Linear(3, 4, dtype=mt.float64), nn.Tanh(), nn.Linear(4, 2, dtype=mt.float64))
    weight = mine[0].weight
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert mine[0].weight is weight  # loaded in place
    x = np.random.default_rng(0).standard_normal((5, 3))
    want = theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy()
    np.testing.assert_allclose(mine(mt.tensor(x)).numpy(), want, rtol=1e-5, atol=1e-6)


def test_to_and_float_double_keep_parameter_identity(backend: str) -> None:
    m = nn.Linear(2, 3)
    params = list(m.parameters())
    m.to(backend).double()
    assert list(m.parameters()) == params
    assert all(p.device == backend and p.dtype == mt.float64 for p in params)
    m.float()
    assert all(p.dtype == mt.float32 and p.is_leaf and p.requires_grad for p in params)


def test_scalar_parameters_register() -> None:
    class ScalarModel(Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_parameter("w", Scalar(2.0))

    m = ScalarModel()
    assert [n for n, _ in m.named_parameters()] == ["w"] and m.w.requires_grad
    with pytest.raises(TypeError, match="cannot register float"):
        m.register_parameter("v", 1.0)  # type: ignore[arg-type]


def test_deepcopy_gives_independent_parameters() -> None:
    import copy

    m = nn.Linear(2, 2)
    m.weight.grad = mt.ones(2, 2)
    twin = copy.deepcopy(m)
    assert type(twin.weight) is Parameter and twin.weight.requires_grad and twin.weight.is_leaf
    assert twin.weight.unique_id != m.weight.unique_id and twin.weight.backend is m.weight.backend
    np.testing.assert_array_equal(twin.weight.numpy(), m.weight.numpy())
    np.testing.assert_array_equal(twin.weight.grad.numpy(), 1.0)
    with mt.no_grad():
        twin.weight.add_(1.0)
    assert not np.allclose(twin.weight.numpy(), m.weight.numpy())  # own storage
    with pytest.raises(mt.GradientError, match="leaf"):
        copy.deepcopy(m.weight * 2)

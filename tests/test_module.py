"""Module/Parameter tree behaviour."""

from __future__ import annotations

import pytest

import minitensor as mt
from minitensor import Module, Parameter, Scalar


class Inner(Module):
    def __init__(self) -> None:
        super().__init__()
        self.p1 = Parameter(Scalar(1.0))
        self.p2 = Parameter(Scalar(2.0))


class Outer(Module):
    def __init__(self) -> None:
        super().__init__()
        self.m1 = Inner()
        self.p3 = Parameter(Scalar(3.0))
        self.m2 = Inner()
        self.not_a_param = 5


def test_named_parameters_are_dotted_in_definition_order() -> None:
    names = [n for n, _ in Outer().named_parameters()]
    assert names == ["m1.p1", "m1.p2", "m2.p1", "m2.p2", "p3"]
    assert len(Outer().parameters()) == 5


def test_modules_and_modes() -> None:
    m = Outer()
    assert len(m.modules()) == 2 and m.training
    m.eval()
    assert not m.training and all(not c.training for c in m.modules())
    m.train()
    assert all(c.training for c in m.modules())


def test_unknown_attribute_raises() -> None:
    with pytest.raises(AttributeError, match="nope"):
        _ = Outer().nope


def test_zero_grad_clears_tensor_grads() -> None:
    class Lin(Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = Parameter(mt.tensor([1.0, 2.0], backend="simple"))

    m = Lin()
    assert m.w.value.requires_grad
    (m.w.value * 3.0).sum().backward()
    assert m.w.value.grad.to_numpy().tolist() == [3.0, 3.0]
    m.zero_grad()
    assert m.w.value.grad is None


def test_repr_shows_the_tree() -> None:
    text = repr(Outer())
    assert text.splitlines()[0] == "Outer("
    assert "(m1): Inner()" in text and "(m2): Inner()" in text


def test_reassigning_replaces_registration() -> None:
    m = Outer()
    m.p3 = 7
    assert [n for n, _ in m.named_parameters()] == ["m1.p1", "m1.p2", "m2.p1", "m2.p2"]
    assert m.p3 == 7

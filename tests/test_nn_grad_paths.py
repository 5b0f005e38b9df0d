"""nn.grad against torch.nn.grad (values, and gradients through them), and PyTorch's module paths: nn.parameter,
nn.modules and its submodules with their private base classes."""

from __future__ import annotations

import importlib
import inspect
import math
from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError

torch = pytest.importorskip("torch")
tgrad = importlib.import_module("torch.nn.grad")

CUDA = [pytest.param("cuda", marks=pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend"))]
RNG = np.random.default_rng(72)

CASES = [  # (nd, input shape, weight shape, keywords)
    (1, (2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}),
    (1, (1, 3, 8), (2, 3, 1), {}),
    (2, (2, 3, 7, 8), (4, 3, 3, 2), {"stride": (2, 3), "padding": (1, 0)}),  # rows the last window never reaches
    (2, (1, 4, 5, 5), (4, 1, 3, 3), {"padding": 2, "dilation": (1, 2), "groups": 4}),
    (3, (1, 2, 5, 6, 4), (2, 1, 2, 3, 2), {"groups": 2, "dilation": (1, 2, 1), "stride": 2, "padding": (0, 1, 1)}),
]


def _run(lib: Any, nd: int, x: Any, w: Any, g: Any, kw: dict[str, Any]) -> tuple[Any, Any]:
    grad = tgrad if lib is torch else nn.grad
    return (getattr(grad, f"conv{nd}d_input")(tuple(x.shape), w, g, **kw),
            getattr(grad, f"conv{nd}d_weight")(x, tuple(w.shape), g, **kw))


def _check(backend: str, nd: int, shape: tuple[int, ...], wshape: tuple[int, ...], kw: dict[str, Any]) -> None:
    """Both gradients equal torch's, and so do the gradients of a weighted sum of them to weight, input and
    grad_output (they are differentiable, as torch's)."""
    x, w = RNG.standard_normal(shape), RNG.standard_normal(wshape)
    out = getattr(torch.nn.functional, f"conv{nd}d")(torch.tensor(x), torch.tensor(w), **kw)
    g = RNG.standard_normal(tuple(out.shape))
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, g)]
    ours = [mt.tensor(a, backend=backend, requires_grad=True) for a in (x, w, g)]
    got, want = _run(mt, nd, *ours, kw), _run(torch, nd, *theirs, kw)
    for a, b in zip(got, want):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.to_numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    weights = [RNG.standard_normal(tuple(b.shape)) for b in want]
    ((got[0] * mt.tensor(weights[0], backend=backend)).sum() + (got[1] * mt.tensor(weights[1], backend=backend)).sum()).backward()
    ((want[0] * torch.tensor(weights[0])).sum() + (want[1] * torch.tensor(weights[1])).sum()).backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.to_numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv_grads_match_torch(backend: str, case: int) -> None:
    _check(backend, *CASES[case])


@pytest.mark.parametrize("backend", CUDA)
def test_conv_grads_on_cuda(backend: str) -> None:
    _check(backend, 1, (1, 2, 5), (2, 1, 2), {"stride": 2, "groups": 2})


def test_conv_grads_are_convs_backward() -> None:
    """conv2d_input/conv2d_weight are what autograd of conv2d gives its input and weight."""
    x = mt.tensor(RNG.standard_normal((2, 3, 6, 7)), requires_grad=True)
    w = mt.tensor(RNG.standard_normal((4, 3, 2, 3)), requires_grad=True)
    y = nn.functional.conv2d(x, w, stride=(2, 1), padding=1, dilation=(1, 2))
    g = mt.tensor(RNG.standard_normal(y.shape))
    gx, gw = mt.autograd.grad(y, (x, w), g)
    kw: dict[str, Any] = {"stride": (2, 1), "padding": 1, "dilation": (1, 2)}
    np.testing.assert_allclose(nn.grad.conv2d_input(x.shape, w, g, **kw).to_numpy(), gx.to_numpy(), atol=1e-12)
    np.testing.assert_allclose(nn.grad.conv2d_weight(x, w.shape, g, **kw).to_numpy(), gw.to_numpy(), atol=1e-12)


def test_conv_grad_errors() -> None:
    w, g = mt.randn(4, 3, 3), mt.randn(2, 4, 5)
    with pytest.raises(ShapeError, match="gives an output of shape"):
        nn.grad.conv1d_input((2, 3, 9), w, g)  # torch returns an undocumented result for inconsistent shapes
    with pytest.raises(ShapeError, match="3-D"):
        nn.grad.conv1d_weight(mt.randn(3, 7), (4, 3, 3), mt.randn(4, 5))  # torch: RuntimeError for unbatched
    with pytest.raises(TypeError, match="padding"):
        nn.grad.conv1d_input((2, 3, 7), w, g, padding="same")  # torch: RuntimeError (no schema match)
    with pytest.raises(ValueError, match="groups"):
        nn.grad.conv1d_input((2, 3, 7), w, g, groups=0)
    with pytest.raises(ShapeError, match="input channels"):
        nn.grad.conv1d_weight(mt.randn(2, 2, 7), (4, 3, 3), g)
    assert isinstance(nn.grad.conv1d_input((2, 3, 7), w, g), mt.Tensor)


def test_nn_grad_names_and_signatures_match_torch() -> None:
    names = [n for n in dir(tgrad) if n.startswith("conv")]
    assert sorted(nn.grad.__all__) == sorted(names)
    for name in names:
        assert inspect.signature(getattr(nn.grad, name)).parameters.keys() == inspect.signature(getattr(tgrad, name)).parameters.keys()
        defaults = [p.default for p in inspect.signature(getattr(tgrad, name)).parameters.values()]
        assert [p.default for p in inspect.signature(getattr(nn.grad, name)).parameters.values()] == defaults


# --- module paths ---


def test_nn_parameter_path() -> None:
    from minitensor.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

    assert (Parameter, Buffer, UninitializedParameter) == (nn.Parameter, nn.Buffer, nn.UninitializedParameter)
    assert issubclass(UninitializedBuffer, mt.Tensor)
    tparam = importlib.import_module("torch.nn.parameter")
    assert set(nn.parameter.__all__) == {n for n in tparam.__all__ if n != "is_lazy"}


SUBMODULES = ["activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv", "distance", "dropout", "flatten",
              "fold", "instancenorm", "lazy", "linear", "linear_cross_entropy_options", "loss", "module", "normalization",
              "padding", "pixelshuffle", "pooling", "rnn", "sparse", "transformer", "upsampling"]
MISSING = {"Container"}  # deprecated in torch; minitensor has no such class
MISSING_MODULE_FUNCTIONS = {n for n in importlib.import_module("torch.nn.modules.module").__all__ if n.startswith("register_")}


@pytest.mark.parametrize("name", SUBMODULES)
def test_nn_modules_submodule_reexports_torchs_names(name: str) -> None:
    """Each submodule's __all__ is torch's (less what minitensor lacks), and each name is minitensor's class."""
    ours, theirs = importlib.import_module(f"minitensor.nn.modules.{name}"), importlib.import_module(f"torch.nn.modules.{name}")
    assert ours.__all__ == [n for n in theirs.__all__ if n not in MISSING | MISSING_MODULE_FUNCTIONS]
    lazy = importlib.import_module("minitensor.nn.lazy")
    for n in ours.__all__:
        assert getattr(ours, n) is (getattr(nn, n, None) or getattr(lazy, n)), n
        assert getattr(nn.modules, n) is getattr(ours, n)


PRIVATE_BASES = [  # (torch path, name, public nn classes that derive from it in torch but not here)
    ("batchnorm", "_BatchNorm", set()), ("batchnorm", "_NormBase", set()), ("batchnorm", "_LazyNormBase", set()),
    ("instancenorm", "_InstanceNorm", set()), ("instancenorm", "_NormBase", set()), ("loss", "_Loss", set()),
    ("loss", "_WeightedLoss", set()), ("conv", "_ConvNd", {f"{lazy}ConvTranspose{d}d" for lazy in ("", "Lazy") for d in (1, 2, 3)}),
    ("conv", "_ConvTransposeNd", set()), ("conv", "_LazyConvXdMixin", set()), ("dropout", "_DropoutNd", set()),
    ("padding", "_CircularPadNd", set()),
]


@pytest.mark.parametrize(("path", "base", "differences"), PRIVATE_BASES)
def test_private_bases_cover_the_classes_torchs_do(path: str, base: str, differences: set[str]) -> None:
    ours = getattr(importlib.import_module(f"minitensor.nn.modules.{path}"), base)
    theirs = getattr(importlib.import_module(f"torch.nn.modules.{path}"), base)

    def derived(lib: Any, cls: type) -> set[str]:
        return {n for n in dir(lib) if isinstance(getattr(lib, n), type) and issubclass(getattr(lib, n), cls)}

    want = derived(torch.nn, theirs) & set(dir(nn))
    assert derived(nn, ours) == want - differences
    assert want, base


def test_code_written_against_torch_paths_runs() -> None:
    from minitensor.nn.modules.batchnorm import _BatchNorm
    from minitensor.nn.modules.loss import _Loss
    from minitensor.nn.modules.module import Module, _IncompatibleKeys

    class Twice(_Loss):
        def forward(self, a: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
            d = 2 * (a - b)
            return d.sum() if self.reduction == "sum" else d.mean()

    assert Twice(reduction="sum")(mt.ones(3), mt.zeros(3)).item() == 6.0
    model = nn.modules.Sequential(nn.modules.conv.Conv2d(1, 2, 3), nn.modules.batchnorm.BatchNorm2d(2))
    assert [type(m).__name__ for m in model.modules() if isinstance(m, _BatchNorm)] == ["BatchNorm2d"]
    assert isinstance(model, Module)
    result = model.load_state_dict(model.state_dict())
    assert isinstance(result, _IncompatibleKeys) and result.missing_keys == [] and result.unexpected_keys == []
    assert math.isclose(nn.modules.activation.ReLU()(mt.tensor(-1.0)).item(), 0.0)

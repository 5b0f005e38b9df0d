"""minitensor.amp's autocast against torch.amp: the switches and their nesting (context manager, decorator, threads),
torch's argument errors, ops inside a region (the deliberate difference: they run in their inputs' dtypes, so results
equal the same code without autocast), custom_fwd/custom_bwd against torch's on the same custom Function, and the
deprecated torch.cuda.amp / torch.cpu.amp forms.

torch's CPU autocast computes in bfloat16, so values are compared against torch *without* autocast; its switches
(enabled flags, nesting, errors) are compared with autocast on.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS

import minitensor as mt
from minitensor import amp, nn
from minitensor.amp import autocast_mode


def _flags_through_nesting(lib: Any) -> list[bool]:
    """is_autocast_enabled("cpu") before, inside, in a disabled sub-region, back inside, and after."""
    seen = [lib.is_autocast_enabled("cpu")]
    with lib.autocast("cpu"):
        seen.append(lib.is_autocast_enabled("cpu"))
        with lib.autocast("cpu", enabled=False):
            seen.append(lib.is_autocast_enabled("cpu"))
        seen.append(lib.is_autocast_enabled("cpu"))
    seen.append(lib.is_autocast_enabled("cpu"))
    return seen


def test_switches_nest_as_torch() -> None:
    assert _flags_through_nesting(mt) == _flags_through_nesting(torch) == [False, True, False, True, False]
    with mt.autocast("cpu"):
        assert mt.get_autocast_dtype("cpu") == mt.float32  # torch: bfloat16, which minitensor lacks
        assert not mt.is_autocast_enabled("cuda") and not mt.is_autocast_enabled()
        assert mt.autocast is amp.autocast
    mt.set_autocast_dtype("cpu", mt.float64)
    with mt.autocast("fast", dtype=mt.float32):  # a backend name is its device type
        assert mt.get_autocast_dtype("cpu") == mt.float32 and mt.is_autocast_enabled("cpu")
    assert mt.get_autocast_dtype("cpu") == mt.float64  # restored on exit
    mt.set_autocast_dtype("cpu", mt.float32)


def test_decorator_and_recursion() -> None:
    @mt.autocast("cpu")
    def depth(n: int) -> list[bool]:
        inner = depth(n - 1) if n else []
        return [mt.is_autocast_enabled("cpu"), *inner]

    assert depth(3) == [True] * 4
    assert not mt.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match="requires a callable"):
        mt.autocast("cpu")(3)
    with pytest.raises(TypeError, match="requires a callable"):
        torch.autocast("cpu")(3)


def test_state_is_per_thread() -> None:
    seen: list[bool] = []
    with mt.autocast("cpu"):
        thread = threading.Thread(target=lambda: seen.append(mt.is_autocast_enabled("cpu")))
        thread.start()
        thread.join()
        assert mt.is_autocast_enabled("cpu")
    assert seen == [False]


@pytest.mark.parametrize("call, error", [
    (lambda lib: lib.autocast(1), ValueError),
    (lambda lib: lib.autocast("foo"), RuntimeError),
    (lambda lib: lib.autocast(), TypeError),
    (lambda lib: lib.is_autocast_enabled(1), TypeError),
    (lambda lib: lib.is_autocast_enabled("foo"), RuntimeError),
    (lambda lib: lib.get_autocast_dtype(), TypeError),
    (lambda lib: lib.set_autocast_enabled("cpu", 1), TypeError),
    (lambda lib: lib.set_autocast_enabled("foo", True), RuntimeError),
    (lambda lib: lib.set_autocast_dtype("cpu", "x"), TypeError),
    (lambda lib: lib.amp.is_autocast_available(1), TypeError),
    (lambda lib: lib.amp.is_autocast_available("foo"), RuntimeError),
    (lambda lib: lib.amp.custom_fwd(device_type=1), ValueError),
    (lambda lib: lib.amp.custom_fwd(lambda x: x), TypeError),
    (lambda lib: lib.amp.custom_bwd(device_type=None), ValueError),
])
def test_argument_errors_as_torch(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error):
        call(mt)


def test_available_device_types() -> None:
    for name in ("cpu", "cuda", "cuda:0", "fast", "simple"):
        assert amp.is_autocast_available(name)
    assert not amp.is_autocast_available("mps")  # a torch device type minitensor does not have
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'mps'"):
        mt.autocast("mps")


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_unsupported_dtype_warns_and_disables(dtype: str) -> None:
    with pytest.warns(UserWarning, match="target dtype is not supported. Disabling autocast"):
        region = mt.autocast("cpu", dtype=np.dtype(dtype))
    with region:
        assert not mt.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="target dtype is not supported. Disabling autocast"):
        torch.autocast("cpu", dtype=torch.float64)


def test_cuda_without_backend_warns_and_disables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(autocast_mode, "cuda_available", lambda: False)
    with pytest.warns(UserWarning, match="CUDA is not available"):
        region = mt.autocast("cuda")
    with region:
        assert not mt.is_autocast_enabled("cuda")
    with mt.autocast("cuda", enabled=False):  # no check when disabled
        pass


def test_cuda_region_when_the_backend_runs() -> None:
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with mt.autocast("cuda"):
            assert mt.is_autocast_enabled() and mt.is_autocast_enabled("cuda:0")
            assert not mt.is_autocast_enabled("cpu")


def test_state_functions() -> None:
    mt.set_autocast_enabled(True)  # the legacy one-argument form: cuda
    assert mt.is_autocast_enabled("cuda")
    mt.set_autocast_enabled("cuda", False)
    assert not mt.is_autocast_enabled()
    for old, args in [("is_autocast_cpu_enabled", ()), ("get_autocast_cpu_dtype", ()), ("get_autocast_gpu_dtype", ()),
                      ("set_autocast_cpu_enabled", (False,)), ("set_autocast_cpu_dtype", (mt.float32,)),
                      ("set_autocast_gpu_dtype", (mt.float32,))]:
        with pytest.warns(DeprecationWarning, match=f"{old}.*deprecated"):
            getattr(mt, old)(*args)
    assert mt.is_autocast_cache_enabled()
    with mt.autocast("cpu", cache_enabled=False):
        assert not mt.is_autocast_cache_enabled()
        assert mt.autocast_increment_nesting() == 2 and mt.autocast_decrement_nesting() == 1
    assert mt.is_autocast_cache_enabled()
    mt.clear_autocast_cache()


def _mlp(lib: Any, dtype: str, backend: str) -> Any:
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(dtype) for s in [(5, 3), (5,), (2, 5), (2,)]]
    if lib is torch:
        model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).to(getattr(torch, dtype))
        params = [model[0].weight, model[0].bias, model[2].weight, model[2].bias]
        with torch.no_grad():
            for p, a in zip(params, arrays):
                p.copy_(torch.tensor(a))
        return model
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).to(dtype).to(backend)
    with mt.no_grad():
        for p, a in zip([model[0].weight, model[0].bias, model[2].weight, model[2].bias], arrays):
            p.copy_(mt.tensor(a, device=backend))
    return model


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ops_inside_run_in_their_dtypes(backend: str, dtype: str) -> None:
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(dtype)
    tmodel, mmodel = _mlp(torch, dtype, backend), _mlp(mt, dtype, backend)
    tout = tmodel(torch.tensor(x)).square().mean()
    tout.backward()
    with mt.autocast(mt.tensor(0.0, device=backend).device.type):
        mout = mmodel(mt.tensor(x, device=backend)).square().mean()
    assert mout.dtype == np.dtype(dtype)
    mout.backward()
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(mout.item(), tout.item(), rtol=tol)
    np.testing.assert_allclose(mmodel[0].weight.grad.to_numpy(), tmodel[0].weight.grad.numpy(), rtol=tol, atol=tol)


def _scaled_product(lib: Any, cast_inputs: Any, device_type: str = "cpu") -> type:
    """A custom Function a * b whose forward and backward record the autocast state and the dtypes they see."""
    seen: list[Any] = []

    class Product(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type=device_type, cast_inputs=cast_inputs)
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            seen.append(("fwd", lib.is_autocast_enabled("cpu"), str(a.dtype).split(".")[-1], str(b.dtype).split(".")[-1]))
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        @lib.amp.custom_bwd(device_type=device_type)
        def backward(ctx: Any, grad: Any) -> Any:
            seen.append(("bwd", lib.is_autocast_enabled("cpu")))
            a, b = ctx.saved_tensors
            return grad * b, grad * a

    Product.seen = seen  # type: ignore[attr-defined]
    return Product


@pytest.mark.parametrize("cast", [None, "float64", "float32"])
@pytest.mark.parametrize("inside", [True, False])
def test_custom_fwd_bwd_as_torch(cast: str | None, inside: bool) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4)  # float32 and float64 inputs
    results = {}
    for lib in (torch, mt):
        cast_inputs = None if cast is None else getattr(lib, cast)
        product = _scaled_product(lib, cast_inputs)
        ta, tb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        with lib.autocast("cpu", enabled=inside):
            out = product.apply(ta, tb)
        out.sum().backward()
        to_np = (lambda t: t.detach().numpy()) if lib is torch else (lambda t: t.to_numpy())
        results[lib.__name__] = (product.seen, str(out.dtype).split(".")[-1], to_np(out), to_np(ta.grad), to_np(tb.grad),
                                 str(ta.grad.dtype).split(".")[-1])
    theirs, mine = results["torch"], results["minitensor"]
    assert mine[:2] == theirs[:2]
    assert mine[5] == theirs[5] == "float32"
    for m, t in zip(mine[2:5], theirs[2:5]):
        np.testing.assert_allclose(m, t, rtol=1e-15)


def test_custom_fwd_casts_containers() -> None:
    x32, x64 = mt.ones(2), mt.ones(2, dtype=mt.float64)
    value = {"a": [x32, (x32, 3)], "b": x64, "n": np.ones(2, dtype=np.float32), "s": "text", "i": mt.ones(2, dtype=mt.int64)}
    out = autocast_mode._cast(value, "cpu", mt.float64)
    assert out["a"][0].dtype == mt.float64 and isinstance(out["a"][1], tuple) and out["a"][1][1] == 3
    assert out["b"] is x64 and out["n"] is value["n"] and out["s"] == "text" and out["i"].dtype == mt.int64
    assert [t.dtype for t in autocast_mode._cast(iter([x32]), "cpu", mt.float64)] == [mt.float64]
    assert autocast_mode._cast(x32, "cuda", mt.float64) is x32  # another device type: unchanged


def test_deprecated_forms_warn_and_forward() -> None:
    with pytest.warns(FutureWarning, match=r"minitensor.cpu.amp.autocast\(args...\)` is deprecated"):
        region = mt.cpu.amp.autocast()
    with region:
        assert mt.is_autocast_enabled("cpu") and mt.get_autocast_dtype("cpu") == mt.float32
    with pytest.warns(FutureWarning, match="cpu.amp.GradScaler"):
        assert mt.cpu.amp.GradScaler().is_enabled()
    with pytest.warns(FutureWarning, match="cuda.amp.autocast"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "CUDA is not available" where the backend is missing
        assert isinstance(mt.cuda.amp.autocast(enabled=False), mt.autocast)
    with pytest.warns(FutureWarning, match="cuda.amp.GradScaler"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert isinstance(mt.cuda.amp.GradScaler(enabled=False), amp.GradScaler)
    with pytest.warns(FutureWarning, match="cuda.amp.custom_fwd"):
        mt.cuda.amp.custom_fwd(lambda ctx: None)
    with pytest.warns(FutureWarning, match="cuda.amp.custom_bwd"):
        mt.cuda.amp.custom_bwd(lambda ctx: None)
    from minitensor.cpu.amp import autocast as cpu_autocast
    from minitensor.cuda.amp import GradScaler

    assert GradScaler is mt.cuda.amp.GradScaler and issubclass(cpu_autocast, mt.autocast)
    assert mt.cuda.amp.amp_definitely_not_available() == (not mt.cuda.is_available())
    assert mt.cpu.is_available() and mt.cpu.device_count() == 1 and mt.cpu.current_device() == "cpu"


def test_signatures_as_torch() -> None:
    def params(fn: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    pairs = [(mt.autocast.__init__, torch.autocast.__init__), (amp.GradScaler.__init__, torch.amp.GradScaler.__init__),
             (amp.custom_fwd, torch.amp.custom_fwd), (amp.custom_bwd, torch.amp.custom_bwd),
             (amp.is_autocast_available, torch.amp.is_autocast_available),
             (amp.GradScaler.step, torch.amp.GradScaler.step), (amp.GradScaler.update, torch.amp.GradScaler.update)]
    for mine, theirs in pairs:
        assert params(mine) == params(theirs), mine.__qualname__
    assert [n for n in dir(torch.amp.GradScaler) if not n.startswith("_")] == \
        [n for n in dir(amp.GradScaler) if not n.startswith("_")]

"""The global switches of flags.py against torch 2.13: deterministic algorithms (and the cuda scatter_add's race-free
path they select), anomaly detection (backward's NaN check, ``autograd.detect_anomaly``/``set_detect_anomaly``),
``inference_mode``'s query, the float32 matmul precision, flushing denormals and the inter-op thread count."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import GradientError, flags

torch = pytest.importorskip("torch")


@pytest.fixture
def restore_flags():
    """Put every switch back as it was (torch's too)."""
    saved = vars(flags._flags).copy()
    torch_saved = (torch.get_deterministic_debug_mode(), torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(),
                   torch.get_float32_matmul_precision())
    yield
    for name in ("deterministic", "warn_only", "anomaly", "anomaly_check_nan", "matmul_precision", "interop_threads"):
        if name in saved:
            setattr(flags._flags, name, saved[name])
        elif name in vars(flags._flags):
            delattr(flags._flags, name)
    torch.set_deterministic_debug_mode(torch_saved[0])  # not use_deterministic_algorithms: it imports inductor (2 s)
    torch.set_anomaly_enabled(torch_saved[1], torch_saved[2])
    torch.set_float32_matmul_precision(torch_saved[3])


def state(lib) -> tuple:
    return (lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
            lib.get_deterministic_debug_mode())


# --- deterministic algorithms ---


def test_deterministic_switches_match_torch(restore_flags) -> None:
    assert state(mt) == state(torch) == (False, False, 0)
    # torch's use_deterministic_algorithms(mode, warn_only=w) is its debug mode 0/1/2 (and imports inductor: 2 s)
    steps = [(lambda: mt.use_deterministic_algorithms(True), 2), (lambda: mt.use_deterministic_algorithms(True, warn_only=True), 1),
             (lambda: mt.set_deterministic_debug_mode("error"), "error"), (lambda: mt.set_deterministic_debug_mode(1), 1),
             (lambda: mt.set_deterministic_debug_mode("default"), "default"), (lambda: mt.set_deterministic_debug_mode(2), 2),
             (lambda: mt.use_deterministic_algorithms(False), 0)]
    for step, torch_mode in steps:
        step()
        torch.set_deterministic_debug_mode(torch_mode)
        assert state(mt) == state(torch)
    for bad, error in (("x", ValueError), (3, ValueError), (None, TypeError)):
        with pytest.raises(error):
            mt.set_deterministic_debug_mode(bad)
        with pytest.raises(RuntimeError if error is ValueError else TypeError):
            torch.set_deterministic_debug_mode(bad)
    for bad in (1, "x"):
        with pytest.raises(TypeError, match="must be bool"):
            mt.use_deterministic_algorithms(bad)
        with pytest.raises(TypeError, match="must be bool"):
            torch._C._set_deterministic_algorithms(bad)


@pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend")
def test_deterministic_mode_takes_the_race_free_cuda_scatter_add(restore_flags, monkeypatch) -> None:
    from minitensor.backends import cuda as cuda_backend

    launched = []
    real = cuda_backend._kernel
    monkeypatch.setattr(cuda_backend, "_kernel", lambda key, factory: launched.append(key[0]) or real(key, factory))
    src = np.array([[0.5, 1.25, -2.0], [3.0, 0.125, 1.5]])
    index = np.array([[0, 2, 0], [2, 0, 0]])
    want = torch.zeros(3, 3, dtype=torch.float64).scatter_add_(0, torch.tensor(index), torch.tensor(src))
    for deterministic, kernel in ((False, "scatter_add"), (True, "scatter_add_rows")):
        mt.use_deterministic_algorithms(deterministic)
        launched.clear()
        out = mt.zeros(3, 3, dtype="float64", backend="cuda")
        got = out.scatter_add(0, mt.tensor(index, backend="cuda"), mt.tensor(src, backend="cuda"))
        np.testing.assert_array_equal(got.to_numpy(), want.numpy())
        assert kernel in launched and ({"scatter_add", "scatter_add_rows"} - {kernel}).isdisjoint(launched)
    launched.clear()
    mt.zeros(4, dtype="int64", backend="cuda").index_add(0, mt.tensor([1, 1], backend="cuda"), mt.tensor([2, 3], backend="cuda"))
    assert "scatter_add" in launched  # integer adds commute exactly: the atomic kernel stays


# --- anomaly detection ---

MUL_NAN = r"^Function 'MulBackward0' returned nan values in its 1th output\.$"


def test_anomaly_switches_match_torch(restore_flags) -> None:
    for lib in (mt, torch):
        assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (False, True)
        lib.set_anomaly_enabled(True)
        assert lib.is_anomaly_enabled()
        lib.set_anomaly_enabled(False, False)
        assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (False, False)
        lib.set_anomaly_enabled(False, True)
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (True, False)
        assert (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()) == (False, True)
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            guard = lib.autograd.detect_anomaly()
        with guard:
            assert lib.is_anomaly_enabled()
        assert not lib.is_anomaly_enabled()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_anomaly_mode_names_the_node_that_made_a_nan(backend: str, restore_flags) -> None:
    for lib in (mt, torch):
        kw = {"backend": backend} if lib is mt else {}
        x = lib.tensor([0.0, 4.0], requires_grad=True, **kw)
        (lib.sqrt(x) * 0).sum().backward()  # off: the NaN gradient goes through
        assert np.isnan(x.grad[0].item())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = lib.tensor([0.0, 4.0], requires_grad=True, **kw)
                with pytest.raises(GradientError if lib is mt else RuntimeError,
                                   match=r"^Function 'SqrtBackward0' returned nan values in its 0th output\.$"):
                    (lib.sqrt(y) * 0).sum().backward()
                z = lib.tensor([float("nan"), 1.0], requires_grad=True, **kw)
                (z * 2).sum().backward()  # a NaN input with finite gradients is fine
                assert z.grad.tolist() == [2.0, 2.0]
            with lib.autograd.detect_anomaly(check_nan=False):
                w = lib.tensor([0.0], requires_grad=True, **kw)
                (lib.sqrt(w) * 0).sum().backward()
                assert np.isnan(w.grad.item())
    a, b = torch.tensor([float("inf")], requires_grad=True), torch.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(), pytest.raises(RuntimeError, match=MUL_NAN):
            (a * b * 0).sum().backward()
    a, b = mt.tensor([float("inf")], requires_grad=True), mt.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        decorated = mt.autograd.detect_anomaly()(lambda: (a * b * 0).sum().backward())  # also a decorator
    with pytest.raises(GradientError, match=MUL_NAN):
        decorated()
    assert not mt.is_anomaly_enabled()


# --- inference mode, precision, denormals, threads ---


def test_inference_mode_query_matches_torch() -> None:
    for lib in (mt, torch):
        assert not lib.is_inference_mode_enabled()
        with lib.inference_mode():
            assert lib.is_inference_mode_enabled()
            with lib.inference_mode():
                assert lib.is_inference_mode_enabled()
            assert lib.is_inference_mode_enabled()
        with lib.no_grad():
            assert not lib.is_inference_mode_enabled()

        @lib.inference_mode()
        def inside(lib=lib) -> bool:
            return lib.is_inference_mode_enabled()

        assert inside() and not lib.is_inference_mode_enabled()


def test_precision_denormals_and_threads_match_torch(restore_flags) -> None:
    for lib in (mt, torch):
        assert lib.get_float32_matmul_precision() == "highest"
        lib.set_float32_matmul_precision("medium")
        assert lib.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("x")
        assert lib.get_float32_matmul_precision() == "medium"
        assert lib.set_flush_denormal(False) is True
    assert mt.set_flush_denormal(True) is False  # minitensor's kernels keep denormals (torch: True on x86)
    assert mt.tensor([1e-40], dtype="float32").item() != 0.0
    assert isinstance(mt.get_num_interop_threads(), int) and mt.get_num_interop_threads() >= 1
    mt.set_num_interop_threads(3)
    assert mt.get_num_interop_threads() == 3
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            mt.set_num_interop_threads(bad)
    with pytest.raises(RuntimeError, match="positive integer"):
        torch.set_num_interop_threads(0)

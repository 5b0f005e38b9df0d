"""The cuda backend's caching allocator, device constants and ``minitensor.cuda`` (on Numba's simulator).

Counts are taken independently of the allocator's own statistics where possible: fresh device allocations by
wrapping ``numba.cuda.device_array`` and host-to-device copies by wrapping the simulator's ``copy_to_device`` and
``cuda.to_device``.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.errors import BackendUnavailableError
from minitensor.tensor_data import TensorData

try:
    CUDA = mt.get_backend("cuda")
except BackendUnavailableError as error:  # no GPU and no simulator
    pytest.skip(str(error), allow_module_level=True)

import minitensor.cuda as mt_cuda  # noqa: E402
from minitensor.backends import cuda_allocator  # noqa: E402
from minitensor.backends.cuda_allocator import ALLOCATOR, MIN_BLOCK, size_class  # noqa: E402

if not cuda_allocator.SIMULATED:
    pytest.skip("counts device calls through the simulator's classes", allow_module_level=True)

from numba import cuda  # noqa: E402
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray  # noqa: E402


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Live counters of fresh device allocations ("malloc") and host-to-device copies ("h2d")."""
    seen = {"malloc": 0, "h2d": 0}
    device_array, to_device, copy_to_device = cuda.device_array, cuda.to_device, FakeCUDAArray.copy_to_device

    def counted_device_array(*args: object, **kwargs: object) -> object:
        seen["malloc"] += 1
        return device_array(*args, **kwargs)

    def counted_to_device(*args: object, **kwargs: object) -> object:
        seen["h2d"] += 1
        return to_device(*args, **kwargs)

    def counted_copy(self: FakeCUDAArray, *args: object, **kwargs: object) -> object:
        seen["h2d"] += 1
        return copy_to_device(self, *args, **kwargs)

    monkeypatch.setattr(cuda, "device_array", counted_device_array)
    monkeypatch.setattr(cuda, "to_device", counted_to_device)
    monkeypatch.setattr(FakeCUDAArray, "copy_to_device", counted_copy)
    return seen


def test_size_classes_bound_the_waste() -> None:
    for n in [1, 511, 512, 513, 1000, 4096, 4097, 5000, 123457, 10**7]:
        size = size_class(n)
        assert size >= n and size % MIN_BLOCK == 0
        assert size <= max(MIN_BLOCK, 1.25 * n + MIN_BLOCK), (n, size)
    assert len({size_class(n) for n in range(4097, 8193)}) == 4  # four classes per power of two


def test_freed_storage_is_reused_without_a_device_allocation(counts: dict[str, int]) -> None:
    mt_cuda.empty_cache()
    gc.collect()
    before = mt_cuda.memory_stats()
    x = CUDA.empty((300,), np.dtype(np.float32))  # 1200 bytes: the 1536-byte class
    after = mt_cuda.memory_stats()
    assert counts["malloc"] == 1
    assert after["allocated_bytes.all.current"] - before["allocated_bytes.all.current"] == size_class(1200)
    assert after["active_bytes.all.current"] - before["active_bytes.all.current"] == 1200
    del x
    y = CUDA.empty((150,), np.dtype(np.float64))  # 1200 bytes again, another dtype: same block
    stats = mt_cuda.memory_stats()
    assert counts["malloc"] == 1
    assert stats["num_cache_hits"] == after["num_cache_hits"] + 1
    assert stats["allocated_bytes.all.current"] == after["allocated_bytes.all.current"]
    assert stats["reserved_bytes.all.current"] == after["reserved_bytes.all.current"]
    assert stats["allocation.all.current"] == stats["allocation.all.allocated"] - stats["allocation.all.freed"]
    assert stats["active_bytes.all.current"] <= stats["allocated_bytes.all.current"] <= stats["reserved_bytes.all.current"]
    del y
    mt_cuda.empty_cache()
    emptied = mt_cuda.memory_stats()
    assert emptied["reserved_bytes.all.current"] == emptied["allocated_bytes.all.current"]
    assert mt_cuda.memory_reserved() == emptied["reserved_bytes.all.current"]
    assert mt_cuda.memory_allocated() == emptied["allocated_bytes.all.current"]


def test_a_view_keeps_its_block_alive() -> None:
    x = CUDA.from_numpy(np.arange(10.0))
    view = TensorData(x.storage[3:], (4,))  # a slice of the storage outlives the tensor
    del x
    gc.collect()
    others = [CUDA.from_numpy(np.full(10, -1.0)) for _ in range(4)]  # would reuse a freed block of this class
    np.testing.assert_array_equal(CUDA.to_numpy(view), [3.0, 4.0, 5.0, 6.0])
    del others


def test_scalars_and_constants_upload_nothing(counts: dict[str, int]) -> None:
    x = mt.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3), backend="cuda")
    counts["h2d"] = 0
    y = x * 2.0 + 1.5  # lifted Python numbers: a fill kernel writes them, no copy
    scalar = mt.tensor(7, backend="cuda")
    assert counts["h2d"] == 0
    np.testing.assert_array_equal(y.to_numpy(), np.arange(6.0, dtype=np.float32).reshape(2, 3) * 2 + 1.5)
    before = mt_cuda.memory_stats()["allocation.all.allocated"]
    again = x * 2.0 + 1.5  # the lifted numbers are cached device constants now: only the two results are allocated
    assert mt_cuda.memory_stats()["allocation.all.allocated"] - before == 2
    np.testing.assert_array_equal(again.to_numpy(), y.to_numpy())
    assert scalar.item() == 7 and scalar.dtype == mt.int64
    one = CUDA.constant(2.5, np.dtype(np.float32))
    assert CUDA.constant(2.5, np.dtype(np.float32)) is one  # cached per (value, dtype)
    assert CUDA.constant(2.5, np.dtype(np.float64)) is not one
    assert CUDA.constant(0.0, np.dtype(np.float64)) is not CUDA.constant(-0.0, np.dtype(np.float64))
    assert np.signbit(CUDA.to_numpy(CUDA.constant(-0.0, np.dtype(np.float64))))
    assert np.isnan(CUDA.to_numpy(CUDA.constant(float("nan"), np.dtype(np.float32))))
    assert counts["h2d"] == 0


def test_write_values_is_one_kernel_and_no_copy(counts: dict[str, int]) -> None:
    buffer = CUDA.from_numpy(np.zeros(5, dtype=np.float32))
    ints = CUDA.from_numpy(np.zeros(3, dtype=np.int64))
    counts["h2d"] = 0
    CUDA.write_values(buffer, [0.5, -2.0, 3.25])
    CUDA.write_values(ints, [2**62 + 1, -7])
    assert counts["h2d"] == 0
    np.testing.assert_array_equal(CUDA.to_numpy(buffer), [0.5, -2.0, 3.25, 0.0, 0.0])
    np.testing.assert_array_equal(CUDA.to_numpy(ints), [2**62 + 1, -7, 0])
    with pytest.raises(mt.ShapeError, match="at most 3"):
        CUDA.write_values(ints, [1, 2, 3, 4])


def test_training_steps_reach_a_steady_state_without_allocations_or_uploads(counts: dict[str, int]) -> None:
    """Linear-ReLU-Linear + cross-entropy + Adam: from the third step on no fresh device memory and no uploads (the
    optimizer's per-step scalars are written by a kernel); the losses match PyTorch's with the same weights."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x_np, y_np = rng.standard_normal((2, 4)).astype(np.float32), np.array([0, 2])
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    reference = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    with torch.no_grad():
        for ours, theirs in zip(model.parameters(), reference.parameters()):
            theirs.copy_(torch.from_numpy(ours.to_numpy()))
    model = model.to("cuda")
    opt, ref_opt = mt.optim.Adam(model.parameters(), lr=0.1), torch.optim.Adam(reference.parameters(), lr=0.1)
    x, y = mt.tensor(x_np, backend="cuda"), mt.tensor(y_np, backend="cuda")
    per_step, losses, want = [], [], []
    for _ in range(3):
        start = dict(counts)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        per_step.append({key: counts[key] - start[key] for key in counts})
        losses.append(loss.item())
        ref_opt.zero_grad()
        ref_loss = torch.nn.functional.cross_entropy(reference(torch.from_numpy(x_np)), torch.from_numpy(y_np))
        ref_loss.backward()
        ref_opt.step()
        want.append(ref_loss.item())
    assert per_step[0]["malloc"] > 0 and per_step[0]["h2d"] > 0  # the counters do count
    assert per_step[2]["malloc"] == 0, per_step
    assert per_step[2]["h2d"] == 0, per_step
    np.testing.assert_allclose(losses, want, rtol=1e-5)
    for ours, theirs in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(ours.to_numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_mt_cuda_functions() -> None:
    assert mt_cuda.is_available()
    mt_cuda.synchronize()
    stats = mt_cuda.memory_stats()
    assert {"allocated_bytes.all.current", "reserved_bytes.all.current", "segment.all.allocated"} <= set(stats)
    assert ALLOCATOR.stats() == stats

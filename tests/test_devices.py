"""``mt.device`` (a backend name with torch.device's ``type``/``index``), ``get_default_device``/``set_default_device``,
devices in ``.to()``, creation functions, layers and generators; ``mt.Size``, ``mt.dtype`` and the constants ``e pi
inf nan newaxis``, against torch 2.13 where torch answers without a GPU."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import BackendError, DTypeError, ShapeError

torch = pytest.importorskip("torch")


@pytest.fixture
def default_backend():
    """Restore the default backend a test changes."""
    yield
    mt.set_default_backend(None)


# --- mt.device ---

SPECS = [  # (spec, index argument, backend name, type, index)
    ("cpu", None, mt.get_backend("cpu").name, "cpu", None), ("cpu:0", None, mt.get_backend("cpu").name, "cpu", 0),
    ("cpu", 1, mt.get_backend("cpu").name, "cpu", 1), ("cuda", None, "cuda", "cuda", None),
    ("cuda:0", None, "cuda", "cuda", 0), ("cuda", 0, "cuda", "cuda", 0), (0, None, "cuda", "cuda", 0),
    ("simple", None, "simple", "cpu", None), ("fast", None, "fast", "cpu", None),
]  # fmt: skip


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_device_specs_select_backends_with_torchs_type_and_index(spec) -> None:
    given, index, name, kind, idx = spec
    d = mt.device(given, index)
    assert isinstance(d, str) and isinstance(d, mt.device)
    assert d == name and hash(d) == hash(name) and str(d) == name
    assert (d.type, d.index) == (kind, idx)
    if isinstance(given, str) and given.split(":")[0] in ("cpu", "cuda"):
        theirs = torch.device(given, index) if index is not None else torch.device(given)
        assert (d.type, d.index) == (theirs.type, theirs.index)
    assert mt.device(d) is d
    assert mt.device(type=given, index=index) == d


def test_device_reprs_pickles_and_copies() -> None:
    assert repr(mt.device("cuda:0")) == repr(torch.device("cuda:0")) == "device(type='cuda', index=0)"
    assert repr(mt.device("cuda")) == repr(torch.device("cuda"))
    assert repr(mt.device("simple")) == "device(type='cpu', backend='simple')"
    assert repr(mt.device("cpu", 1)) == f"device(type='cpu', index=1, backend='{mt.get_backend('cpu').name}')"
    for d in (mt.device("cuda:0"), mt.device("cpu", 2), mt.device("simple")):
        for twin in (pickle.loads(pickle.dumps(d)), copy.deepcopy(d), copy.copy(d)):
            assert isinstance(twin, mt.device) and twin == d and (twin.type, twin.index) == (d.type, d.index)


BAD_SPECS = [  # (spec, index, error) with torch's error kind where torch has one
    ("cuda:-1", None, BackendError), ("cuda:01", None, BackendError), (" cuda", None, BackendError),
    ("CUDA", None, BackendError), ("foo", None, BackendError), ("cuda:0", 1, BackendError), ("cuda", -1, BackendError),
    (-1, None, BackendError), (1.5, None, TypeError), (None, None, TypeError), ("cuda", "x", TypeError),
    (True, None, TypeError),
]  # fmt: skip


@pytest.mark.parametrize("spec", BAD_SPECS, ids=str)
def test_bad_device_specs_raise_like_torch(spec) -> None:
    given, index, error = spec
    with pytest.raises(error):
        mt.device(given, index)
    with pytest.raises(RuntimeError if error is BackendError else TypeError):
        torch.device(given, index) if index is not None else torch.device(given)


def test_minitensor_has_one_cuda_device() -> None:
    for spec in ("cuda:1", ("cuda", 2), 1, "fast:0", ("simple", 0)):
        with pytest.raises(BackendError, match="one cuda device|no device index"):
            mt.device(*spec) if isinstance(spec, tuple) else mt.device(spec)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_device_is_a_device(backend: str) -> None:
    x = mt.zeros(2, backend=backend)
    d = x.device
    assert isinstance(d, mt.device) and d == backend and x.device is d
    assert d.type == ("cuda" if backend == "cuda" else "cpu")
    assert d.index == (0 if backend == "cuda" else torch.zeros(1).device.index)
    assert mt.zeros(1, device=d).backend is x.backend and x.to(d) is x
    assert mt.nn.Parameter(x).device == d and mt.nn.Linear(2, 2, device=d).weight.device == d


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_to_and_creation_take_devices_and_torch_specs(backend: str) -> None:
    x = mt.arange(3.0, backend=backend)
    other = "simple" if backend == "fast" else "fast"
    assert x.to(mt.device(other)).device == other and x.to(device=mt.device(other)).device == other
    assert x.to("cpu:0").backend is mt.get_backend("cpu") and x.to("cpu:3", mt.float64).dtype == mt.float64
    assert x.to(mt.device(other), "float64").dtype == mt.float64 and x.to("float64").device == backend
    for make in (lambda d: mt.zeros(2, device=d), lambda d: mt.tensor([1.0], device=d), lambda d: mt.arange(2, device=d),
                 lambda d: mt.full((2,), 3.0, device=d), lambda d: mt.randn(2, device=d), lambda d: x.new_zeros(2, device=d)):
        assert make(mt.device(other)).device == other
        assert make("cpu:0").backend is mt.get_backend("cpu")
    with pytest.raises(BackendError, match="one cuda device"):
        mt.zeros(2, device="cuda:1")
    with pytest.raises(DTypeError):
        x.to("nonsense")


def test_module_to_and_generator_devices() -> None:
    layer = mt.nn.Linear(2, 3, backend="simple").to(mt.device("fast"))
    assert all(p.device == "fast" for p in layer.parameters())
    layer.to("cpu:0")
    assert all(p.backend is mt.get_backend("cpu") for p in layer.parameters())
    g = mt.Generator(device="cuda")
    assert isinstance(g.device, mt.device) and g.device == "cuda" and repr(g.device) == "device(type='cuda')"
    assert mt.Generator().device.type == torch.Generator().device.type == "cpu"
    assert mt.default_generator.device.type == torch.default_generator.device.type
    assert mt.Generator(device=mt.get_backend("simple")).device == "simple"


def test_default_device_maps_onto_the_default_backend(default_backend) -> None:
    start = mt.get_default_device()
    assert isinstance(start, mt.device) and start == mt.default_backend_name() and start.type == "cpu"
    mt.set_default_device("simple")
    assert mt.get_default_device() == "simple" and mt.zeros(1).device == "simple" and mt.default_backend_name() == "simple"
    mt.set_default_device(mt.device("fast"))
    assert mt.zeros(1).device == "fast"
    mt.set_default_device("cpu:0")
    assert mt.get_default_device() == mt.device("cpu")
    mt.set_default_device(None)
    assert mt.get_default_device() == start
    with mt.device("simple") as d:
        assert d == "simple" and mt.zeros(1).device == "simple"
        with mt.device("fast"):
            assert mt.zeros(1).device == "fast"
        assert mt.zeros(1).device == "simple"
    assert mt.get_default_device() == start and mt.backends._default_name is None
    with pytest.raises(BackendError):
        mt.set_default_device("cuda:1")


def test_device_cpu_follows_a_cuda_default(default_backend, monkeypatch) -> None:
    monkeypatch.setattr(mt.backends, "_default_name", "cuda")  # no cuda backend needed: only the name is read
    assert mt.device("cpu") == mt.backends.BUILTIN_DEFAULT and mt.get_default_device().type == "cuda"


# --- Size, dtype, constants ---


def test_size_is_torchs_tuple_of_ints() -> None:
    s, ts = mt.Size([2, 3]), torch.Size([2, 3])
    assert isinstance(s, tuple) and s == (2, 3) == ts and hash(s) == hash((2, 3))
    assert s.numel() == ts.numel() == 6 and mt.Size().numel() == torch.Size().numel() == 1
    assert mt.Size([0, 4]).numel() == 0
    for got, want in ((s[1:], ts[1:]), (s + (4,), ts + (4,)), ((1,) + s, (1,) + ts), (s * 2, ts * 2), (2 * s, 2 * ts)):
        assert isinstance(got, mt.Size) and isinstance(want, torch.Size) and tuple(got) == tuple(want)
    assert type(s[0]) is int and repr(s) == "minitensor.Size([2, 3])" and repr(mt.Size()) == "minitensor.Size([])"
    assert mt.Size([mt.tensor(3), np.int64(2), True]) == torch.Size([torch.tensor(3), np.int64(2), True])
    assert pickle.loads(pickle.dumps(s)) == s and isinstance(pickle.loads(pickle.dumps(s)), mt.Size)
    for bad in ([2.5], ["a"], 3):
        with pytest.raises(TypeError):
            mt.Size(bad)
        with pytest.raises(TypeError):
            torch.Size(bad)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_size_is_accepted_wherever_a_shape_is(backend: str) -> None:
    size = mt.Size([2, 3])
    x = mt.zeros(size, backend=backend)
    assert x.shape == (2, 3) and type(x.shape) is tuple
    assert mt.ones(size).shape == mt.empty(size).shape == mt.full(size, 2.0).shape == (2, 3)
    assert x.view(mt.Size([3, 2])).shape == (3, 2) and x.reshape(mt.Size([6])).shape == (6,)
    assert x.expand(mt.Size([4, 2, 3])).shape == (4, 2, 3) and x.new_zeros(mt.Size([1, 2])).shape == (1, 2)
    assert mt.randn(mt.Size([2])).shape == (2,) and x.new(mt.Size([3, 1])).shape == (3, 1)
    assert mt.Size(x.shape) == x.shape and mt.Size(x.shape).numel() == x.numel()


def test_dtype_type_and_constants_match_torch() -> None:
    for dtype in (mt.float32, mt.float64, mt.int32, mt.int64, mt.bool, mt.float, mt.long):
        assert isinstance(dtype, mt.dtype)
    assert not isinstance("float32", mt.dtype) and mt.dtype("float32") == mt.float32
    assert (mt.e, mt.pi, mt.inf) == (torch.e, torch.pi, torch.inf) == (math.e, math.pi, math.inf)
    assert math.isnan(mt.nan) and math.isnan(torch.nan) and mt.newaxis is torch.newaxis is None
    x = mt.arange(6.0).reshape(2, 3)
    assert x[:, mt.newaxis].shape == tuple(torch.arange(6.0).reshape(2, 3)[:, torch.newaxis].shape) == (2, 1, 3)
    assert mt.full((1,), mt.inf).item() == math.inf


def test_shape_errors_keep_their_types() -> None:
    with pytest.raises(ShapeError):
        mt.zeros(mt.Size([-1]))

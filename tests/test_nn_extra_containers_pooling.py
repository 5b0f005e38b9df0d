"""ParameterList / ParameterDict (registration names, state dicts, dict and list behaviour, reprs) and the extra
pooling and padding (AdaptiveMaxPool1d, LPPool1d/2d, MaxUnpool1d/2d, max_pool*_with_indices, ZeroPad1d,
CircularPad1d/2d) against PyTorch: values, indices, gradients, reprs and errors. The bulk runs on the CPU backends,
one tiny case per family on every backend."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import DTypeError, IndexOutOfRangeError, ShapeError
from minitensor.nn import functional as F

RNG = np.random.default_rng(77)


def compare(mine, theirs, x, backend, rtol=1e-10, atol=1e-12):
    """mine(x) vs theirs(x) in float64: value and input gradient."""
    t = torch.tensor(x, requires_grad=True)
    m = mt.tensor(x, backend=backend, dtype="float64", requires_grad=True)
    want, got = theirs(t), mine(m)
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=rtol, atol=atol)
    up = RNG.standard_normal(tuple(want.shape))
    (want * torch.tensor(up)).sum().backward()
    (got * mt.tensor(up, backend=backend, dtype="float64")).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


def torch_repr(module):
    """torch's repr with minitensor's dtype names (float32 for torch.float32 / torch.FloatTensor)."""
    return repr(module).replace("torch.float32", "float32").replace("torch.FloatTensor", "float32")


# --- ParameterList ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_parameter_list_registration_and_state_dict(backend):
    shapes = [(2, 3), (4,), ()]
    arrays = [RNG.standard_normal(s) for s in shapes]
    mine = nn.ParameterList([mt.tensor(a, backend=backend, dtype="float32") for a in arrays])
    theirs = torch.nn.ParameterList([torch.tensor(a, dtype=torch.float32) for a in arrays])
    assert len(mine) == 3 and list(mine.state_dict()) == list(theirs.state_dict()) == ["0", "1", "2"]
    assert [name for name, _ in mine.named_parameters()] == ["0", "1", "2"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in mine)
    assert [p.shape for p in mine.parameters()] == shapes
    assert mine[-1] is mine[2] and mine[0] is mine.get_parameter("0")
    with torch.no_grad():
        for p in theirs:
            p.mul_(3.0)
    mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.numpy(), t.detach().numpy(), rtol=1e-6)
    sum(p.sum() for p in mine).backward()
    assert all(np.all(p.grad.numpy() == 1.0) for p in mine)
    # nested: keys are prefixed as torch's
    outer, touter = nn.Sequential(nn.Linear(2, 2), mine), torch.nn.Sequential(torch.nn.Linear(2, 2), theirs)
    assert list(outer.state_dict()) == list(touter.state_dict())


def test_parameter_list_operations():
    p = nn.Parameter(mt.ones(2))
    plist = nn.ParameterList()
    assert len(plist) == 0 and repr(plist) == repr(torch.nn.ParameterList()) == "ParameterList()"
    assert plist.append(p) is plist and plist[0] is p  # a Parameter is kept as it is
    plist.extend([mt.zeros(3), "text"])
    plist += [mt.zeros(1, 2)]
    assert len(plist) == 4 and plist[2] == "text" and list(plist.state_dict()) == ["0", "1", "3"]
    plist[1] = mt.full((5,), 2.0)
    assert isinstance(plist[1], nn.Parameter) and plist[1].shape == (5,)
    plist[-1] = mt.zeros(7)
    assert plist[3].shape == (7,)
    head = plist[:2]
    assert isinstance(head, nn.ParameterList) and len(head) == 2 and head[0] is p
    evens = plist[::2]
    assert len(evens) == 2 and evens[0] is p and evens[1] == "text"
    assert "0" not in dir(plist)
    with pytest.raises(IndexError, match="out of range"):
        plist[4]
    with pytest.raises(IndexError, match="out of range"):
        plist[-5] = mt.zeros(1)
    with pytest.raises(TypeError, match="should be called with an iterable, but got Tensor"):
        plist.extend(mt.zeros(3))
    with pytest.raises(TypeError, match="iterable, but got int"):
        plist.extend(3)
    with pytest.raises(RuntimeError, match="should not be called"):
        plist(mt.zeros(1))
    with pytest.raises(TypeError, match="cannot assign"):
        plist[0] = "not a parameter"  # as torch: a registered parameter takes only a Parameter or None


def test_parameter_list_repr_like_torch():
    values = [mt.zeros(2, 3), mt.zeros(4), "x"]
    twin = [torch.zeros(2, 3), torch.zeros(4), "x"]
    assert repr(nn.ParameterList(values)) == torch_repr(torch.nn.ParameterList(twin))
    assert repr(nn.ParameterList([mt.zeros(2, 3)])) == torch_repr(torch.nn.ParameterList([torch.zeros(2, 3)]))
    assert repr(nn.ParameterList([mt.zeros(())])) == torch_repr(torch.nn.ParameterList([torch.zeros(())]))
    wrapped = nn.Sequential(nn.ParameterList(values))
    assert repr(wrapped) == torch_repr(torch.nn.Sequential(torch.nn.ParameterList(twin)))


# --- ParameterDict ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_parameter_dict_registration_and_state_dict(backend):
    arrays = {"w": RNG.standard_normal((2, 3)), "b": RNG.standard_normal(3), "a": RNG.standard_normal(1)}
    mine = nn.ParameterDict({k: mt.tensor(v, backend=backend, dtype="float32") for k, v in arrays.items()})
    theirs = torch.nn.ParameterDict({k: torch.tensor(v, dtype=torch.float32) for k, v in arrays.items()})
    assert list(mine.keys()) == list(theirs.keys()) == ["a", "b", "w"]  # a plain dict is sorted, as torch
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    with torch.no_grad():
        theirs["w"].add_(1.0)
    mine.load_state_dict({k: mt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(mine["w"].numpy(), theirs["w"].detach().numpy(), rtol=1e-6)
    (mine["w"].sum() * 2).backward()
    assert np.all(mine["w"].grad.numpy() == 2.0) and mine["a"].grad is None
    ordered = OrderedDict([("z", mt.zeros(1)), ("y", mt.zeros(2))])
    assert list(nn.ParameterDict(ordered)) == ["z", "y"]
    assert list(nn.ParameterDict([("q", mt.zeros(1)), ("p", mt.zeros(1))]).keys()) == ["q", "p"]
    assert list(nn.ModuleDict({"d": nn.ParameterDict(ordered)}).state_dict()) == ["d.z", "d.y"]


def test_parameter_dict_operations():
    pdict = nn.ParameterDict()
    pdict["b"] = mt.ones(2)
    pdict["a"] = nn.Parameter(mt.zeros(3))
    pdict["note"] = "text"
    assert list(pdict) == ["b", "a", "note"] and len(pdict) == 3 and "a" in pdict and "c" not in pdict
    assert list(pdict.state_dict()) == ["b", "a"] and isinstance(pdict["b"], nn.Parameter)
    assert [k for k, _ in pdict.items()] == ["b", "a", "note"] and list(pdict.values())[2] == "text"
    assert list(reversed(pdict)) == ["note", "a", "b"]
    assert pdict.get("zz") is None and pdict.get("zz", 5) == 5 and pdict.get("a") is pdict["a"]
    assert pdict.setdefault("a") is pdict["a"] and pdict.setdefault("c", mt.ones(1)).shape == (1,)
    assert pdict.popitem()[0] == "c" and pdict.pop("note") == "text" and list(pdict) == ["b", "a"]
    del pdict["b"]
    assert list(pdict) == ["a"] and list(pdict.state_dict()) == ["a"]
    copy = pdict.copy()
    assert copy["a"] is pdict["a"] and copy is not pdict
    pdict.update({"y": mt.zeros(1), "x": mt.zeros(1)})
    assert list(pdict) == ["a", "x", "y"]
    merged = pdict | nn.ParameterDict(OrderedDict([("k", mt.zeros(2)), ("a", mt.ones(4))]))
    assert list(merged) == ["a", "x", "y", "k"] and merged["a"].shape == (4,) and pdict["a"].shape == (3,)
    pdict |= merged
    assert pdict["a"].shape == (4,)
    assert list(pdict.fromkeys(["u", "v"], mt.ones(1))) == ["u", "v"]
    pdict.clear()
    assert len(pdict) == 0 and list(pdict.state_dict()) == []
    with pytest.raises(KeyError):
        pdict["missing"]
    with pytest.raises(TypeError, match="not a string \\(type is 'int'\\)"):
        pdict[1] = mt.zeros(1)
    with pytest.raises(KeyError, match="'\\.'"):
        pdict["a.b"] = mt.zeros(1)
    with pytest.raises(KeyError, match="already exists"):
        pdict["update"] = mt.zeros(1)
    assert list(pdict) == []
    with pytest.raises(TypeError, match="iterable of key/value pairs, but got int"):
        pdict.update(3)
    with pytest.raises(TypeError, match="element #0 should be Iterable"):
        pdict.update([3])
    with pytest.raises(ValueError, match="element #1 has length 3; 2 is required"):
        pdict.update([("a", mt.zeros(1)), ("b", 1, 2)])
    with pytest.raises(RuntimeError, match="should not be called"):
        pdict(mt.zeros(1))


def test_parameter_dict_repr_like_torch():
    values = OrderedDict([("b", mt.zeros(2)), ("a", mt.zeros(3, 1)), ("s", "x")])
    twin = OrderedDict([("b", torch.zeros(2)), ("a", torch.zeros(3, 1)), ("s", "x")])
    assert repr(nn.ParameterDict(values)) == torch_repr(torch.nn.ParameterDict(twin))
    assert repr(nn.ParameterDict()) == repr(torch.nn.ParameterDict())


# --- pooling ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("shape", "size"), [((2, 3, 10), 3), ((2, 3, 10), (4,)), ((3, 7), 7), ((2, 2, 5), 8)])
def test_adaptive_max_pool1d(backend, shape, size):
    x = RNG.standard_normal(shape)
    compare(lambda a: F.adaptive_max_pool1d(a, size), lambda a: TF.adaptive_max_pool1d(a, size), x, backend)
    got = F.adaptive_max_pool1d(mt.tensor(x, backend=backend), size, return_indices=True)
    want = TF.adaptive_max_pool1d(torch.tensor(x), size, return_indices=True)
    assert got[1].dtype == mt.int64
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    module = nn.AdaptiveMaxPool1d(size, return_indices=True)
    assert repr(module) == repr(torch.nn.AdaptiveMaxPool1d(size, True))
    np.testing.assert_array_equal(module(mt.tensor(x, backend=backend))[1].numpy(), want[1].numpy())
    np.testing.assert_array_equal(F.adaptive_max_pool1d_with_indices(mt.tensor(x), size)[1].numpy(), want[1].numpy())
    with pytest.raises(ShapeError, match="2-D \\(C, L\\) or 3-D"):
        F.adaptive_max_pool1d(mt.zeros(4), 2)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_max_pool_with_indices(backend):
    x = RNG.standard_normal((2, 3, 6, 7))
    for mine, theirs, a, kw in [(F.max_pool2d_with_indices, TF.max_pool2d_with_indices, x, {"kernel_size": 3, "stride": 2, "padding": 1}),
                                (F.max_pool1d_with_indices, TF.max_pool1d_with_indices, x[0], {"kernel_size": 2, "ceil_mode": True})]:
        got, want = mine(mt.tensor(a, backend=backend), **kw), theirs(torch.tensor(a), **kw)
        assert isinstance(got, tuple) and len(got) == 2
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    got = F.adaptive_max_pool2d_with_indices(mt.tensor(x), (2, 3))[1]
    np.testing.assert_array_equal(got.numpy(), TF.adaptive_max_pool2d_with_indices(torch.tensor(x), (2, 3))[1].numpy())


LP = [
    (1, 2.0, {"kernel_size": 3}), (1, 1.0, {"kernel_size": 2, "stride": 1}),
    (1, 3.0, {"kernel_size": 3, "stride": 2, "ceil_mode": True}), (1, 1.5, {"kernel_size": 4, "stride": 3}),
    (2, 2.0, {"kernel_size": 2}), (2, 2.5, {"kernel_size": (2, 3), "stride": (1, 2), "ceil_mode": True}),
    (2, 1.0, {"kernel_size": 3, "stride": 2}),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("nd", "norm_type", "kw"), LP)
def test_lp_pool(backend, nd, norm_type, kw):
    shape = (2, 3, 8) if nd == 1 else (2, 3, 7, 8)
    # a fractional power needs positive input; integer powers see negative values too
    x = RNG.uniform(0.2, 2.0, shape) if norm_type != int(norm_type) else RNG.standard_normal(shape)
    name = f"lp_pool{nd}d"
    compare(lambda a: getattr(F, name)(a, norm_type, **kw), lambda a: getattr(TF, name)(a, norm_type, **kw), x, backend)
    compare(lambda a: getattr(F, name)(a, norm_type, **kw), lambda a: getattr(TF, name)(a, norm_type, **kw), x[0], backend)
    cls = f"LPPool{nd}d"
    mine, theirs = getattr(nn, cls)(norm_type, **kw), getattr(torch.nn, cls)(norm_type, **kw)
    assert repr(mine) == repr(theirs)
    compare(mine, theirs, x, backend)


UNPOOL = [
    (1, (2, 3, 9), {"kernel_size": 2}, None), (1, (3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}, None),  # overlapping windows
    (1, (2, 3, 9), {"kernel_size": 2}, (9,)), (1, (2, 3, 9), {"kernel_size": 2}, (2, 3, 9)),
    (2, (2, 3, 6, 6), {"kernel_size": 2}, None), (2, (3, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1}, (6, 7)),
    (2, (2, 3, 7, 7), {"kernel_size": (2, 3), "stride": (2, 2)}, (7, 7)), (2, (1, 2, 5, 5), {"kernel_size": 2}, (1, 2, 5, 5)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("nd", "shape", "kw", "size"), UNPOOL)
def test_max_unpool(backend, nd, shape, kw, size):
    """Unpooling torch's max-pool output with its indices gives torch's result and gradient (Module and F)."""
    x = RNG.standard_normal(shape)
    pooled, idx = getattr(TF, f"max_pool{nd}d")(torch.tensor(x), **kw, return_indices=True)
    mine_idx = getattr(F, f"max_pool{nd}d")(mt.tensor(x, backend=backend), **kw, return_indices=True)[1]
    np.testing.assert_array_equal(mine_idx.numpy(), idx.numpy())
    name = f"max_unpool{nd}d"
    compare(lambda a: getattr(F, name)(a, mt.tensor(idx.numpy(), backend=backend), **kw, output_size=size),
            lambda a: getattr(TF, name)(a, idx, **kw, output_size=size), pooled.numpy(), backend)
    cls = f"MaxUnpool{nd}d"
    mine, theirs = getattr(nn, cls)(**kw), getattr(torch.nn, cls)(**kw)
    assert repr(mine) == repr(theirs)
    compare(lambda a: mine(a, mt.tensor(idx.numpy(), backend=backend), size), lambda a: theirs(a, idx, size),
            pooled.numpy(), backend)


def test_max_unpool_errors():
    x = mt.tensor(np.arange(10.0).reshape(1, 1, 10))
    out, idx = F.max_pool1d(x, 2, return_indices=True)
    for size, low, high in [((12,), 8, 12), ((8,), 8, 12)]:
        with pytest.raises(ValueError, match=f"between {low} and {high}"):
            F.max_unpool1d(out, idx, 2, output_size=size)
    with pytest.raises(ValueError, match="1 or 3 elements, but it has a length of 2"):
        F.max_unpool1d(out, idx, 2, output_size=(1, 9))
    with pytest.raises(IndexOutOfRangeError, match="invalid max index 9 .*size 9"):
        F.max_unpool1d(out, idx, 2, output_size=(9,))
    with pytest.raises(IndexOutOfRangeError, match="invalid max index -1"):
        F.max_unpool1d(out, idx - 2, 2)
    with pytest.raises(ShapeError, match="indices must have the input's shape"):
        F.max_unpool1d(out, idx[..., :3], 2)
    with pytest.raises(DTypeError, match="int64"):
        F.max_unpool1d(out, idx.to(mt.float32), 2)
    with pytest.raises(ShapeError, match="3-D \\(unbatched\\) or 4-D"):
        F.max_unpool2d(out[0], idx[0], 2)
    with pytest.raises(TypeError, match="argument 'indices' must be Tensor"):
        F.max_unpool1d(out, [1, 2], 2)


# --- padding ---


PADS = [
    ("ZeroPad1d", 2, (2, 3, 5)), ("ZeroPad1d", (1, 3), (4, 5)), ("ZeroPad1d", (-1, 2), (2, 2, 3, 5)),
    ("CircularPad1d", 2, (2, 3, 5)), ("CircularPad1d", (3, 1), (3, 5)), ("CircularPad1d", (-1, 2), (2, 3, 5)),
    ("CircularPad2d", 1, (2, 3, 4, 5)), ("CircularPad2d", (1, 2, 0, 3), (3, 4, 5)),
    ("CircularPad2d", (2, -1, 1, 0), (1, 2, 4, 5)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("cls", "padding", "shape"), PADS)
def test_padding_modules(backend, cls, padding, shape):
    mine, theirs = getattr(nn, cls)(padding), getattr(torch.nn, cls)(padding)
    assert repr(mine) == repr(theirs)
    compare(mine, theirs, RNG.standard_normal(shape), backend)


def test_padding_errors():
    with pytest.raises(ShapeError, match="2-D or 3-D input"):
        nn.CircularPad1d(1)(mt.zeros(4))
    with pytest.raises(ShapeError, match="3-D or 4-D input"):
        nn.CircularPad2d(1)(mt.zeros(1, 1, 1, 3, 3))
    with pytest.raises(ShapeError, match="at most"):
        nn.CircularPad1d(11)(mt.zeros(1, 1, 10))


# --- one tiny case per family on every backend (cuda: the simulator) ---


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_every_backend(backend):
    plist = nn.ParameterList([mt.zeros(2, backend=backend)])
    pdict = nn.ParameterDict({"w": mt.ones(2, backend=backend)})
    (plist[0] * pdict["w"] + pdict["w"]).sum().backward()
    assert np.all(plist[0].grad.numpy() == 1.0) and np.all(pdict["w"].grad.numpy() == 1.0)
    if backend == "cuda":
        assert repr(plist) == "ParameterList(  (0): Parameter containing: [float32 of size 2 (cuda)])"
    x = RNG.standard_normal((1, 2, 4, 4))
    pooled, idx = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    compare(lambda a: F.max_unpool2d(a, mt.tensor(idx.numpy(), backend=backend), 2),
            lambda a: TF.max_unpool2d(a, idx, 2), pooled.numpy(), backend)
    compare(lambda a: F.lp_pool1d(a, 2, 2), lambda a: TF.lp_pool1d(a, 2, 2), x[0], backend)
    compare(nn.CircularPad1d(1), torch.nn.CircularPad1d(1), x[0, :, 0], backend)
    compare(lambda a: F.adaptive_max_pool1d(a, 2), lambda a: TF.adaptive_max_pool1d(a, 2), x[0], backend)

"""minitensor.utils.data against torch.utils.data: data sets, random_split, samplers, collation and the DataLoader.

Random orders come from different generators, so the tests take minitensor's order and hand the same order to torch,
then compare everything else: batch contents, dtypes, shapes, container types, lengths and errors.
"""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from torch.utils import data as TD

import minitensor as mt
from minitensor.errors import ShapeError
from minitensor.utils import data as D

RNG = np.random.default_rng(11)
Point = namedtuple("Point", "x y")


def plain(batch):
    """A batch of either library as nested plain values: tensors become (dtype, shape, values)."""
    if isinstance(batch, (torch.Tensor, mt.Tensor)):
        dtype = str(batch.dtype).removeprefix("torch.") if isinstance(batch, torch.Tensor) else batch.dtype.name
        values = batch.numpy() if isinstance(batch, torch.Tensor) else batch.to_numpy()
        return ("tensor", dtype, tuple(batch.shape), values.tolist())
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__, [plain(b) for b in batch])
    if isinstance(batch, dict):
        return {k: plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [plain(b) for b in batch])
    return batch


def same(ours, theirs):
    assert plain(ours) == plain(theirs)


def raises_like(fn):
    """fn(mt's module) and fn(torch's) raise the same exception type; returns our exception."""
    with pytest.raises(Exception) as want:
        fn(TD)
    with pytest.raises(want.type) as got:
        fn(D)
    return got.value


def tensors(backend, *arrays):
    return [mt.tensor(a, backend=backend) for a in arrays], [torch.tensor(a) for a in arrays]


# --- data sets -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_dataset_matches_torch(backend):
    n = 3 if backend == "cuda" else 7
    ours, theirs = tensors(backend, RNG.standard_normal((n, 2)).astype(np.float32), np.arange(n))
    a, b = D.TensorDataset(*ours), TD.TensorDataset(*theirs)
    assert len(a) == len(b) == n
    for i in (0, n - 1, -1, [2, 0]):
        same(a[i], b[i])
    assert a[0][0].backend.name == backend
    longer_m, longer_t = tensors(backend, np.zeros(n + 1))
    raises_like(lambda L: L.TensorDataset(ours[0], longer_m[0]) if L is D else L.TensorDataset(theirs[0], longer_t[0]))


def test_stack_dataset_tuple_and_dict():
    xs, ys = list(range(5)), [f"s{i}" for i in range(5)]
    a, b = D.StackDataset(xs, ys), TD.StackDataset(xs, ys)
    assert len(a) == len(b) == 5 and a[3] == b[3] and a.__getitems__([4, 0]) == b.__getitems__([4, 0])
    a, b = D.StackDataset(x=xs, y=D.Subset(ys, [4, 3, 2, 1, 0])), TD.StackDataset(x=xs, y=TD.Subset(ys, [4, 3, 2, 1, 0]))
    assert a[1] == b[1] and a.__getitems__([0, 2]) == b.__getitems__([0, 2])
    raises_like(lambda L: L.StackDataset(xs, y=ys))
    raises_like(lambda L: L.StackDataset(xs, ys[:2]))
    raises_like(lambda L: L.StackDataset())


def test_concat_dataset():
    parts = [list(range(3)), list(range(10, 12)), [], list(range(20, 24))]
    a, b = D.ConcatDataset(parts), TD.ConcatDataset(parts)
    assert len(a) == len(b) == 9 and a.cumulative_sizes == b.cumulative_sizes
    assert [a[i] for i in range(-9, 9)] == [b[i] for i in range(-9, 9)]
    raises_like(lambda L: L.ConcatDataset(parts)[-10])
    raises_like(lambda L: L.ConcatDataset(parts)[9])
    raises_like(lambda L: L.ConcatDataset([]))
    raises_like(lambda L: L.ConcatDataset([Count(L, 3)]))
    added = D.Subset(parts[0], [0, 1]) + D.Subset(parts[1], [1])
    assert isinstance(added, D.ConcatDataset) and [added[i] for i in range(3)] == [0, 1, 11]


class Count:
    """An iterable-style data set of ``start, ..., start + n - 1`` for library L; under workers, each worker takes
    every ``num_workers``-th item (so together they give each once)."""

    def __new__(cls, L, n, start=0, shard=False):
        class _Count(L.IterableDataset):
            def __iter__(self):
                info = L.get_worker_info()
                if not shard or info is None:
                    return iter(range(start, start + n))
                return iter(range(start + info.id, start + n, info.num_workers))

            def __len__(self):
                return n

        return _Count()


def test_chain_dataset():
    raises_like(lambda L: L.IterableDataset())  # abstract: no __iter__
    raises_like(lambda L: L.Dataset()[0])
    for L in (D, TD):
        chained = L.ChainDataset([Count(L, 3), Count(L, 2, 10)])
        assert list(chained) == [0, 1, 2, 10, 11] and len(chained) == 5
        assert list(Count(L, 2) + Count(L, 1, 5)) == [0, 1, 5]
    raises_like(lambda L: list(L.ChainDataset([Count(L, 1), [1, 2]])))
    raises_like(lambda L: len(L.ChainDataset([[1, 2]])))


def test_subset():
    base = list(range(100, 110))
    a, b = D.Subset(base, [9, 0, 4]), TD.Subset(base, [9, 0, 4])
    assert len(a) == len(b) == 3 and [a[i] for i in range(3)] == [b[i] for i in range(3)]
    assert a.__getitems__([2, 0]) == b.__getitems__([2, 0]) == [104, 109]
    t = mt.arange(10) * 2
    assert D.Subset(t, [3, 1])[[1, 0]].tolist() == [2, 6]  # a list index goes through as one list

    def override(L):
        class Bad(L.Subset):
            def __getitem__(self, idx):
                return 0

        return Bad(base, [0])

    raises_like(override)


@pytest.mark.parametrize("n, lengths", [(10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (7, [0.2, 0.2, 0.2, 0.2, 0.2]),
                                        (5, [0.1, 0.9]), (4, [0.0, 1.0]), (9, [4, 5]), (0, [0, 0])])
def test_random_split_lengths_match_torch(n, lengths):
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        a = D.random_split(range(n), lengths)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        b = TD.random_split(range(n), lengths)
    assert [len(s) for s in a] == [len(s) for s in b]
    assert len(ours) == len(theirs)
    assert sorted(i for s in a for i in s) == list(range(n))  # a partition of the data set


def test_random_split_errors_and_seeding():
    raises_like(lambda L: L.random_split(range(10), [3, 3]))
    raises_like(lambda L: L.random_split(range(10), [1.5, -0.5]))
    mt.manual_seed(5)
    first = [list(s) for s in D.random_split(range(20), [0.5, 0.5])]
    mt.manual_seed(5)
    assert [list(s) for s in D.random_split(range(20), [0.5, 0.5])] == first
    g = [list(s) for s in D.random_split(range(20), [10, 10], generator=mt.Generator().manual_seed(1))]
    assert g == [list(s) for s in D.random_split(range(20), [10, 10], generator=mt.Generator().manual_seed(1))]
    assert g != [list(s) for s in D.random_split(range(20), [10, 10], generator=mt.Generator().manual_seed(2))]


# --- samplers ------------------------------------------------------------------------------------------------------

def test_sequential_and_batch_samplers_match_torch():
    for n in (0, 1, 7, 9):
        assert list(D.SequentialSampler(range(n))) == list(TD.SequentialSampler(range(n)))
        for bs in (1, 3, 9, 10):
            for drop in (False, True):
                a, b = D.BatchSampler(range(n), bs, drop), TD.BatchSampler(range(n), bs, drop)
                assert list(a) == list(b) and len(a) == len(b)
    for bad in (0, -1, 2.0, True):
        raises_like(lambda L, bad=bad: L.BatchSampler(range(4), bad, False))
    raises_like(lambda L: L.BatchSampler(range(4), 2, 1))


def test_random_sampler():
    g = mt.Generator().manual_seed(3)
    order = list(D.RandomSampler(range(9), generator=g))
    assert sorted(order) == list(range(9)) and order != list(range(9))
    long = list(D.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(long) == 10 and sorted(long[:4]) == sorted(long[4:8]) == [0, 1, 2, 3] and len(set(long[8:])) == 2
    drawn = list(D.RandomSampler(range(5), replacement=True, num_samples=70, generator=g))
    assert len(drawn) == 70 and set(drawn) == set(range(5))
    for kw in ({"replacement": 1}, {"num_samples": 0}, {"num_samples": 2.0}):
        raises_like(lambda L, kw=kw: L.RandomSampler(range(4), **kw))
    raises_like(lambda L: L.RandomSampler([]))
    assert len(D.RandomSampler(range(4), num_samples=6)) == len(TD.RandomSampler(range(4), num_samples=6)) == 6
    mt.manual_seed(9)
    first = list(D.RandomSampler(range(30)))
    mt.manual_seed(9)
    assert list(D.RandomSampler(range(30))) == first


def test_subset_and_weighted_samplers():
    indices = [5, 9, 2, 7]
    s = D.SubsetRandomSampler(indices, generator=mt.Generator().manual_seed(0))
    assert sorted(s) == sorted(indices) and len(s) == len(TD.SubsetRandomSampler(indices)) == 4
    w = D.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=mt.Generator().manual_seed(0))
    drawn = list(w)
    assert len(w) == 50 and set(drawn) == {1, 3} and drawn.count(3) > drawn.count(1)
    assert sorted(D.WeightedRandomSampler([1, 2, 3, 4], 4, replacement=False)) == [0, 1, 2, 3]
    raises_like(lambda L: L.WeightedRandomSampler([[1.0, 2.0]], 2))
    raises_like(lambda L: L.WeightedRandomSampler([1.0, 2.0], 0))
    raises_like(lambda L: L.WeightedRandomSampler([1.0, 2.0], True))
    raises_like(lambda L: L.WeightedRandomSampler([1.0, 2.0], 2, replacement=None))
    assert isinstance(mt.utils.data.WeightedRandomSampler([1.0], 1).weights, mt.Tensor)


# --- collation -----------------------------------------------------------------------------------------------------

def samples(L, backend="simple"):
    """Lists of samples of many structures, in library L's tensors."""
    t = (lambda a: torch.tensor(a)) if L is torch else (lambda a: mt.tensor(a, backend=backend))
    f32, i64 = np.linspace(-2, 3, 18, dtype=np.float32).reshape(3, 2, 3), np.arange(6).reshape(3, 2)
    return [
        [t(f32[i]) for i in range(3)],
        [t(i64[i]) for i in range(3)],
        [t(np.array(i > 0)) for i in range(3)],
        [f32[i] for i in range(3)],
        [i64[i].astype(np.int32) for i in range(3)],
        [np.array([True, False])] * 2,
        [np.float32(1.5), np.float32(2)], [np.float64(1.5)], [np.int64(4), np.int64(5)], [np.int32(3)], [np.bool_(True)],
        [1.5, 2.0], [1, 2, 3], [True, False], ["a", "b"], [b"x", b"y"],
        [{"x": t(f32[i]), "y": i, "name": str(i)} for i in range(3)],
        [(t(f32[i]), i, (float(i), [i, i + 1])) for i in range(3)],
        [Point(i, t(i64[i])) for i in range(2)],
        [[1, 2], [3, 4], [5, 6]],
        [{"a": {"b": [np.float64(i)]}} for i in range(2)],
    ]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_default_collate_matches_torch(backend):
    for ours, theirs in zip(samples(mt, backend), samples(torch)):
        same(D.default_collate(ours), TD.default_collate(theirs))
    stacked = D.default_collate([mt.ones(2, backend=backend)] * 3)
    assert stacked.backend.name == backend


def test_default_collate_cuda_tiny():
    stacked = D.default_collate([mt.tensor([1.0, 2.0], backend="cuda")] * 2)
    same(stacked, TD.default_collate([torch.tensor([1.0, 2.0])] * 2))
    assert stacked.backend.name == "cuda"


def test_default_collate_errors():
    raises_like(lambda L: L.default_collate([[1, 2], [3]]))
    raises_like(lambda L: L.default_collate([object(), object()]))
    raises_like(lambda L: L.default_collate([np.array(["a"]), np.array(["b"])]))
    raises_like(lambda L: L.default_collate([1 + 2j, 3j]))
    with pytest.raises(ShapeError):  # torch: RuntimeError
        D.default_collate([mt.ones(2), mt.ones(3)])


def test_default_convert_matches_torch():
    cases = [np.arange(3.0), (np.float32(2), 3, "x"), {"a": np.ones((2, 2), np.int32), "b": [np.int64(1)]},
             Point(np.array([1.0]), "s"), "text", 7, np.array(["a"]), [np.bool_(False), 2.5]]
    for case in cases:
        same(D.default_convert(case), TD.default_convert(case))
    t = mt.ones(2)
    assert D.default_convert(t) is t


# --- DataLoader ----------------------------------------------------------------------------------------------------

class Rows:
    """A map-style data set of (float32 row, int label, name) samples for library L."""

    def __init__(self, L, n):
        self.L, self.n = L, n
        self.x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)

    def __getitem__(self, i):
        row = torch.tensor(self.x[i]) if self.L is torch else mt.tensor(self.x[i])
        return row, int(i), f"r{i}"

    def __len__(self):
        return self.n


def both(n=7, **kw):
    """The same DataLoader over Rows in both libraries (a ``sampler`` list is shared)."""
    return D.DataLoader(Rows(mt, n), **kw), TD.DataLoader(Rows(torch, n), **kw)


@pytest.mark.parametrize("kw", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": 10},
                                {"batch_size": None}, {"batch_size": 2, "sampler": [6, 0, 3, 3, 1]},
                                {"batch_sampler": [[1, 2], [0], [6, 5, 4]]}, {"batch_size": 2, "collate_fn": lambda b: b}])
def test_loader_matches_torch(kw):
    a, b = both(**kw)
    assert len(a) == len(b)
    assert len(iter(a)) == len(iter(b))
    same(list(a), list(b))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_loader_shuffled_order_given_to_torch(backend):
    n = 11
    ours, theirs = tensors(backend, RNG.standard_normal((n, 3)), np.arange(n) * 10)
    mt.manual_seed(4)
    loader = D.DataLoader(D.TensorDataset(*ours), batch_size=4, shuffle=True)
    epoch1, epoch2 = list(loader), list(loader)
    order = [int(v) // 10 for _, y in epoch1 for v in y.tolist()]
    assert sorted(order) == list(range(n)) and order != list(range(n))
    same(epoch1, list(TD.DataLoader(TD.TensorDataset(*theirs), batch_size=4, sampler=order)))
    assert plain(epoch1) != plain(epoch2)  # a new order every epoch
    mt.manual_seed(4)
    same(list(loader), epoch1)  # reproducible from the seed
    g = mt.Generator().manual_seed(8)
    with_g = [y.tolist() for _, y in D.DataLoader(D.TensorDataset(*ours), 4, shuffle=True, generator=g)]
    g.manual_seed(8)
    assert [y.tolist() for _, y in D.DataLoader(D.TensorDataset(*ours), 4, shuffle=True, generator=g)] == with_g


def test_loader_cuda_tiny():
    x = mt.tensor([[1.0], [2.0], [3.0]], backend="cuda")
    (batch,) = list(D.DataLoader(D.TensorDataset(x), batch_size=3))
    same(batch, [torch.tensor([[1.0], [2.0], [3.0]])])
    assert batch[0].backend.name == "cuda"


@pytest.mark.parametrize("kw", [{"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None},
                                {"batch_size": 4}])
def test_loader_iterable_matches_torch(kw):
    a, b = D.DataLoader(Count(D, 7), **kw), TD.DataLoader(Count(TD, 7), **kw)
    assert len(a) == len(b)
    same(list(a), list(b))


def test_loader_workers_map_style_same_batches():
    a, b = both(n=9, batch_size=2, sampler=[8, 1, 4, 4, 0, 7, 2, 3, 5, 6, 1], num_workers=2, timeout=30)
    same(list(a), list(b))
    assert plain(list(a)) == plain(list(D.DataLoader(Rows(mt, 9), batch_size=2, sampler=[8, 1, 4, 4, 0, 7, 2, 3, 5, 6, 1])))
    mt.manual_seed(2)
    zero = list(D.DataLoader(Rows(mt, 9), batch_size=2, shuffle=True))
    mt.manual_seed(2)
    same(list(D.DataLoader(Rows(mt, 9), batch_size=2, shuffle=True, num_workers=3, prefetch_factor=1, timeout=30)), zero)


def test_loader_workers_iterable_interleave_like_torch():
    kw = {"batch_size": 2, "num_workers": 2, "timeout": 30}
    a, b = D.DataLoader(Count(D, 9, shard=True), **kw), TD.DataLoader(Count(TD, 9, shard=True), **kw)
    same(list(a), list(b))  # worker 0 gives 0, 2, 4, 6, 8 and worker 1 gives 1, 3, 5, 7, batches round-robin
    duplicated = [v.tolist() for v in D.DataLoader(Count(D, 3), batch_size=2, num_workers=2, timeout=30)]
    assert duplicated == [[0, 1], [0, 1], [2], [2]]  # unsharded: every worker yields the whole set


class Probe:
    """Records get_worker_info() per sample (map-style)."""

    def __getitem__(self, i):
        info = D.get_worker_info()
        return -1 if info is None else (info.id, info.num_workers, info.seed, info.dataset is self)

    def __len__(self):
        return 6


def test_worker_info_and_init_fn():
    assert D.get_worker_info() is None
    assert list(D.DataLoader(Probe(), batch_size=None)) == [-1] * 6
    started = []
    out = list(D.DataLoader(Probe(), batch_size=None, num_workers=2, worker_init_fn=started.append, timeout=30))
    assert sorted(started) == [0, 1]
    assert [o[0] for o in out] == [0, 1] * 3 and all(o[1] == 2 and o[3] for o in out)
    assert out[1][2] == out[0][2] + 1  # seed: base seed + worker id
    with pytest.raises(KeyError):
        list(D.DataLoader({0: 1}, batch_size=None, sampler=[0, 5], num_workers=2, timeout=30))


@pytest.mark.parametrize("kw", [{"shuffle": True, "sampler": [0]}, {"batch_sampler": [[0]], "batch_size": 2},
                                {"batch_sampler": [[0]], "shuffle": True}, {"batch_sampler": [[0]], "sampler": [0]},
                                {"batch_sampler": [[0]], "drop_last": True}, {"batch_size": None, "drop_last": True},
                                {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2},
                                {"num_workers": 1, "prefetch_factor": -1}, {"persistent_workers": True},
                                {"multiprocessing_context": "spawn"}, {"num_workers": 1, "multiprocessing_context": "nope"},
                                {"num_workers": 1, "multiprocessing_context": 3}, {"batch_size": 0}])
def test_loader_argument_errors_match_torch(kw):
    raises_like(lambda L: L.DataLoader(list(range(4)), **kw))


@pytest.mark.parametrize("kw", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_loader_iterable_argument_errors(kw):
    raises_like(lambda L: L.DataLoader(Count(L, 3), **kw))


def test_loader_frozen_attributes_and_lengths():
    loader = D.DataLoader(list(range(5)), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute"):
        loader.batch_size = 3
    loader.num_workers = 0  # not frozen
    for drop in (False, True):
        assert len(D.DataLoader(Count(D, 5), batch_size=2, drop_last=drop)) == len(TD.DataLoader(Count(TD, 5), 2, drop_last=drop))
    raises_like(lambda L: len(L.DataLoader(L.ChainDataset([]), batch_size=None).dataset.datasets[0]))
    assert isinstance(D.DataLoader(list(range(3)), shuffle=True).sampler, D.RandomSampler)
    assert isinstance(D.DataLoader(list(range(3))).batch_sampler, D.BatchSampler)
    assert D.DataLoader(list(range(3)), batch_size=None).collate_fn is D.default_convert
    with pytest.warns(UserWarning, match="pin_memory"):
        assert [b.tolist() for b in D.DataLoader([1, 2], pin_memory=True)] == [[1], [2]]


def test_reachable_from_top_level_and_old_loader_untouched():
    assert mt.utils.data.DataLoader is D.DataLoader and D.distributed.DistributedSampler is D.DistributedSampler
    from minitensor.data_loader import DataLoader as ArrayLoader

    batches = list(ArrayLoader(np.arange(10)[:, None], np.arange(10), batch_size=4, shuffle=False))
    assert [y.tolist() for _, y in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]

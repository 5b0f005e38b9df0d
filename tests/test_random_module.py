"""torch.random (seeding, states, fork_rng, thread_safe_generator), torch.utils._pytree and torch.utils.hooks as
minitensor's ``mt.random``, ``mt.utils._pytree`` and ``mt.utils.hooks``, compared with torch's."""

from __future__ import annotations

import gc
import random as stdlib_random
import subprocess
import sys
import weakref
from collections import OrderedDict, namedtuple
from typing import Any

import numpy as np
import pytest
import torch
import torch.random as trandom
import torch.utils._pytree as tpytree

import minitensor as mt
import minitensor.utils._pytree as mpytree
from minitensor.utils.hooks import RemovableHandle

Point = namedtuple("Point", "x y")


def test_random_names_match_torch() -> None:
    assert sorted(mt.random.__all__) == sorted(trandom.__all__)
    assert mt.random.manual_seed is mt.manual_seed and mt.random.get_rng_state is mt.get_rng_state
    mt.random.manual_seed(5)
    assert mt.random.initial_seed() == 5
    a = mt.rand(3).to_numpy()
    mt.random.manual_seed(5)
    assert np.array_equal(mt.rand(3).to_numpy(), a)
    assert isinstance(mt.random.seed(), int)


@pytest.mark.parametrize("lib", [mt, torch])
def test_fork_rng_restores_state(lib: Any) -> None:
    """The same properties hold for torch.random.fork_rng and mt.random.fork_rng."""
    fork = lib.random.fork_rng if lib is mt else trandom.fork_rng
    lib.manual_seed(3)
    expected = lib.rand(4).numpy() if lib is torch else lib.rand(4).to_numpy()

    def draw() -> np.ndarray:
        t = lib.rand(4)
        return t.numpy() if lib is torch else t.to_numpy()

    lib.manual_seed(3)
    with fork(devices=[]):
        inside = draw()
    assert np.array_equal(inside, expected) and np.array_equal(draw(), expected)  # restored: the same draw again
    lib.manual_seed(3)
    with pytest.raises(KeyError):
        with fork():
            lib.rand(7)
            raise KeyError("leaving by an exception restores too")
    assert np.array_equal(draw(), expected)
    lib.manual_seed(3)
    with fork(enabled=False):
        draw()
    assert not np.array_equal(draw(), expected)  # not forked: the stream moved on


def test_thread_safe_generator() -> None:
    assert mt.random.thread_safe_generator() is None and trandom.thread_safe_generator() is None
    seen: list[Any] = []

    class Probe(mt.utils.data.Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> int:
            seen.append(mt.random.thread_safe_generator())
            return i

    list(mt.utils.data.DataLoader(Probe(), batch_size=1, num_workers=2))
    assert len(seen) == 2 and all(isinstance(g, mt.Generator) for g in seen)
    assert seen[0] is not seen[1]


def test_random_module_does_not_shadow_stdlib() -> None:
    assert stdlib_random.__file__ != mt.random.__file__ and hasattr(stdlib_random, "shuffle")
    code = "import minitensor, random; import minitensor.random as r; assert random.shuffle and r.fork_rng; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


TREES = [
    5,
    None,
    [1, None, (2, 3)],
    {"b": 1, "a": [2, {"c": 3}], "d": ()},
    (Point(1, [2, 3]), OrderedDict(z=4, y=5)),
    [[], {}, ((),)],
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_pytree_matches_torch(tree: Any) -> None:
    leaves, spec = mpytree.tree_flatten(tree)
    tleaves, tspec = tpytree.tree_flatten(tree)
    assert leaves == tleaves and mpytree.tree_leaves(tree) == tpytree.tree_leaves(tree)
    assert (spec.num_leaves, spec.num_nodes, spec.is_leaf()) == (tspec.num_leaves, tspec.num_nodes, tspec.is_leaf())
    assert mpytree.tree_structure(tree) == spec
    rebuilt = mpytree.tree_unflatten([10 * v if isinstance(v, int) else v for v in leaves], spec)
    assert rebuilt == tpytree.tree_unflatten([10 * v if isinstance(v, int) else v for v in tleaves], tspec)
    assert type(rebuilt) is type(tree)
    double = mpytree.tree_map(lambda v: v if v is None else 2 * v, tree)
    assert double == tpytree.tree_map(lambda v: v if v is None else 2 * v, tree)


def test_pytree_is_leaf_rests_and_errors() -> None:
    tree = [1, (2, 3), {"k": (4,)}]
    is_tuple = lambda v: isinstance(v, tuple)  # noqa: E731
    assert mpytree.tree_leaves(tree, is_leaf=is_tuple) == tpytree.tree_leaves(tree, is_leaf=is_tuple) == [1, (2, 3), (4,)]
    rest = [10, ([20], 30), {"k": (40,)}]
    assert mpytree.tree_map(lambda a, b: (a, b), tree, rest) == tpytree.tree_map(lambda a, b: (a, b), tree, rest)
    for bad in ([10, [20, 30], {"k": (40,)}], [10, (20,), {"k": (40,)}], [10, (20, 30), {"j": (40,)}]):
        with pytest.raises(ValueError) as theirs:
            tpytree.tree_map(lambda a, b: a, tree, bad)
        with pytest.raises(ValueError) as ours:
            mpytree.tree_map(lambda a, b: a, tree, bad)
        assert str(ours.value).split(";")[0] == str(theirs.value).split(";")[0]
    spec = mpytree.tree_structure(tree)
    for n in (3, 5):
        with pytest.raises(ValueError, match=f"`leaves` has length {n} but the spec refers to a pytree that holds 4"):
            mpytree.tree_unflatten(list(range(n)), spec)
    with pytest.raises(TypeError, match="Expected `treespec` to be an instance of PyTreeSpec"):
        mpytree.tree_unflatten([1], [1])  # type: ignore[arg-type]


def test_pytree_unflatten_keeps_no_leaf_alive() -> None:
    """Rebuilding a tree leaves no reference cycle behind: a leaf dies with the tree, without the garbage collector."""
    gc.disable()
    try:
        leaf = mt.tensor([1.0])
        ref = weakref.ref(leaf)
        tree = mpytree.tree_unflatten([leaf, 2], mpytree.tree_structure([(0,), {"k": 0}]))
        assert tree[0][0] is leaf
        del leaf, tree
        assert ref() is None
    finally:
        gc.enable()


def test_hooks_removable_handle() -> None:
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    seen: list[Any] = []
    handle = x.register_hook(lambda g: seen.append(g))
    assert isinstance(handle, RemovableHandle) and isinstance(handle, mt.utils.hooks.RemovableHandle)
    handle.remove()
    (x * 2).sum().backward()
    assert seen == []
    with x.register_hook(lambda g: seen.append(g)):
        (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert len(seen) == 1
    assert torch.utils.hooks.RemovableHandle.__name__ == RemovableHandle.__name__

"""TensorData: index math against NumPy, and views that share storage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitensor import IndexOutOfRangeError, NonContiguousError, PermutationError, ShapeError
from minitensor.tensor_data import (
    TensorData,
    broadcast_index,
    index_to_position,
    shape_broadcast,
    strides_from_shape,
    to_index,
)

shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple)


@given(shapes)
def test_strides_match_numpy(shape: tuple[int, ...]) -> None:
    assert strides_from_shape(shape) == tuple(s // 8 for s in np.zeros(shape).strides)


@given(shapes, st.data())
def test_to_index_round_trips_with_position(shape: tuple[int, ...], data: st.DataObject) -> None:
    ordinal = data.draw(st.integers(0, int(np.prod(shape)) - 1))
    out = np.zeros(len(shape), dtype=np.int64)
    to_index(ordinal, np.array(shape), out)
    assert tuple(out) == np.unravel_index(ordinal, shape)
    assert index_to_position(out, np.array(strides_from_shape(shape))) == ordinal


@given(shapes, shapes)
def test_shape_broadcast_matches_numpy(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(ShapeError, match="cannot be broadcast"):
            shape_broadcast(a, b)
        return
    assert shape_broadcast(a, b) == expected


def test_broadcast_index_maps_stretched_dims_to_zero() -> None:
    out = np.zeros(2, dtype=np.int64)
    broadcast_index(np.array([3, 2, 4]), np.array([5, 3, 5]), np.array([1, 5]), out)
    assert out.tolist() == [0, 4]


def make(shape: tuple[int, ...]) -> tuple[TensorData, np.ndarray]:
    array = np.arange(int(np.prod(shape)), dtype=np.float64)
    return TensorData(array, shape), array.reshape(shape)


@given(shapes, st.data())
def test_permute_is_a_stride_change(shape: tuple[int, ...], data: st.DataObject) -> None:
    td, ref = make(shape)
    order = data.draw(st.permutations(range(len(shape))))
    p = td.permute(*order)
    assert p.storage is td.storage
    expected = np.transpose(ref, order)
    for index in p.indices():
        assert p.get(index) == expected[index]


def test_writes_through_views_are_visible_in_the_base() -> None:
    td, _ = make((2, 3, 4))
    p = td.permute(2, 0, 1)
    p.set((3, 1, 2), -1.0)
    assert td.get((1, 2, 3)) == -1.0
    v = td.view(6, 4)
    v.set((5, 0), -2.0)
    assert td.get((1, 2, 0)) == -2.0
    s = td.slice((1, slice(None), slice(1, 4, 2)))
    assert s.shape == (3, 2)
    s.set((2, 1), -3.0)
    assert td.get((1, 2, 3)) == -3.0
    e = TensorData(np.array([1.0, 2.0]), (2, 1)).expand((3, 2, 4))
    assert e.strides == (0, 1, 0) and e.get((2, 1, 3)) == 2.0


def test_contiguity() -> None:
    td, _ = make((2, 3))
    assert td.is_contiguous()
    assert not td.permute(1, 0).is_contiguous()
    assert td.view(3, 2).shape == (3, 2)
    assert td.view(-1).shape == (6,)


def test_errors_name_shapes() -> None:
    td, _ = make((2, 3))
    with pytest.raises(NonContiguousError, match=r"\(2, 3\).*\(1, 2\)|\(3, 2\)"):
        td.permute(1, 0).view(6)
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4,\)"):
        td.view(4)
    with pytest.raises(PermutationError, match=r"\(0, 0\)"):
        td.permute(0, 0)
    with pytest.raises(IndexOutOfRangeError, match=r"\(2, 0\).*\(2, 3\)"):
        td.get((2, 0))
    with pytest.raises(IndexOutOfRangeError):
        td.slice((5,))
    with pytest.raises(ShapeError, match="expand"):
        td.expand((3, 3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes(dtype: type) -> None:
    td = TensorData(np.zeros(4, dtype=dtype), (2, 2))
    assert td.dtype == np.dtype(dtype)

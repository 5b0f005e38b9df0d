"""Streaming stores on the ``fast`` backend: a contiguous element-wise call whose output is too large for the cache
takes ``map_stream_run``/``zip_stream_run`` (tiles copied out with non-temporal stores). Those must write the plain
loops' bits at every length and alignment, and only calls that may stream take them."""

from __future__ import annotations

import os

import numpy as np
import pytest

from minitensor.backends import fast_launch
from minitensor.backends.fast_plan import elementwise_kernel
from minitensor.tensor_data import TensorData

CASES = [("map", "neg", np.float64, np.float64), ("map", "sin", np.float32, np.float32),
         ("map", "sqrt", np.float64, np.float32), ("zip", "add", np.float64, np.float64),
         ("zip", "lt", np.float32, np.bool_), ("zip", "mul", np.int64, np.int64)]


def offset_storage(n: int, dtype: type, shift: int) -> np.ndarray:
    """n zeros of ``dtype`` starting ``shift`` elements past a 64-byte boundary (an output that is not aligned)."""
    raw = np.zeros(n + shift + 64, dtype)
    start = (-raw.ctypes.data % 64) // raw.itemsize + shift
    return raw[start : start + n]


def run(family: str, op: str, inputs: list[TensorData], out: TensorData, stream_from: int) -> int:
    """Plan and run the call with streaming from ``stream_from`` bytes; the address of the loop it took."""
    saved = fast_launch.STREAM_FROM
    fast_launch.STREAM_FROM = stream_from
    try:
        kernel, layout = elementwise_kernel(family, op, inputs, out, lazy=False)
    finally:
        fast_launch.STREAM_FROM = saved
    with np.errstate(all="ignore"):
        kernel(*[x.storage for x in inputs], out.storage, *layout)
    return int(layout[-1])


@pytest.mark.parametrize("family,op,dtype,out_dtype", CASES, ids=lambda v: getattr(v, "__name__", v))
def test_streamed_calls_write_the_plain_loops_bits(family: str, op: str, dtype: type, out_dtype: type) -> None:
    """Lengths below one tile, whole tiles plus a ragged end, and several chunks; outputs 0, 1 and 3 elements past a
    64-byte boundary (the head written before the first aligned line)."""
    rng = np.random.default_rng(5)
    for n in (5, 3 * 1024 + 7, 50_013):
        inputs = [TensorData((rng.standard_normal(n) * 20).astype(dtype), (n,)) for _ in range(1 if family == "map" else 2)]
        for shift in (0, 1, 3):
            plain = TensorData(offset_storage(n, out_dtype, shift), (n,))
            streamed = TensorData(offset_storage(n, out_dtype, shift), (n,))
            plain_loop = run(family, op, inputs, plain, fast_launch.STREAM_NEVER)
            streamed_loop = run(family, op, inputs, streamed, 1)
            assert streamed_loop != plain_loop  # the streaming loop ran
            got, want = streamed.storage, plain.storage  # bits (zero signs too); any nan equals any nan
            np.testing.assert_array_equal(got != got, want != want)
            np.testing.assert_array_equal(np.where(got != got, 0, got).view(np.uint8),
                                          np.where(want != want, 0, want).view(np.uint8), err_msg=f"n={n} shift={shift}")


def test_only_large_contiguous_outputs_stream() -> None:
    """From STREAM_FROM bytes of output, on the flat walker: a smaller output, a transposed operand and the
    compute-bound math ops keep the plain loop; an in-place call streams (each tile is read before it is written) and
    gets the right values."""
    n = 1 << 17  # 1 MiB of float64
    a, b = (TensorData(np.arange(n, dtype=np.float64), (n,)) for _ in range(2))
    stream = fast_launch.run_address("zip", "add", "float64", np.dtype(np.float64), a.dtype, b.dtype, stream=True)
    plain = fast_launch.run_address("zip", "add", "float64", np.dtype(np.float64), a.dtype, b.dtype)
    limit = n * 8
    assert run("zip", "add", [a, b], TensorData(np.empty(n), (n,)), limit) == stream
    assert run("zip", "add", [a, b], TensorData(np.empty(n), (n,)), limit + 1) == plain  # smaller than the limit
    assert run("zip", "add", [a, b], a, limit) == stream  # in place
    np.testing.assert_array_equal(a.storage, 2 * np.arange(n))
    assert run("map", "neg", [a], a, 1) != run("map", "neg", [a], a, fast_launch.STREAM_NEVER)
    np.testing.assert_array_equal(a.storage, 2 * np.arange(n))  # negated twice
    out = TensorData(np.empty(n), (n,))
    for op in fast_launch.COMPUTE_BOUND:
        assert run("map", op, [a], out, 1) == fast_launch.run_address("map", op, "float64", out.dtype, a.dtype), op
    side = 1 << 9
    square = TensorData(np.arange(side * side, dtype=np.float64), (side, side))
    out = TensorData(np.empty(side * side), (side, side))
    assert run("zip", "add", [square, square.permute(1, 0)], out, 1) == plain  # not flat: the general walker
    values = square.storage.reshape(side, side)
    np.testing.assert_array_equal(out.storage.reshape(side, side), values + values.T)


def test_the_limit_follows_the_cache_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = fast_launch.last_level_cache_bytes()
    level3 = os.sysconf("SC_LEVEL3_CACHE_SIZE") if "SC_LEVEL3_CACHE_SIZE" in os.sysconf_names else 0
    if level3 and level3 > 0:
        assert cache >= level3
    monkeypatch.setenv(fast_launch.STREAM_FROM_ENV, "4096")
    assert fast_launch._stream_from() == 4096
    monkeypatch.setenv(fast_launch.STREAM_FROM_ENV, "0")
    assert fast_launch._stream_from() == fast_launch.STREAM_NEVER
    monkeypatch.setenv(fast_launch.STREAM_FROM_ENV, "lots")
    with pytest.raises(ValueError, match="MINITENSOR_STREAM_FROM must be a whole number of bytes, got 'lots'"):
        fast_launch._stream_from()
    monkeypatch.delenv(fast_launch.STREAM_FROM_ENV)
    pays = fast_launch.streaming_pays(fast_launch.HOST_CPU)
    expected = cache * 3 // 4 if fast_launch.X86 and cache and pays else fast_launch.STREAM_NEVER
    assert fast_launch._stream_from() == expected
    assert fast_launch.streaming_pays("icelake-server") and fast_launch.streaming_pays("skylake-avx512")
    assert not fast_launch.streaming_pays("znver5") and not fast_launch.streaming_pays("znver4")

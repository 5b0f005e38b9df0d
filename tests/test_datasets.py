"""Datasets: 2-D toy sets, the bundled digits, the IDX (MNIST) loader and the DataLoader."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest

from minitensor import datasets
from minitensor.data_loader import DataLoader
from minitensor.datasets import ChecksumError, IDXError, load_mnist, read_idx, toy

# --- 2-D toy sets ------------------------------------------------------------------------------

RULES = {
    "simple": lambda X: X[:, 0] < 0,
    "diag": lambda X: X[:, 0] + X[:, 1] < 0,
    "split": lambda X: np.abs(X[:, 0]) > 0.3,
    "xor": lambda X: X[:, 0] * X[:, 1] < 0,
    "circle": lambda X: X[:, 0] ** 2 + X[:, 1] ** 2 > 0.1,
    "parabola": lambda X: X[:, 0] ** 2 <= X[:, 1],
}


@pytest.mark.parametrize("name", list(datasets.TOY_DATASETS))
def test_toy_shapes_range_and_determinism(name: str) -> None:
    data = toy(name, 500, seed=3)
    assert data.X.shape == (500, 2) and data.X.dtype == np.float64
    assert data.y.shape == (500,) and data.y.dtype == np.int64
    assert set(np.unique(data.y)) <= {0, 1}
    assert np.all(data.X >= -0.5) and np.all(data.X <= 0.5)
    assert 0.1 < data.y.mean() < 0.9, "both classes present"
    again = toy(name, 500, seed=3)
    np.testing.assert_array_equal(data.X, again.X)
    np.testing.assert_array_equal(data.y, again.y)
    other = toy(name, 500, seed=4)
    assert not np.array_equal(data.X, other.X)
    X, y = data  # unpacks
    assert X is data.X and y is data.y


@pytest.mark.parametrize("name", list(RULES))
def test_toy_label_rules_hold(name: str) -> None:
    data = toy(name, 1000, seed=0)
    np.testing.assert_array_equal(data.y, RULES[name](data.X).astype(np.int64))


def test_toy_default_is_1000_uniform_points() -> None:
    data = toy("parabola")
    assert len(data) == 1000
    # Uniform in the square: each quadrant holds about a quarter.
    quadrant = (data.X[:, 0] > 0).astype(int) * 2 + (data.X[:, 1] > 0)
    counts = np.bincount(quadrant, minlength=4)
    assert np.all(np.abs(counts - 250) < 60)


def test_spiral_arms_are_balanced_and_radial() -> None:
    data = toy("spiral", 401, seed=1)
    assert np.bincount(data.y).tolist() == [200, 201]
    radius = np.hypot(data.X[:, 0], data.X[:, 1])
    assert radius.max() <= 0.5


def test_unknown_dataset_lists_known_names() -> None:
    with pytest.raises(ValueError, match="known 2-D datasets: simple, diag, split, xor, circle, spiral, parabola"):
        toy("moons")


# --- digits ------------------------------------------------------------------------------------


def test_digits_split_is_stratified_fixed_and_scaled() -> None:
    pytest.importorskip("sklearn")
    d = datasets.load_digits()
    assert d.X_train.shape[1:] == (1, 8, 8) and d.X_train.dtype == np.float32
    assert len(d.X_train) + len(d.X_test) == 1797
    assert len(d.X_test) == 359
    assert d.X_train.min() >= 0.0 and d.X_train.max() == 1.0
    # Stratified: each class is ~20% test.
    all_counts = np.bincount(np.concatenate([d.y_train, d.y_test]), minlength=10)
    test_counts = np.bincount(d.y_test, minlength=10)
    assert np.all(np.abs(test_counts - 0.2 * all_counts) <= 1)
    again = datasets.load_digits()
    np.testing.assert_array_equal(d.y_test, again.y_test)
    np.testing.assert_array_equal(d.X_train, again.X_train)
    # No example in both halves.
    train_rows = {row.tobytes() for row in d.X_train.reshape(len(d.X_train), -1)}
    dup = sum(row.tobytes() in train_rows for row in d.X_test.reshape(len(d.X_test), -1))
    assert dup < 5  # the raw digits contain a handful of exact duplicate images
    small = d.limit(100, 20)
    assert len(small.X_train) == 100 and len(small.y_test) == 20


def test_digits_are_scikit_learns_bundled_digits() -> None:
    """load_digits reads scikit-learn's data file itself (no sklearn import): the same images and labels."""
    from sklearn.datasets import load_digits as sklearn_digits

    bunch = sklearn_digits()
    d = datasets.load_digits()
    X = np.concatenate([d.X_train, d.X_test])[:, 0] * 16.0
    y = np.concatenate([d.y_train, d.y_test])
    ours = sorted(zip(X.reshape(len(X), -1).astype(np.int64).tolist(), y.tolist()))
    theirs = sorted(zip(bunch.images.reshape(len(X), -1).astype(np.int64).tolist(), bunch.target.tolist()))
    assert ours == theirs


@pytest.mark.parametrize("fraction", [2, 1.0, -0.1, float("nan"), "0.2", True])
def test_digits_rejects_bad_test_fraction(fraction: object) -> None:
    pytest.importorskip("sklearn")
    with pytest.raises(ValueError, match="test_fraction must be a number in \\[0, 1\\)"):
        datasets.load_digits(test_fraction=fraction)  # type: ignore[arg-type]


# --- DataLoader --------------------------------------------------------------------------------


def test_dataloader_covers_each_sample_once_per_epoch() -> None:
    X = np.arange(103, dtype=np.float64).reshape(103, 1)
    y = np.arange(103)
    loader = DataLoader(X, y, batch_size=10, shuffle=True, seed=0)
    assert len(loader) == 11
    for _ in range(3):
        batches = list(loader)
        assert [len(b[1]) for b in batches] == [10] * 10 + [3]
        seen = np.concatenate([b[1] for b in batches])
        assert sorted(seen.tolist()) == list(range(103))
        for xb, yb in batches:
            np.testing.assert_array_equal(xb[:, 0], yb)  # rows stay paired


def test_dataloader_shuffles_each_epoch_deterministically() -> None:
    X = np.arange(50).reshape(50, 1)
    a = DataLoader(X, np.arange(50), batch_size=50, seed=7)
    b = DataLoader(X, np.arange(50), batch_size=50, seed=7)
    a1, a2 = next(iter(a))[1], next(iter(a))[1]
    b1, b2 = next(iter(b))[1], next(iter(b))[1]
    assert not np.array_equal(a1, np.arange(50)), "shuffled"
    assert not np.array_equal(a1, a2), "reshuffled each epoch"
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    c = DataLoader(X, np.arange(50), batch_size=50, seed=7)
    c.set_epoch(1)
    np.testing.assert_array_equal(next(iter(c))[1], a2)  # resuming at epoch 1 replays epoch 1
    assert not np.array_equal(a1, next(iter(DataLoader(X, np.arange(50), 50, seed=8)))[1])


def test_dataloader_no_shuffle_and_drop_last() -> None:
    X = np.arange(25).reshape(25, 1)
    loader = DataLoader(X, np.arange(25), batch_size=10, shuffle=False, drop_last=True)
    assert len(loader) == 2
    batches = [yb.tolist() for _, yb in loader]
    assert batches == [list(range(10)), list(range(10, 20))]
    only_x = list(DataLoader(X, None, batch_size=10, shuffle=False))
    assert [len(b) for b in only_x] == [10, 10, 5]


def test_dataloader_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(np.zeros((3, 1)), np.zeros(3), batch_size=0)
    with pytest.raises(ValueError, match="3 rows but y has 2"):
        DataLoader(np.zeros((3, 1)), np.zeros(2))


# --- IDX files ---------------------------------------------------------------------------------


def idx_bytes(array: np.ndarray, type_code: int = 0x08) -> bytes:
    header = bytes([0, 0, type_code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(">u1" if type_code == 0x08 else ">i4").tobytes()


def write(path: Path, payload: bytes, gz: bool) -> Path:
    if gz:
        path = path.with_name(path.name + ".gz")
        with gzip.open(path, "wb") as handle:
            handle.write(payload)
    else:
        path.write_bytes(payload)
    return path


def make_mnist(folder: Path, gz: bool, n_train: int = 12, n_test: int = 5, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train, dtype=np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test, dtype=np.uint8),
    }
    folder.mkdir(parents=True, exist_ok=True)
    for name, arr in arrays.items():
        write(folder / name, idx_bytes(arr), gz)
    return arrays


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_load_mnist_from_idx_files(tmp_path: Path, gz: bool) -> None:
    arrays = make_mnist(tmp_path, gz)
    # These files are not the standard ones: the MD5 check fails for gzipped files with the standard names.
    if gz:
        with pytest.raises(ChecksumError, match="differs from the published"):
            load_mnist(tmp_path)
    data = load_mnist(tmp_path, verify=False) if gz else load_mnist(tmp_path)
    assert data.X_train.shape == (12, 1, 28, 28) and data.X_train.dtype == np.float32
    assert data.X_test.shape == (5, 1, 28, 28)
    np.testing.assert_allclose(data.X_train[:, 0] * 255.0, arrays["train-images-idx3-ubyte"], atol=1e-3)
    np.testing.assert_array_equal(data.y_train, arrays["train-labels-idx1-ubyte"])
    np.testing.assert_array_equal(data.y_test, arrays["t10k-labels-idx1-ubyte"])
    fashion = load_mnist(tmp_path, "fashion", verify=False)
    assert fashion.classes[0] == "T-shirt/top"


def test_read_idx_other_types(tmp_path: Path) -> None:
    arr = np.arange(-3, 3, dtype=np.int32).reshape(2, 3)
    path = write(tmp_path / "x.idx", idx_bytes(arr, 0x0C), gz=True)
    out = read_idx(path)
    np.testing.assert_array_equal(out, arr)
    assert out.dtype.byteorder in ("=", "|") or out.dtype.isnative


def test_missing_files_explain_what_to_get(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"does not exist.*train-images-idx3-ubyte\.gz"):
        load_mnist(tmp_path / "nowhere")
    make_mnist(tmp_path, gz=False)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match=r"t10k-labels-idx1-ubyte\.gz.*(Download|download)") as info:
        load_mnist(tmp_path)
    assert "train-images" not in str(info.value)
    with pytest.raises(FileNotFoundError, match="fashion-mnist"):
        load_mnist(tmp_path, "fashion")
    with pytest.raises(ValueError, match="unknown IDX dataset"):
        load_mnist(tmp_path, "kmnist")


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_corrupt_magic(tmp_path: Path, gz: bool) -> None:
    make_mnist(tmp_path, gz=False)
    payload = bytearray(idx_bytes(np.zeros((12, 28, 28), np.uint8)))
    payload[0:4] = b"\x12\x34\x08\x03"
    (tmp_path / "train-images-idx3-ubyte").unlink()
    write(tmp_path / "train-images-idx3-ubyte", bytes(payload), gz)
    with pytest.raises(IDXError, match="bad IDX magic number 0x12340803"):
        load_mnist(tmp_path, verify=False)


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_truncated_file(tmp_path: Path, gz: bool) -> None:
    make_mnist(tmp_path, gz=False)
    payload = idx_bytes(np.zeros((12, 28, 28), np.uint8))[:-100]
    (tmp_path / "train-images-idx3-ubyte").unlink()
    write(tmp_path / "train-images-idx3-ubyte", payload, gz)
    with pytest.raises(IDXError, match=r"truncated.*\(12, 28, 28\)"):
        load_mnist(tmp_path, verify=False)


def test_truncated_header_and_gzip_stream(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_bytes(b"\x00\x00")
    with pytest.raises(IDXError, match="too short"):
        read_idx(short)
    header_only = tmp_path / "header"
    header_only.write_bytes(b"\x00\x00\x08\x03" + struct.pack(">I", 5))
    with pytest.raises(IDXError, match="truncated header"):
        read_idx(header_only)
    gz = write(tmp_path / "cut", idx_bytes(np.random.default_rng(0).integers(0, 256, (50, 28, 28), dtype=np.uint8)), gz=True)
    gz.write_bytes(gz.read_bytes()[:200])
    with pytest.raises(IDXError, match="corrupt or truncated gzip"):
        read_idx(gz)


def test_trailing_data(tmp_path: Path) -> None:
    path = tmp_path / "extra"
    path.write_bytes(idx_bytes(np.zeros(4, np.uint8)) + b"\x00")
    with pytest.raises(IDXError, match="trailing data"):
        read_idx(path)


def test_mismatched_image_and_label_counts(tmp_path: Path) -> None:
    make_mnist(tmp_path, gz=False)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros(4, np.uint8)))
    with pytest.raises(IDXError, match="test images and labels disagree: .* 5 images but .* 4 labels"):
        load_mnist(tmp_path)


def test_swapped_image_and_label_files(tmp_path: Path) -> None:
    make_mnist(tmp_path, gz=False)
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros((12, 28, 28), np.uint8)))
    with pytest.raises(IDXError, match="expected a 1-D label file"):
        load_mnist(tmp_path)


def test_checksums_of_standard_files_are_recorded() -> None:
    for dataset in ("mnist", "fashion"):
        files = datasets.MNIST_FILES[dataset]
        assert {base for base, _ in files.values()} == {
            "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"
        }
        assert all(len(md5) == 32 for _, md5 in files.values())

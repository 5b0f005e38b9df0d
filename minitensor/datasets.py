"""Datasets for the example projects: seeded 2-D toy sets, the bundled 8x8 digits, and MNIST-style IDX files.

Everything here returns plain NumPy arrays, so the same data can feed any backend (or PyTorch):

* :func:`toy` / :func:`make_dataset` -- 2-D binary classification sets (``simple``, ``diag``, ``split``,
  ``xor``, ``circle``, ``spiral``, ``parabola``), points uniform in ``[-0.5, 0.5]^2`` (the spiral is two
  interleaved arms instead), ``X`` float64 ``(n, 2)`` and ``y`` int64 ``(n,)`` in {0, 1}.
* :func:`load_digits` -- scikit-learn's bundled 8x8 digits (1,797 images) scaled to [0, 1], with a fixed
  seeded stratified train/test split.
* :func:`load_mnist` -- MNIST or Fashion-MNIST from a folder of IDX files (gzipped or not), with the header,
  the sizes and (for the standard gzipped files) the published MD5 checksums verified.

The batching :class:`~minitensor.data_loader.DataLoader` lives in :mod:`minitensor.data_loader` and is
re-exported here.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .data_loader import DataLoader

__all__ = [
    "Dataset",
    "ImageDataset",
    "DataLoader",
    "TOY_DATASETS",
    "toy",
    "make_dataset",
    "load_digits",
    "load_mnist",
    "read_idx",
    "IDXError",
    "ChecksumError",
    "MNIST_FILES",
]


# --------------------------------------------------------------------------------------------------
# 2-D toy sets
# --------------------------------------------------------------------------------------------------


@dataclass
class Dataset:
    """A labelled point set: ``X`` float (n, features), ``y`` int (n,)."""

    name: str
    X: np.ndarray
    y: np.ndarray
    num_classes: int = 2
    description: str = ""

    def __len__(self) -> int:
        return int(self.X.shape[0])

    def __iter__(self):  # allows ``X, y = dataset``
        yield self.X
        yield self.y


def _uniform(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(-0.5, 0.5, size=(n, 2))


def _simple(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = _uniform(n, rng)
    return X, (X[:, 0] < 0.0)


def _diag(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = _uniform(n, rng)
    return X, (X[:, 0] + X[:, 1] < 0.0)


def _split(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = _uniform(n, rng)
    return X, (np.abs(X[:, 0]) > 0.3)


def _xor(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = _uniform(n, rng)
    return X, (X[:, 0] * X[:, 1] < 0.0)


def _circle(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = _uniform(n, rng)
    return X, (X[:, 0] ** 2 + X[:, 1] ** 2 > 0.1)


def _parabola(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    X = _uniform(n, rng)
    return X, (X[:, 0] ** 2 <= X[:, 1])


def _spiral(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved arms (class 0 and class 1, n//2 and n - n//2 points) inside [-0.5, 0.5]^2."""
    counts = (n // 2, n - n // 2)
    xs, ys = [], []
    for label, count in enumerate(counts):
        t = np.linspace(0.0, 1.0, count, endpoint=False) if count else np.zeros(0)
        radius = 0.05 + 0.4 * t
        angle = 3.0 * math.pi * t + label * math.pi
        pts = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
        xs.append(pts)
        ys.append(np.full(count, label, dtype=bool))
    X = np.concatenate(xs)
    y = np.concatenate(ys)
    order = rng.permutation(n)
    return X[order], y[order]


_Generator = Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray]]

#: name -> (generator, human-readable label rule)
TOY_DATASETS: dict[str, tuple[_Generator, str]] = {
    "simple": (_simple, "y = 1 where x0 < 0"),
    "diag": (_diag, "y = 1 where x0 + x1 < 0"),
    "split": (_split, "y = 1 where |x0| > 0.3"),
    "xor": (_xor, "y = 1 where x0 * x1 < 0"),
    "circle": (_circle, "y = 1 where x0^2 + x1^2 > 0.1"),
    "spiral": (_spiral, "two interleaved spiral arms, y = arm index"),
    "parabola": (_parabola, "y = 1 where x0^2 <= x1"),
}


def toy(name: str, n: int = 1000, seed: int = 0) -> Dataset:
    """The 2-D toy set ``name`` with ``n`` points drawn from a generator seeded with ``seed``."""
    if name not in TOY_DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known 2-D datasets: {', '.join(TOY_DATASETS)}")
    if n < 0:
        raise ValueError(f"number of points must be >= 0, got {n}")
    generate, rule = TOY_DATASETS[name]
    X, y = generate(int(n), np.random.default_rng(seed))
    return Dataset(name, np.ascontiguousarray(X, dtype=np.float64), y.astype(np.int64), 2, rule)


make_dataset = toy


# --------------------------------------------------------------------------------------------------
# Image sets
# --------------------------------------------------------------------------------------------------


@dataclass
class ImageDataset:
    """A train/test image classification set. Images are float32 (n, 1, H, W) in [0, 1]; labels int64."""

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    num_classes: int = 10
    classes: list[str] = field(default_factory=list)

    @property
    def image_shape(self) -> tuple[int, ...]:
        return tuple(self.X_train.shape[1:])

    def limit(self, n_train: int | None = None, n_test: int | None = None) -> ImageDataset:
        """The first ``n_train`` / ``n_test`` examples (for quick runs and tests)."""
        return ImageDataset(
            self.name,
            self.X_train[:n_train],
            self.y_train[:n_train],
            self.X_test[:n_test],
            self.y_test[:n_test],
            self.num_classes,
            list(self.classes),
        )


def stratified_split(y: np.ndarray, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays (train, test): each class contributes round(test_fraction * its count) test examples.

    ``test_fraction`` must lie in [0, 1); ValueError otherwise (1 or more would leave no training data).
    """
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)) or not 0.0 <= test_fraction < 1.0:
        raise ValueError(f"test_fraction must be a number in [0, 1), got {test_fraction!r}")
    rng = np.random.default_rng(seed)
    train_idx, test_idx = [], []
    for label in np.unique(y):
        idx = np.flatnonzero(y == label)
        rng.shuffle(idx)
        k = int(round(test_fraction * len(idx)))
        test_idx.append(idx[:k])
        train_idx.append(idx[k:])
    train = np.concatenate(train_idx)
    test = np.concatenate(test_idx)
    return rng.permutation(train), rng.permutation(test)


def sklearn_data_file(name: str) -> Path:
    """The path of a data file scikit-learn ships (``sklearn/datasets/data/<name>``), found without importing
    scikit-learn (which takes about a second, mostly SciPy)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the bundled digits need scikit-learn: pip install 'minitensor[data]'")
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data" / name
    if not path.is_file():
        raise FileNotFoundError(f"scikit-learn has no bundled data file {path}")
    return path


def load_digits(test_fraction: float = 0.2, seed: int = 0) -> ImageDataset:
    """scikit-learn's bundled 8x8 digits (1,797 images, 16 grey levels) scaled to [0, 1].

    The split is stratified by class and fixed by ``seed``: with the defaults 1,438 train / 359 test.
    """
    with gzip.open(sklearn_data_file("digits.csv.gz"), "rt") as handle:
        table = np.loadtxt(handle, delimiter=",", dtype=np.int64)  # a row: 64 pixels (0-16), then the digit
    images = (table[:, :64].astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    labels = table[:, 64]
    train, test = stratified_split(labels, test_fraction, seed)
    return ImageDataset(
        "digits", images[train], labels[train], images[test], labels[test], 10, [str(d) for d in range(10)]
    )


# --------------------------------------------------------------------------------------------------
# IDX files (MNIST, Fashion-MNIST)
# --------------------------------------------------------------------------------------------------


class IDXError(ValueError):
    """An IDX file whose header or size is wrong."""


class ChecksumError(ValueError):
    """A standard dataset file whose checksum differs from the published one."""


# IDX type byte -> (NumPy big-endian dtype, item size)
_IDX_TYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}

#: The standard distribution file names, and the MD5 of each *gzipped* file as published by the
#: dataset authors (the same values torchvision checks). Uncompressed files are checked for structure only.
MNIST_FILES: dict[str, dict[str, tuple[str, str]]] = {
    "mnist": {
        "train_images": ("train-images-idx3-ubyte", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        "train_labels": ("train-labels-idx1-ubyte", "d53e105ee54ea40749a09fcbcd1e9432"),
        "test_images": ("t10k-images-idx3-ubyte", "9fb629c4189551a2d022fa330f9573f3"),
        "test_labels": ("t10k-labels-idx1-ubyte", "ec29112dd5afa0611ce80d1b7f02629c"),
    },
    "fashion": {
        "train_images": ("train-images-idx3-ubyte", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        "train_labels": ("train-labels-idx1-ubyte", "25c81989df183df01b3e8a0aad5dffbe"),
        "test_images": ("t10k-images-idx3-ubyte", "bef4ecab320f06d8554ea6380940ec79"),
        "test_labels": ("t10k-labels-idx1-ubyte", "bb300cfdad3c16e7a12a480ee83cd310"),
    },
}

_SOURCES = {
    "mnist": "https://ossci-datasets.s3.amazonaws.com/mnist/ (mirror of http://yann.lecun.com/exdb/mnist/)",
    "fashion": "https://github.com/zalandoresearch/fashion-mnist (data/fashion/)",
}

_FASHION_CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _read_bytes(path: Path) -> bytes:
    """File contents, gunzipped when the file starts with the gzip magic (whatever its name)."""
    with path.open("rb") as handle:
        head = handle.read(2)
    if head == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as handle:
                return handle.read()
        except (OSError, EOFError) as error:
            raise IDXError(f"{path}: corrupt or truncated gzip data ({error})") from error
    return path.read_bytes()


def read_idx(path: str | Path) -> np.ndarray:
    """Parse one IDX file (plain or gzipped) into an array of its declared type and shape.

    The header is ``0x00 0x00 <type> <ndim>`` then ``ndim`` big-endian uint32 sizes; the payload must hold
    exactly ``prod(sizes)`` items. Anything else raises :class:`IDXError` naming the file and the problem.
    """
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4:
        raise IDXError(f"{path}: {len(raw)} bytes is too short for an IDX header (need at least 4)")
    zero0, zero1, type_code, ndim = raw[0], raw[1], raw[2], raw[3]
    magic = int.from_bytes(raw[:4], "big")
    if zero0 != 0 or zero1 != 0 or type_code not in _IDX_TYPES:
        raise IDXError(
            f"{path}: bad IDX magic number 0x{magic:08X}; expected 0x0000TTDD with type TT in "
            f"{{{', '.join(f'0x{t:02X}' for t in _IDX_TYPES)}}} (e.g. 0x00000803 for images, 0x00000801 for labels)"
        )
    if ndim == 0:
        raise IDXError(f"{path}: IDX header declares 0 dimensions")
    header_len = 4 + 4 * ndim
    if len(raw) < header_len:
        raise IDXError(f"{path}: truncated header: {ndim} dims need {header_len} bytes, file has {len(raw)}")
    dims = struct.unpack(f">{ndim}I", raw[4:header_len])
    dtype = _IDX_TYPES[type_code]
    expected = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    actual = len(raw) - header_len
    if actual != expected:
        kind = "truncated" if actual < expected else "has trailing data"
        raise IDXError(
            f"{path}: {kind}: header says shape {tuple(dims)} of {dtype.name} = {expected} data bytes, found {actual}"
        )
    data = np.frombuffer(raw, dtype=dtype, offset=header_len).reshape(dims)
    return data.astype(dtype.newbyteorder("="), copy=True)


def _find_file(folder: Path, base: str) -> Path | None:
    for candidate in (folder / f"{base}.gz", folder / base, folder / base.replace("-idx", ".idx")):
        if candidate.is_file():
            return candidate
    return None


def load_mnist(data_dir: str | Path, dataset: str = "mnist", verify: bool = True) -> ImageDataset:
    """MNIST (``dataset="mnist"``) or Fashion-MNIST (``"fashion"``) from IDX files in ``data_dir``.

    ``data_dir`` must hold the four standard files, gzipped (``train-images-idx3-ubyte.gz`` ...) or not
    (``train-images-idx3-ubyte`` ...). Headers and sizes are always checked, as is that each image file
    matches its label file; with ``verify`` the standard gzipped files are also checked against their
    published MD5 sums (uncompressed files have no published sums and are checked for structure only).
    Images come back float32 (n, 1, 28, 28) in [0, 1].
    """
    if dataset not in MNIST_FILES:
        raise ValueError(f"unknown IDX dataset {dataset!r}; choose one of {', '.join(MNIST_FILES)}")
    folder = Path(data_dir).expanduser()
    specs = MNIST_FILES[dataset]
    if not folder.is_dir():
        raise FileNotFoundError(_missing_message(folder, dataset, list(specs), folder_missing=True))
    found: dict[str, Path] = {}
    missing: list[str] = []
    for key, (base, _) in specs.items():
        path = _find_file(folder, base)
        if path is None:
            missing.append(key)
        else:
            found[key] = path
    if missing:
        raise FileNotFoundError(_missing_message(folder, dataset, missing))

    if verify:
        for key, path in found.items():
            base, md5 = specs[key]
            if path.name == f"{base}.gz":
                actual = _md5(path)
                if actual != md5:
                    raise ChecksumError(
                        f"{path}: MD5 {actual} differs from the published {md5} for {dataset} {base}.gz; the file is "
                        "corrupt or not the standard one (re-download it, or pass verify=False to check structure only)"
                    )

    arrays = {key: read_idx(path) for key, path in found.items()}
    splits = {}
    for split in ("train", "test"):
        images, labels = arrays[f"{split}_images"], arrays[f"{split}_labels"]
        ipath, lpath = found[f"{split}_images"], found[f"{split}_labels"]
        if images.ndim != 3:
            raise IDXError(f"{ipath}: expected a 3-D image file (count, rows, cols), header has shape {images.shape}")
        if labels.ndim != 1:
            raise IDXError(f"{lpath}: expected a 1-D label file (count,), header has shape {labels.shape}")
        if images.shape[0] != labels.shape[0]:
            raise IDXError(
                f"{split} images and labels disagree: {ipath.name} holds {images.shape[0]} images but "
                f"{lpath.name} holds {labels.shape[0]} labels"
            )
        if labels.size and (labels.min() < 0 or labels.max() > 9):
            raise IDXError(f"{lpath}: labels must be 0..9, found values in [{labels.min()}, {labels.max()}]")
        if images.shape[1:] != arrays["train_images"].shape[1:]:
            raise IDXError(f"train images are {arrays['train_images'].shape[1:]} but test images are {images.shape[1:]}")
        x = images.astype(np.float32)
        if images.dtype == np.uint8:
            x /= 255.0
        splits[split] = (x[:, None, :, :], labels.astype(np.int64))
    classes = _FASHION_CLASSES if dataset == "fashion" else [str(d) for d in range(10)]
    return ImageDataset(dataset, *splits["train"], *splits["test"], 10, list(classes))


def _missing_message(folder: Path, dataset: str, missing: list[str], folder_missing: bool = False) -> str:
    specs = MNIST_FILES[dataset]
    title = {"mnist": "MNIST", "fashion": "Fashion-MNIST"}[dataset]
    where = f"folder {folder} does not exist" if folder_missing else f"missing from {folder}"
    names = ", ".join(f"{specs[k][0]}.gz" for k in missing)
    return (
        f"{title} IDX files {where}: need {names} (gzipped or not). "
        f"Download the standard files from {_SOURCES[dataset]} into that folder."
    )

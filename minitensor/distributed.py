"""Collective communication across processes on MPI (``torch.distributed`` for minitensor).

Launch a script with ``mpiexec -n N python script.py`` and call :func:`init` first; every process then has a
:func:`rank` in ``0..N-1`` and the collectives below move tensor data between them. The transport is MPI through
``mpi4py`` (``pip install 'minitensor[mpi]'`` brings ``mpi4py`` and the ``mpich`` wheel, which has ``mpiexec``).

In a process that was not started by ``mpiexec`` (or by ``mpiexec -n 1``) nothing is imported and every call is
a no-op or the identity: ``rank() == 0``, ``world_size() == 1``, ``all_reduce`` leaves the tensor as it is. The
same script therefore runs alone or on N processes.

Collectives work on the tensor's storage, never on pickled objects: a contiguous tensor of a host backend
(``simple``, ``fast``) is reduced in place in its own buffer (``MPI.IN_PLACE``); a strided or ``cuda`` tensor is
staged through one contiguous host buffer and written back with ``copy_`` (the MPI wheels on PyPI are not
CUDA-aware). NumPy arrays are accepted too and changed in place.

After :func:`init` in an MPI job, an uncaught exception in any rank prints its traceback and calls
``MPI_Abort``, so ``mpiexec`` ends every rank with a non-zero exit code instead of leaving the others waiting
forever in a collective.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any

import numpy as np

from .autodiff import no_grad
from .backends.base import HostBackend, strided_view
from .creation import tensor as make_tensor
from .errors import MinitensorError
from .tensor import Tensor

__all__ = [
    "DistributedError", "ReduceOp", "init", "init_process_group", "is_available", "is_initialized", "launched_by_mpiexec",
    "rank", "world_size", "get_rank", "get_world_size", "barrier", "all_reduce", "broadcast", "all_gather", "abort",
]

# Environment variables an MPI launcher sets in every process it starts (MPICH/Hydra, Open MPI, PMIx, Slurm's PMI).
_LAUNCHER_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


class DistributedError(MinitensorError, RuntimeError):
    """MPI is needed but missing, or a collective was called with arguments that cannot work."""


class ReduceOp:
    """Reduction names for :func:`all_reduce` (``torch.distributed.ReduceOp``); plain strings work too."""

    SUM = "sum"
    AVG = "mean"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"
    PRODUCT = "prod"


ABORT_GRACE_SECONDS = 0.5
"""How long a failing rank waits after printing its traceback before ``MPI_Abort`` (output forwarding)."""

_state: dict[str, Any] = {"comm": None, "initialized": False, "hook": None}


def launched_by_mpiexec() -> bool:
    """True when an MPI launcher (``mpiexec``/``mpirun``/``srun``) started this process."""
    return any(name in os.environ for name in _LAUNCHER_VARS)


def is_available() -> bool:
    """True when ``mpi4py`` can be imported (the ``mpi`` extra is installed)."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def init() -> None:
    """Join the MPI job this process was launched in (idempotent); a no-op outside ``mpiexec``.

    Raises DistributedError when launched by ``mpiexec`` but ``mpi4py`` is missing. In a job of two or more
    ranks it installs a ``sys.excepthook`` that prints the traceback with the rank and calls ``MPI_Abort(1)``.
    """
    if _state["initialized"]:
        return
    _state["initialized"] = True
    if not launched_by_mpiexec():
        return
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise DistributedError(
            "this process was started by mpiexec but mpi4py is not installed: pip install 'minitensor[mpi]' "
            f"(mpi4py and an MPI wheel such as mpich) ({error})"
        ) from error
    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        return
    _state["comm"] = comm
    previous = sys.excepthook

    def abort_on_exception(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        """Print the error, then end the whole job: the other ranks would otherwise wait in a collective forever."""
        try:
            if previous is sys.__excepthook__:
                traceback.print_exception(kind, value, tb)
            else:
                previous(kind, value, tb)
            print(f"minitensor.distributed: rank {comm.Get_rank()} of {comm.Get_size()} failed with {kind.__name__}; "
                  "calling MPI_Abort so every rank stops", file=sys.stderr, flush=True)
            sys.stdout.flush()
            time.sleep(ABORT_GRACE_SECONDS)  # let the launcher forward this output before it kills the job
        finally:
            comm.Abort(1)

    _state["hook"] = abort_on_exception
    sys.excepthook = abort_on_exception


def init_process_group(backend: str | None = None, **kwargs: Any) -> None:
    """``torch.distributed.init_process_group``: :func:`init` (the backend is always MPI; other arguments ignored)."""
    init()


def is_initialized() -> bool:
    """True when :func:`init` joined an MPI job of two or more ranks (False in a single process)."""
    return _state["comm"] is not None


def _comm() -> Any:
    return _state["comm"]


def rank() -> int:
    """This process's rank in ``0..world_size()-1`` (0 in a single process)."""
    comm = _state["comm"]
    return 0 if comm is None else int(comm.Get_rank())


def world_size() -> int:
    """The number of processes in the job (1 in a single process)."""
    comm = _state["comm"]
    return 1 if comm is None else int(comm.Get_size())


get_rank = rank
get_world_size = world_size


def barrier() -> None:
    """Wait until every rank has called ``barrier`` (no-op in a single process)."""
    comm = _state["comm"]
    if comm is not None:
        comm.Barrier()


def abort(code: int = 1) -> None:
    """End every rank of the job with exit code ``code`` (``sys.exit`` in a single process)."""
    comm = _state["comm"]
    if comm is None:
        raise SystemExit(code)
    comm.Abort(code)


# --------------------------------------------------------------------------------------------------
# Buffers
# --------------------------------------------------------------------------------------------------


def _mpi_op(op: str) -> Any:
    from mpi4py import MPI

    table = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
    return table[op]


def _check_op(op: Any) -> str:
    name = str(op).lower()
    if name in ("avg", "average"):
        name = "mean"
    if name not in ("sum", "mean", "max", "min", "prod"):
        raise ValueError(f"all_reduce op must be 'sum', 'mean', 'max', 'min' or 'prod', got {op!r}")
    return name


def _host_buffer(tensor: Any) -> tuple[np.ndarray, bool]:
    """(a C-contiguous NumPy array holding ``tensor``'s values, whether it *is* the tensor's storage)."""
    if isinstance(tensor, np.ndarray):
        if tensor.flags.c_contiguous and tensor.flags.writeable:
            return tensor, True
        return np.ascontiguousarray(tensor), False
    data = tensor._data
    if isinstance(tensor.backend, HostBackend) and data.is_contiguous() and data.size > 0:
        view = strided_view(data, writeable=True)
        if view.flags.c_contiguous and view.flags.writeable:
            return view, True
    return tensor.to_numpy(), False


def _write_back(tensor: Any, values: np.ndarray, in_place: bool) -> None:
    """Make ``tensor`` hold ``values`` (already true when the buffer was its storage: only bump the version)."""
    if isinstance(tensor, np.ndarray):
        if not in_place:
            tensor[...] = values
        return
    if in_place:
        tensor._bump_version()
        return
    with no_grad():
        tensor.copy_(make_tensor(values, dtype=tensor.dtype, backend=tensor.backend.name))


def _check_tensor(tensor: Any, what: str) -> None:
    if not isinstance(tensor, (Tensor, np.ndarray)):
        raise TypeError(f"{what}(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")


# --------------------------------------------------------------------------------------------------
# Collectives
# --------------------------------------------------------------------------------------------------


def all_reduce(tensor: Any, op: str = ReduceOp.SUM) -> Any:
    """In place, ``tensor <- op(tensor of rank 0, ..., tensor of rank N-1)`` on every rank; returns ``tensor``.

    ``op``: ``"sum"``, ``"mean"`` (the sum divided by N; integer tensors floor-divide), ``"max"``, ``"min"``,
    ``"prod"``. Every rank must pass a tensor of the same shape and dtype. Identity in a single process.
    """
    _check_tensor(tensor, "all_reduce")
    name = _check_op(op)
    comm = _state["comm"]
    if comm is None or _numel(tensor) == 0:
        return tensor
    from mpi4py import MPI

    buffer, in_place = _host_buffer(tensor)
    comm.Allreduce(MPI.IN_PLACE, buffer.reshape(-1), op=_mpi_op(name))
    if name == "mean":
        if buffer.dtype.kind == "f":
            buffer /= comm.Get_size()
        else:
            buffer //= comm.Get_size()
    _write_back(tensor, buffer, in_place)
    return tensor


def broadcast(tensor: Any, src: int = 0) -> Any:
    """In place, ``tensor <- tensor of rank src`` on every rank; returns ``tensor``. Identity in a single process."""
    _check_tensor(tensor, "broadcast")
    size = world_size()
    if not 0 <= int(src) < size:
        raise ValueError(f"broadcast src must be a rank in 0..{size - 1}, got {src}")
    comm = _state["comm"]
    if comm is None or _numel(tensor) == 0:
        return tensor
    buffer, in_place = _host_buffer(tensor)
    comm.Bcast(buffer.reshape(-1), root=int(src))
    _write_back(tensor, buffer, in_place)
    return tensor


def all_gather(tensor_list: Sequence[Any], tensor: Any) -> None:
    """``tensor_list[i] <- tensor of rank i`` on every rank (``torch.distributed.all_gather``): ``tensor_list``
    holds ``world_size()`` tensors shaped like ``tensor``, written in place."""
    _check_tensor(tensor, "all_gather")
    size = world_size()
    if len(tensor_list) != size:
        raise ValueError(f"all_gather needs a tensor_list of world_size() = {size} tensors, got {len(tensor_list)}")
    for i, out in enumerate(tensor_list):
        _check_tensor(out, "all_gather")
        if tuple(out.shape) != tuple(tensor.shape) or np.dtype(out.dtype) != np.dtype(tensor.dtype):
            raise ValueError(f"all_gather: tensor_list[{i}] has shape {tuple(out.shape)} and dtype {out.dtype}, but the "
                             f"input has shape {tuple(tensor.shape)} and dtype {tensor.dtype}")
    comm = _state["comm"]
    source = tensor if isinstance(tensor, np.ndarray) else tensor.to_numpy()
    if comm is None:
        if tensor_list[0] is not tensor:
            _write_back(tensor_list[0], np.array(source, copy=True), False)
        return
    source = np.ascontiguousarray(source)
    gathered = np.empty((size, *source.shape), dtype=source.dtype)
    comm.Allgather(source.reshape(-1), gathered.reshape(size, -1))
    for i, out in enumerate(tensor_list):
        _write_back(out, gathered[i], False)


def _numel(tensor: Any) -> int:
    return int(tensor.size) if isinstance(tensor, np.ndarray) else int(tensor.numel())


def iallreduce_sum(buffer: np.ndarray) -> Any:
    """Start a non-blocking in-place sum of the contiguous ``buffer`` across ranks; returns the MPI request
    (``wait()`` it before reading ``buffer``). Used by :class:`minitensor.nn.parallel.DistributedDataParallel`."""
    from mpi4py import MPI

    comm = _state["comm"]
    if comm is None:
        raise DistributedError("iallreduce_sum needs an MPI job of two or more ranks (call init() under mpiexec)")
    return comm.Iallreduce(MPI.IN_PLACE, buffer, op=MPI.SUM)

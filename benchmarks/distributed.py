"""Data-parallel benchmark: training steps on 1 and N MPI ranks, and all-reduce bandwidth.

    python benchmarks/distributed.py                       # 1 and 2 ranks, prints a table
    python benchmarks/distributed.py --ranks 1 2 4 --steps 20

The driver launches itself under ``mpiexec -n R`` (the one next to this Python, from the ``mpich`` wheel) for each
rank count R, with one Numba/BLAS thread per rank, and prints what rank 0 measured:

* ``step``: median seconds per training step (forward, loss, backward with DistributedDataParallel's bucketed
  gradient all-reduce, optimizer step) at a fixed *global* batch split across the ranks, and samples/s (global
  batch / step time), for the digits MLP (64-256-10, Adam, global batch 64) and ``projects/run_gpt.py``'s GPT at
  a small config (1 layer, 2 heads, dim 32, block 32, AdamW, global batch 16 blocks).
* ``comm``: the fraction of a step spent in DDP's communication path (copying gradients into buckets, starting
  the Iallreduces, waiting for them, unpacking) as timed by ``DistributedDataParallel.comm_seconds``.
* ``all-reduce``: ``minitensor.distributed.all_reduce`` of a float32 tensor against a plain ``mpi4py``
  ``Allreduce`` of a NumPy array of the same bytes (algorithm bandwidth: bytes / time), at the two models'
  gradient sizes and 4 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "projects"))


def time_steps(step: Any, steps: int, warmup: int, ddp: Any) -> tuple[float, float]:
    """(median seconds per step, median fraction of the step in DDP communication) after ``warmup`` steps."""
    from minitensor import distributed as dist

    for _ in range(warmup):
        step()
    times, fractions = [], []
    for _ in range(steps):
        dist.barrier()
        before = ddp.comm_seconds
        tick = time.perf_counter()
        step()
        took = time.perf_counter() - tick
        times.append(took)
        fractions.append((ddp.comm_seconds - before) / took)
    return statistics.median(times), statistics.median(fractions)


def digits_case(rank: int, world: int, steps: int) -> dict[str, Any]:
    import minitensor as mt
    from minitensor import nn
    from minitensor.nn.parallel import DistributedDataParallel

    global_batch = 64
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
    ddp = DistributedDataParallel(model)
    opt = mt.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(rank)
    b = global_batch // world
    X, y = rng.normal(size=(b, 64)).astype(np.float32), rng.integers(0, 10, b)

    def step() -> None:
        loss = nn.functional.cross_entropy(ddp(mt.tensor(X)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    seconds, comm = time_steps(step, steps, 3, ddp)
    nbytes = sum(p.numel() * 4 for p in model.parameters())
    return {"model": "digits MLP 64-256-10", "batch": global_batch, "step_s": seconds, "samples_s": global_batch / seconds,
            "comm_fraction": comm, "grad_bytes": nbytes}


def gpt_case(rank: int, world: int, steps: int) -> dict[str, Any]:
    from gpt import GPT, GPTConfig

    import minitensor as mt
    from minitensor.nn.parallel import DistributedDataParallel
    from minitensor.nn.utils import clip_grad_norm_

    global_batch = 16
    config = GPTConfig(vocab_size=96, block_size=32, n_layer=1, n_head=2, n_embd=32)
    mt.manual_seed(0)
    model = GPT(config)
    ddp = DistributedDataParallel(model)
    opt = model.configure_optimizers(0.1, 3e-3)
    rng = np.random.default_rng(rank)
    b = global_batch // world
    x, y = rng.integers(0, 96, (b, 32)), rng.integers(0, 96, (b, 32))

    def step() -> None:
        _, loss = ddp(mt.tensor(x, dtype=mt.int64), mt.tensor(y, dtype=mt.int64))
        opt.zero_grad()
        loss.backward()
        clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    seconds, comm = time_steps(step, steps, 3, ddp)
    nbytes = sum(p.numel() * 4 for p in model.parameters())
    return {"model": "GPT 1x32 block 32", "batch": global_batch, "step_s": seconds, "samples_s": global_batch / seconds,
            "comm_fraction": comm, "grad_bytes": nbytes}


def bandwidth_case(nbytes: int, repeats: int) -> dict[str, Any]:
    """Median seconds of minitensor's all_reduce and of a bare mpi4py Allreduce on ``nbytes`` of float32."""
    import minitensor as mt
    from minitensor import distributed as dist

    n = max(nbytes // 4, 1)
    t = mt.ones(n)
    array = np.ones(n, dtype=np.float32)
    comm = dist._comm()

    def median_of(fn: Any) -> float:
        fn()
        out = []
        for _ in range(repeats):
            dist.barrier()
            tick = time.perf_counter()
            fn()
            out.append(time.perf_counter() - tick)
        return statistics.median(out)

    from mpi4py import MPI

    ours = median_of(lambda: dist.all_reduce(t))
    plain = median_of(lambda: comm.Allreduce(MPI.IN_PLACE, array))
    return {"bytes": n * 4, "minitensor_s": ours, "mpi4py_s": plain, "minitensor_GBs": n * 4 / ours / 1e9,
            "mpi4py_GBs": n * 4 / plain / 1e9}


def worker(args: argparse.Namespace) -> None:
    from minitensor import distributed as dist

    dist.init()
    rank, world = dist.rank(), dist.world_size()
    results: dict[str, Any] = {"world": world, "cases": [digits_case(rank, world, args.steps), gpt_case(rank, world, args.steps)]}
    if world > 1:
        sizes = sorted({case["grad_bytes"] for case in results["cases"]} | {4 * 2**20})
        results["bandwidth"] = [bandwidth_case(size, args.repeats) for size in sizes]
    if rank == 0:
        print("RESULT " + json.dumps(results), flush=True)


def launch(ranks: int, args: argparse.Namespace) -> dict[str, Any]:
    mpiexec = Path(sys.executable).parent / "mpiexec"
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    command = [str(mpiexec if mpiexec.exists() else "mpiexec"), "-n", str(ranks), sys.executable, __file__, "--worker",
               "--steps", str(args.steps), "--repeats", str(args.repeats)]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"{' '.join(command)} failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2], help="rank counts to run (default 1 2)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per model (default 10)")
    parser.add_argument("--repeats", type=int, default=50, help="timed all-reduces per size (default 50)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per mpiexec run (default 600)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    print(f"{'ranks':>5} | {'model':<22} | {'global batch':>12} | {'step ms':>8} | {'samples/s':>9} | {'comm':>5}")
    bandwidth = []
    for ranks in args.ranks:
        result = launch(ranks, args)
        for case in result["cases"]:
            print(f"{ranks:>5} | {case['model']:<22} | {case['batch']:>12} | {case['step_s'] * 1e3:>8.2f} | "
                  f"{case['samples_s']:>9.0f} | {case['comm_fraction']:>5.1%}")
        bandwidth += [(ranks, row) for row in result.get("bandwidth", [])]
    if bandwidth:
        print(f"\n{'ranks':>5} | {'bytes':>9} | {'minitensor us':>13} | {'mpi4py us':>9} | {'minitensor GB/s':>15} | {'mpi4py GB/s':>11}")
        for ranks, row in bandwidth:
            print(f"{ranks:>5} | {row['bytes']:>9} | {row['minitensor_s'] * 1e6:>13.1f} | {row['mpi4py_s'] * 1e6:>9.1f} | "
                  f"{row['minitensor_GBs']:>15.3f} | {row['mpi4py_GBs']:>11.3f}")


if __name__ == "__main__":
    main()

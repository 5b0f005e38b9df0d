"""Training-speed benchmark: the example projects' models on every available backend, and PyTorch when importable.

    python benchmarks/training.py                # all available backends (cuda only on a real GPU)
    python benchmarks/training.py --backends fast --repeats 20
    python benchmarks/training.py --compiled --backends fast   # eager vs minitensor.compile vs PyTorch

Two measurements, each a median over repeats after a warm-up (which pays for JIT compilation):

* ``split epoch``: seconds per epoch of ``projects/run_tensor.py``'s model (2-100-100-1 MLP, SGD with
  momentum, batch 50) on the 1,000-point ``split`` set (20 steps). The pure-Python ``simple`` backend
  is timed on a few steps and scaled to 20.
* ``mnist-mlp step``: seconds per training step (forward, cross-entropy, backward, SGD step) of a
  784-128-10 MLP at batch 64 on random data.

* ``gpt step``: seconds per training step (forward, cross-entropy, backward, gradient clipping, AdamW) of
  ``projects/run_gpt.py``'s default character-level GPT on random tokens, and tokens/s, with the project's
  thread settings (``--gpt-threads``, default 1 for Numba and BLAS); PyTorch's twin (same layers, sizes and
  optimizer) with its default threads and with the same thread count; the same step ``minitensor.compile``d.
  ``--gpt-only`` runs just this row.
* ``--after-torch``: only the fast backend's MLP step, in a fresh process and in a fresh process where PyTorch ran a
  parallel matmul before minitensor was imported (PyTorch's OpenMP runtime started first), and their ratio.

With ``--blas-row``, ``fast/blas1`` repeats the fast backend with BLAS (OpenBLAS/MKL) held to one thread
for the whole run through threadpoolctl (BLAS threads on top of Numba's oversubscribe small machines).
Ratios are to PyTorch's time for the same model in the same run (CPU, or CUDA for the cuda backend).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "projects"))

USER_OMP_WAIT_POLICY = os.environ.get("OMP_WAIT_POLICY")  # before the fast backend sets its default

import minitensor  # noqa: E402
from minitensor import nn, optim  # noqa: E402
from minitensor.datasets import toy  # noqa: E402

SPLIT_BATCH, SPLIT_POINTS, HIDDEN = 50, 1000, 100
MNIST_BATCH = 64


def median_time(fn: Callable[[], None], repeats: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def real_gpu() -> bool:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    try:
        minitensor.get_backend("cuda")
    except Exception:  # noqa: BLE001
        return False
    return True


def available(name: str) -> bool:
    if name == "cuda":
        return real_gpu()
    try:
        minitensor.get_backend(name)
    except Exception:  # noqa: BLE001
        return False
    return True


# --- minitensor -------------------------------------------------------------------------------


def split_step_fn(backend: str, compiled: bool = False, mode: str | None = None, fusion: bool = True) -> tuple[Callable[[], None], int]:
    """One SGD step of the run_tensor model, cycling through the split set's batches; and steps per epoch. With
    ``compiled`` the step (forward, backward, update) is one ``minitensor.compile``d function (``mode`` passed on;
    ``fusion=False``: ``backend="eager"``, replayed without element-wise fusion)."""
    minitensor.manual_seed(0)
    data = toy("split", SPLIT_POINTS, seed=0)
    model = nn.Sequential(nn.Linear(2, HIDDEN, backend=backend, dtype="float64"), nn.ReLU(),
                          nn.Linear(HIDDEN, HIDDEN, backend=backend, dtype="float64"), nn.ReLU(),
                          nn.Linear(HIDDEN, 1, backend=backend, dtype="float64"))
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    batches = [(data.X[i : i + SPLIT_BATCH], data.y[i : i + SPLIT_BATCH].astype(np.float64))
               for i in range(0, SPLIT_POINTS, SPLIT_BATCH)]
    state = {"i": 0}

    def train_step(x: minitensor.Tensor, y: minitensor.Tensor) -> minitensor.Tensor:
        loss = nn.functional.binary_cross_entropy_with_logits(model(x).view(len(y)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    run = minitensor.compile(train_step, mode=mode, backend="inductor" if fusion else "eager") if compiled else train_step

    def step() -> None:
        xb, yb = batches[state["i"] % len(batches)]
        state["i"] += 1
        run(minitensor.tensor(xb, backend=backend), minitensor.tensor(yb, backend=backend)).item()  # .item() waits

    return step, len(batches)


def mnist_step_fn(backend: str, compiled: bool = False, mode: str | None = None, fusion: bool = True) -> Callable[[], None]:
    """One SGD step of a 784-128-10 MLP on a fixed float32 batch (``compiled``: as one ``minitensor.compile``d
    function; ``fusion=False``: with ``backend="eager"``, no element-wise fusion)."""
    minitensor.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.random((MNIST_BATCH, 784), dtype=np.float32)
    y = minitensor.tensor(rng.integers(0, 10, MNIST_BATCH), backend=backend)
    model = nn.Sequential(nn.Linear(784, 128, backend=backend, dtype="float32"), nn.ReLU(),
                          nn.Linear(128, 10, backend=backend, dtype="float32"))
    opt = optim.SGD(model.parameters(), lr=0.01)

    def train_step(xb: minitensor.Tensor, yb: minitensor.Tensor) -> minitensor.Tensor:
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    run = minitensor.compile(train_step, mode=mode, backend="inductor" if fusion else "eager") if compiled else train_step
    xb = minitensor.tensor(x, backend=backend, dtype="float32")  # made once, like PyTorch's row: the step is timed

    def step() -> None:
        run(xb, y).item()

    return step


# --- PyTorch ----------------------------------------------------------------------------------


def torch_fns(device: str) -> tuple[Callable[[], None], Callable[[], None]] | None:
    try:
        import torch
    except ImportError:
        return None
    if device == "cuda" and not torch.cuda.is_available():
        return None
    torch.manual_seed(0)
    data = toy("split", SPLIT_POINTS, seed=0)
    X = torch.tensor(data.X, device=device)
    Y = torch.tensor(data.y, dtype=torch.float64, device=device)
    net = torch.nn.Sequential(torch.nn.Linear(2, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                              torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 1)).double().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    state = {"i": 0}

    def split_step() -> None:
        i = (state["i"] % (SPLIT_POINTS // SPLIT_BATCH)) * SPLIT_BATCH
        state["i"] += 1
        loss = torch.nn.functional.binary_cross_entropy_with_logits(net(X[i : i + SPLIT_BATCH]).view(-1), Y[i : i + SPLIT_BATCH])
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()

    mlp = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(device)
    mopt = torch.optim.SGD(mlp.parameters(), lr=0.01)
    x = torch.rand(MNIST_BATCH, 784, device=device)
    y = torch.randint(0, 10, (MNIST_BATCH,), device=device)

    def mnist_step() -> None:
        loss = torch.nn.functional.cross_entropy(mlp(x), y)
        mopt.zero_grad()
        loss.backward()
        mopt.step()
        loss.item()

    return split_step, mnist_step


# --- GPT (projects/run_gpt.py's default model) ------------------------------------------------


def gpt_sizes() -> dict[str, int]:
    """run_gpt.py's default architecture and batch, with the pydoc corpus's 103-character vocabulary."""
    import run_gpt

    d = run_gpt.DEFAULTS
    return {"vocab": 103, "block": d["block_size"], "layers": d["layers"], "heads": d["heads"], "dim": d["dim"],
            "batch": run_gpt.DEFAULT_BATCH}


def gpt_step_fn(backend: str, compiled: bool = False) -> Callable[[], None]:
    """One run_gpt.py training step of the default GPT on ``backend`` (float32), random token batches (``compiled``:
    forward, backward, clipping and update as one ``minitensor.compile``d function)."""
    from gpt import GPT, GPTConfig

    from minitensor.nn.utils import clip_grad_norm_

    z = gpt_sizes()
    minitensor.manual_seed(0)
    model = GPT(GPTConfig(z["vocab"], z["block"], z["layers"], z["heads"], z["dim"]), backend=backend, dtype="float32")
    opt = model.configure_optimizers(0.1, 1e-3)
    rng = np.random.default_rng(0)

    def train_step(x: minitensor.Tensor, y: minitensor.Tensor) -> minitensor.Tensor:
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()  # type: ignore[union-attr]
        clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss  # type: ignore[return-value]

    run = minitensor.compile(train_step) if compiled else train_step

    def step() -> None:
        x, y = (minitensor.tensor(rng.integers(0, z["vocab"], (z["batch"], z["block"])), dtype=minitensor.int64,
                                  backend=backend) for _ in range(2))
        run(x, y).item()

    return step


def median_wall_and_cpu(fn: Callable[[], None], repeats: int, warmup: int = 1) -> tuple[float, float]:
    """Median wall-clock and median CPU seconds (``time.process_time``: every thread of this process) per call of
    ``fn``. On one thread the CPU time is the work itself, so it stays comparable on a machine others are loading."""
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def torch_gpt_time(device: str, repeats: int, threads: int | None = None,
                   with_cpu: bool = False) -> float | tuple[float, float] | None:
    """Median seconds per step of the same GPT in PyTorch (eager) on ``device``, or None without PyTorch; with
    ``with_cpu`` (wall, CPU) medians as :func:`median_wall_and_cpu`."""
    try:
        import torch
    except ImportError:
        return None
    if device == "cuda" and not torch.cuda.is_available():
        return None
    if threads:
        torch.set_num_threads(threads)
    F = torch.nn.functional  # noqa: N806
    z = gpt_sizes()
    d, h = z["dim"], z["heads"]
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1, self.ln_2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.c_attn, self.a_proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.c_fc, self.m_proj = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

        def forward(self, x: Any) -> Any:
            B, T, C = x.shape  # noqa: N806
            q, k, v = (t.view(B, T, h, C // h).transpose(1, 2) for t in self.c_attn(self.ln_1(x)).split(C, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.a_proj(y)
            return x + self.m_proj(F.gelu(self.c_fc(self.ln_2(x))))

    wte, wpe = torch.nn.Embedding(z["vocab"], d), torch.nn.Embedding(z["block"], d)
    blocks = torch.nn.ModuleList([Block() for _ in range(z["layers"])])
    ln_f = torch.nn.LayerNorm(d)
    net = torch.nn.ModuleList([wte, wpe, blocks, ln_f]).to(device)
    decay = [p for p in net.parameters() if p.dim() >= 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": [p for p in net.parameters() if p.dim() < 2], "weight_decay": 0.0}], lr=1e-3)
    pos = torch.arange(z["block"], device=device)

    def step() -> None:
        x, y = (torch.randint(0, z["vocab"], (z["batch"], z["block"]), device=device) for _ in range(2))
        hidden = wte(x) + wpe(pos)
        for block in blocks:
            hidden = block(hidden)
        logits = ln_f(hidden) @ wte.weight.T  # the head tied to the token embedding
        loss = F.cross_entropy(logits.view(-1, z["vocab"]), y.view(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        loss.item()

    return median_wall_and_cpu(step, repeats, warmup=3) if with_cpu else median_time(step, repeats, warmup=3)


def numba_threads(threads: int) -> None:
    """Set Numba's thread count, importing the fast backend first: it chooses the OpenMP wait policy and thread layer,
    which must happen before Numba's pool starts (``set_num_threads`` starts it)."""
    import numba

    minitensor.backends.get_backend("fast")
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))


def gpt_rows(backends: list[str], repeats: int, threads: int, rounds: int = 1) -> list[dict]:
    """The GPT step on each available backend (simple is skipped: minutes per step) with PyTorch's times.

    With ``rounds`` > 1 the measurements alternate: each round times minitensor's steps (eager, compiled) and then
    PyTorch's in a fresh process, so both see the same load; the ratios reported are medians of each round's ratio
    (``*_ratios`` hold every round's), the times medians over rounds."""
    from contextlib import nullcontext

    try:
        from threadpoolctl import threadpool_limits
        limiter: Any = threadpool_limits(threads, user_api="blas")
    except ImportError:
        limiter = nullcontext()
    import numba

    before = numba.get_num_threads()
    numba_threads(threads)
    rows = []
    try:
        with limiter:
            for backend in backends:
                if backend == "simple" or not available(backend):
                    continue
                device = "cuda" if backend == "cuda" else "cpu"
                eager_step, compiled_step = gpt_step_fn(backend), gpt_step_fn(backend, compiled=True)
                per_round: list[dict[str, float]] = []
                for _ in range(max(1, rounds)):
                    seconds, cpu = median_wall_and_cpu(eager_step, repeats, warmup=2)
                    compiled, compiled_cpu = median_wall_and_cpu(compiled_step, repeats, warmup=2)
                    same = _torch_gpt_in_subprocess(device, repeats, threads, with_cpu=True)
                    per_round.append({"gpt_step_s": seconds, "gpt_step_cpu_s": cpu, "gpt_compiled_step_s": compiled,
                                      "gpt_compiled_step_cpu_s": compiled_cpu,
                                      "torch_gpt_step_s_same_threads": same[0] if same else math.nan,
                                      "torch_gpt_step_cpu_s_same_threads": same[1] if same else math.nan})
                row: dict[str, Any] = {"backend": backend, "torch_device": device, "rounds": len(per_round),
                                       "torch_gpt_step_s": _torch_gpt_in_subprocess(device, repeats, None)}
                for key in per_round[0]:
                    value = statistics.median(r[key] for r in per_round)
                    row[key] = None if math.isnan(value) else value
                for key in ("gpt_step", "gpt_compiled_step"):
                    ratios = [r[f"{key}_s"] / r["torch_gpt_step_s_same_threads"] for r in per_round]
                    cpu_ratios = [r[f"{key}_cpu_s"] / r["torch_gpt_step_cpu_s_same_threads"] for r in per_round]
                    row[f"{key}_ratios"] = ratios
                    row[f"{key}_ratio"] = statistics.median(ratios)
                    row[f"{key}_cpu_ratio"] = statistics.median(cpu_ratios)
                rows.append(row)
    finally:
        numba.set_num_threads(before)
    return rows


def _torch_gpt_in_subprocess(device: str, repeats: int, threads: int | None, with_cpu: bool = False) -> Any:
    call = f"torch_gpt_time({device!r}, {repeats}, {threads!r}, with_cpu={with_cpu!r})"
    return in_fresh_process(call, f"torch GPT ({device})", prelude=TORCH_ALONE)


def print_gpt_rows(rows: list[dict], threads: int) -> None:
    z = gpt_sizes()
    tokens = z["batch"] * z["block"]
    print(f"\nGPT step ({z['layers']} layers, {z['heads']} heads, dim {z['dim']}, block {z['block']}, batch {z['batch']}, "
          f"float32; minitensor with {threads} Numba/BLAS thread(s))")
    same = f"torch {threads}t ms"
    print(f"{'backend':11} {'ms/step':>9} {'tokens/s':>10} {'torch ms':>9} {'vs torch':>9} {same:>12} {'vs torch':>9}")
    for r in rows:
        for label, key in (("", "gpt_step"), (" compiled", "gpt_compiled_step")):
            ours, torch_all, torch_same = r[f"{key}_s"], r["torch_gpt_step_s"], r["torch_gpt_step_s_same_threads"]
            cells = [(f"{torch_all * 1e3:.1f}", f"{ours / torch_all:.2f}x") if torch_all else ("n/a", "n/a"),
                     (f"{torch_same * 1e3:.1f}", f"{r[f'{key}_ratio']:.2f}x") if torch_same else ("n/a", "n/a")]
            print(f"{r['backend'] + label:11} {ours * 1e3:9.1f} {tokens / ours:10,.0f} {cells[0][0]:>9} {cells[0][1]:>9} "
                  f"{cells[1][0]:>12} {cells[1][1]:>9}")
            if torch_same:
                print(f"{'':11} CPU time per step (process_time medians, robust to other load): "
                      f"{r[f'{key}_cpu_s'] * 1e3:.1f} ms, torch {threads}t "
                      f"{r['torch_gpt_step_cpu_s_same_threads'] * 1e3:.1f} ms, {r[f'{key}_cpu_ratio']:.2f}x")
            if r["rounds"] > 1 and torch_same:
                print(f"{'':11} {r['rounds']} alternating rounds, ratio per round: "
                      + ", ".join(f"{x:.2f}" for x in r[f"{key}_ratios"]) + " (medians shown above)")


# --- compiled steps (minitensor.compile) --------------------------------------------------------


COMPILED_MODES = ("eager", "compiled", "compiled, no fusion")
"""Rows of --compiled: eager, minitensor.compile (default: element-wise runs fused, as Inductor does), and
minitensor.compile(backend="eager") (the recorded calls replayed without fusion)."""


def compiled_rows(backends: list[str], repeats: int, threads: int | None = None) -> list[dict]:
    """Eager and compiled split epoch and MLP step on each available backend but simple, with PyTorch's times
    (its own process, as in the main table); ``threads`` holds both libraries to that many threads (minitensor's
    Numba and BLAS threads, PyTorch's intra-op threads), else each runs with its defaults."""
    rows = []
    torch_ref: dict[str, Any] = {}
    for backend in backends:
        if backend == "simple" or not available(backend):
            continue
        times = {}
        for label in COMPILED_MODES:
            if label == "eager":
                step, n = split_step_fn(backend)
                mnist = mnist_step_fn(backend)
            else:
                fusion = label == "compiled"
                step, n = split_step_fn(backend, compiled=True, fusion=fusion)
                mnist = mnist_step_fn(backend, compiled=True, fusion=fusion)

            def run_epoch(step: Callable[[], None] = step, n: int = n) -> None:
                for _ in range(n):
                    step()

            times[label] = (median_time(run_epoch, repeats, warmup=2), median_time(mnist, repeats * 5, warmup=3))
        device = "cuda" if backend == "cuda" else "cpu"
        if device not in torch_ref:
            torch_ref[device] = torch_times_in_subprocess(device, repeats, threads)
        rows.append({"backend": backend, **times, "torch": torch_ref[device]})
    return rows


def print_compiled_rows(rows: list[dict]) -> None:
    print(f"\n{'backend':9} {'mode':19} {'split s/epoch':>14} {'vs torch':>9} {'784-128-10 ms/step':>19} {'vs torch':>9}")
    for r in rows:
        ref = r["torch"]
        for mode in COMPILED_MODES:
            epoch, step = r[mode]
            ratio1 = f"{epoch / ref[0]:.2f}x" if ref else "n/a"
            ratio2 = f"{step / ref[1]:.2f}x" if ref else "n/a"
            print(f"{r['backend']:9} {mode:19} {epoch:14.4f} {ratio1:>9} {step * 1e3:19.3f} {ratio2:>9}")
        if ref:
            print(f"{'torch':9} {'eager':19} {ref[0]:14.4f} {'1.00x':>9} {ref[1] * 1e3:19.3f} {'1.00x':>9}")
    print(f"(medians; ratios are time / PyTorch's time, < 1 is faster; numba threads {_threads()}; with --threads, BLAS "
          "and PyTorch threads too)")


# --- main -------------------------------------------------------------------------------------


def torch_times(device: str, repeats: int, threads: int | None = None) -> tuple[float, float] | None:
    """(split epoch s, 784-128-10 step s) for PyTorch on ``device`` (``threads``: its intra-op thread count), or None
    without PyTorch."""
    if threads:
        import torch

        torch.set_num_threads(threads)
    fns = torch_fns(device)
    if fns is None:
        return None
    split_step, mnist_step = fns
    t_epoch = median_time(lambda: [split_step() for _ in range(SPLIT_POINTS // SPLIT_BATCH)], repeats)
    return t_epoch, median_time(mnist_step, repeats * 5)


def torch_times_in_subprocess(device: str, repeats: int, threads: int | None = None) -> tuple[float, float] | None:
    """torch_times in a fresh process: each library runs with its own threading defaults (or ``threads``), and
    neither's idle worker threads compete with the other's (as they would in one process, which no user runs)."""
    times = in_fresh_process(f"torch_times({device!r}, {repeats}, {threads!r})", f"torch ({device})", prelude=TORCH_ALONE)
    return None if times is None else (times[0], times[1])


TORCH_ALONE = "import torch"
"""The prelude of a PyTorch timing: torch is imported (its OpenMP runtime reading the user's OMP_WAIT_POLICY) before
this module imports minitensor, whose fast backend sets OMP_WAIT_POLICY=PASSIVE for its own threads; PyTorch's workers
would otherwise sleep between ops (its MLP step at two threads: 0.44-0.67 ms -> 1.3-1.6 ms)."""


def in_fresh_process(call: str, what: str, prelude: str = "") -> Any:
    """The JSON result of ``training.<call>`` run in a fresh Python process (the user's OMP_WAIT_POLICY restored),
    or None, with a line saying why, when it fails. ``prelude`` runs first, before this module (and minitensor) is
    imported."""
    code = f"{prelude}\nimport json, sys; sys.path.insert(0, sys.argv[1]); import training; print(json.dumps(training.{call}))"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if USER_OMP_WAIT_POLICY is not None:
        env["OMP_WAIT_POLICY"] = USER_OMP_WAIT_POLICY
    result = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        print(f"{what} measurement failed: {result.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


# --- sharing a process with PyTorch --------------------------------------------------------------

TORCH_FIRST = "import torch; a = torch.rand(1024, 1024); [(a @ a).sum().item() for _ in range(3)]"
"""Parallel PyTorch work run before minitensor is imported (its OpenMP runtime starts first, as in a user's script
that imports torch first)."""


def fast_mlp_step_time(repeats: int, threads: int | None) -> float:
    """Median seconds of the fast backend's 784-128-10 MLP step in this process (``threads`` Numba threads)."""
    if threads:
        numba_threads(threads)
    return median_time(mnist_step_fn("fast"), repeats * 5, warmup=3)


def after_torch_times(repeats: int, threads: int | None) -> dict[str, float | None]:
    """The fast MLP step in a fresh process and in one where PyTorch ran a parallel matmul before minitensor's
    import, each its own subprocess (the user's OMP_WAIT_POLICY restored, as for the PyTorch timings)."""
    call = f"fast_mlp_step_time({repeats}, {threads!r})"
    return {"clean_s": in_fresh_process(call, "fast MLP step (clean process)"),
            "after_torch_s": in_fresh_process(call, "fast MLP step (after PyTorch)", prelude=TORCH_FIRST)}


def print_after_torch(times: dict[str, float | None], threads: int | None) -> None:
    clean, shared = times["clean_s"], times["after_torch_s"]
    print(f"\nfast 784-128-10 MLP step, ms (numba threads: {threads or 'all cores'}; each in a fresh process)")
    print(f"{'clean process':>14} {'after PyTorch':>14} {'ratio':>6}")
    cells = [f"{t * 1e3:.3f}" if t else "n/a" for t in (clean, shared)]
    ratio = f"{shared / clean:.2f}x" if clean and shared else "n/a"
    print(f"{cells[0]:>14} {cells[1]:>14} {ratio:>6}")


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="+", choices=("simple", "fast", "cuda"), default=["simple", "fast", "cuda"])
    parser.add_argument("--repeats", type=int, default=10, help="timed repeats per measurement (default 10)")
    parser.add_argument("--simple-steps", type=int, default=1, help="steps timed on the simple backend (default 1)")
    parser.add_argument("--blas-row", action="store_true",
                        help="add a fast-backend row with BLAS held to one thread for the whole run (threadpoolctl)")
    parser.add_argument("--threads", type=int, default=None,
                        help="Numba threads for the fast backend (default: all cores); with --compiled, BLAS and PyTorch threads too")
    parser.add_argument("--gpt-threads", type=int, default=1,
                        help="Numba and BLAS threads for the GPT row (default 1, run_gpt.py's default)")
    parser.add_argument("--gpt-only", action="store_true", help="only the GPT row")
    parser.add_argument("--gpt-rounds", type=int, default=1,
                        help="alternate minitensor's and PyTorch's GPT timings this many times; ratios are the "
                             "medians of the rounds' ratios (default 1)")
    parser.add_argument("--compiled", action="store_true",
                        help="only the split epoch and MLP step, eager and minitensor.compile'd, against PyTorch")
    parser.add_argument("--after-torch", action="store_true",
                        help="only the fast MLP step, in a clean process and in one where PyTorch ran parallel work first")
    args = parser.parse_args(argv)
    if args.after_torch:
        times = after_torch_times(args.repeats, args.threads)
        print_after_torch(times, args.threads)
        return [times]
    if args.compiled:
        if args.threads:
            numba_threads(args.threads)
            from threadpoolctl import threadpool_limits

            with threadpool_limits(args.threads, user_api="blas"):
                compiled = compiled_rows(args.backends, args.repeats, args.threads)
        else:
            compiled = compiled_rows(args.backends, args.repeats)
        print_compiled_rows(compiled)
        return compiled
    if args.gpt_only:
        gpt = gpt_rows(args.backends, args.repeats, args.gpt_threads, args.gpt_rounds)
        print_gpt_rows(gpt, args.gpt_threads)
        return gpt
    if args.threads:
        numba_threads(args.threads)

    rows: list[dict] = []
    torch_cache: dict[str, tuple[float, float] | None] = {}
    runs: list[tuple[str, str]] = []
    for backend in args.backends:
        runs.append((backend, backend))
        if backend == "fast" and args.blas_row:
            runs.append((backend, "fast/blas1"))
    for backend, label in runs:
        if not available(backend):
            print(f"{backend}: not available here, skipped" + (" (needs a real GPU)" if backend == "cuda" else ""))
            continue
        slow = backend == "simple"
        limiter = None
        if label.endswith("blas1"):
            try:
                from threadpoolctl import threadpool_limits
            except ImportError:
                continue
            limiter = threadpool_limits(1, user_api="blas")
        repeats = args.simple_steps if slow else args.repeats
        step, steps_per_epoch = split_step_fn(backend)
        if slow:
            epoch = median_time(step, repeats, warmup=0) * steps_per_epoch  # nothing to compile
        else:
            def run_epoch(step: Callable[[], None] = step, n: int = steps_per_epoch) -> None:
                for _ in range(n):
                    step()
            epoch = median_time(run_epoch, repeats)
        mstep = median_time(mnist_step_fn(backend), repeats, warmup=0 if slow else 1)
        if limiter is not None:
            limiter.unregister()
        device = "cuda" if backend == "cuda" else "cpu"
        if device not in torch_cache:
            torch_cache[device] = torch_times_in_subprocess(device, args.repeats)
        ref = torch_cache[device]
        rows.append({"backend": label, "split_epoch_s": epoch, "mnist_step_s": mstep,
                     "torch_device": device if ref else None,
                     "torch_split_epoch_s": ref[0] if ref else None, "torch_mnist_step_s": ref[1] if ref else None})

    print()
    print(f"{'backend':11} {'split s/epoch':>14} {'vs torch':>9} {'784-128-10 ms/step':>19} {'vs torch':>9}")
    for r in rows:
        ratio1 = f"{r['split_epoch_s'] / r['torch_split_epoch_s']:.1f}x" if r["torch_split_epoch_s"] else "n/a"
        ratio2 = f"{r['mnist_step_s'] / r['torch_mnist_step_s']:.1f}x" if r["torch_mnist_step_s"] else "n/a"
        print(f"{r['backend']:11} {r['split_epoch_s']:14.4f} {ratio1:>9} {r['mnist_step_s'] * 1e3:19.3f} {ratio2:>9}")
    for device, ref in torch_cache.items():
        if ref:
            print(f"torch-{device:5} {ref[0]:14.4f} {'1.0x':>9} {ref[1] * 1e3:19.3f} {'1.0x':>9}")
        else:
            print(f"torch ({device}): not importable here, no ratios")
    print(f"(medians; split epoch = {SPLIT_POINTS // SPLIT_BATCH} steps of batch {SPLIT_BATCH}; "
          f"simple backend scaled from {args.simple_steps} steps; numba threads {_threads()})")
    gpt = gpt_rows(args.backends, args.repeats, args.gpt_threads, args.gpt_rounds)
    print_gpt_rows(gpt, args.gpt_threads)
    return rows + gpt


def _threads() -> int:
    try:
        import numba

        return int(numba.get_num_threads())
    except Exception:  # noqa: BLE001
        return 1


if __name__ == "__main__":
    main()

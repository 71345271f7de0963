"""The support score of a claim against evidence: transparent features (`FEATURES`) combined by a linear model,
`sigmoid(BIAS + sum(WEIGHTS[f] * f))`, a contradicted claim capped at `CONTRADICTED_MAX`. The features and why
each exists: docs/builtin-grader.md, "The support score". BIAS and WEIGHTS were fitted on the dev split of public
HaluEval data (benchmarks/grading/fit.py) under constraints that keep the score's meaning, and are reported on
the held-out splits (benchmarks/grading/README.md, which also says why embedding similarity is not a feature)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from evalrun.grading.builtin import conflicts, quantities
from evalrun.grading.builtin.evidence import MATERIAL_WEIGHT, best_units, claim_terms, prepare
from evalrun.grading.builtin.lexicon import LIGHT_WORDS, stem
from evalrun.grading.builtin.terms import sequence, tokenize

#: Weight of a frequent, low-information word ("take", "place", "make": lexicon.LIGHT_WORDS), and their keys.
LIGHT_WEIGHT = 0.5
LIGHT_KEYS = frozenset(stem(w) for w in LIGHT_WORDS)
#: Words that set a claim's scope ("sent to *all* customers *unless* they opt out"): asserted, never merely added.
SCOPE_KEYS = frozenset({"all", stem("unless"), stem("except")})
#: Adjacent claim keys count as a phrase of the evidence when at most this many keys apart in one sentence.
PHRASE_WINDOW = 3
#: Words that open a trailing qualifier ("... at any one place").
_PREPOSITIONS = frozenset("at in on for with from during since until under over near across within throughout".split())
#: Evidence sentences most about the claim that the conflict checks look at.
NEAR = 12
#: Unverified keys are counted up to this many.
COUNT_CAP = 10
#: Fitted by benchmarks/grading/fit.py on HaluEval dev (see the module docstring).
BIAS = 0.261
WEIGHTS: dict[str, float] = {"unverified_local": -5.034, "unverified_global": -9.025,
                             "unverified_local_material": -3.321, "unverified_global_material": -13.838,
                             "inserted": -5.836, "phrases": 1.137, "conflict": -20.619}
FEATURES = tuple(WEIGHTS)
#: The most a contradicted claim can score.
CONTRADICTED_MAX = 0.1


@dataclass(frozen=True)
class Analysis:
    """A claim analysed against evidence."""

    weights: dict[str, float]
    features: dict[str, float]
    best: tuple[int, ...]  # evidence sentence ids, best first
    unverified: tuple[str, ...]  # asserted keys absent from the best sentence (weightiest first)
    nowhere: frozenset[str]  # those of them absent from the whole evidence
    inserted: frozenset[str]  # those of them merely added between words the evidence has (`_inserted`)
    conflict: str | None  # the reason of a precise contradiction
    flipped: frozenset[int] = frozenset()  # near sentences that state a word of the claim with the other polarity

    @property
    def score(self) -> float:
        z = BIAS + sum(WEIGHTS[f] * self.features[f] for f in FEATURES)
        p = 1.0 / (1.0 + math.exp(-z))
        return min(p, CONTRADICTED_MAX) if self.conflict else p


@lru_cache(maxsize=256)
def phrase_pairs(evidence: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    """Unordered key pairs at most PHRASE_WINDOW keys apart in one evidence sentence (cached per evidence)."""
    pairs: set[tuple[str, str]] = set()
    for unit in prepare(evidence).sentences:
        seq = [k for k in unit.seq if not k.startswith("~")]
        for i, a in enumerate(seq):
            for b in seq[i + 1:i + 1 + PHRASE_WINDOW]:
                pairs.add((a, b) if a <= b else (b, a))
    return frozenset(pairs)


def analyse(claim: str, evidence: tuple[str, ...]) -> Analysis | None:
    """The claim's features, score inputs and conflict against the evidence; None without content keys. Every
    word of the claim is checked against the evidence: the question is never evidence (issue 34: a question that
    names what the policy negates made the flipped answer pass)."""
    ev = prepare(evidence)
    t = claim_terms(claim, ev)
    if not t.keys:
        return None
    material = {k for k in t.keys if k in t.entities or k.startswith("#") or k in t.months}
    w = {k: (MATERIAL_WEIGHT if k in material else LIGHT_WEIGHT if k in LIGHT_KEYS else 1.0)
         for k in t.keys}  # each key's weight in the claim
    total = sum(w.values())
    ranked = best_units(ev.sentence_index, w, total, limit=NEAR)
    near = tuple(i for _, i in ranked)
    best = near[:2]
    best_keys = ev.sentences[best[0]].keys if best else frozenset()
    # light words only when nothing else is asserted
    asserted = [k for k in t.keys if k not in LIGHT_KEYS] or list(t.keys)
    numbers_ok = quantities.verified_numbers(
        [q for q in quantities.quantities(tokenize(claim)) if q.key in asserted], ev, near)
    local = sorted((k for k in asserted if k not in best_keys and k not in numbers_ok), key=lambda k: (-w[k], k))
    nowhere = [k for k in asserted if k not in ev.keys and k not in numbers_ok]
    inserted = _inserted(claim, set(local), ev.sentences[best[0]].seq if best else (), set(nowhere)) - material
    conflict = conflicts.find(claim, t, w, ev, best, near)
    toks = tokenize(claim)
    flipped = frozenset(i for i in near if conflicts.polarity_differs(t, toks, ev.sentences[i]))
    features = {
        "unverified_local": _count(k for k in local if k not in material and k not in inserted),
        "unverified_global": _count(k for k in nowhere if k not in material and k not in inserted),
        "inserted": _count(inserted),
        "unverified_local_material": _count(k for k in local if k in material),
        "unverified_global_material": _count(k for k in nowhere if k in material),
        "phrases": _phrase_share(claim, evidence, inserted),
        "conflict": 1.0 if conflict else 0.0,
    }
    return Analysis(w, features, best, tuple(local), frozenset(nowhere), frozenset(inserted), conflict, flipped)


def _inserted(claim: str, unverified: set[str], sentence_seq: tuple[str, ...],
              nowhere: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """Unverified words the claim *adds* to the best evidence sentence rather than puts in place of its words:
    - between two claim words that stand next to each other there, itself next to one of them with no function
      word between or found elsewhere in the evidence (`nowhere` are those that are not): "the capital *city* of
      Australia" against "the capital of Australia", "selected as the *capital* in 1908" against "chosen in 1908"
      after "Canberra is the capital"; not "one hour *has passed* since it was placed" against "within one hour of
      being placed";
    - before the claim's first found word, with no function word between ("A *typical* espresso shot uses ...":
      English puts modifiers first; not "*E-books* are refundable" against "Refunds can be requested ...");
    - in a trailing phrase that a preposition opens after the claim's last found word ("lasts up to 7.5 minutes
      *at any one place*").
    Not "liquid *water*" against "liquid methane and ethane": a last word with no preposition before it is what
    the claim asserts."""
    toks = [t for t in tokenize(claim) if t.kind != "neg"]
    keys = [t.term for t in toks]
    content = [i for i, t in enumerate(toks) if t.kind != "stop"]
    where: dict[str, list[int]] = {}
    for pos, k in enumerate(k for k in sentence_seq if not k.startswith("~")):
        where.setdefault(k, []).append(pos)
    found = [i for i in content if keys[i] not in unverified]
    out = set()
    for i in content:
        k = keys[i]
        if k not in unverified or k in SCOPE_KEYS:
            continue
        left = next((keys[j] for j in reversed(found) if j < i), None)
        right = next((keys[j] for j in found if j > i), None)
        if right is None:
            last = max((j for j in found if j < i), default=None)
            if last is not None and any(toks[j].text.lower() in _PREPOSITIONS for j in range(last + 1, i)):
                out.add(k)
            continue
        if right not in where:
            continue
        j_left = max((j for j in found if j < i), default=-1)
        j_right = next(j for j in found if j > i)
        # next to a found word, no function word between: a modifier ("the capital *city* of"), not a predicate
        # ("E-books *are* refundable", "one hour *has passed* since ...")
        touching = [all(toks[j].kind != "stop" for j in range(a + 1, b)) for a, b in ((j_left, i), (i, j_right))]
        before_first = left is None and touching[1]
        between = left in where and (touching[0] or touching[1] or k not in nowhere) \
            and any(b - a == 1 for a in where[left] for b in where[right])
        if before_first or between:
            out.add(k)
    return out


def _count(keys: Iterable[str]) -> float:
    return min(sum(1 for _ in keys), COUNT_CAP) / COUNT_CAP


def _phrase_share(claim: str, evidence: tuple[str, ...], skip: set[str] | frozenset[str] = frozenset()) -> float:
    """Share of the claim's adjacent key pairs near each other in one evidence sentence (1.0 below two keys);
    `skip`: words left out first (inserted words do not break the phrase around them)."""
    seq = [k for k in sequence(tokenize(claim)) if not k.startswith("~") and k not in skip]
    pairs = [(a, b) if a <= b else (b, a) for a, b in zip(seq, seq[1:], strict=False) if a != b]
    if not pairs:
        return 1.0
    known = phrase_pairs(evidence)
    return sum(p in known for p in pairs) / len(pairs)

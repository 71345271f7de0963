"""The builtin grader's verdict on one claim: supported (verbatim, or a support score >= `SUPPORT_THRESHOLD`),
contradicted (a precise conflict, conflicts.py) or unsupported; and `attributes`, the lenient chunk attribution
noise-sensitivity uses (a chunk supports the claim, or is not contradicted, has every name of it and holds at least
`ATTRIBUTION_MIN` of its weight)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from evalrun.grading.builtin import amounts as _amounts
from evalrun.grading.builtin import stemming, terms, tokens
from evalrun.grading.builtin import support as _support
from evalrun.grading.builtin.evidence import Evidence, Unit, claim_terms, prepare, weighted_coverage
from evalrun.grading.builtin.support import CONTRADICTED_MAX, question_keys
from evalrun.grading.builtin.terms import short, surface
from evalrun.types import VerdictLabel

__all__ = ["ATTRIBUTION_MIN", "CONTRADICTED_MAX", "SUPPORT_THRESHOLD", "Evidence", "Judgement", "attributes",
           "claim_terms", "clear_caches", "judge", "prepare", "support_score"]

#: A claim scoring at least this is supported (more likely than not); a failing assertion's reason names its
#: weakest claims with their support whatever their labels (assertions/rag.py claims_reason).
SUPPORT_THRESHOLD = 0.5
#: Lenient attribution: share of the claim's weight a chunk must hold (see the module docstring).
ATTRIBUTION_MIN = 0.5


@dataclass(frozen=True)
class Judgement:
    """The scorer's decision about one claim against one evidence set."""

    verdict: VerdictLabel
    score: float
    coverage: float  # weighted share of the claim's keys found in the evidence
    reason: str
    items: tuple[int, ...] = ()  # evidence texts the best sentences came from


def judge(claim: str, evidence: tuple[str, ...] | list[str], question: str | None = None) -> Judgement:
    """Verdict, support score and reason for one claim against the evidence texts; `question` is what the claim
    answers (its words are given, not verified)."""
    ev_texts = tuple(evidence)
    ev = prepare(ev_texts)
    verbatim = _verbatim_unit(claim, ev_texts)
    if verbatim is not None:  # the evidence says exactly this (also where words are not space-separated: CJK)
        return Judgement("supported", 1.0, 1.0, f"the evidence says it verbatim: \"{short(verbatim.text)}\"",
                         (verbatim.item,))
    a = _support.analyse(claim, ev_texts, question_keys(question))
    if a is None:
        return Judgement("unsupported", 0.0, 0.0, "the claim has no content words to check")
    total = sum(a.weights.values())
    coverage = weighted_coverage(a.weights, total, ev.keys)
    score = round(a.score, 6)
    items = tuple(sorted({ev.sentences[i].item for i in a.best}))
    if a.conflict:
        return Judgement("contradicted", min(score, CONTRADICTED_MAX), coverage, a.conflict, items)
    where = f"\"{short(ev.sentences[a.best[0]].text)}\"" if a.best else "nothing"
    if not a.unverified:
        why = f"every asserted word is in {where}"
    else:
        shown = surface(claim, list(a.unverified[:4])) + (["..."] if len(a.unverified) > 4 else [])
        why = f"{', '.join(shown)} not in the closest evidence ({where})"
    return Judgement("supported" if score >= SUPPORT_THRESHOLD else "unsupported", score, coverage, why, items)


def _plain(text: str) -> str:
    """`text` for a verbatim comparison: case folded, spaces collapsed, closing punctuation dropped."""
    return " ".join(text.casefold().split()).rstrip(" .!?;:\u3002\uff0e\uff01\uff1f\"'\u201d)")


def _verbatim_unit(claim: str, evidence: tuple[str, ...]) -> Unit | None:
    """An evidence sentence or clause that is the claim itself, word for word."""
    plain = _plain(claim)
    return _verbatim_index(evidence).get(plain) if plain else None


@lru_cache(maxsize=256)
def _verbatim_index(evidence: tuple[str, ...]) -> dict[str, Unit]:
    """Each evidence sentence and clause by its plain text (first one wins), built once per evidence."""
    ev = prepare(evidence)
    index: dict[str, Unit] = {}
    for unit in (*ev.sentences, *ev.clauses):
        index.setdefault(_plain(unit.text), unit)
    return index


def clear_caches() -> None:
    """Forget every memoised result, evidence included (for cold-start benchmarks)."""
    prepare.cache_clear()
    _support.phrase_pairs.cache_clear()
    _amounts.clear_caches()
    _verbatim_index.cache_clear()
    tokens.clear_caches()
    terms.clear_caches()
    stemming.clear_caches()


def support_score(claim: str, evidence: str | list[str] | tuple[str, ...], question: str | None = None) -> float:
    """The support score in [0, 1] of one claim (higher = better supported)."""
    ev = (evidence,) if isinstance(evidence, str) else tuple(evidence)
    return judge(claim, ev, question).score


def attributes(claim: str, chunk: str) -> bool:
    """Lenient attribution: is `chunk` a plausible source of `claim`? (see ATTRIBUTION_MIN)."""
    j = judge(claim, (chunk,))
    if j.verdict == "supported":
        return True
    if j.verdict == "contradicted":
        return False
    ev = prepare((chunk,))
    t = claim_terms(claim, ev)
    return bool(t.keys) and t.entities <= ev.keys and j.coverage >= ATTRIBUTION_MIN

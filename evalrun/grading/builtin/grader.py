"""The builtin grader (`BuiltinGrader`: the Grader protocol offline, deterministic) and its verdict on one claim:
supported (verbatim, or a support score >= `SUPPORT_THRESHOLD`), contradicted (a precise conflict, conflicts.py)
or unsupported; `attributes` is the lenient chunk attribution noise-sensitivity uses. Each step records one
GraderCall whose `raw` is a compact JSON record of what was decided (the audit trail)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from evalrun.errors import GraderError
from evalrun.grading import minilm
from evalrun.grading.builtin import amounts, support
from evalrun.grading.builtin.evidence import Unit, claim_terms, prepare, weighted_coverage
from evalrun.grading.builtin.lexicon import base_stem, stem
from evalrun.grading.builtin.relevance import classify
from evalrun.grading.builtin.segment import claims as split_claims
from evalrun.grading.builtin.support import CONTRADICTED_MAX, question_keys
from evalrun.grading.builtin.terms import analyse, short, surface, tokenize
from evalrun.grading.steps import BUILTIN, Step
from evalrun.types import ChunkRelevance, GraderCall, GraderTrace, Verdict, VerdictLabel

#: A claim scoring at least this is supported (more likely than not); a failing assertion's reason names its
#: weakest claims with their support whatever their labels (assertions/rag.py claims_reason).
SUPPORT_THRESHOLD = 0.5
#: Lenient attribution (`attributes`): a chunk that does not contradict the claim and has every name of it must
#: hold this share of the claim's weight.
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
    plain = _plain(claim)
    verbatim = _verbatim_index(ev_texts).get(plain) if plain else None  # a sentence or clause, word for word
    if verbatim is not None:  # the evidence says exactly this (also where words are not space-separated: CJK)
        return Judgement("supported", 1.0, 1.0, f"the evidence says it verbatim: \"{short(verbatim.text)}\"",
                         (verbatim.item,))
    a = support.analyse(claim, ev_texts, question_keys(question))
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
        shown = surface(tokenize(claim), list(a.unverified[:4])) + (["..."] if len(a.unverified) > 4 else [])
        why = f"{', '.join(shown)} not in the closest evidence ({where})"
    return Judgement("supported" if score >= SUPPORT_THRESHOLD else "unsupported", score, coverage, why, items)


def _plain(text: str) -> str:
    """`text` for a verbatim comparison: case folded, spaces collapsed, closing punctuation dropped."""
    return " ".join(text.casefold().split()).rstrip(" .!?;:\u3002\uff0e\uff01\uff1f\"'\u201d)")


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
    for cached in (prepare, support.phrase_pairs, amounts.unit_quantities, _verbatim_index, tokenize, analyse,
                   stem, base_stem):
        cached.cache_clear()


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


def _record(trace: GraderTrace, step: str, raw: dict[str, Any], started: float) -> None:
    trace.calls.append(GraderCall(step=step, raw=json.dumps(raw, separators=(",", ":"), ensure_ascii=False),
                                  latency_ms=(time.perf_counter() - started) * 1000.0))


def faithfulness(answer: str, context: str | list[str], question: str | None = None) -> float | None:
    """Mean support score of the claims of `answer` against `context` (the faithfulness assertion's score with
    this grader); None when the answer makes no claims."""
    found = split_claims(answer, question)
    if not found:
        return None
    evidence = (context,) if isinstance(context, str) else tuple(context)
    return sum(judge(c, evidence, question).score for c in found) / len(found)


class BuiltinGrader:
    """The offline grader. Stateless: safe to share between concurrent assertions."""

    id = "builtin"

    def __init__(self) -> None:
        #: What grades, for the run summary: with the semantic tier or words alone.
        self.description = f"builtin (offline, {'with all-MiniLM-L6-v2' if minilm.available() else 'words only'})"

    def supports(self, step: Step[Any]) -> bool:
        """The claim pipeline (extract, verify, attribute, classify); no judge step (it needs a model)."""
        return BUILTIN in step.graders

    async def extract_claims(self, text: str, trace: GraderTrace, *, question: str | None = None) -> list[str]:
        """Sentence/clause segmentation into short self-contained claims (see segment.py)."""
        started = time.perf_counter()
        found = split_claims(text, question)
        _record(trace, "extract", {"claims": found}, started)
        return found

    async def verify(self, claims: list[str], evidence: list[str], trace: GraderTrace, *,
                     question: str | None = None) -> list[Verdict]:
        """One verdict per claim by the lexical entailment scorer (see `judge`)."""
        started = time.perf_counter()
        ev = tuple(evidence)
        verdicts: list[Verdict] = []
        raw: list[dict[str, Any]] = []
        for c in claims:
            j = judge(c, ev, question)
            verdicts.append(Verdict(verdict=j.verdict, reason=j.reason, evidence=j.items, support=j.score))
            raw.append({"verdict": j.verdict, "score": round(j.score, 4), "reason": j.reason})
        _record(trace, "verify", {"verdicts": raw}, started)
        return verdicts

    async def attribute(self, claims: list[str], chunks: list[str], trace: GraderTrace) -> list[list[bool]]:
        """matrix[i][k] = chunk k is a plausible source of claim i (lenient, see `attributes`)."""
        started = time.perf_counter()
        matrix = [[attributes(c, k) for k in chunks] for c in claims]
        _record(trace, "attribute", {"matrix": [[int(x) for x in row] for row in matrix]}, started)
        return matrix

    async def classify_chunks(self, query: str, output: str, chunks: list[str],
                              trace: GraderTrace) -> ChunkRelevance:
        """Chunk levels from query-term overlap, `used` from overlap with the output (see relevance.py)."""
        started = time.perf_counter()
        # in a worker thread: the embedding model (loaded on first use) must not hold up other cases' calls
        result, raw = await asyncio.to_thread(classify, query, output, chunks)
        _record(trace, "classify", raw, started)
        return result

    async def judge(self, prompt: str, schema: dict[str, Any], trace: GraderTrace, *,
                    step: str = "judge") -> dict[str, Any]:
        """Not possible without a model: a GraderError (validate reports it before any call; this is the backstop)."""
        message = (f"the builtin grader cannot perform the grader step {step!r} (it needs a model); set --grader "
                   "MODEL (e.g. --grader openai:gpt-4o-mini or --grader ollama:chat:llama3)")
        _record(trace, step, {"error": message}, time.perf_counter())
        raise GraderError(message)

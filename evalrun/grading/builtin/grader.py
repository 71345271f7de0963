"""The builtin grader (`BuiltinGrader`: the Grader protocol offline, deterministic; each step's GraderCall holds a
compact JSON record of what was decided): the verdict on one claim (`judge`: supported verbatim or by a support
score >= `SUPPORT_THRESHOLD`, contradicted by a precise conflict, else unsupported), lenient chunk attribution
(`attributes`) and chunk relevance (`classify`; rules: docs/builtin-grader.md, "What it does, step by step")."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evalrun.errors import GraderError
from evalrun.grading import embeddings
from evalrun.grading.builtin import quantities, support
from evalrun.grading.builtin.evidence import MATERIAL_WEIGHT, Unit, claim_terms, prepare, weighted_coverage
from evalrun.grading.builtin.lexicon import base_stem, stem
from evalrun.grading.builtin.segment import claims as split_claims
from evalrun.grading.builtin.support import CONTRADICTED_MAX
from evalrun.grading.builtin.terms import analyse, content_words, short, surface, tokenize
from evalrun.grading.steps import BUILTIN, Step
from evalrun.types import ChunkJudgement, ChunkRelevance, GraderCall, GraderTrace, Verdict

if TYPE_CHECKING:
    from evalrun.grading.entailment import EntailmentHead
    from evalrun.types import RelevanceLevel, VerdictLabel

#: A claim scoring at least this is supported (more likely than not); a failing assertion's reason names its
#: weakest claims with their support whatever their labels (assertions/rag.py claims_reason).
SUPPORT_THRESHOLD = 0.5
#: The most a claim scores when its closest sentence states it with the other polarity (below SUPPORT_THRESHOLD).
UNSUPPORTED_MAX = 0.4
#: The learned entailment head (grading/entailment.py) reads a claim the words leave `unsupported` although every
#: name, number and date of it is in the evidence and nothing conflicts: `supported` when, against one of the two
#: closest sentences, p(supported) >= MEANING_SUPPORTED and no closest sentence gives p(refuted) >= MEANING_REFUTED.
#: Fitted on the dev splits (benchmarks/grading/README.md, "Issue 34, part 2").
MEANING_SUPPORTED = 0.8
MEANING_REFUTED = 0.2
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


def judge(claim: str, evidence: tuple[str, ...] | list[str], meaning: EntailmentHead | None = None) -> Judgement:
    """Verdict, support score and reason for one claim against the evidence texts. The question is never
    evidence: every word the claim asserts must be in the evidence. The reason quotes the sentence that decided
    and names what decided it (the words it lacks there or anywhere, the conflict, or the learned score).
    `meaning`: the learned entailment head, asked only where the words leave the claim open (MEANING_SUPPORTED)."""
    ev_texts = tuple(evidence)
    ev = prepare(ev_texts)
    plain = _plain(claim)
    verbatim = _verbatim_index(ev_texts).get(plain) if plain else None  # a sentence or clause, word for word
    if verbatim is not None:  # the evidence says exactly this (also where words are not space-separated: CJK)
        return Judgement("supported", 1.0, 1.0, f"the evidence says it verbatim: \"{short(verbatim.text)}\"",
                         (verbatim.item,))
    a = support.analyse(claim, ev_texts)
    if a is None:
        return Judgement("unsupported", 0.0, 0.0, "the claim has no content words to check")
    total = sum(a.weights.values())
    coverage = weighted_coverage(a.weights, total, ev.keys)
    score = round(a.score, 6)
    items = tuple(sorted({ev.sentences[i].item for i in a.best}))
    if a.conflict:
        return Judgement("contradicted", min(score, CONTRADICTED_MAX), coverage, a.conflict, items)
    where = f"\"{short(ev.sentences[a.best[0]].text)}\"" if a.best else None
    # supported only by a sentence that carries the claim: a word it lacks (other than a modifier merely added
    # between its words) leaves the claim unsupported, whatever the score (which still ranks: faithfulness is
    # the mean score)
    carried = all(k in a.inserted for k in a.unverified)
    label: VerdictLabel = "supported" if score >= SUPPORT_THRESHOLD and carried else "unsupported"
    toks = tokenize(claim)
    if a.best and a.best[0] in a.flipped:  # never supported by a sentence that says it the other way
        return Judgement("unsupported", min(score, UNSUPPORTED_MAX), coverage,
                         f"{where} states it with the other polarity", items)
    if not a.unverified:
        why = f"every asserted word is in {where}"
    elif carried:
        why = f"{where} says it without the added {', '.join(surface(toks, list(a.unverified[:4])))}"
    else:
        missing = [k for k in a.unverified if k in a.nowhere][:4]
        apart = [k for k in a.unverified if k not in a.nowhere][:4]
        said = [f"{', '.join(surface(toks, keys))} not in the {place}"
                for keys, place in ((missing, "context"), (apart, "closest sentence")) if keys]
        why = "; ".join(said) + (f"; closest sentence: {where}" if where else "")
        material = {k for k, w in a.weights.items() if w >= MATERIAL_WEIGHT}
        # not where a close sentence states a word of the claim the other way ("E-books are refundable" against
        # "Refunds can be requested ... Digital downloads ... are non-refundable."): that is for words to decide
        if meaning is not None and a.best and not a.flipped and not material & set(a.unverified):
            read = _read(meaning, claim, [ev.sentences[i] for i in a.best])
            if read is not None:
                sentence, p = read
                return Judgement("supported", max(score, p), coverage,
                                 f"\"{short(sentence.text)}\" says it in other words (learned entailment {p:.2f}; "
                                 f"{', '.join(surface(toks, list(a.unverified[:4])))} not in it)", (sentence.item,))
    return Judgement(label, score, coverage, why, items)


def _read(meaning: EntailmentHead, claim: str, sentences: list[Unit]) -> tuple[Unit, float] | None:
    """The closest sentence that says the claim in other words and its p(supported), or None (MEANING_SUPPORTED)."""
    probs = meaning.probs([u.text for u in sentences], claim)
    best = int(probs[:, 0].argmax())
    if probs[best, 0] >= MEANING_SUPPORTED and probs[:, 1].max() < MEANING_REFUTED:
        return sentences[best], float(probs[best, 0])
    return None


def _plain(text: str) -> str:
    """`text` for a verbatim comparison: case folded, spaces collapsed, closing punctuation dropped."""
    return " ".join(text.casefold().split()).rstrip(" .!?;:\u3002\uff0e\uff01\uff1f\"'\u201d)")


@lru_cache(maxsize=256)
def _verbatim_index(evidence: tuple[str, ...]) -> dict[str, Unit]:
    """Each evidence sentence and clause by its plain text (the first one, hence reversed), once per evidence."""
    ev = prepare(evidence)
    return {_plain(unit.text): unit for unit in reversed((*ev.sentences, *ev.clauses))}


def clear_caches() -> None:
    """Forget every memoised result, evidence included (for cold-start benchmarks)."""
    for cached in (prepare, support.phrase_pairs, quantities.unit_quantities, _verbatim_index, tokenize, analyse,
                   stem, base_stem):
        cached.cache_clear()


def support_score(claim: str, evidence: str | list[str] | tuple[str, ...]) -> float:
    """The support score in [0, 1] of one claim (higher = better supported)."""
    ev = (evidence,) if isinstance(evidence, str) else tuple(evidence)
    return judge(claim, ev).score


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


# ------------------------------------------------------------------ chunk relevance (context-relevance)
# With the semantic tier (the offline model of grading/embeddings.py) a level is how close in meaning the query is to the chunk or its
# closest sentence; without it, the weighted share of the query's words (names and numbers weigh 2). A chunk naming
# only the query's subject while other chunks hold what is asked is `low` in both tiers.
#: Weighted share of the query's terms in a chunk for `high` and `medium` relevance (any overlap below: `low`).
HIGH_MIN = 0.75
MEDIUM_MIN = 0.4
#: Content words (beyond the query's) the output must share with a chunk to count it as used.
USED_MIN_SHARED = 2
#: Cosine similarity of the query to a chunk (or its closest sentence) for each level (semantic tier), fitted on
#: the dev splits of benchmarks/grading (context relevance).
HIGH_SIM = 0.55
MEDIUM_SIM = 0.45
LOW_SIM = 0.25
#: Cosine similarity of the output to a chunk sentence that counts the chunk as used.
USED_SIM = 0.7


def _level(x: float, high: float, medium: float, low: float = 0.0) -> RelevanceLevel:
    return "high" if x >= high else "medium" if x >= medium else "low" if x >= low else "none"


def _units(chunk: str) -> list[str]:
    """The chunk itself and its sentences (a long chunk can answer in one of them)."""
    return list(dict.fromkeys([chunk, *(u.text for u in prepare((chunk,)).sentences)]))


def classify(query: str, output: str, chunks: list[str]) -> tuple[ChunkRelevance, dict[str, Any]]:
    """The ChunkRelevance of `chunks` for `query` and `output`, and a compact record for the audit trail."""
    q_words = content_words(query)
    q_terms = analyse(query)
    topic = {k for _, k in q_words if k.startswith("#") or k in q_terms.entities}
    focus = {k for _, k in q_words} - topic
    weights = {k: (MATERIAL_WEIGHT if k in topic else 1.0) for _, k in q_words}
    total = sum(weights.values())
    out_keys = prepare((output,)).keys if output.strip() else frozenset()
    chunk_keys = [prepare((chunk,)).keys for chunk in chunks]
    answered = focus & frozenset().union(*chunk_keys)  # focus words some chunk contains
    judgements: list[ChunkJudgement] = []
    record: list[dict[str, Any]] = []
    covered: set[str] = set()
    semantic = embeddings.offline_available() and bool(query.strip())
    for chunk, keys in zip(chunks, chunk_keys, strict=True):
        hit = [k for _, k in q_words if k in keys]
        covered.update(hit)
        share = sum(weights[k] for k in hit) / total if total else 0.0
        level: RelevanceLevel
        sim = used_sim = None
        topic_only = bool(topic and answered and share and not (answered & keys))
        if semantic:
            units = _units(chunk)
            sim = max(embeddings.similarities(query, units))
            level = "low" if topic_only and sim >= LOW_SIM else _level(sim, HIGH_SIM, MEDIUM_SIM, LOW_SIM)
            if output.strip():
                used_sim = max(embeddings.similarities(output, units))
        elif share and not topic_only:
            level = _level(share, HIGH_MIN, MEDIUM_MIN)
        else:  # no query word, or only the subject: not about what is asked
            level = "low" if share else "none"
        own = keys - set(weights)
        shared = own & out_keys
        used = len(shared) >= USED_MIN_SHARED or (bool(shared) and len(shared) * 2 >= len(own)) \
            or (used_sim is not None and used_sim >= USED_SIM)
        hit_words = [w for w, k in q_words if k in hit]
        if sim is not None:
            reason = f"meaning {sim:.2f} close to the query"
        else:
            reason = f"{share:.0%} of the query terms" + (f" ({', '.join(hit_words)})" if hit_words else "")
        reason += f"; shares {len(shared)} other term(s) with the output"
        judgements.append(ChunkJudgement(level=level, used=used, reason=reason))
        record.append({"level": level, "used": used, "query_share": round(share, 4), "shared": len(shared),
                       **({"similarity": round(sim, 4)} if sim is not None else {})})
    answered_somewhere = any(j.level in ("high", "medium") for j in judgements)
    missing = tuple(f"no context mentions '{w}'" for w, k in q_words if k not in covered) \
        if chunks and not (semantic and answered_somewhere) else ()
    return ChunkRelevance(chunks=tuple(judgements), missing=missing), {"chunks": record, "missing": list(missing)}


def _meaning() -> EntailmentHead:
    """The process's entailment head, loaded on first use (numpy and its weights only when a claim needs it)."""
    from evalrun.grading.entailment import shared

    return shared()


def _record(trace: GraderTrace, step: str, raw: dict[str, Any], started: float) -> None:
    trace.calls.append(GraderCall(step=step, raw=json.dumps(raw, separators=(",", ":"), ensure_ascii=False),
                                  latency_ms=(time.perf_counter() - started) * 1000.0))


def faithfulness(answer: str, context: str | list[str], question: str | None = None) -> float | None:
    """Mean support score of the claims of `answer` against `context` (faithfulness, as BuiltinGrader grades it:
    with the entailment head where the offline model is installed); None without claims."""
    found = split_claims(answer, question)
    if not found:
        return None
    evidence = (context,) if isinstance(context, str) else tuple(context)
    meaning = _meaning() if embeddings.offline_available() else None
    return sum(judge(c, evidence, meaning).score for c in found) / len(found)


class BuiltinGrader:
    """The offline grader. Stateless: safe to share between concurrent assertions."""

    id = "builtin"

    def __init__(self) -> None:
        #: What grades, for the run summary: with the semantic tier or words alone.
        self.description = f"builtin (offline, {'with all-MiniLM-L6-v2' if embeddings.offline_available() else 'words only'})"
        #: whether the learned entailment head reads claims (it needs the offline model)
        self.reads_meaning = embeddings.offline_available()

    def supports(self, step: Step[Any]) -> bool:
        """The claim pipeline (extract, verify, attribute, classify); no judge step (it needs a model)."""
        return BUILTIN in step.graders

    async def extract_claims(self, text: str, trace: GraderTrace, *, question: str | None = None) -> list[str]:
        started = time.perf_counter()
        found = split_claims(text, question)
        _record(trace, "extract", {"claims": found}, started)
        return found

    async def verify(self, claims: list[str], evidence: list[str], trace: GraderTrace, *,
                     question: str | None = None) -> list[Verdict]:
        started = time.perf_counter()
        ev = tuple(evidence)
        # in a worker thread: the entailment head encodes sentences (~10 ms each) and must not hold up other cases
        judged = await asyncio.to_thread(lambda: [judge(c, ev, _meaning() if self.reads_meaning else None)
                                                  for c in claims])
        raw = [{"verdict": j.verdict, "score": round(j.score, 4), "reason": j.reason} for j in judged]
        _record(trace, "verify", {"verdicts": raw}, started)
        return [Verdict(verdict=j.verdict, reason=j.reason, evidence=j.items, support=j.score) for j in judged]

    async def attribute(self, claims: list[str], chunks: list[str], trace: GraderTrace) -> list[list[bool]]:
        """matrix[i][k] = chunk k is a plausible source of claim i (lenient, see `attributes`)."""
        started = time.perf_counter()
        matrix = [[attributes(c, k) for k in chunks] for c in claims]
        _record(trace, "attribute", {"matrix": [[int(x) for x in row] for row in matrix]}, started)
        return matrix

    async def classify_chunks(self, query: str, output: str, chunks: list[str],
                              trace: GraderTrace) -> ChunkRelevance:
        """Chunk levels from query-term overlap, `used` from overlap with the output (see `classify`)."""
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

"""Chunk relevance for the builtin grader (context-relevance): a level per chunk, whether the output used it, and
the missing information. With the semantic tier (grading/minilm.py) a level is how close in meaning the query is
to the chunk or its closest sentence; without it, the weighted share of the query's words (names and numbers
weigh 2). A chunk naming only the query's subject while other chunks hold what is asked is `low` in both tiers.
The rules: docs/builtin-grader.md, "What it does, step by step"."""

from __future__ import annotations

from typing import Any

from evalrun.grading import minilm
from evalrun.grading.builtin.evidence import MATERIAL_WEIGHT, prepare
from evalrun.grading.builtin.terms import analyse, content_words
from evalrun.types import ChunkJudgement, ChunkRelevance, RelevanceLevel

#: Weighted share of the query's terms in a chunk for `high` relevance.
HIGH_MIN = 0.75
#: Weighted share of the query's terms in a chunk for `medium` relevance (any overlap below it is `low`).
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


def _semantic_level(sim: float) -> RelevanceLevel:
    return "high" if sim >= HIGH_SIM else "medium" if sim >= MEDIUM_SIM else "low" if sim >= LOW_SIM else "none"


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
    semantic = minilm.available() and bool(query.strip())
    for chunk, keys in zip(chunks, chunk_keys, strict=True):
        hit = [k for _, k in q_words if k in keys]
        covered.update(hit)
        share = sum(weights[k] for k in hit) / total if total else 0.0
        level: RelevanceLevel
        sim = used_sim = None
        topic_only = bool(topic and answered and share and not (answered & keys))
        if semantic:
            units = _units(chunk)
            sim = max(minilm.similarities(query, units))
            level = "low" if topic_only and sim >= LOW_SIM else _semantic_level(sim)
            if output.strip():
                used_sim = max(minilm.similarities(output, units))
        elif share == 0:
            level = "none"
        elif topic_only:
            level = "low"  # about the subject, not about what is asked
        elif share >= HIGH_MIN:
            level = "high"
        elif share >= MEDIUM_MIN:
            level = "medium"
        else:
            level = "low"
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

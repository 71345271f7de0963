"""Chunk relevance for the builtin grader (context-relevance): levels, `used`, missing information.

* **level** from the weighted share of the query's content terms a chunk contains (named entities and
  numbers weigh 2): >= `HIGH_MIN` high, >= `MEDIUM_MIN` medium, > 0 low, 0 none.
* **used** when the output repeats at least `USED_MIN_SHARED` content terms of the chunk that are not
  already in the query (the output drew on the chunk, not just on the question's words).
* **missing**: query content terms that no chunk contains, as short items ("no context mentions 'budget'").
"""

from __future__ import annotations

from typing import Any

from evalrun.grading.builtin.entail import MATERIAL_WEIGHT, prepare
from evalrun.grading.builtin.text import analyse, content_words
from evalrun.types import ChunkJudgement, ChunkRelevance, RelevanceLevel

#: Weighted share of query terms in a chunk for `high` relevance.
HIGH_MIN = 0.6
#: Weighted share of query terms in a chunk for `medium` relevance (any overlap below it is `low`).
MEDIUM_MIN = 0.3
#: Content terms (beyond the query's) a chunk must share with the output to count as used.
USED_MIN_SHARED = 2


def classify(query: str, output: str, chunks: list[str]) -> tuple[ChunkRelevance, dict[str, Any]]:
    """The ChunkRelevance of `chunks` for `query` and `output`, and a compact record for the audit trail."""
    q_words = content_words(query)
    q_terms = analyse(query)
    weights = {k: (MATERIAL_WEIGHT if (k.startswith("#") or k in q_terms.entities) else 1.0) for _, k in q_words}
    total = sum(weights.values())
    out_keys = prepare((output,)).keys if output.strip() else frozenset()
    judgements: list[ChunkJudgement] = []
    record: list[dict[str, Any]] = []
    covered: set[str] = set()
    for chunk in chunks:
        keys = prepare((chunk,)).keys
        hit = [k for _, k in q_words if k in keys]
        covered.update(hit)
        share = sum(weights[k] for k in hit) / total if total else 0.0
        level: RelevanceLevel
        if share >= HIGH_MIN:
            level = "high"
        elif share >= MEDIUM_MIN:
            level = "medium"
        elif share > 0:
            level = "low"
        else:
            level = "none"
        shared = (keys & out_keys) - set(weights)
        used = len(shared) >= USED_MIN_SHARED
        hit_words = [w for w, k in q_words if k in hit]
        reason = (f"{share:.0%} of the query terms" + (f" ({', '.join(hit_words)})" if hit_words else "")
                  + f"; shares {len(shared)} other term(s) with the output")
        judgements.append(ChunkJudgement(level=level, used=used, reason=reason))
        record.append({"level": level, "used": used, "query_share": round(share, 4), "shared": len(shared)})
    missing = tuple(f"no context mentions '{w}'" for w, k in q_words if k not in covered) if chunks else ()
    return ChunkRelevance(chunks=tuple(judgements), missing=missing), {"chunks": record, "missing": list(missing)}

"""JSON schemas of the grader replies (structured output), with array lengths pinned where known.

A verdict list must have exactly one item per claim and the attribution matrix exactly claims x chunks;
the schemas say so with minItems = maxItems, so a reply of the wrong shape fails validation (and is repaired
once, then a GraderError) instead of being padded or truncated. Only keywords OpenAI's strict structured
outputs accept are used (no string minLength/pattern), so a strict provider does not reject the schema.
"""

from __future__ import annotations

from typing import Any

from evalrun.types import VerdictLabel

VERDICTS: tuple[VerdictLabel, ...] = ("supported", "contradicted", "unsupported")
LEVELS = ("high", "medium", "low", "none")

Schema = dict[str, Any]


def _obj(props: dict[str, Any]) -> Schema:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def _exactly(n: int, items: Schema) -> Schema:
    return {"type": "array", "items": items, "minItems": n, "maxItems": n}


def extract() -> Schema:
    """{"claims": [str, ...]} (any number, possibly none)."""
    return _obj({"claims": {"type": "array", "items": {"type": "string"}}})  # blanks are dropped in code


def verify(n_claims: int, n_evidence: int) -> Schema:
    """Exactly one {verdict, reason, evidence} per claim; `evidence` = indices of supporting evidence blocks."""
    index: Schema = {"type": "integer", "minimum": 0, "maximum": max(n_evidence - 1, 0)}
    return _obj({"verdicts": _exactly(n_claims, _obj({
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "reason": {"type": "string"},
        "evidence": {"type": "array", "items": index},
    }))})


def attribute(n_claims: int, n_chunks: int) -> Schema:
    """{"matrix": n_claims rows of n_chunks booleans}: matrix[i][k] = chunk k entails claim i."""
    return _obj({"matrix": _exactly(n_claims, _exactly(n_chunks, {"type": "boolean"}))})


def classify(n_chunks: int) -> Schema:
    """Exactly one {level, used, reason} per chunk, plus the missing information the answer needed."""
    return _obj({
        "chunks": _exactly(n_chunks, _obj({
            "level": {"type": "string", "enum": list(LEVELS)},
            "used": {"type": "boolean"},
            "reason": {"type": "string"},
        })),
        "missing": {"type": "array", "items": {"type": "string"}},
    })


def rubric() -> Schema:
    """promptfoo's llm-rubric reply: {reason, pass, score}."""
    return _obj({
        "reason": {"type": "string"},
        "pass": {"type": "boolean"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
    })


def noise_robustness() -> Schema:
    """Mastra's noise-robustness analysis: impact per dimension, overall robustness, major issues."""
    impact: Schema = {"type": "string", "enum": ["none", "minimal", "moderate", "significant", "severe"]}
    dims = ("content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance")
    return _obj({
        "dimensions": _obj({d: impact for d in dims}),
        "robustnessScore": {"type": "number", "minimum": 0, "maximum": 1},
        "majorIssues": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    })

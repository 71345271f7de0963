"""JSON schemas of the grader replies, array lengths pinned (minItems = maxItems) so a reply of the wrong shape is
repaired once, then a GraderError, never padded. Only keywords OpenAI's strict structured outputs accept."""

from __future__ import annotations

from typing import Any

from evalrun.grading.scoring.claims import IMPACT_WEIGHTS, RELEVANCE_WEIGHTS
from evalrun.types import VerdictLabel

VERDICTS: tuple[VerdictLabel, ...] = ("supported", "contradicted", "unsupported")
LEVELS = tuple(RELEVANCE_WEIGHTS)  # chunk relevance levels: high, medium, low, none
#: Mastra's noise-robustness dimensions; the impact levels are the keys of scoring.IMPACT_WEIGHTS.
ROBUSTNESS_DIMENSIONS = ("content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance")

Schema = dict[str, Any]


def obj(props: dict[str, Any]) -> Schema:
    """A closed object: every property required, no others."""
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def exactly(n: int, items: Schema) -> Schema:
    return {"type": "array", "items": items, "minItems": n, "maxItems": n}


def extract() -> Schema:
    return obj({"claims": {"type": "array", "items": {"type": "string"}}})  # blanks are dropped in code


def verify(n_claims: int, n_evidence: int) -> Schema:
    """Exactly one {verdict, reason, evidence} per claim; `evidence` = indices of supporting evidence blocks."""
    index: Schema = {"type": "integer", "minimum": 0, "maximum": max(n_evidence - 1, 0)}
    return obj({"verdicts": exactly(n_claims, obj({
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "reason": {"type": "string"},
        "evidence": {"type": "array", "items": index},
    }))})


def attribute(n_claims: int, n_chunks: int) -> Schema:
    """{"matrix": n_claims rows of n_chunks booleans}: matrix[i][k] = chunk k entails claim i."""
    return obj({"matrix": exactly(n_claims, exactly(n_chunks, {"type": "boolean"}))})


def classify(n_chunks: int) -> Schema:
    """Exactly one {level, used, reason} per chunk, plus the missing information the answer needed."""
    return obj({
        "chunks": exactly(n_chunks, obj({
            "level": {"type": "string", "enum": list(LEVELS)},
            "used": {"type": "boolean"},
            "reason": {"type": "string"},
        })),
        "missing": {"type": "array", "items": {"type": "string"}},
    })


def rubric() -> Schema:
    return obj({
        "reason": {"type": "string"},
        "pass": {"type": "boolean"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
    })


def noise_robustness() -> Schema:
    """Mastra's noise-robustness analysis: impact per dimension, overall robustness, major issues."""
    impact: Schema = {"type": "string", "enum": list(IMPACT_WEIGHTS)}
    return obj({
        "dimensions": obj({d: impact for d in ROBUSTNESS_DIMENSIONS}),
        "robustnessScore": {"type": "number", "minimum": 0, "maximum": 1},
        "majorIssues": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    })


def strings(key: str) -> Schema:
    return obj({key: {"type": "array", "items": {"type": "string"}}})


def labelled(key: str, label: str, labels: tuple[str, ...], n: int) -> Schema:
    return obj({key: exactly(n, obj({label: {"type": "string", "enum": list(labels)},
                                         "reason": {"type": "string"}}))})

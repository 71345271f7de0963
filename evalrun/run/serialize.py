"""CaseResult -> the JSON-ready dict of the results contract (schemas/results.schema.json).

One function owns the shape of a result record; every output format (jsonl, json, csv, junit, html) reads
these dicts, so the formats cannot disagree.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import Any

from evalrun.types import AssertionResult, Case, CaseResult, Suite, TokenUsage

RESULTS_VERSION = 1


def tokens_dict(t: TokenUsage) -> dict[str, int]:
    return {"prompt": t.prompt, "completion": t.completion, "total": t.total, "cached": t.cached}


def assertion_dict(a: AssertionResult) -> dict[str, Any]:
    """`grader`, `tokens` and `cost` only for assertions that used a grader (keeps deterministic ones small)."""
    d: dict[str, Any] = {
        "type": a.type, "pass": a.pass_, "score": a.score, "threshold": a.threshold, "weight": a.weight,
        "reason": a.reason, "error": a.error, "metric": a.metric, "details": a.details,
    }
    if a.grader is not None or a.tokens.total or a.cost:
        d["grader"] = a.grader
        d["tokens"] = tokens_dict(a.tokens)
        d["cost"] = a.cost
    if a.lower_is_better:
        d["lower_is_better"] = True
    if a.children:
        d["children"] = [assertion_dict(c) for c in a.children]
    return d


def result_dict(r: CaseResult) -> dict[str, Any]:
    d = {
        "id": r.case_id, "index": r.index, "test_index": r.test_index, "repeat": r.repeat,
        "description": r.description, "provider": r.provider, "prompt_label": r.prompt_label,
        "prompt": r.prompt, "vars": r.vars, "output": r.output, "status": r.status, "pass": r.pass_,
        "score": r.score, "reason": r.reason, "error": r.error, "latency_ms": round(r.latency_ms, 3),
        "cached": r.cached, "tokens": tokens_dict(r.tokens), "cost": r.cost,
        "assertions": [assertion_dict(a) for a in r.assertions], "metadata": r.metadata,
    }
    if r.error_detail is not None:  # the whole message of an error cut to one line in `error`
        d["error_detail"] = r.error_detail
    return d


def error_records(suite: Suite, cases: Iterable[Case], message: str) -> Iterator[dict[str, Any]]:
    """ERROR records, as the runner writes them, for cases a worker or a Ray task never delivered."""
    from evalrun.run.casework import error_result
    from evalrun.run.scrub import Scrubber

    scrub = Scrubber.for_run(spec.config for spec in suite.providers)
    prompt_pos = {p.id: i for i, p in enumerate(suite.prompts)}
    for case in cases:
        rec = scrub.record(result_dict(error_result(case, message)))
        rec["prompt_index"], rec["prompt_sha"] = prompt_pos.get(case.prompt.id), prompt_digest(case.prompt.raw)
        yield rec


def prompt_digest(raw: str | list[dict[str, Any]]) -> str:
    """Short digest of a prompt template's text (`prompt_sha`: tells an edited prompt across runs)."""
    text = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True, ensure_ascii=False)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]

"""CaseResult -> the JSON-ready dict of the results contract (schemas/results.schema.json), made safe to write.

Every output format reads these dicts, so the formats cannot disagree. Every record passes through
`Scrubber.encoded` before it reaches the results file: known secrets redacted (the values of *_API_KEY, *_TOKEN
and *_SECRET environment variables and of every provider's `apiKey`, 8 characters or more), non-finite numbers
written as null. `Scrubber.text` serves the CLI's own messages.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from evalrun import jsonfast
from evalrun.types import AssertionResult, CaseResult, PromptSpec, Suite, TokenUsage

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


class Records:
    """A run's results as the results file holds them: the prompt's position and digest added, secrets redacted,
    non-finite numbers null; a clean record is encoded once."""

    def __init__(self, suite: Suite) -> None:
        self.scrub = Scrubber.for_run(spec.config for spec in suite.providers)
        self._positions = {p.id: i for i, p in enumerate(suite.prompts)}
        self._prompts: dict[str, tuple[int | None, str]] = {}  # prompt id -> (prompt_index, prompt_sha)

    def encoded(self, result: CaseResult, prompt: PromptSpec) -> tuple[dict[str, Any], bytes]:
        """The record (for the tally) and its line (jsonfast.dumps, no line break)."""
        rec = result_dict(result)
        meta = self._prompts.get(prompt.id)
        if meta is None:  # `prompt_sha`, a digest of the template's text, tells an edited prompt across runs
            raw = prompt.raw if isinstance(prompt.raw, str) else json.dumps(prompt.raw, sort_keys=True,
                                                                             ensure_ascii=False)
            meta = self._prompts[prompt.id] = (self._positions.get(prompt.id),
                                               hashlib.sha1(raw.encode("utf-8")).hexdigest()[:12])
        rec["prompt_index"], rec["prompt_sha"] = meta
        return self.scrub.encoded(rec)


# ------------------------------------------------------------------ secrets and non-finite numbers
REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 8
_SECRET_ENV = re.compile(r"(?:_API_KEY|_TOKEN|_SECRET|^API_KEY|^TOKEN|^SECRET)$", re.I)
_CONFIG_KEYS = ("apiKey", "api_key", "apikey")


def env_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if _SECRET_ENV.search(k) and v]


class Scrubber:
    """Redacts a fixed set of secret values; a Scrubber with none only fixes non-finite numbers."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        found = sorted({s.strip() for s in secrets if len(s.strip()) >= MIN_SECRET_LEN}, key=len, reverse=True)
        self.pattern = re.compile("|".join(map(re.escape, found))) if found else None
        #: Every secret appears verbatim in the results file's encoding (jsonfast: UTF-8, nothing escaped).
        self.plain_bytes = all(_verbatim_utf8(s) for s in found)
        self.bytes_pattern = (re.compile(b"|".join(re.escape(s.encode("utf-8")) for s in found))
                              if found and self.plain_bytes else None)

    @classmethod
    def for_run(cls, provider_configs: Iterable[Mapping[str, Any]] = ()) -> Scrubber:
        configs = [c for c in provider_configs if isinstance(c, Mapping)]  # and each provider's `apiKey`
        return cls([*env_secrets(), *(c[k] for c in configs for k in _CONFIG_KEYS if isinstance(c.get(k), str))])

    def text(self, value: str) -> str:
        return value if self.pattern is None else self.pattern.sub(REDACTED, value)

    def encoded(self, value: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """The record scrubbed (for the tally) and its line (no line break). A clean record is encoded once, and
        the bytes searched for secrets are the bytes written. The encoder writes non-finite numbers as null; the
        record handed back is walked only for a secret or a non-finite number among the contract's own fields
        (`finite_fields`)."""
        # Kept (issue 24): a walk costs ~72 µs a record, this ~16 µs: +7 s on 100k JSONL rows (13 of 15 s)
        if self.plain_bytes:
            data = jsonfast.dumps(value)
            if (self.bytes_pattern is None or self.bytes_pattern.search(data) is None) and finite_fields(value):
                return value, data
        clean = self._walk(value)
        return clean, jsonfast.dumps(clean)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self._walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._walk(v) for v in value]
        return value


def _verbatim_utf8(secret: str) -> bool:
    """The secret appears in jsonfast's output as its own UTF-8 bytes (nothing escaped, encodable)."""
    try:
        return jsonfast.dumps(secret)[1:-1] == secret.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an undecodable environment value): never searched in bytes
        return False


#: The numbers the results contract defines on a record and on each assertion result.
_NUMBERS = ("score", "latency_ms", "cost", "threshold", "weight")


def finite_fields(rec: Mapping[str, Any]) -> bool:
    """Every number the results contract defines (score, latency, cost, threshold, weight, tokens) is finite or
    absent, in the record and in each assertion result, children included. Plain loops: this runs per record,
    and `x - x` is truthy only for NaN and +-inf."""
    get = rec.get
    for name in _NUMBERS:
        v = get(name)
        if v.__class__ is float and v - v:
            return False
    for v in (get("tokens") or {}).values():
        if v.__class__ is float and v - v:
            return False
    for a in get("assertions") or get("children") or ():  # noqa: SIM110 - a loop: 6 µs a record, all(): 8
        if not finite_fields(a):
            return False
    return True

"""Verdicts from services outside evalrun: webhook (the user's own grader server) and pi (Pi Labs' scoring
API, withpi.ai)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError, GraderError, ProviderError
from evalrun.providers.http_ import post_json

#: Pi Labs' scoring endpoint (promptfoo's WITHPI_API_URL); WITHPI_API_URL in the environment overrides it.
PI_URL = "https://api.withpi.ai/v1/scoring_system/score"


@register("webhook")
class Webhook(Assertion):
    """POSTs `{output, context: {prompt, vars}}` as JSON to the URL in `value`; the reply `{pass, score?,
    reason?}` is the verdict.

    YAML keys: `value` (required): the URL. The score is the reply's `score`, else 1 / 0 by `pass` (`not-`
    reports 1 - score). Timeout: the WEBHOOK_TIMEOUT environment variable in ms (default 5000). A failed
    request, an HTTP error status or a reply without a boolean `pass` is an ERROR (promptfoo fails the
    assertion instead, and passes a reply without `pass`).
    """

    requires_value = True
    config_keys = frozenset()
    value_hint = "e.g. `value: http://localhost:8000/grade`"

    def parse(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f'"webhook" assertion type must have a URL value, got {value!r}')
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"webhook needs an http:// or https:// URL, got {value!r}")
        return value

    async def evaluate(self, ctx: AssertionContext) -> Score:
        url = self.value_of(ctx)
        try:
            timeout = float(os.environ.get("WEBHOOK_TIMEOUT") or 5000) / 1000
        except ValueError:
            raise AssertionRuntimeError(f"WEBHOOK_TIMEOUT must be milliseconds, got "
                                        f"{os.environ['WEBHOOK_TIMEOUT']!r}") from None
        try:
            status, reply = await post_json(url, {"output": ctx.code_output,
                                                  "context": {"prompt": ctx.prompt, "vars": ctx.vars}}, timeout)
        except ProviderError as e:
            raise AssertionRuntimeError(f"Webhook error: {e}") from None
        if not 200 <= status < 300:
            raise AssertionRuntimeError(f"Webhook error: {url} replied with status {status}")
        if not isinstance(reply, dict) or not isinstance(reply.get("pass"), bool):
            raise AssertionRuntimeError(f"Webhook error: {url} replied without a boolean `pass` (got "
                                        f"{json.dumps(reply)[:200]})")
        passed = reply["pass"]
        score = reply.get("score")
        if score is None:
            score = 1.0 if passed else 0.0
        elif isinstance(score, bool) or not isinstance(score, (int, float)):
            raise AssertionRuntimeError(f"Webhook error: the reply's score must be a number, got {score!r}")
        reason = reply.get("reason") or ("Assertion passed" if passed else "Webhook returned false")
        return Score(passed, float(score), str(reason))



@register("pi")
class Pi(Assertion):
    """Pi Labs' scorer rates the output against the question in `value`; passes when the total score is above
    `threshold`.

    YAML keys: `value` (required): the scoring question, e.g. `Is the reply polite?`; `threshold` (default 0.5;
    the score must exceed it, as in promptfoo). Score = Pi's total score, its per-question scores in details.
    Needs WITHPI_API_KEY; the request goes to api.withpi.ai (WITHPI_API_URL overrides the URL). A failed call is
    an ERROR. `not-pi` passes at or below the threshold (promptfoo ignores `not-` for pi).
    """

    requires_value = True
    default_threshold = 0.5
    config_keys = frozenset()
    value_hint = "e.g. `value: Does the reply answer the question politely?`"

    def missing_key(self, test_options: Mapping[str, Any]) -> str | None:
        if os.environ.get("WITHPI_API_KEY"):
            return None
        return "Env var WITHPI_API_KEY must be set for the pi assertion (https://docs.withpi.ai)"

    def parse(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f'"pi" assertion type must have a string value, got {value!r}')
        return value

    async def evaluate(self, ctx: AssertionContext) -> Score:
        question = self.value_of(ctx)
        key = os.environ.get("WITHPI_API_KEY")
        if not key:
            raise GraderError(str(self.missing_key({})))
        url = os.environ.get("WITHPI_API_URL") or PI_URL
        body = {"llm_input": ctx.prompt, "llm_output": ctx.output, "scoring_spec": [{"question": question}]}
        try:
            status, reply = await post_json(url, body, 60.0, headers={"x-api-key": key})
        except ProviderError as e:
            raise GraderError(f"Could not perform remote grading: {e}") from None
        total = reply.get("total_score") if isinstance(reply, dict) else None
        if status != 200 or isinstance(total, bool) or not isinstance(total, (int, float)):
            raise GraderError(f"Could not perform remote grading: {url} replied {status}: "
                              f"{json.dumps(reply)[:200]}")
        threshold = self.threshold if self.threshold is not None else 0.5
        passed = total > threshold
        return Score(passed, float(total), f"Pi Scorer: {total:.2f} {'>' if passed else '<='} threshold "
                                           f"{threshold:g}", {"question_scores": reply.get("question_scores")})

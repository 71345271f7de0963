"""litellm's exceptions (and the direct transport's) as ProviderErrors: status, retryability, the server's words,
a hint; classified by class names and `status_code` / `headers` (litellm is not imported)."""

from __future__ import annotations

import ast
import contextlib
import json
import re
from typing import Any

from evalrun.errors import ProviderError
from evalrun.providers import ids
from evalrun.retry import is_retryable_status, parse_retry_after

_STATUS_WHAT = {
    400: "bad request", 401: "authentication failed", 402: "payment required", 403: "permission denied",
    404: "not found", 408: "request timeout", 413: "request too large", 422: "unprocessable request",
    429: "rate limited", 500: "server error", 502: "bad gateway", 503: "service unavailable",
    504: "gateway timeout",
}
_CONNECTION = re.compile(
    r"connection error|cannot connect|connect call failed|connection (refused|reset|aborted|closed)"
    r"|server disconnected|remote end closed|name or service not known|nodename nor servname"
    r"|temporary failure in name resolution|getaddrinfo|broken pipe|all connection attempts failed", re.I)
_UNREADABLE = re.compile(r"^(?:Unterminated string|Expecting (?:',' delimiter|':' delimiter|property name)"
                         r"|Extra data|Invalid control character|Invalid \\escape|Invalid response object)")
#: a key missing or refused, whatever status the client library gave it (the OpenAI SDK's "Missing credentials"
#: reaches litellm as a 500): never retried
_AUTH = re.compile(r"missing credentials|api_key client option must be set|no api key|(?:invalid|incorrect) api key"
                   r"|api key not valid|unauthori[sz]ed|authentication", re.I)
_NOISE = re.compile(r"\s*ssl:<[^>]*>|\s*Handle with `litellm\.\w+`\.?")
_ERROR_CODE = re.compile(r"^Error code: \d+ - ")
_PREFIX = re.compile(r"^(?:litellm\.)?\w+(?:Error|Exception|Timeout)?:\s*")


def _server_message(exc: BaseException) -> str:
    """The server's own words, without litellm's 'litellm.RateLimitError: ...Exception - ' wrapping."""
    text = str(getattr(exc, "message", None) or exc).strip()
    text = text.split("Traceback (most recent call last)", 1)[0].strip()  # litellm's own traceback: --debug
    if "Exception - " in text:
        text = text.split("Exception - ", 1)[1]
    text = _NOISE.sub("", _ERROR_CODE.sub("", text, count=1))
    for _ in range(3):
        text = _PREFIX.sub("", text, count=1)
    text = _body_message(text)
    text = " ".join(text.split())
    return text[:300] + ("..." if len(text) > 300 else "")


def _body_message(text: str) -> str:
    """The message inside an error body shown as JSON or a Python dict ({'detail': ...}, {'error': {...}})."""
    if not text.startswith("{"):
        return text
    body: Any = None
    with contextlib.suppress(ValueError):
        body = json.loads(text)
    if body is None:
        with contextlib.suppress(ValueError, SyntaxError, MemoryError, RecursionError):
            body = ast.literal_eval(text)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    if isinstance(body, dict):
        for k in ("message", "detail", "error", "msg"):
            if isinstance(body.get(k), str) and body[k].strip():
                return str(body[k])
    return text


def _retry_after(exc: BaseException) -> float | None:
    for source in (getattr(getattr(exc, "response", None), "headers", None),
                   getattr(exc, "litellm_response_headers", None), getattr(exc, "headers", None)):
        if not source:
            continue
        try:
            headers = {str(k).lower(): str(v) for k, v in dict(source).items()}
        except (TypeError, ValueError):
            continue
        if "retry-after-ms" in headers:
            try:
                return max(float(headers["retry-after-ms"]) / 1000.0, 0.0)
            except ValueError:
                pass
        seconds = parse_retry_after(headers.get("retry-after"))
        if seconds is not None:
            return seconds
    return None


def _key_hint(model: str) -> str:
    provider = model.split("/", 1)[0].upper() if "/" in model else "OPENAI"
    return (f"check the API key: set `apiKey` or `apiKeyEnvar` in the provider's config, or export "
            f"{provider}_API_KEY (litellm's variable for this provider)")


def to_provider_error(exc: BaseException, model: str, params: dict[str, Any]) -> ProviderError:
    """Classify a litellm exception: retryable for 408/409/425/429, 5xx, connection errors and timeouts."""
    names = {c.__name__ for c in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    message = _server_message(exc)
    base = params.get("api_base") or "the provider's default endpoint"
    lower = message.lower()
    api_hint = "check `apiBaseUrl`: it must point at an OpenAI-compatible API (usually ending in /v1)"
    kinds = (  # (it applies, what, retryable, hint): the first that applies, else the HTTP status
        ("Timeout" in names or "timed out" in lower, "timed out", True,
         "raise `timeout` (seconds) in the provider config, or lower --max-concurrency"),
        (bool(_CONNECTION.search(message)), f"could not connect to {base}", True,
         "is the server running? check `apiBaseUrl` (an OpenAI-compatible server usually ends in /v1)"),
        (status not in (401, 403) and ("AuthenticationError" in names or bool(_AUTH.search(message))),
         "authentication failed (not retried)", False, _key_hint(model)),
        ("UnsupportedParamsError" in names, "a parameter this provider does not accept", False,
         "remove it from the provider's config, or add `drop_params: true` to let litellm drop it"),
        ("llm provider not provided" in lower, "litellm cannot tell which provider serves this model", False,
         ids.HINT),
        # litellm's catch-all for failures before any HTTP status
        ("APIConnectionError" in names, "the call failed inside litellm", False, ""),
        (status in (None, 500) and bool(_UNREADABLE.search(message)),  # a 200 reply cut short or malformed
         "the reply could not be read as a chat completion (truncated or malformed)", True,
         "the server sent an incomplete or non-standard chat completion; check the server's logs"),
        ("expecting value" in lower or "jsondecodeerror" in lower or "invalid json" in lower,
         f"the server at {base} did not return valid JSON", False, api_hint),
        ("litellm: provider returned" in str(exc).lower() or lower.startswith("not a chat completion"),
         f"the server at {base} returned something that is not a chat completion", False, api_hint))
    found = next((kind for kind in kinds if kind[0]), None)
    if found is not None:
        _, what, retryable, hint = found
        status = None
    elif status is not None:
        what = f"HTTP {status} {_STATUS_WHAT.get(status, 'error')}"
        retryable = is_retryable_status(status)
        hint = {401: _key_hint(model), 403: _key_hint(model),
                404: "check the model name and `apiBaseUrl`",
                429: "the provider is rate limiting: lower --max-concurrency or raise your quota"}.get(status, "")
        if "ContextWindowExceededError" in names or re.search(r"context.(length|window)", str(exc), re.I):
            hint = "the prompt is longer than the model's context window"
    else:
        what, retryable, hint = type(exc).__name__, False, ""
    if message.lower().rstrip(".") in ("connection error", "request timed out", what.lower()):
        message = ""
    text = f"{model}: {what}" + (f": {message}" if message else "")
    if hint:
        text += f"\n  hint: {hint}"
    return ProviderError(text, retryable=retryable, status=status, retry_after=_retry_after(exc))


def with_attempts(err: ProviderError, attempts: int) -> ProviderError:
    """The final error: says how many attempts were made; retryable=False (retries are used up)."""
    text = str(err)
    if attempts > 1:
        first, sep, rest = text.partition("\n")
        text = f"{first} (gave up after {attempts} attempts){sep}{rest}"
    return ProviderError(text, retryable=False, status=err.status, retry_after=err.retry_after)

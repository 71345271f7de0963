"""Records made safe to write: known secrets redacted, non-finite numbers written as null.

Every result record passes through `Scrubber.record` before it reaches the results file, so every report
(json, jsonl, csv, junit, html, console) rebuilt from it inherits both guarantees. `Scrubber.text` serves the
CLI's own messages. Secrets are the values of environment variables named *_API_KEY, *_TOKEN or *_SECRET and
every `apiKey`/`api_key` in a provider's config (values shorter than 8 characters are too common to redact).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 8
_SECRET_ENV = re.compile(r"(?:_API_KEY|_TOKEN|_SECRET|^API_KEY|^TOKEN|^SECRET)$", re.I)
_CONFIG_KEYS = ("apiKey", "api_key", "apikey")
_PROBE = json.JSONEncoder(ensure_ascii=False, default=str, check_circular=False)


def env_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if _SECRET_ENV.search(k) and v]


def config_secrets(configs: Iterable[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for config in configs:
        for key in _CONFIG_KEYS:
            value = config.get(key) if isinstance(config, Mapping) else None
            if isinstance(value, str) and value:
                out.append(value)
    return out


class Scrubber:
    """Redacts a fixed set of secret values; a Scrubber with none only fixes non-finite numbers."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        found = sorted({s.strip() for s in secrets if len(s.strip()) >= MIN_SECRET_LEN}, key=len, reverse=True)
        self.pattern = re.compile("|".join(map(re.escape, found))) if found else None
        #: Every secret appears verbatim in JSON text (no quote, backslash or control character to escape).
        self.plain = all(json.dumps(s, ensure_ascii=False)[1:-1] == s for s in found)

    @classmethod
    def for_run(cls, provider_configs: Iterable[Mapping[str, Any]] = ()) -> Scrubber:
        return cls([*env_secrets(), *config_secrets(provider_configs)])

    def text(self, value: str) -> str:
        return value if self.pattern is None else self.pattern.sub(REDACTED, value)

    def record(self, value: Any) -> Any:
        """A JSON-ready value with secrets redacted from every string (keys too) and NaN/±inf as None.

        A record is first encoded once and searched (C speed): when it holds no secret and no non-finite
        number it is returned as it is, without the walk (which cost ~100 µs per case). Secrets that JSON
        would escape are never searched for in the encoded text: those records are always walked."""
        if isinstance(value, dict) and self.plain:
            text = _PROBE.encode(value)
            if "NaN" not in text and "Infinity" not in text and (self.pattern is None
                                                                   or self.pattern.search(text) is None):
                return value
        return self._walk(value)

    def encoded(self, value: dict[str, Any], encode: Callable[[Any], str]) -> tuple[Any, str]:
        """`record(value)` and its JSON text by `encode`, encoding a clean record only once (the results
        file's hot path: the text searched is the text written)."""
        if self.plain:
            text = encode(value)
            if "NaN" not in text and "Infinity" not in text and (self.pattern is None
                                                                   or self.pattern.search(text) is None):
                return value, text
        clean = self._walk(value)
        return clean, encode(clean)

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

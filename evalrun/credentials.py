"""What a credential is, and the Scrubber that redacts them: the one owner of both. The cache key leaves out the
parameters and headers named here; the results file, every report, history, the response cache and the console
redact the values (docs/security.md). Also fixes non-finite numbers in a result record (JSON has none)."""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import math
import os
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from evalrun import jsonfast
from evalrun.types import ProviderSpec

#: Request parameters that are credentials (the cache key leaves them out; their values are redacted).
SECRET_PARAMS = frozenset({
    "api_key", "apikey", "azure_ad_token", "aws_access_key_id", "aws_secret_access_key", "aws_session_token",
    "vertex_credentials", "password", "client_secret", "token", "secret", "credentials",
})
#: A parameter or environment variable ending in one of these (any case) is a credential.
SECRET_SUFFIXES = ("_api_key", "_apikey", "_secret", "_password", "_passwd", "_credentials", "_token", "_key_id",
                   "_access_key", "_secret_key")
#: Header names whose values are credentials (compared lower-case).
SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie",
                            "x-auth-token", "x-goog-api-key", "ocp-apim-subscription-key"})
#: Header-map parameters (their credential headers are secrets, the others are not).
HEADER_PARAMS = ("headers", "extra_headers")

REDACTED = "[REDACTED]"
#: Shorter values are never redacted (a 3-letter password would blank every word it appears in).
MIN_SECRET_LEN = 8
#: `scheme://user:password@`: userinfo with a password (a bare `ssh://git@host` names no secret and is kept).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s:'\"]*:[^/@\s'\"]*@")
_USERINFO_BYTES = re.compile(rb"://[^/@\s:'\"]*:[^/@\s'\"]*@")


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """A parameter, config key or environment variable name that holds a credential (`api_key`, `apiKey`,
    `MYDB_PASSWORD`, `GOOGLE_APPLICATION_CREDENTIALS`, `GITHUB_TOKEN`; not `TOKENIZERS_PARALLELISM`)."""
    low = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().replace("-", "_")  # apiKey -> api_key
    return low in SECRET_PARAMS or low.endswith(SECRET_SUFFIXES)


def is_secret_header(name: str) -> bool:
    return str(name).lower() in SECRET_HEADERS


def split_params(params: Mapping[str, Any], secret: bool) -> dict[str, Any]:
    """The parameters without their credentials (secret=False), or only those (secret=True)."""
    out: dict[str, Any] = {}
    for name, value in params.items():
        if name in HEADER_PARAMS and isinstance(value, Mapping):
            out[name] = {k: v for k, v in value.items() if is_secret_header(k) == secret}
        elif is_secret_name(name) == secret:
            out[name] = value
    return out


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def param_secrets(params: Mapping[str, Any]) -> list[str]:
    """The credential values in a provider call's parameters (api_key, credential headers, ...)."""
    return [s for s in _strings(split_params(params, secret=True)) if s]


def env_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment variables whose names are credential names."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if v and is_secret_name(k)]


def url_secrets(text: str) -> list[str]:
    """The `user:password` (and the password) of each URL in `text` (`http://user:pw@host/x`), and its query
    parameters' values under credential names (`?api_key=...`, as written and decoded)."""
    out: list[str] = []
    for m in re.finditer(r"(?i)[a-z][a-z0-9+.-]*://[^\s'\"]+", text):
        try:
            parts = urllib.parse.urlsplit(m.group(0))
        except ValueError:  # `http://[x/`: no URL
            continue
        with_info = parts.netloc.rpartition("@")[0]
        if with_info:
            plain = urllib.parse.unquote(with_info)
            out += [with_info, plain.partition(":")[2],
                    base64.b64encode(plain.encode("utf-8")).decode("ascii")]  # as Basic auth sends it
        for name, _, value in (p.partition("=") for p in parts.query.split("&")):
            if is_secret_name(urllib.parse.unquote_plus(name)):
                out += [value, urllib.parse.unquote_plus(value)]
    return [s for s in out if s]


def strip_userinfo(text: str) -> str:
    """`http://user:pw@host/x` -> `http://host/x` in a provider name or a message (`ssh://git@host` is kept)."""
    return _USERINFO.sub(r"\1", text) if "@" in text else text


def _template_env(value: str, env: Mapping[str, str]) -> list[str]:
    """The values of the `{{ env.NAME }}`s a credential header's template reads (whatever NAME is)."""
    if "{{" not in value:
        return []
    from evalrun import templating  # the same layer; imported here: most runs have no such header

    try:
        names = templating.env_names_of(value)
    except Exception:  # noqa: BLE001 - a template that does not parse is reported where it is loaded
        return []
    return [env[n] for n in names if env.get(n)]


def _nested_secrets(value: Any) -> Iterator[str]:
    """Strings under credential names anywhere in `value` (an http body's `api_key`, `auth.password`); a mapping
    under such a name (a JSON schema's `password` property) is searched, not taken."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(v, str) and isinstance(k, str) and is_secret_name(k):
                yield v
            else:
                yield from _nested_secrets(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _nested_secrets(v)


def provider_secrets(spec: ProviderSpec, env: Mapping[str, str]) -> list[str]:
    """Everything `spec` sends as a credential: credential config keys and headers (also what their
    `{{ env.NAME }}` reads), credential names nested in its config (an http body), its own `env:` values under
    credential names, URL userinfo and credential query parameters in its id and config."""
    out = [*url_secrets(spec.id), *env_secrets(spec.env)]
    both = {**env, **spec.env}  # what its `{{ env.NAME }}` and apiKeyEnvar read
    cfg = spec.config if isinstance(spec.config, Mapping) else {}
    for key, value in cfg.items():
        if key in HEADER_PARAMS and isinstance(value, Mapping):
            for name, hv in value.items():
                if is_secret_header(name) and isinstance(hv, str):
                    out += [hv, *_template_env(hv, both)]
                    scheme, _, token = hv.strip().partition(" ")
                    if token and scheme.isalpha():
                        out.append(token.strip())  # `Bearer lit-...`: the token alone too
        elif key == "apiKeyEnvar" and isinstance(value, str):  # the variable holding the key, whatever its name
            out += [both[value]] if both.get(value) else []
        elif is_secret_name(key):
            for s in _strings(value):
                out += [s, *_template_env(s, both)]
        elif isinstance(value, str) and "://" in value:
            out += url_secrets(value)
        elif isinstance(value, (Mapping, list, tuple)):  # an http body's `api_key`, queryParams' `token`
            for s in _nested_secrets(value):
                out += [s, *_template_env(s, both)]
    return out


class Scrubber:
    """Redacts a fixed set of secret values (and URL userinfo); a Scrubber with none only fixes non-finite
    numbers."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets: frozenset[str] = frozenset()
        self.pattern: re.Pattern[str] | None = None
        self.plain_bytes = True
        self.bytes_pattern: re.Pattern[bytes] | None = None
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Redact these too from now on (a grader's or a test's own provider's, built during the run)."""
        more = {form for s in secrets if len(s.strip()) >= MIN_SECRET_LEN for form in _written_forms(s.strip())}
        more -= self.secrets
        if not more:
            return
        found = sorted(self.secrets | more, key=len, reverse=True)
        # every secret appears verbatim in the results file's encoding (jsonfast: UTF-8, nothing escaped)
        plain = all(_verbatim_utf8(s) for s in found)
        self.secrets, self.pattern, self.plain_bytes, self.bytes_pattern = (
            frozenset(found), re.compile("|".join(map(re.escape, found))), plain,
            re.compile(b"|".join(re.escape(s.encode("utf-8")) for s in found)) if plain else None)

    def add_provider(self, spec: ProviderSpec) -> None:
        """Redact what `spec` sends as a credential from now on (a provider built during the run)."""
        self.add(provider_secrets(spec, _run_env(None)))

    @classmethod
    def for_run(cls, providers: Iterable[ProviderSpec] = (), environ: Mapping[str, str] | None = None) -> Scrubber:
        """The run's credentials: the environment's (and the config's `env:`) under credential names, and what each
        provider sends as one."""
        env = _run_env(environ)
        return cls([*env_secrets(env), *(s for p in providers for s in provider_secrets(p, env))])

    def text(self, value: str) -> str:
        value = strip_userinfo(value)
        return value if self.pattern is None else self.pattern.sub(REDACTED, value)

    def encoded(self, value: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """The record scrubbed (for the tally) and its line (no line break). A clean record is encoded once, its
        bytes searched for secrets; it is walked only for a secret, URL userinfo or a non-finite number."""
        # Kept (issue 24): a walk costs ~72 µs a record, this ~16 µs: +7 s on 100k JSONL rows (13 of 15 s)
        if self.plain_bytes:
            data = jsonfast.dumps(value)
            if (self.bytes_pattern is None or self.bytes_pattern.search(data) is None) \
                    and (b"@" not in data or _USERINFO_BYTES.search(data) is None) \
                    and finite_fields(value):
                return value, data
        clean = self.walk(value)
        return clean, jsonfast.dumps(clean)

    def walk(self, value: Any) -> Any:
        """`value` with every string (and mapping key) scrubbed and non-finite floats made None."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.walk(v) for v in value]
        return value


def _run_env(environ: Mapping[str, str] | None) -> dict[str, str]:
    """`environ`, else the process environment with the config's `env:`."""
    env = dict(os.environ if environ is None else environ)
    if environ is None:
        from evalrun import template_env

        env.update(template_env.namespace())
    return env


def _written_forms(secret: str) -> set[str]:
    """The secret and the forms an endpoint echoes it in: escaped inside a JSON string (a `"` or `\\` in it) and
    percent-encoded in a URL; each is redacted where it appears."""
    forms = {secret, json.dumps(secret, ensure_ascii=False)[1:-1]}
    with contextlib.suppress(UnicodeEncodeError):  # a lone surrogate has no URL form
        forms |= {urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret, safe="")}
    return forms


def _verbatim_utf8(secret: str) -> bool:
    """The secret appears in jsonfast's output as its own UTF-8 bytes (nothing escaped, encodable)."""
    try:
        return jsonfast.dumps(secret)[1:-1] == secret.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an undecodable environment value): never searched in bytes
        return False


#: The numbers the results contract defines on a record and on each assertion result.
_NUMBERS = ("score", "latency_ms", "cost", "threshold", "weight")


def finite_fields(rec: Mapping[str, Any]) -> bool:
    """Every number the results contract defines is finite or absent, in the record and its assertion results
    (plain loops: this runs per record; `x - x` is truthy only for NaN and +-inf)."""
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

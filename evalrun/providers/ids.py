"""Provider ids and config keys, promptfoo spelling -> litellm spelling (`openai:chat:gpt-4o` -> `openai/gpt-4o`);
pure: `evalrun validate` checks provider ids without importing litellm."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from typing import Any

from evalrun.errors import ConfigError, Location

HINT = ("write a promptfoo id such as `openai:gpt-4o-mini`, `anthropic:messages:claude-3-5-haiku-latest`, "
         "`ollama:chat:llama3`, or a litellm id such as `openai/gpt-4o-mini`")

#: promptfoo's spellings in litellm's (data/provider_ids.json): provider prefixes (`llama` is llama.cpp's
#: OpenAI-compatible server), chat sub-kinds and those with a prefix of their own (`openai:responses` is litellm's
#: bridge to the Responses API), local servers' base URLs (variable, default), credential variables by litellm
#: prefix (api_key names, then api_base names), config keys, and promptfoo-only keys (dropped).
_DATA = json.loads(resources.files("evalrun").joinpath("data/provider_ids.json").read_text(encoding="utf-8"))
_PREFIXES: dict[str, str] = _DATA["prefixes"]
_CHAT_KINDS = frozenset(_DATA["chat_kinds"])
_SPECIAL_KINDS: dict[str, str] = _DATA["special_kinds"]  # "prefix:kind" -> litellm prefix
_NOT_CHAT = frozenset(_DATA["not_chat"])
_LOCAL_SERVERS: dict[str, list[str]] = _DATA["local_servers"]
_ENV_KEYS: dict[str, list[list[str]]] = _DATA["env_keys"]
_KEY_MAP: dict[str, str] = _DATA["key_map"]
_PROMPTFOO_ONLY = frozenset(_DATA["promptfoo_only"])


def _malformed(provider_id: str, why: str, loc: Location | None, key: str | None) -> ConfigError:
    return ConfigError.at(loc, f"provider id {provider_id!r} {why}", key=key, hint=HINT)


def to_litellm_model(provider_id: str, *, loc: Location | None = None, key: str | None = None) -> str:
    """The litellm model string for a promptfoo-style or litellm-style id; ConfigError when malformed."""
    pid = provider_id.strip() if isinstance(provider_id, str) else ""
    if not pid:
        raise _malformed(str(provider_id), "is empty", loc, key)
    if any(ch.isspace() for ch in pid):
        raise _malformed(pid, "contains whitespace", loc, key)
    head, sep, rest = pid.partition(":")
    if "/" in head:  # litellm id: provider/model (the model may contain ':' as in bedrock '...-v1:0')
        prov, _, model = head.partition("/")
        if not prov or not (model or rest):
            raise _malformed(pid, "needs both a provider and a model, e.g. `openai/gpt-4o-mini`", loc, key)
        return pid
    if not sep:  # a bare model name: litellm infers the provider (gpt-4o-mini, claude-3-5-sonnet-...)
        return pid
    prefix = head.lower()
    if prefix not in _PREFIXES:
        raise _malformed(pid, f"has an unknown provider prefix {head!r}", loc, key)
    kind, sep2, model = rest.partition(":")
    special = _SPECIAL_KINDS.get(f"{prefix}:{kind.lower()}") if sep2 else None
    if sep2 and (special or kind.lower() in _CHAT_KINDS or kind.lower() in _NOT_CHAT or kind == "completion"):
        if kind.lower() in _NOT_CHAT and not special:
            raise _malformed(pid, f"names a {kind} endpoint, which is not a chat/text model", loc, key)
        target = special or _PREFIXES[prefix]
    else:  # no sub-kind: the rest is the model (it may contain ':' e.g. ollama:llama3:8b, bedrock ...:0)
        model = rest
        target = _PREFIXES[prefix]
    if not model or model.startswith(":"):
        raise _malformed(pid, "has no model name after the provider", loc, key)
    return f"{target}/{model}"


def default_params(provider_id: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Defaults a promptfoo id implies, e.g. the base URL of a local server (`localai:`, `llama:`, `vllm:`)."""
    environ = os.environ if env is None else env
    prefix = provider_id.partition(":")[0].lower() if ":" in provider_id.partition("/")[0] else ""
    if prefix in _LOCAL_SERVERS:
        var, url = _LOCAL_SERVERS[prefix]
        return {"api_base": environ.get(var) or url, "api_key": "sk-local"}
    if prefix == "ollama" and environ.get("OLLAMA_BASE_URL"):  # promptfoo's variable for a non-default server
        return {"api_base": environ["OLLAMA_BASE_URL"]}
    return {}


def env_params(provider_id: str, env: Mapping[str, str]) -> dict[str, Any]:
    """litellm kwargs from a provider's own `env:`: API key, base URL (`*_API_HOST`: https://HOST) and organization."""
    if not env:
        return {}
    head = provider_id.partition(":")[0] if ":" in provider_id.partition("/")[0] else provider_id.partition("/")[0]
    target = _PREFIXES.get(head.lower(), head.lower())
    keys, bases = _ENV_KEYS.get("azure" if target.startswith("azure") else target, ([], []))
    out: dict[str, Any] = {}
    key = next((env[k] for k in keys if env.get(k)), None)
    if key:
        out["api_key"] = key
    for name in bases:
        if env.get(name):
            base = env[name].rstrip("/")
            if name.endswith("_HOST"):
                base = "https://" + base.removeprefix("https://").removeprefix("http://")
                base += "/v1" if target == "openai" else ""
            out["api_base"] = base
            break
    if target == "openai" and env.get("OPENAI_ORGANIZATION"):
        out["organization"] = env["OPENAI_ORGANIZATION"]
    return out


def normalise_params(config: Mapping[str, Any] | None, *, env: Mapping[str, str] | None = None,
                     loc: Location | None = None, key: str = "config") -> dict[str, Any]:
    """litellm kwargs from a provider's `config:` (both spellings; unknown keys passed through): `apiKeyEnvar`
    read (a ConfigError when unset), `apiHost` as `https://HOST`, `timeoutMs` as `timeout` in seconds."""
    environ = os.environ if env is None else env
    out: dict[str, Any] = {}
    for name, value in (config or {}).items():
        if name in _PROMPTFOO_ONLY:
            continue
        if name == "apiKeyEnvar":
            var = str(value)
            secret = environ.get(var)
            if not secret:
                raise ConfigError.at(loc, f"apiKeyEnvar names {var!r}, which is not set", key=f"{key}.apiKeyEnvar",
                                     hint=f"export {var}=... before running, or set apiKey in the provider config")
            out.setdefault("api_key", secret)
        elif name in ("apiKey", "api_key") and not isinstance(value, str):
            raise ConfigError.at(loc, f"{name} must be a string, got {type(value).__name__}", key=f"{key}.{name}",
                                 hint="write the key itself, or `{{ env.NAME }}`, or name its variable in apiKeyEnvar")
        elif name == "apiHost":
            host = str(value).rstrip("/")
            out.setdefault("api_base", host if "://" in host else f"https://{host}")
        elif name == "timeoutMs":
            out["timeout"] = float(value) / 1000.0
        else:  # an explicit apiKey wins over apiKeyEnvar (set by default)
            out[_KEY_MAP.get(name, name)] = value
    return out


#: litellm prefixes whose credentials come from more than one kind of source (Azure AD tokens, Hugging Face's
#: anonymous endpoints): no early check, their server's 401 says it.
_NO_EARLY_KEY_CHECK = frozenset({"azure", "azure_text", "huggingface"})


def missing_key(model: str, params: Mapping[str, Any], env: Mapping[str, str] | None = None) -> list[str]:
    """The API-key variables litellm reads for `model` (a litellm id) when none of them is set and nothing else
    carries a key; [] when a call could authenticate: a key in `params`, a base URL of its own (a local or
    OpenAI-compatible server needs none), any of the provider's key or base-URL variables set, a keyless provider."""
    environ = os.environ if env is None else env
    target = model.partition("/")[0] if "/" in model else ""
    keys, bases = _ENV_KEYS.get(target, ([], []))
    if not keys or target in _NO_EARLY_KEY_CHECK or params.get("api_key") or params.get("api_base") \
            or params.get("mock_response") is not None:
        return []
    if any(environ.get(name) for name in (*keys, *bases)):
        return []
    return list(keys)


def missing_key_message(provider_id: str, variables: list[str]) -> tuple[str, str]:
    """(message, hint) of the config error for a provider or grader with no API key."""
    names = " or ".join(variables)
    return (f"{provider_id} needs an API key and {names} is not set",
            f"export {variables[0]}=... before running, or set `apiKey` / `apiKeyEnvar` in its config "
            "(a local or OpenAI-compatible server: set `apiBaseUrl`, no key needed)")

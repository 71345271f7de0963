"""`providers:` / `targets:` in every form -> ProviderSpecs: `{{ env.NAME }}` rendered as promptfoo does at load,
the numbers of `config:` range-checked at their line."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from evalrun import pkgref, template_env, templating
from evalrun.config import files
from evalrun.config.readers.located import loc_of
from evalrun.config.schema import PROVIDER_KEYS, check_keys
from evalrun.credentials import strip_userinfo
from evalrun.errors import ConfigError, Location
from evalrun.templating import render_env_only
from evalrun.types import ProviderSpec

_DATA_EXTS = (".yaml", ".yml", ".json")

#: Numbers a provider's `config` may hold, in promptfoo's and litellm's spellings: (lowest, highest, whole, unit).
_TIMEOUT_S, _TIMEOUT_MS = (0.001, 86_400.0, False, "seconds"), (1.0, 86_400_000.0, False, "milliseconds")
_RETRIES, _CONCURRENCY = (0.0, 100.0, True, "a count"), (1.0, 10_000.0, True, "concurrent requests")
_DELAY_MS, _TOKENS = (0.0, 3_600_000.0, False, "milliseconds"), (1.0, 10_000_000.0, True, "a token count")
_PENALTY, _P = (-2.0, 2.0, False, "a penalty"), (0.0, 1.0, False, "a probability")
PROVIDER_NUMBERS: dict[str, tuple[float, float, bool, str]] = {
    "timeout": _TIMEOUT_S, "timeoutMs": _TIMEOUT_MS, "timeout_ms": _TIMEOUT_MS, "request_timeout": _TIMEOUT_S,
    "max_retries": _RETRIES, "maxRetries": _RETRIES, "num_retries": _RETRIES, "retries": _RETRIES,
    "maxConcurrency": _CONCURRENCY, "max_concurrency": _CONCURRENCY,
    "delay": _DELAY_MS, "delayMs": _DELAY_MS, "retryDelay": _DELAY_MS, "retry_delay": _DELAY_MS,
    "temperature": (0.0, 2.0, False, "a sampling temperature"), "top_p": _P, "topP": _P,
    "max_tokens": _TOKENS, "maxTokens": _TOKENS, "max_completion_tokens": _TOKENS,
    "frequency_penalty": _PENALTY, "frequencyPenalty": _PENALTY, "presence_penalty": _PENALTY,
    "presencePenalty": _PENALTY, "n": (1.0, 128.0, True, "a count"),
}


def _check_numbers(config: dict[str, Any], loc: Location | None, key: str) -> None:
    """ConfigError at a key's own line for a number of PROVIDER_NUMBERS that is not a number, not finite, not
    whole where it must be, or outside its range (provider config is not templated: a string would fail later)."""
    for name, (low, high, whole, unit) in PROVIDER_NUMBERS.items():
        value = config.get(name)
        if value is None:
            continue
        where = loc_of(config, name) or loc
        what = "a whole number" if whole else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError.at(where, f"{name} must be {what}, got {value!r}", key=f"{key}.{name}",
                                 hint=f"give {what} between {low:g} and {high:g}")
        if not math.isfinite(value) or not low <= value <= high or (whole and value != int(value)):
            raise ConfigError.at(where, f"{name} {value!r} is out of range: must be {what} between {low:g} and "
                                        f"{high:g}", key=f"{key}.{name}", hint=f"{name} is read as {unit}")


def _id(raw: Any, base_dir: str, loc: Location | None, key: str, env: dict[str, str] | None = None) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError.at(loc, f"a provider id must be a non-empty string, got {raw!r}", key=key,
                             hint="for example `echo` or `openai:gpt-4o-mini`")
    if "{{" in raw:  # promptfoo renders {{ env.NAME }} in provider ids
        try:
            raw = render_env_only(raw, env)
        except ConfigError as e:
            raise ConfigError.at(loc, e.message, key=key, hint=e.hint) from None
    if files.is_ref(raw):
        return files.absolute_ref(raw, base_dir, loc=loc, key=key)
    from evalrun.providers import is_js_provider

    if is_js_provider(raw):  # promptfoo loads a bare `provider.js` id as a file too
        return files.absolute_ref("file://" + raw, base_dir, loc=loc, key=key)
    return raw


def _keep_written(spec: ProviderSpec, raw: Any) -> ProviderSpec:
    if spec.label is None and strip_userinfo(spec.id) != spec.id:  # `http://user:pw@host/x`: named without pw
        spec = replace(spec, label=strip_userinfo(spec.id))
    if isinstance(raw, str) and raw != spec.id:
        return replace(spec, written_id=raw)
    return spec


def _env_of(opts: dict[str, Any], loc: Location | None, key: str) -> dict[str, str]:
    """A provider's own `env:` as strings (booleans as promptfoo's `true` / `false`)."""
    env = opts.get("env")
    if env is None:
        return {}
    if not isinstance(env, dict):
        raise ConfigError.at(loc, "a provider's `env` must be a mapping of NAME: value", key=f"{key}.env",
                             hint="e.g. env: {OPENAI_API_KEY: '{{ env.TEAM_KEY }}'}")
    return {str(k): _render_env(str(v).lower() if isinstance(v, bool) else str(v), {}, loc, f"{key}.env.{k}")
            for k, v in env.items()}  # `{{ env.TEAM_KEY }}` values rendered


def _render_env(value: Any, env: dict[str, str], loc: Location | None, key: str) -> Any:
    """`value` with `{{ env.NAME }}` rendered in every string that reads nothing but `env` (docs/design-notes.md)."""
    if isinstance(value, str):
        if not templating.has_template(value) or "env" not in value or templating.variables_of(value) != {"env"}:
            return value
        if templating.reads_whole_env(value):
            raise ConfigError.at(loc, f"{value[:60]!r} reads the whole environment (`env`): every variable, "
                                 "credentials too, would go to the provider", key=key,
                                 hint="use env.NAME for the one variable you need (docs/security.md)")
        names = dict(template_env.namespace())
        names.update(env)
        if templating.env_names_of(value) - names.keys() - templating.env_fallbacks(value):
            return value  # a name not set (without `or 'fallback'`): left as written, as promptfoo leaves it
        try:
            return templating.render(value, {"env": names}, lenient=True)
        except Exception as e:  # a filter that fails on the value: an error at the provider, now  # noqa: BLE001
            raise ConfigError.at(loc, f"{value!r}: {e}", key=key) from None
    if isinstance(value, list):
        return [_render_env(v, env, loc, f"{key}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _render_env(v, env, loc, f"{key}.{k}") for k, v in value.items()}
    return value


def _from_options(id_: str, opts: dict[str, Any], loc: Location | None, key: str,
                  env: dict[str, str], base_dir: str) -> ProviderSpec:
    delay = opts.get("delay") or 0
    prompts = opts.get("prompts")
    if isinstance(prompts, str):
        prompts = [prompts]
    config = opts.get("config") or {}
    if not isinstance(config, dict):
        raise ConfigError.at(loc, "provider `config` must be a mapping", key=f"{key}.config")
    _check_numbers(config, loc_of(opts, "config") or loc, f"{key}.config")
    if files.is_ref(config.get("functions")):  # read when is-valid-openai-function-call checks a call: check it now
        files.expand(config["functions"], base_dir, loc=loc_of(opts, "config") or loc, key=f"{key}.config.functions")
    return ProviderSpec(id=id_, label=opts.get("label"), config=_render_env(dict(config), env, loc, f"{key}.config"),
                        prompts=tuple(str(p) for p in prompts) if prompts is not None else None,
                        transform=opts.get("transform"), delay_ms=int(delay), loc=loc, env=env)


def _item(item: Any, base_dir: str, loc: Location | None, key: str) -> list[ProviderSpec]:
    if isinstance(item, str):
        path, _ = pkgref.split_ref(item)
        if files.is_ref(item) and path.lower().endswith(_DATA_EXTS):
            out: list[ProviderSpec] = []
            for p in files.expand(path, base_dir, loc=loc, key=key):
                display = files.display_path(p)
                data = files.read_value(p, display, loc=loc, key=key)
                out.extend(parse(data, str(p.parent), loc=loc_of(data) or Location(display, 1), key=display))
            return out
        return [_keep_written(ProviderSpec(id=_id(item, base_dir, loc, key), loc=loc), item)]
    if isinstance(item, dict):
        if "id" in item:
            check_keys(item, PROVIDER_KEYS, what="provider", key=key, loc=loc)
            env = _env_of(item, loc, key)
            return [_keep_written(_from_options(_id(item["id"], base_dir, loc, f"{key}.id", env), item, loc, key,
                                                env, base_dir), item["id"])]
        if len(item) == 1:
            [(pid, opts)] = item.items()
            opts = opts or {}
            if not isinstance(opts, dict):
                raise ConfigError.at(loc, f"options of provider {pid!r} must be a mapping", key=f"{key}.{pid}")
            check_keys(opts, [k for k in PROVIDER_KEYS if k != "id"], what="provider", key=f"{key}.{pid}",
                       loc=loc_of(opts) or loc)
            env = _env_of(opts, loc, f"{key}.{pid}")
            return [_keep_written(_from_options(_id(pid, base_dir, loc, key, env), opts, loc, key, env, base_dir),
                                  pid)]
        raise ConfigError.at(loc, "a provider mapping needs an `id`", key=key,
                             hint="write `- id: openai:gpt-4o-mini` with `label`, `config` ... beside it")
    raise ConfigError.at(loc, f"cannot read a provider from {item!r}", key=key)


def one(node: Any, base_dir: str, *, loc: Location | None, key: str) -> ProviderSpec:
    """A single provider (a test's own `provider:`): an id, or a mapping with `id`; not a file of several."""
    if not isinstance(node, (str, dict)):
        raise ConfigError.at(loc, f"cannot read a provider from {node!r}", key=key,
                             hint="write an id (`openai:gpt-4o-mini`) or a mapping with `id`, `label`, `config`")
    found = _item(node, base_dir, loc, key)
    if len(found) != 1:
        raise ConfigError.at(loc, f"a test's provider must be one provider, {node!r} holds {len(found)}", key=key)
    return found[0]


def parse(node: Any, base_dir: str, *, loc: Location | None, key: str = "providers") -> list[ProviderSpec]:
    """The `providers:` (or `targets:`) value of one config file."""
    if node is None:
        return []
    if isinstance(node, (str, dict)):
        return _item(node, base_dir, loc, key)
    return [p for i, item in enumerate(node) for p in _item(item, base_dir, loc_of(node, i) or loc, f"{key}[{i}]")]

"""Rendering templates (prompts, assertion values, configs) in the one sandboxed Jinja2 environment; `lenient=True`
renders a variable no test defines as empty text, as promptfoo's Nunjucks does."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from evalrun import template_names
from evalrun.errors import ConfigError

_SINGLE_VAR = re.compile(r"^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}\s*$")


class _Env(dict[str, str]):
    """`{{ env.NAME }}`: the config's `env:` over the process environment; a missing name is an error."""

    def __getattr__(self, name: str) -> str:
        try:
            return self[name]
        except KeyError:
            import jinja2

            raise jinja2.UndefinedError(f"environment variable {name!r} is not set") from None


_config_env: dict[str, str] = {}


def set_config_env(env: dict[str, str], *, add: bool = False) -> None:
    """The config's `env:`, read before os.environ by `{{ env.NAME }}`; `add` keeps those set before."""
    if not add:
        _config_env.clear()
    _config_env.update(env)


def env_namespace() -> _Env:
    merged = _Env(os.environ)
    merged.update(_config_env)
    return merged


def render_env_only(text: str, extra: dict[str, str] | None = None) -> str:
    """`{{ env.NAME }}` in a provider id (promptfoo renders them when it loads the config); `extra` (a provider's
    own `env`) comes first. An unset NAME, or a template reading anything but `env`, is a ConfigError."""
    if not has_template(text):
        return text
    import jinja2

    try:
        if template_names.variables_of(text) - {"env"}:
            raise ConfigError(f"{text!r}: only {{{{ env.NAME }}}} can be used in a provider id")
        env = env_namespace()
        env.update(extra or {})
        return render(text, {"env": env})
    except jinja2.UndefinedError as e:
        raise ConfigError(f"{text!r}: {e.message}", hint="set the variable in the environment or under `env:`") \
            from None
    except jinja2.TemplateSyntaxError as e:
        raise ConfigError(f"{text!r}: template syntax error: {e.message}") from None


def has_template(text: str) -> bool:
    return "{{" in text or "{%" in text


#: promptfoo's test for a prompt it sends as written (autoWrapRawIfPartialNunjucks): a `{%`, `{{` or `{#` that
#: is not closed on its line (Handlebars `{{#each}}`, code with braces), unless `{% raw %}` already wraps it.
_PARTIAL_TAG = re.compile(r"(\{%[^%]*$|\{\{[^}]*$|\{#[^#]*$)", re.M)
_RAW_BLOCK = (re.compile(r"\{%-?\s*raw\s*-?%\}"), re.compile(r"\{%-?\s*endraw\s*-?%\}"))


def partial_tag(source: str) -> tuple[str, int] | None:
    """The first tag (`{#`, `{{`, `{%`) not closed on its line and that line (from 1), or None; None too when
    `{% raw %}` ... `{% endraw %}` is already in the text."""
    if "{" not in source or all(r.search(source) for r in _RAW_BLOCK):
        return None
    m = _PARTIAL_TAG.search(source)
    return None if m is None else (m.group(1)[:2], source.count("\n", 0, m.start()) + 1)


def as_written(source: str) -> str:
    """A template that renders to `source` itself (promptfoo's `{% raw %}` wrapping)."""
    return "{% raw %}" + source + "{% endraw %}"


def env_has(name: str) -> bool:
    """Whether `{{ env.NAME }}` would find NAME (config `env:` or the process environment)."""
    return name in _config_env or name in os.environ


def check_syntax(source: str) -> str | None:
    """None when the template parses and uses only known filters and tests, else the error message."""
    if template_names.simple_names(source) is not None:
        return None
    import jinja2

    try:
        template_names.parse(source)
    except jinja2.TemplateSyntaxError as e:
        return f"template syntax error: {e.message} (template line {e.lineno})"
    try:
        template_names.included(source)
    except jinja2.TemplateNotFound as e:
        return f"included template {e.name!r} not found (looked in {', '.join(template_names.include_dirs())})"
    except jinja2.TemplateSyntaxError as e:
        return f"template syntax error in included template {e.name!r}: {e.message} (line {e.lineno})"
    return None


def _fill(parts: tuple[tuple[str, ...], tuple[str, ...]], vars: dict[str, Any]) -> str | None:
    """A plain template rendered by joining its pieces when every variable it reads is a string (what Jinja2
    prints then); None otherwise (Jinja2 decides). Why it stays: Jinja2 takes ~10 µs more per case."""
    literals, names = parts
    out = [literals[0]]
    for name, literal in zip(names, literals[1:], strict=True):
        value = vars.get(name)
        if type(value) is not str:
            return None
        out.append(value)
        out.append(literal)
    return "".join(out)


def render(source: str, vars: dict[str, Any], *, lenient: bool = False) -> str:
    """Render a template string with vars (plus `env`). Raises jinja2 errors to the caller; with `lenient` an
    undefined variable renders as empty text (an unset `env.NAME` still raises)."""
    if not has_template(source):
        return source
    parts = template_names.plain_parts(source)
    if parts is not None:  # the common prompt: no Jinja2 context per render (same text: tests check it)
        text = _fill(parts, vars)
        if text is not None:
            return text
    ns = dict(vars)
    if "env" not in ns and "env" in template_names.variables_of(source):  # copying os.environ per render is costly
        ns["env"] = env_namespace()
    if not lenient:
        return template_names.compile_template(source).render(ns)
    import jinja2

    try:
        return template_names.compile_template(source).render(ns)
    except jinja2.UndefinedError:
        return template_names.compile_template(source, True).render(ns)


def render_value(value: Any, vars: dict[str, Any], *, lenient: bool = False) -> Any:
    """Render an assertion value/config: strings (also inside lists/dicts) are templates. A string that is exactly
    `{{ name }}` (or `{{ a.b }}`) yields the var's native value when it is a list or a mapping (promptfoo users
    write `contextChunks: '{{contextChunks}}'`); a scalar renders as text (`7`, `true`), as promptfoo does."""
    if isinstance(value, str):
        if not has_template(value):
            return value
        m = _SINGLE_VAR.match(value)
        if m:
            found, native = _lookup(m.group(1), vars)
            if found and isinstance(native, (list, tuple, dict)):
                return native
        return render(value, vars, lenient=lenient)
    if isinstance(value, list):
        return [render_value(v, vars, lenient=lenient) for v in value]
    if isinstance(value, dict):
        return {k: render_value(v, vars, lenient=lenient) for k, v in value.items()}
    return value


def _lookup(dotted: str, vars: dict[str, Any]) -> tuple[bool, Any]:
    cur: Any = vars
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return False, None
    return True, cur


def as_chat(value: Any) -> list[dict[str, Any]] | None:
    """A copy of `value` when it is a chat (a non-empty list of mappings with a `role`), else None."""
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        return [dict(m) for m in value]
    return None


def chat_from_json(text: str) -> list[dict[str, Any]] | None:
    """The chat message list a (rendered) JSON text spells, or None when it is not one."""
    try:
        return as_chat(json.loads(text))
    except ValueError:
        return None


def render_prompt(raw: str | list[dict[str, Any]], vars: dict[str, Any], *,
                  lenient: bool = False) -> str | list[dict[str, Any]]:
    """Render a text prompt, or each message's string content of a chat prompt. A text prompt that is a JSON
    template of a chat becomes the message list it renders to, as promptfoo parses the rendered text;
    `_conversation` (promptfoo's multi-turn history) is an empty list unless the vars hold one."""
    if isinstance(raw, str):
        if "_conversation" not in vars and "_conversation" in raw:
            vars = {**vars, "_conversation": []}
        text = render(raw, vars, lenient=lenient)
        chat = chat_from_json(text) if raw.lstrip()[:1] == "[" and has_template(raw) else None  # a JSON template
        return text if chat is None else chat
    return [{**m, "content": render(m["content"], vars, lenient=lenient)} if isinstance(m.get("content"), str)
            else dict(m) for m in raw]


def describe_render_error(e: Exception, *, where: str) -> ConfigError:
    """Turn a Jinja2 error into a ConfigError naming the variable and `where` (e.g. the test)."""
    import jinja2

    if isinstance(e, jinja2.UndefinedError):
        msg = str(e.message or e)
        m = re.search(r"'([^']+)' is undefined", msg)
        if m:
            name = m.group(1)
            return ConfigError(f"undefined template variable {name!r} in {where}", hint=f"define `{name}` under the "
                               f"test's `vars:` (or defaultTest.vars), or pass --var {name}=VALUE")
        return ConfigError(f"template error in {where}: {msg}")
    if isinstance(e, jinja2.TemplateSyntaxError):
        return ConfigError(f"template syntax error in {where}: {e.message}")
    return ConfigError(f"template error in {where}: {e}")

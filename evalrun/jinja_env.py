"""The Jinja2 environment templates render with: Nunjucks spellings, promptfoo's filters, StrictUndefined.

Kept apart from templating.py and template_names.py so that loading a config whose templates are all plain `{{ name }}`
substitutions (checked without Jinja2, see template_names.plain_parts) never imports Jinja2 (~25 ms). It imports
nothing of evalrun: template_names imports it, on first use.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import jinja2
import jinja2.ext
import jinja2.lexer
from jinja2.sandbox import SandboxedEnvironment


class _NunjucksCompatEnv(SandboxedEnvironment):
    """Jinja2 with the Nunjucks (JavaScript) spellings promptfoo templates use: `xs.length`."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if attribute == "length" and isinstance(obj, (str, list, tuple, dict)):
            return len(obj)
        return super().getattr(obj, attribute)


class _StrictEquality(jinja2.ext.Extension):
    """Nunjucks' `===` / `!==`: Jinja2 lexes them as `==` / `!=` followed by `=`; the two tokens become one
    (`==` / `!=`, which compare without JavaScript's type coercion already)."""

    def filter_stream(self, stream: jinja2.lexer.TokenStream) -> Any:
        pending = None
        for tok in stream:
            if pending is not None:
                if tok.type == "assign" and tok.lineno == pending.lineno:
                    yield pending
                    pending = None
                    continue
                yield pending
                pending = None
            if tok.type in ("eq", "ne"):
                pending = tok
                continue
            yield tok
        if pending is not None:
            yield pending


def _dump(value: Any, indent: int | None = None) -> str:
    """Nunjucks' `dump` (JSON.stringify): compact, or indented by `indent` spaces."""
    if indent:
        return json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _load(text: Any) -> Any:
    """promptfoo's `load` filter: JSON.parse of a string (a parsed value passes through)."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError as e:
        raise jinja2.TemplateRuntimeError(f"load: not valid JSON: {e}") from None


def as_text(value: Any) -> Any:
    """How a value prints inside a template, as promptfoo's Nunjucks prints it (JavaScript's String()).

    true/false for booleans, nothing for null, `1` for 1.0, lists joined with commas; mappings (which
    JavaScript would print as "[object Object]") print as JSON. Strings and other values are unchanged.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return ",".join(str(as_text(v)) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return value


class _EmptyUndefined(jinja2.ChainableUndefined):
    """A variable no test defines, as Nunjucks treats it: empty text, false, no items, and its attributes and
    items undefined too."""

    __slots__ = ()


def lenient(env: SandboxedEnvironment) -> SandboxedEnvironment:
    """`env` (filters and all, shared) where an undefined variable renders as empty text instead of raising."""
    found = getattr(env, "_lenient_overlay", None)
    if found is None:
        found = env.overlay(undefined=_EmptyUndefined)
        env._lenient_overlay = found  # type: ignore[attr-defined]
    return found


def set_search_path(env: SandboxedEnvironment, folders: list[str]) -> None:
    """Where `{% include "name" %}` finds `name` (a FileSystemLoader over `folders`, in order)."""
    env.loader = jinja2.FileSystemLoader(folders)
    overlay = getattr(env, "_lenient_overlay", None)
    if overlay is not None:
        overlay.loader = env.loader


#: Filters Nunjucks fails on when given an undefined value (the others render it as empty text)
_FAIL_ON_UNDEFINED = ("join", "first", "last", "sum", "batch", "slice", "groupby", "dictsort", "random", "trim",
                      "list", "select", "reject", "selectattr", "rejectattr", "string")


def _failing_on_undefined(name: str, fn: Any) -> Any:
    """`fn` (a filter) raising UndefinedError for an undefined input, as Nunjucks throws there."""
    position = 1 if hasattr(fn, "jinja_pass_arg") else 0  # after the context / eval context / environment

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if len(args) > position and isinstance(args[position], jinja2.Undefined):
            raise jinja2.UndefinedError(f"the {name} filter got an undefined value (Nunjucks fails there too)")
        return fn(*args, **kwargs)

    return checked


def make_env() -> SandboxedEnvironment:
    """A new environment: sandboxed, StrictUndefined, values printed as Nunjucks prints them."""
    env = _NunjucksCompatEnv(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True,
                             finalize=as_text, extensions=[_StrictEquality])
    env.globals["null"] = None  # Nunjucks literals
    env.globals["undefined"] = None
    env.filters["dump"] = _dump
    env.filters["tojson"] = _dump
    env.filters["load"] = _load
    for name in _FAIL_ON_UNDEFINED:
        env.filters[name] = _failing_on_undefined(name, env.filters[name])
    return env

"""The Jinja2 environments templates render with: Nunjucks spellings, promptfoo's filters, StrictUndefined (and a
lenient twin); imported by templating at the first template that needs Jinja2."""

from __future__ import annotations

import functools
import json
import os
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
                yield pending
                if tok.type == "assign" and tok.lineno == pending.lineno:  # the third `=` goes
                    pending = None
                    continue
            pending = tok if tok.type in ("eq", "ne") else None
            if pending is None:
                yield tok
        if pending is not None:
            yield pending


def _refused(value: Any) -> None:
    """A value whose class says `render_refused` (templating's whole `env`) is never printed or dumped."""
    why = getattr(type(value), "render_refused", None)
    if why:
        raise jinja2.UndefinedError(why)


def _dump(value: Any, indent: int | None = None) -> str:
    """Nunjucks' `dump` (JSON.stringify): compact, or indented by `indent` spaces."""
    _refused(value)
    return json.dumps(value, ensure_ascii=False, indent=indent or None, separators=None if indent else (",", ":"),
                      default=str)


def _load(text: Any) -> Any:
    """promptfoo's `load` filter: JSON.parse of a string (a parsed value passes through)."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError as e:
        raise jinja2.TemplateRuntimeError(f"load: not valid JSON: {e}") from None


def as_text(value: Any) -> Any:
    """A value as promptfoo's Nunjucks prints it (JavaScript's String()): true/false, nothing for null, `1` for 1.0,
    lists joined with commas; mappings as JSON (not "[object Object]"); anything else unchanged."""
    if value is None:
        return ""
    _refused(value)
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
    """A variable no test defines, as Nunjucks treats it: empty text, false, no items, undefined attributes."""

    __slots__ = ()


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


def make_envs() -> tuple[SandboxedEnvironment, SandboxedEnvironment]:
    """A new sandboxed environment printing values as Nunjucks does, and its lenient overlay (filters shared)."""
    env = _NunjucksCompatEnv(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True,
                             finalize=as_text, extensions=[_StrictEquality])
    env.globals.update(null=None, undefined=None)  # Nunjucks literals
    env.filters.update(dump=_dump, tojson=_dump, load=_load)
    for name in _FAIL_ON_UNDEFINED:
        env.filters[name] = _failing_on_undefined(name, env.filters[name])
    return env, env.overlay(undefined=_EmptyUndefined)


def make_loader(folders: list[str], root: str | None) -> jinja2.BaseLoader:
    """`{% include %}`'s loader over `folders`; with `root` (--confine), a file whose real path (symlinks followed)
    lies outside that tree is not found, and says why."""
    files = jinja2.FileSystemLoader(folders)
    if root is None:
        return files

    def confined(name: str) -> tuple[str, str, Any]:
        text, path, uptodate = files.get_source(None, name)  # type: ignore[arg-type]  # unused by this loader
        real = os.path.realpath(path)
        if os.path.commonpath([real, root]) != root:
            raise jinja2.TemplateNotFound(name, f"included template {name!r} resolves to {real}, outside the "
                                          f"config's folder {root} (--confine)")
        return text, path, uptodate

    return jinja2.FunctionLoader(confined)

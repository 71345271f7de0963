"""One sandboxed Jinja2 environment with StrictUndefined; compiled templates are cached.

Var values are data and are never rendered themselves. In an assertion value or config, a string that is
exactly one `{{ name }}` expression whose var is a list or a mapping yields that native value (a list of chunks
stays a list), as promptfoo users write `contextChunks: '{{contextChunks}}'`; a scalar var renders as text
(`7`, `true`), as promptfoo renders it.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evalrun.errors import ConfigError

if TYPE_CHECKING:
    import jinja2
    import jinja2.nodes

_SINGLE_VAR = re.compile(r"^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}\s*$")


class _Env(dict[str, str]):
    """`{{ env.NAME }}`: the config's `env:` over the process environment; a missing name is an error."""

    def __getattr__(self, name: str) -> str:
        try:
            return self[name]
        except KeyError:
            import jinja2

            raise jinja2.UndefinedError(f"environment variable {name!r} is not set") from None


_env: Any = None  # the Jinja2 environment (jinja_env.make_env), made at the first template that needs it
_builtin_filters: dict[str, Any] = {}  # its own filters, as made
_custom_filters: dict[str, Any] = {}  # the config's `nunjucksFilters`, over those
_config_env: dict[str, str] = {}


def reset_custom_filters() -> None:
    """Forget the `nunjucksFilters` of a previously loaded config."""
    add_custom_filters({}, replace=True)


def add_custom_filters(filters: dict[str, Any], *, replace: bool = False) -> None:
    """Add a config's `nunjucksFilters` (name -> callable); `replace` drops earlier custom filters first (a
    custom filter that took a built-in filter's name gives the name back)."""
    if replace:
        _custom_filters.clear()
    _custom_filters.update(filters)
    if _env is not None:
        _env.filters.clear()
        _env.filters.update(_builtin_filters)
        _env.filters.update(_custom_filters)
    compile_template.cache_clear()
    parse.cache_clear()
    variables_of.cache_clear()
    guarded_names.cache_clear()
    env_names_of.cache_clear()


def set_config_env(env: dict[str, str]) -> None:
    """Values from the config's `env:` key, consulted before os.environ by `{{ env.NAME }}`."""
    _config_env.clear()
    _config_env.update(env)


def env_namespace() -> _Env:
    merged = _Env(os.environ)
    merged.update(_config_env)
    return merged


def render_env_only(text: str) -> str:
    """`{{ env.NAME }}` in a provider id (promptfoo renders them when it loads the config); an unset NAME, or a
    template reading anything but `env`, is a ConfigError."""
    if not has_template(text):
        return text
    import jinja2

    try:
        if variables_of(text) - {"env"}:
            raise ConfigError(f"{text!r}: only {{{{ env.NAME }}}} can be used in a provider id")
        return render(text, {})
    except jinja2.UndefinedError as e:
        raise ConfigError(f"{text!r}: {e.message}", hint="set the variable in the environment or under `env:`") \
            from None
    except jinja2.TemplateSyntaxError as e:
        raise ConfigError(f"{text!r}: template syntax error: {e.message}") from None


def _environment() -> Any:
    """The Jinja2 environment, made (and Jinja2 imported) on first use."""
    global _env
    if _env is None:
        from evalrun.jinja_env import make_env

        env = make_env()  # jinja_env never imports this module: no cycle
        _builtin_filters.update(env.filters)
        env.filters.update(_custom_filters)
        _env = env
    return _env


def has_template(text: str) -> bool:
    return "{{" in text or "{%" in text


@lru_cache(maxsize=4096)
def compile_template(source: str) -> jinja2.Template:
    """Compile (cached). Raises jinja2.TemplateSyntaxError."""
    return _environment().from_string(source)


#: `{{ name }}` with nothing else inside (whitespace around the name allowed).
_PLAIN_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
#: Names Jinja2 reads as something else than a variable (constants, operators), or that are globals of the
#: environment or special in Jinja2: templates using them are left to Jinja2.
_NOT_PLAIN = frozenset({
    "true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if", "else", "elif",
    "for", "endfor", "recursive", "with", "without", "context", "import", "from", "as", "set", "block",
    "extends", "include", "macro", "call", "filter", "raw", "loop", "self", "caller", "varargs", "kwargs",
    "super", "range", "dict", "lipsum", "cycler", "joiner", "namespace", "null", "undefined", "env",
})


@lru_cache(maxsize=4096)
def plain_parts(source: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(literal pieces, variable names) of a template made of plain text and `{{ name }}` substitutions only (the
    common prompt), found without Jinja2; the pieces are what Jinja2 prints around the names (len(names) + 1).
    None for any other template: a brace left outside the substitutions, a filter, a tag, a comment, a
    whitespace-control dash, a name in _NOT_PLAIN, or a carriage return (Jinja2 rewrites line ends in text)."""
    split = _PLAIN_VAR.split(source)
    literals, names = tuple(split[0::2]), tuple(split[1::2])
    if not _NOT_PLAIN.isdisjoint(names) or any("{" in t or "}" in t or "\r" in t for t in literals):
        return None
    return literals, names


def simple_names(source: str) -> frozenset[str] | None:
    """The variables of a plain template (see plain_parts): what Jinja2 finds in it (it parses, reads those names,
    guards none, reads no `env`); None for any other template."""
    parts = plain_parts(source)
    return None if parts is None else frozenset(parts[1])


def _fill(parts: tuple[tuple[str, ...], tuple[str, ...]], vars: dict[str, Any]) -> str | None:
    """A plain template rendered by joining its pieces, when every variable it reads is a string (what Jinja2
    prints then, autoescape off); None otherwise (a number, a list, a missing var: Jinja2 decides)."""
    literals, names = parts
    out = [literals[0]]
    for name, literal in zip(names, literals[1:], strict=True):
        value = vars.get(name)
        if type(value) is not str:
            return None
        out.append(value)
        out.append(literal)
    return "".join(out)


@lru_cache(maxsize=4096)
def parse(source: str) -> jinja2.nodes.Template:
    """Parse (cached) and check that every filter and test exists, without compiling (4x cheaper).

    Raises jinja2.TemplateSyntaxError (TemplateAssertionError for an unknown filter or test).
    """
    import jinja2
    from jinja2 import nodes

    env = _environment()
    tree = env.parse(source)
    for node in tree.find_all(nodes.Filter):
        if node.name not in env.filters:
            raise jinja2.TemplateAssertionError(f"No filter named {node.name!r}.", node.lineno)
    for test in tree.find_all(nodes.Test):
        if test.name not in env.tests:
            raise jinja2.TemplateAssertionError(f"No test named {test.name!r}.", test.lineno)
    return tree


@lru_cache(maxsize=4096)
def variables_of(source: str) -> frozenset[str]:
    """Top-level variable names a template reads (for checking undefined vars before any call)."""
    simple = simple_names(source)
    if simple is not None:
        return simple
    from jinja2 import meta

    return frozenset(meta.find_undeclared_variables(parse(source)))


@lru_cache(maxsize=4096)
def guarded_names(source: str) -> frozenset[str]:
    """Variables the template treats as optional: `x | default(...)` or `x is defined` / `is undefined`."""
    if simple_names(source) is not None:
        return frozenset()
    from jinja2 import nodes

    tree = parse(source)
    out = {f.node.name for f in tree.find_all(nodes.Filter)
           if f.name in ("default", "d") and isinstance(f.node, nodes.Name)}
    out |= {t.node.name for t in tree.find_all(nodes.Test)
            if t.name in ("defined", "undefined") and isinstance(t.node, nodes.Name)}
    return frozenset(out)


@lru_cache(maxsize=4096)
def env_names_of(source: str) -> frozenset[str]:
    """Names a template reads as `env.NAME` or `env['NAME']` (checked against the environment at load time)."""
    if simple_names(source) is not None:
        return frozenset()
    from jinja2 import nodes

    out: set[str] = set()
    tree = parse(source)
    for get in tree.find_all(nodes.Getattr):
        if isinstance(get.node, nodes.Name) and get.node.name == "env":
            out.add(get.attr)
    for item in tree.find_all(nodes.Getitem):
        if isinstance(item.node, nodes.Name) and item.node.name == "env" and isinstance(item.arg, nodes.Const) \
                and isinstance(item.arg.value, str):
            out.add(item.arg.value)
    return frozenset(out)


def env_has(name: str) -> bool:
    """Whether `{{ env.NAME }}` would find NAME (config `env:` or the process environment)."""
    return name in _config_env or name in os.environ


def check_syntax(source: str) -> str | None:
    """None when the template parses and uses only known filters and tests, else the error message."""
    if simple_names(source) is not None:
        return None
    import jinja2

    try:
        parse(source)
    except jinja2.TemplateSyntaxError as e:
        return f"template syntax error: {e.message} (template line {e.lineno})"
    return None


def render(source: str, vars: dict[str, Any]) -> str:
    """Render a template string with vars (plus `env`). Raises jinja2 errors to the caller."""
    if not has_template(source):
        return source
    parts = plain_parts(source)
    if parts is not None:  # no Jinja2 context per render for the common prompt (same text: tests check it)
        text = _fill(parts, vars)
        if text is not None:
            return text
    ns = dict(vars)
    if "env" not in ns and "env" in variables_of(source):  # copying os.environ per render is costly
        ns["env"] = env_namespace()
    return compile_template(source).render(ns)


def render_value(value: Any, vars: dict[str, Any]) -> Any:
    """Render an assertion value/config: strings (and strings inside lists/dicts) are templates.

    A string that is exactly `{{ name }}` (or `{{ a.b }}`) yields the var's native value when that value is a
    list or a mapping (chunk lists); a scalar (number, boolean, null) renders as text, as promptfoo does.
    """
    if isinstance(value, str):
        if not has_template(value):
            return value
        m = _SINGLE_VAR.match(value)
        if m:
            found, native = _lookup(m.group(1), vars)
            if found and isinstance(native, (list, tuple, dict)):
                return native
        return render(value, vars)
    if isinstance(value, list):
        return [render_value(v, vars) for v in value]
    if isinstance(value, dict):
        return {k: render_value(v, vars) for k, v in value.items()}
    return value


def _lookup(dotted: str, vars: dict[str, Any]) -> tuple[bool, Any]:
    cur: Any = vars
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return False, None
    return True, cur


def is_json_template(raw: str) -> bool:
    """A chat prompt written as a JSON template (`[ {% for %} ... ]`): JSON only once rendered."""
    head = raw.lstrip()[:1]
    return head == "[" and has_template(raw)


def chat_from_json(text: str) -> list[dict[str, Any]] | None:
    """The chat message list a rendered JSON template spells, or None when it is not one."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data):
        return data
    return None


def render_prompt(raw: str | list[dict[str, Any]], vars: dict[str, Any]) -> str | list[dict[str, Any]]:
    """Render a text prompt, or each message's string content of a chat prompt.

    A text prompt that is a JSON template of a chat (`[{"role": ...}, {% for %}...]`) becomes the message
    list it renders to, as promptfoo parses the rendered text; `_conversation` (promptfoo's multi-turn
    history) is an empty list unless the vars hold one.
    """
    if isinstance(raw, str):
        if "_conversation" not in vars and "_conversation" in raw:
            vars = {**vars, "_conversation": []}
        text = render(raw, vars)
        if is_json_template(raw):
            chat = chat_from_json(text)
            if chat is not None:
                return chat
        return text
    out = []
    for msg in raw:
        m = dict(msg)
        if isinstance(m.get("content"), str):
            m["content"] = render(m["content"], vars)
        out.append(m)
    return out


def describe_render_error(e: Exception, *, where: str) -> ConfigError:
    """Turn a Jinja2 error into a ConfigError naming the variable and `where` (e.g. the test)."""
    import jinja2

    if isinstance(e, jinja2.UndefinedError):
        msg = str(e.message or e)
        name = re.search(r"'([^']+)' is undefined", msg)
        if name:
            return ConfigError(f"undefined template variable {name.group(1)!r} in {where}",
                               hint=f"define `{name.group(1)}` under the test's `vars:` (or defaultTest.vars), "
                                    "or pass --var {0}=VALUE".format(name.group(1)))
        return ConfigError(f"template error in {where}: {msg}")
    if isinstance(e, jinja2.TemplateSyntaxError):
        return ConfigError(f"template syntax error in {where}: {e.message}")
    return ConfigError(f"template error in {where}: {e}")

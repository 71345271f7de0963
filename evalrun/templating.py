"""Templates (prompts, assertion values, configs): the one sandboxed Jinja2 environment with what a loaded config adds
(`nunjucksFilters`, `{% include %}` folders; every cache here is cleared when those change), what a template reads,
found before it renders, and rendering; `lenient=True` renders a variable no test defines as empty text, as
promptfoo's Nunjucks does."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evalrun import chats, template_env
from evalrun.errors import ConfigError

if TYPE_CHECKING:
    import jinja2
    import jinja2.nodes

_envs: Any = None  # (strict, lenient) Jinja2 environments (jinja_env.make_envs)
_builtin_filters: dict[str, Any] = {}  # their own filters, as made
_custom_filters: dict[str, Any] = {}  # the config's `nunjucksFilters`, over those
_include_dirs: list[str] = []
_confined: list[str] = []  # --confine: the folder tree `{% include %}` reads in (config.files.confine sets it)


def environment(*, lenient: bool = False) -> Any:
    """The Jinja2 environment, or its twin where an undefined variable renders as empty text."""
    global _envs
    if _envs is None:
        from evalrun.jinja_env import make_envs

        _envs = make_envs()  # jinja_env imports nothing of evalrun: no cycle
        _builtin_filters.update(_envs[0].filters)
        _changed()
    return _envs[1] if lenient else _envs[0]


def reset_config() -> None:
    """Forget a previously loaded config's `nunjucksFilters` (built-ins come back), include folders and `env:`."""
    _custom_filters.clear()
    _include_dirs.clear()
    template_env.set_config_env({})
    _changed()


def add_custom_filters(filters: dict[str, Any]) -> None:
    """Add a config's `nunjucksFilters` (name -> callable)."""
    _custom_filters.update(filters)
    _changed()


def include_dirs() -> list[str]:
    """The folders `{% include %}` looks in, in order (under --confine not the current one)."""
    return [*_include_dirs] if _confined else [*_include_dirs, os.getcwd()]


def confine_includes(root: str | None) -> None:
    """`{% include %}` reads files in `root`'s tree only, symlinks followed (None: lift it)."""
    _confined[:] = [os.path.realpath(root)] if root is not None else []
    _changed()


def add_include_dir(folder: str) -> None:
    """A config's folder: `{% include %}` looks there first, then where promptfoo looks (the current folder)."""
    folder = os.path.abspath(folder)
    if folder not in _include_dirs:
        _include_dirs.append(folder)
        _changed()


def _changed() -> None:
    """The filters or include folders changed: the environments follow, every cache is dropped."""
    if _envs is not None:
        _envs[0].filters.clear()  # the lenient twin shares them
        _envs[0].filters.update(_builtin_filters)
        _envs[0].filters.update(_custom_filters)
        from evalrun.jinja_env import make_loader

        loader = make_loader(include_dirs(), _confined[0] if _confined else None)
        for env in _envs:
            env.loader = loader
    for cached in (compile_template, parse, variables_of, included, guarded_names, env_names_of, env_fallbacks):
        cached.cache_clear()


@lru_cache(maxsize=4096)
def compile_template(source: str, lenient: bool = False) -> jinja2.Template:
    return environment(lenient=lenient).from_string(source)


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
    """(literal pieces, variable names) of a template of plain text and `{{ name }}` only (the common prompt), found
    without Jinja2; the pieces are what Jinja2 prints around the names. None for any other template (a brace
    outside the substitutions, a name in _NOT_PLAIN, a carriage return: Jinja2 rewrites line ends)."""
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


@lru_cache(maxsize=4096)
def parse(source: str) -> jinja2.nodes.Template:
    """Parse (cached), every filter and test checked to exist, without compiling (4x cheaper); TemplateSyntaxError."""
    import jinja2
    from jinja2 import nodes

    env = environment()
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
    """Top-level variable names a template (and what it includes) reads."""
    simple = simple_names(source)
    if simple is not None:
        return simple
    from jinja2 import meta

    found = frozenset(meta.find_undeclared_variables(parse(source)))
    for _, text in included(source):
        found |= variables_of(text)
    return found


@lru_cache(maxsize=1024)
def included(source: str) -> tuple[tuple[str, str], ...]:
    """(name, text) of each template `source` includes, imports or extends, read from the include folders; raises
    jinja2.TemplateNotFound for a missing one, TemplateSyntaxError for one that does not parse."""
    if "{%" not in source:
        return ()
    import jinja2
    from jinja2 import meta

    out = []
    for name in meta.find_referenced_templates(parse(source)):
        if name is None:  # a name computed at render time: found (or not) then
            continue
        text, _, _ = environment().loader.get_source(environment(), name)
        try:
            parse(text)  # its syntax, now
        except jinja2.TemplateSyntaxError as e:
            e.name = name
            raise
        out.append((name, text))
        out.extend(included(text))
    return tuple(out)


@lru_cache(maxsize=4096)
def guarded_names(source: str) -> frozenset[str]:
    """Variables the template treats as optional: `x | default(...)` or `x is defined` / `is undefined`."""
    if simple_names(source) is not None:
        return frozenset()
    from jinja2 import nodes

    return frozenset(n.name for n in _guarded(parse(source)) if isinstance(n, nodes.Name))


def _guarded(tree: jinja2.nodes.Template) -> list[Any]:
    """The inputs of `| default(...)` filters and of `is defined` / `is undefined` tests."""
    from jinja2 import nodes

    return [f.node for f in tree.find_all(nodes.Filter) if f.name in ("default", "d")] + \
        [t.node for t in tree.find_all(nodes.Test) if t.name in ("defined", "undefined")]


@lru_cache(maxsize=4096)
def reads_whole_env(source: str) -> bool:
    """The template uses `env` otherwise than as `env.NAME` / `env['NAME']` (`{{ env }}`, `env | tojson`,
    `env.items()`...): evalrun refuses it (docs/security.md), since it renders every environment variable."""
    if simple_names(source) is not None:
        return False
    from jinja2 import nodes

    tree = parse(source)
    named = {id(n.node) for n in tree.find_all(nodes.Getattr) if isinstance(n.node, nodes.Name)
             and n.node.name == "env" and n.attr not in _DICT_METHODS}
    named |= {id(i.node) for i in tree.find_all(nodes.Getitem) if isinstance(i.node, nodes.Name)
              and isinstance(i.arg, nodes.Const) and isinstance(i.arg.value, str)}
    return any(n.name == "env" and n.ctx == "load" and id(n) not in named for n in tree.find_all(nodes.Name))


#: Mapping methods: `env.items()` reads every variable, `env.get('X')` is refused too (write env.X).
_DICT_METHODS = frozenset({"items", "keys", "values", "get", "copy", "pop", "setdefault", "update", "__iter__"})


@lru_cache(maxsize=4096)
def env_names_of(source: str) -> frozenset[str]:
    """Names a template reads as `env.NAME` or `env['NAME']` (checked against the environment at load time)."""
    if simple_names(source) is not None:
        return frozenset()
    from jinja2 import nodes

    tree = parse(source)
    out = {g.attr for g in tree.find_all(nodes.Getattr) if isinstance(g.node, nodes.Name) and g.node.name == "env"}
    out |= {i.arg.value for i in tree.find_all(nodes.Getitem) if isinstance(i.node, nodes.Name)
            and i.node.name == "env" and isinstance(i.arg, nodes.Const) and isinstance(i.arg.value, str)}
    return frozenset(out)


@lru_cache(maxsize=1024)
def env_fallbacks(source: str) -> frozenset[str]:
    """`env.NAME`s whose absence the template handles (promptfoo renders it then): the left of an `or`, an `if`'s
    test (inline too), a `| default(...)`'s input, an `is defined` test."""
    if simple_names(source) is not None or "env" not in source:
        return frozenset()
    from jinja2 import nodes

    tree = parse(source)
    guarded: list[Any] = [o.left for o in tree.find_all(nodes.Or)]
    guarded += [getattr(n, "test", None) for n in tree.find_all((nodes.If, nodes.CondExpr))] + _guarded(tree)
    return frozenset(g.attr for node in guarded if node is not None for g in [node, *node.find_all(nodes.Getattr)]
                     if isinstance(g, nodes.Getattr) and isinstance(g.node, nodes.Name) and g.node.name == "env")


_SINGLE_VAR = re.compile(r"^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}\s*$")


def render_env_only(text: str, extra: dict[str, str] | None = None) -> str:
    """`{{ env.NAME }}` in a provider id (promptfoo renders them when it loads the config); `extra` (a provider's
    own `env`) comes first. An unset NAME, or a template reading anything but `env`, is a ConfigError."""
    if not has_template(text):
        return text
    import jinja2

    try:
        if variables_of(text) - {"env"}:
            raise ConfigError(f"{text!r}: only {{{{ env.NAME }}}} can be used in a provider id")
        env = template_env.namespace()
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


def check_syntax(source: str) -> str | None:
    """None when the template parses and uses only known filters and tests, else the error message."""
    if simple_names(source) is not None:
        return None
    import jinja2

    try:
        parse(source)
    except jinja2.TemplateSyntaxError as e:
        return f"template syntax error: {e.message} (template line {e.lineno})"
    try:
        included(source)
    except jinja2.TemplateNotFound as e:
        return e.message if "(--confine)" in str(e.message) else \
            f"included template {e.name!r} not found (looked in {', '.join(include_dirs())})"
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
    parts = plain_parts(source)
    if parts is not None:  # the common prompt: no Jinja2 context per render (same text: tests check it)
        text = _fill(parts, vars)
        if text is not None:
            return text
    ns = dict(vars)
    if "env" not in ns and "env" in variables_of(source):  # copying os.environ per render is costly
        ns["env"] = template_env.namespace()
    if not lenient:
        return compile_template(source).render(ns)
    import jinja2

    try:
        return compile_template(source).render(ns)
    except jinja2.UndefinedError:
        return compile_template(source, True).render(ns)


def render_value(value: Any, vars: dict[str, Any], *, lenient: bool = False) -> Any:
    """Render an assertion value/config: strings (also inside lists/dicts) are templates. A string that is exactly
    `{{ name }}` (or `{{ a.b }}`) yields the var's native value when it is a list or a mapping (promptfoo users
    write `contextChunks: '{{contextChunks}}'`); a scalar renders as text (`7`, `true`), as promptfoo does."""
    if isinstance(value, str):
        if not has_template(value):
            return value
        m = _SINGLE_VAR.match(value)
        if m:
            native: Any = vars
            for part in m.group(1).split("."):
                native = native.get(part) if isinstance(native, dict) else None
            if isinstance(native, (list, tuple, dict)):
                return native
        return render(value, vars, lenient=lenient)
    if isinstance(value, list):
        return [render_value(v, vars, lenient=lenient) for v in value]
    if isinstance(value, dict):
        return {k: render_value(v, vars, lenient=lenient) for k, v in value.items()}
    return value


def render_prompt(raw: str | list[dict[str, Any]], vars: dict[str, Any], *,
                  lenient: bool = False) -> str | list[dict[str, Any]]:
    """Render a text prompt, or each message's string content of a chat prompt. A text prompt that is a JSON
    template of a chat becomes the message list it renders to, as promptfoo parses the rendered text;
    `_conversation` (promptfoo's multi-turn history) is an empty list unless the vars hold one."""
    if isinstance(raw, str):
        if "_conversation" not in vars and "_conversation" in raw:
            vars = {**vars, "_conversation": []}
        text = render(raw, vars, lenient=lenient)
        chat = chats.from_json(text) if raw.lstrip()[:1] == "[" and has_template(raw) else None  # a JSON template
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

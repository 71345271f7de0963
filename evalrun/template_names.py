"""The Jinja2 environment with what a loaded config adds (`nunjucksFilters`, `{% include %}` folders), compiled
templates, and what a template reads, found before it renders; every cache here is cleared when those change."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2
    import jinja2.nodes

_envs: Any = None  # (strict, lenient) Jinja2 environments (jinja_env.make_envs)
_builtin_filters: dict[str, Any] = {}  # their own filters, as made
_custom_filters: dict[str, Any] = {}  # the config's `nunjucksFilters`, over those
_include_dirs: list[str] = []


def environment(*, lenient: bool = False) -> Any:
    """The Jinja2 environment (with `lenient`, its twin where an undefined variable renders as empty text)."""
    global _envs
    if _envs is None:
        from evalrun.jinja_env import make_envs

        _envs = make_envs()  # jinja_env imports nothing of evalrun: no cycle
        _builtin_filters.update(_envs[0].filters)
        _envs[0].filters.update(_custom_filters)  # the twin shares the filters
        _changed()
    return _envs[1] if lenient else _envs[0]


def reset_custom_filters() -> None:
    """Forget the `nunjucksFilters` of a previously loaded config."""
    add_custom_filters({}, replace=True)


def add_custom_filters(filters: dict[str, Any], *, replace: bool = False) -> None:
    """Add a config's `nunjucksFilters` (name -> callable); `replace` drops earlier custom filters first (a
    custom filter that took a built-in filter's name gives the name back)."""
    if replace:
        _custom_filters.clear()
    _custom_filters.update(filters)
    if _envs is not None:
        _envs[0].filters.clear()
        _envs[0].filters.update(_builtin_filters)
        _envs[0].filters.update(_custom_filters)
    _changed()


def include_dirs() -> list[str]:
    """The folders `{% include %}` looks in, in order."""
    return [*_include_dirs, os.getcwd()]


def reset_include_dirs() -> None:
    """Forget the folders of a previously loaded config (`{% include %}` then looks in the current folder)."""
    if _include_dirs:
        _include_dirs.clear()
        _changed()


def add_include_dir(folder: str) -> None:
    """A loaded config's folder, where its templates' `{% include "partial.njk" %}` names are looked up (promptfoo's
    Nunjucks looks in the current folder, where promptfoo users run it from; that comes next)."""
    folder = os.path.abspath(folder)
    if folder not in _include_dirs:
        _include_dirs.append(folder)
        _changed()


def _changed() -> None:
    """The filters or include folders changed: the loader follows, every cache is dropped."""
    if _envs is not None:
        import jinja2

        for env in _envs:
            env.loader = jinja2.FileSystemLoader(include_dirs())
    for cached in (compile_template, parse, variables_of, included, guarded_names, env_names_of, env_fallbacks):
        cached.cache_clear()


@lru_cache(maxsize=4096)
def compile_template(source: str, lenient: bool = False) -> jinja2.Template:
    """Compile (cached). Raises jinja2.TemplateSyntaxError."""
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
    """Parse (cached) and check that every filter and test exists, without compiling (4x cheaper); raises
    jinja2.TemplateSyntaxError (TemplateAssertionError for an unknown filter or test)."""
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
    """(name, text) of each template that `source` names in `{% include %}` / `{% import %}` / `{% extends %}`,
    read from the include folders (add_include_dir). Raises jinja2.TemplateNotFound for a missing one,
    TemplateSyntaxError for one that does not parse."""
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

    tree = parse(source)
    out = {g.attr for g in tree.find_all(nodes.Getattr) if isinstance(g.node, nodes.Name) and g.node.name == "env"}
    out |= {i.arg.value for i in tree.find_all(nodes.Getitem) if isinstance(i.node, nodes.Name)
            and i.node.name == "env" and isinstance(i.arg, nodes.Const) and isinstance(i.arg.value, str)}
    return frozenset(out)


@lru_cache(maxsize=1024)
def env_fallbacks(source: str) -> frozenset[str]:
    """`env.NAME`s whose absence the template handles: the left side of an `or`, the test of an `if` or of an
    inline `x if c else y`, a `| default(...)`'s input or an `is defined` test (promptfoo renders such a
    template with the variable undefined)."""
    if simple_names(source) is not None or "env" not in source:
        return frozenset()
    from jinja2 import nodes

    tree = parse(source)
    guarded: list[Any] = [o.left for o in tree.find_all(nodes.Or)]
    guarded += [getattr(n, "test", None) for n in tree.find_all((nodes.If, nodes.CondExpr))]
    guarded += [f.node for f in tree.find_all(nodes.Filter) if f.name in ("default", "d")]
    guarded += [t.node for t in tree.find_all(nodes.Test) if t.name in ("defined", "undefined")]
    return frozenset(g.attr for node in guarded if node is not None for g in [node, *node.find_all(nodes.Getattr)]
                     if isinstance(g, nodes.Getattr) and isinstance(g.node, nodes.Name) and g.node.name == "env")

"""The Jinja2 environment templates render and are analysed with, and what the loaded config adds to it.

    environment() -> env                     made (and Jinja2 imported) at the first template that needs it
    add_custom_filters(filters, replace=)    a config's `nunjucksFilters`; reset_custom_filters()
    add_include_dir(folder)                  where `{% include %}` looks (each config's folder, then the current
    include_dirs() -> [folder, ...]          folder, where promptfoo's Nunjucks looks); reset_include_dirs()
    on_change(clear, includes=False)         a cache of compiled or analysed templates: cleared when the filters
                                             change (and, with `includes`, when the include folders do)

Owned here so that rendering (templating.py) and analysis (template_names.py) share one environment without
importing each other.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

_env: Any = None  # the Jinja2 environment (jinja_env.make_env)
_builtin_filters: dict[str, Any] = {}  # its own filters, as made
_custom_filters: dict[str, Any] = {}  # the config's `nunjucksFilters`, over those
_include_dirs: list[str] = []
_on_filters: list[Callable[[], None]] = []
_on_includes: list[Callable[[], None]] = []


def on_change(clear: Callable[[], None], *, includes: bool = False) -> None:
    """Call `clear` when the filters change, and with `includes` also when the include folders do."""
    _on_filters.append(clear)
    if includes:
        _on_includes.append(clear)


def environment() -> Any:
    """The Jinja2 environment, made (and Jinja2 imported) on first use."""
    global _env
    if _env is None:
        from evalrun.jinja_env import make_env

        env = make_env()  # jinja_env imports nothing of evalrun: no cycle
        _builtin_filters.update(env.filters)
        env.filters.update(_custom_filters)
        _env = env
        _set_loader()
    return _env


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
    for clear in _on_filters:
        clear()


def include_dirs() -> list[str]:
    """The folders `{% include %}` looks in, in order."""
    return [*_include_dirs, os.getcwd()]


def reset_include_dirs() -> None:
    """Forget the folders of a previously loaded config (`{% include %}` then looks in the current folder)."""
    if _include_dirs:
        _include_dirs.clear()
        _set_loader()


def add_include_dir(folder: str) -> None:
    """A loaded config's folder, where its templates' `{% include "partial.njk" %}` names are looked up (promptfoo's
    Nunjucks looks in the current folder, where promptfoo users run it from; that comes next)."""
    folder = os.path.abspath(folder)
    if folder not in _include_dirs:
        _include_dirs.append(folder)
        _set_loader()


def _set_loader() -> None:
    if _env is not None:
        from evalrun.jinja_env import set_search_path

        set_search_path(_env, include_dirs())
    for clear in _on_includes:  # what includes find, and the variables of the templates that include them
        clear()

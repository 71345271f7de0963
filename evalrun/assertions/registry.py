"""Assertion type name -> handler class.

Built-in handlers register with the @register decorator when their module is imported; third-party packages
add handlers through the entry-point group `evalrun.assertions` (each entry point names an Assertion subclass,
or a module whose import registers some). `load_all()` imports everything once.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from evalrun.assertions.base import Assertion

A = TypeVar("A", bound=type[Assertion])

_REGISTRY: dict[str, type[Assertion]] = {}
_PLUGINS: dict[str, str] = {}  # type name -> entry point value, for `evalrun list`
_LOADED = False

#: Modules holding the built-in handlers (imported by load_all()).
BUILTIN_MODULES = (
    "evalrun.assertions.text",
    "evalrun.assertions.structured",
    "evalrun.assertions.markup",
    "evalrun.assertions.sql",
    "evalrun.assertions.similarity",
    "evalrun.assertions.meta",
    "evalrun.assertions.code",
    "evalrun.assertions.sets",
    "evalrun.assertions.rag",
    "evalrun.assertions.rubric",
)


def register(name: str, *aliases: str) -> Callable[[A], A]:
    """Class decorator: register an Assertion subclass under `name` (and aliases)."""

    def deco(cls: A) -> A:
        cls.name = name
        for n in (name, *aliases):
            if n.startswith("not-"):
                raise ValueError(f"assertion names may not start with 'not-': {n}")
            _REGISTRY[n] = cls
        return cls

    return deco


def load_all() -> dict[str, type[Assertion]]:
    """Import built-in handler modules and entry-point plugins (once). Returns the registry."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for mod in BUILTIN_MODULES:
            try:
                importlib.import_module(mod)
            except ModuleNotFoundError as e:  # a family not written yet
                if e.name != mod:
                    raise
        _load_plugins()
    return _REGISTRY


def _load_plugins() -> None:
    from importlib.metadata import entry_points

    for ep in entry_points(group="evalrun.assertions"):
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001 - a broken plugin is reported, not a crash
            from evalrun.errors import ConfigError

            raise ConfigError(f"assertion plugin {ep.name!r} ({ep.value}) failed to load: "
                              f"{type(e).__name__}: {e}",
                              hint="fix or uninstall the package that provides it") from e
        if isinstance(obj, type) and issubclass(obj, Assertion) and ep.name not in _REGISTRY:
            register(ep.name)(obj)
            _PLUGINS[ep.name] = ep.value


def get(name: str) -> type[Assertion] | None:
    return load_all().get(name)


def names() -> list[str]:
    """All registered type names, sorted (without `not-` forms)."""
    return sorted(load_all())


def type_names(*, negated: bool = True) -> list[str]:
    """Every accepted `type:` string (with the `not-` forms): the config schema's type enum."""
    base = names()
    return base + [f"not-{n}" for n in base] if negated else base


def describe(name: str) -> dict[str, Any]:
    """What `evalrun list` shows for one type: summary, YAML keys and defaults (from the docstring), flags."""
    cls = load_all()[name]
    doc = inspect.cleandoc(cls.__doc__ or "")
    first, _, rest = doc.partition("\n")
    return {
        "type": name,
        "summary": cls.summary or first.strip(),
        "description": first.strip(),
        "details": rest.strip(),
        "graded": cls.graded,
        "default_threshold": cls.default_threshold,
        "requires_value": cls.requires_value,
        "takes_value": cls.takes_value,
        "alias_of": cls.name if cls.name != name else None,
        "plugin": _PLUGINS.get(name),
    }

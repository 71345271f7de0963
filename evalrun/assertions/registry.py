"""Assertion type name -> handler class.

Built-in handlers register with the @register decorator when their module is imported; third-party packages
add handlers through the entry-point group `evalrun.assertions` (each entry point names an Assertion subclass,
or a module whose import registers some). `load_all()` imports everything once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TypeVar

from evalrun.assertions.base import Assertion

A = TypeVar("A", bound=type[Assertion])

_REGISTRY: dict[str, type[Assertion]] = {}
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
        obj = ep.load()
        if isinstance(obj, type) and issubclass(obj, Assertion) and ep.name not in _REGISTRY:
            register(ep.name)(obj)


def get(name: str) -> type[Assertion] | None:
    return load_all().get(name)


def names() -> list[str]:
    """All registered type names, sorted (without `not-` forms)."""
    return sorted(load_all())

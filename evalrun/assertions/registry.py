"""Assertion type name -> handler class: built-ins register with @register (`get` imports only the module that
registers a name), plugins through the entry-point group `evalrun.assertions`."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from evalrun.assertions.base import Assertion
from evalrun.errors import ConfigError

A = TypeVar("A", bound=type[Assertion])


class DuplicateTypeError(ValueError):
    """Two handlers claim one type name (an internal error for built-ins; plugins get a ConfigError)."""


_REGISTRY: dict[str, type[Assertion]] = {}
_PLUGINS: dict[str, str] = {}  # type name -> entry point value, for `evalrun list`
_LOADED = False  # every built-in module imported (and the plugins loaded)
_PLUGINS_LOADED = False

#: Built-in type names by the module that registers them (imported by load_all()), so `get` imports one module,
#: not all of them (a test checks this against what importing the modules registers).
BUILTIN_TYPES: dict[str, tuple[str, ...]] = {
    "evalrun.assertions.text": ("contains", "contains-all", "contains-any", "equals", "icontains", "icontains-all",
        "icontains-any", "is-refusal", "regex", "starts-with", "word-count"),
    "evalrun.assertions.structured": ("contains-json", "is-json", "is-valid-openai-function-call",
        "is-valid-openai-tools-call"),
    "evalrun.assertions.markup": ("contains-html", "contains-xml", "is-html", "is-xml"),
    "evalrun.assertions.sql": ("contains-sql", "is-sql"),
    "evalrun.assertions.similarity": ("answer-relevance", "bleu", "completeness", "content-similarity",
        "keyword-coverage", "levenshtein", "rouge-n", "similar", "similar:cosine", "similar:dot", "similar:euclidean",
        "textual-difference", "tone-consistency"),
    "evalrun.assertions.code": ("javascript", "python", "ruby"),
    "evalrun.assertions.external": ("pi", "webhook"),
    "evalrun.assertions.engine": ("assert-set",),
    "evalrun.assertions.rag": ("context-faithfulness", "context-precision", "context-recall", "context-relevance",
        "faithfulness", "hallucination"),
    "evalrun.assertions.noise": ("noise-robustness", "noise-sensitivity"),
    "evalrun.assertions.response": ("cost", "finish-reason", "latency", "tool-call-accuracy",
        "tool-call-f1"),
    "evalrun.assertions.judges": ("answer-relevancy", "answer-similarity", "bias", "prompt-alignment", "toxicity"),
    "evalrun.assertions.model_graded": ("classifier", "factuality", "g-eval", "llm-rubric", "model-graded-closedqa",
        "model-graded-factuality", "select-best"),
    "evalrun.assertions.selection": ("max-score",),
    "evalrun.assertions.overlap": ("gleu", "meteor"),
    "evalrun.assertions.logprobs": ("perplexity", "perplexity-score"),
    "evalrun.assertions.conversation": ("conversation-relevance",),
    "evalrun.assertions.safety": ("guardrails", "moderation"),
    "evalrun.assertions.traces": ("trace-error-spans", "trace-span-count", "trace-span-duration"),
}
BUILTIN_MODULES = tuple(BUILTIN_TYPES)
_MODULE_OF = {name: module for module, names in BUILTIN_TYPES.items() for name in names}


def _source(cls: type[Assertion]) -> str:
    """Where a handler comes from, for messages: `module:Class` (or the plugin's entry point)."""
    return f"{cls.__module__}:{cls.__qualname__}"


def register(name: str, *aliases: str) -> Callable[[A], A]:
    """Class decorator: register an Assertion subclass under `name` (and aliases)."""

    def deco(cls: A) -> A:
        for n in (name, *aliases):
            if n.startswith("not-"):
                raise ValueError(f"assertion names may not start with 'not-': {n}")
            taken = _REGISTRY.get(n)
            if taken is not None and _source(taken) != _source(cls):
                raise DuplicateTypeError(f"assertion type {n!r} is registered twice: by {_source(taken)} and by "
                                         f"{_source(cls)}")
        cls.name = name
        for n in (name, *aliases):
            _REGISTRY[n] = cls
        return cls
    return deco


def load_all() -> dict[str, type[Assertion]]:
    """Import built-in handler modules and entry-point plugins (once). Returns the registry."""
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for mod in BUILTIN_MODULES:
            importlib.import_module(mod)
        _ensure_plugins()
    return _REGISTRY


def _ensure_plugins() -> None:
    """Load the entry-point plugins (once). With plugins installed, every built-in module is imported first (as
    `load_all` does), so a plugin reusing a built-in's name is reported whichever types a suite uses."""
    global _PLUGINS_LOADED
    if not _PLUGINS_LOADED:
        _PLUGINS_LOADED = True
        _load_plugins()


def _load_plugins() -> None:
    from importlib.metadata import entry_points
    eps = list(entry_points(group="evalrun.assertions"))
    if eps:
        load_all()  # a no-op when load_all is what called us
    for ep in eps:
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001 - a broken plugin is reported, not a crash
            raise ConfigError(f"assertion plugin {ep.name!r} ({ep.value}) failed to load: "
                              f"{type(e).__name__}: {e}",
                              hint="fix or uninstall the package that provides it") from e
        if not (isinstance(obj, type) and issubclass(obj, Assertion)):
            continue  # a module: importing it registered its handlers (with @register)
        taken = _REGISTRY.get(ep.name)
        if taken is not None and taken is not obj:
            raise ConfigError(f"assertion type {ep.name!r} is defined twice: by plugin {ep.value} "
                              f"({ep.dist.name if ep.dist else 'unknown package'}) and by "
                              f"{_PLUGINS.get(ep.name) or _source(taken)}",
                              hint="uninstall one of the two packages, or rename the plugin's entry point")
        register(ep.name)(obj)
        _PLUGINS[ep.name] = ep.value


def get(name: str) -> type[Assertion] | None:
    """The handler class of a type name; imports only the module that registers it (plugins are loaded first)."""
    cls = _REGISTRY.get(name)
    if cls is not None and _PLUGINS_LOADED:
        return cls
    _ensure_plugins()
    module = _MODULE_OF.get(name)
    if module is not None and name not in _REGISTRY:
        importlib.import_module(module)
    return _REGISTRY.get(name) or load_all().get(name)


def names() -> list[str]:
    """All registered type names, sorted (without `not-` forms)."""
    return sorted(load_all())


def describe(name: str) -> dict[str, Any]:
    """What `evalrun list` shows for one type: summary, YAML keys and defaults (from the docstring), flags."""
    cls = load_all()[name]
    first, _, rest = inspect.cleandoc(cls.__doc__ or "").partition("\n\n")
    first = " ".join(first.split())
    return {
        "type": name,
        "summary": cls.summary or first,
        "description": first,
        "details": " ".join(p for p in (rest.strip(), cls.common_keys()) if p),
        "graded": cls.graded,
        "default_threshold": cls.default_threshold,
        "requires_value": cls.requires_value,
        "takes_value": cls.takes_value,
        "alias_of": cls.name if cls.name != name else None,
        "plugin": _PLUGINS.get(name),
    }

"""What a test runs: the prompts and providers it (and each provider) selects, by promptfoo's matching rules, and
how many var combinations it has (expanded by expand.py)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from evalrun.types import PromptSpec, ProviderSpec, TestSpec


def _match(pattern: str, names: Sequence[str | None]) -> bool:
    if pattern.endswith("*"):
        return any(n is not None and n.startswith(pattern[:-1]) for n in names)
    return pattern in names


def prompt_matches(ref: str, prompt: PromptSpec) -> bool:
    """promptfoo's doesPromptRefMatch: label or id, equal, by `*` prefix, or as the `REF:` group of a label."""
    names = (prompt.label, prompt.id)
    if _match(ref, names) or ref == prompt.group:
        return True
    group = ref + ":"
    return any(n.startswith(group) for n in names)


def prompt_allowed(filters: Sequence[str] | None, prompt: PromptSpec) -> bool:
    return filters is None or any(prompt_matches(f, prompt) for f in filters)


_FILE = "file://"


def _norm_ref(ref: str) -> str:
    return os.path.normpath(ref[len(_FILE):]) if ref.startswith(_FILE) else ref


def _provider_match(pattern: str, provider: ProviderSpec) -> bool:
    written = provider.written_id
    if _match(pattern, (provider.label, provider.id, written)):
        return True
    if not pattern.startswith(_FILE) or pattern.endswith("*"):
        return False
    want = _norm_ref(pattern)
    return want in (_norm_ref(provider.id), _norm_ref(written) if written else None)


def provider_allowed(filters: Sequence[str] | None, provider: ProviderSpec) -> bool:
    return filters is None or any(_provider_match(f, provider) for f in filters)


def unknown_prompt(filters: Sequence[str] | None, prompts: Sequence[PromptSpec]) -> str | None:
    """The first filter entry that matches no prompt."""
    return next((f for f in filters or () if not any(prompt_matches(f, p) for p in prompts)), None)


def unknown_provider(filters: Sequence[str] | None, providers: Sequence[ProviderSpec]) -> str | None:
    return next((f for f in filters or () if not any(_provider_match(f, p) for p in providers)), None)


def pairs(test: TestSpec, providers: Sequence[ProviderSpec],
          prompts: Sequence[PromptSpec]) -> list[tuple[ProviderSpec, PromptSpec]]:
    """(provider, prompt) pairs the test runs, providers outer, prompts inner, filters applied."""
    return [(prov, prompt) for prov in providers if provider_allowed(test.providers, prov) for prompt in prompts
            if prompt_allowed(prov.prompts, prompt) and prompt_allowed(test.prompts, prompt)]


def var_values(value: Any, expand: bool = True) -> list[Any]:
    """The values one var takes: a list of strings expands (promptfoo: first element a string)."""
    if expand and isinstance(value, list) and value and isinstance(value[0], str):
        return value
    return [value]


def count_combinations(vars: dict[str, Any], expand: bool = True) -> int:
    """Number of var combinations: the product of the lengths of the lists that expand (see var_values)."""
    n = 1
    if expand:
        for v in vars.values():  # a plain loop (no generator): this runs once per test
            if isinstance(v, list) and v and isinstance(v[0], str):
                n *= len(v)
    return n

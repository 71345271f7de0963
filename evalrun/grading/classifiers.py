"""Classification providers for promptfoo's `classifier` assertion: text -> {class label: score}, chosen in
promptfoo's order (docs/metrics.md): Hugging Face text/token classification (or a server speaking its API) or a
Python file's `call_classification_api`. No offline default: without one the assertion is an error, never a pass."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalrun.errors import ConfigError, GraderError
from evalrun.types import AssertionSpec, TestSpec

ENV_VAR = "EVALRUN_CLASSIFIER"
HF_URL = "https://router.huggingface.co/hf-inference/models/"
HF_KINDS = ("text-classification", "token-classification")
HF_KEYS = frozenset({"apiKey", "apiEndpoint"})
HF_TOKEN_KEYS = HF_KEYS | {"aggregation_strategy", "use_cache", "wait_for_model"}
TIMEOUT_S = 300.0  # promptfoo's REQUEST_TIMEOUT_MS
HINT = ("give a classification provider: `provider: huggingface:text-classification:MODEL` on the assertion "
        "(`config: {apiEndpoint: URL}` for a local server), `{classification: ...}` in the test's "
        "options.provider, a Python file with call_classification_api (`provider: file://classify.py`), "
        "or set EVALRUN_CLASSIFIER")

Scores = dict[str, float]


@dataclass(frozen=True)
class ClassifierSpec:
    """A configured classification provider: its id, config and the folder relative paths resolve against."""

    id: str
    config: dict[str, Any] = field(default_factory=dict)
    base_dir: str = "."


def candidate(value: Any, base_dir: str, *, own: bool) -> ClassifierSpec | None:
    """The classifier named by one provider setting; None when it names none (look further). `own`: the
    assertion's own provider, where anything but a classifier is an error."""
    if value is None or value == "":
        return None
    if isinstance(value, Mapping) and "id" not in value:
        if "classification" not in value:
            if own:
                raise ConfigError("the provider map has no `classification` entry", hint=HINT)
            return None
        value, own = value["classification"], True
    if isinstance(value, str):
        pid, config = value.strip(), {}
    elif isinstance(value, Mapping) and isinstance(value.get("id"), str):
        raw = value.get("config") or {}
        if not isinstance(raw, Mapping):
            raise ConfigError("a classification provider's `config` must be a mapping", hint=HINT)
        pid, config = str(value["id"]).strip(), dict(raw)
    else:
        raise ConfigError(f"a classification provider must be an id or an object with `id`, not {value!r}",
                          hint=HINT)
    parts = pid.split(":")
    is_hf = len(parts) >= 3 and parts[0] in ("huggingface", "hf") and parts[1] in HF_KINDS
    if not is_hf and not (pid.startswith(("file://", "python:")) and ".py" in pid):
        if own:
            raise ConfigError(f"{pid!r} is not a classification provider", hint=HINT)
        return None
    return ClassifierSpec(pid, config, base_dir)


def classifier_spec(spec: AssertionSpec, test: TestSpec | None, base_dir: str) -> ClassifierSpec | None:
    """The classifier of a `classifier` assertion (promptfoo's order), or None when none is configured."""
    found = candidate(spec.provider, base_dir, own=True)
    if found is None and test is not None:
        found = candidate(test.options.get("provider"), base_dir, own=False)
    if found is None:
        found = candidate(os.environ.get(ENV_VAR), os.getcwd(), own=True)
    if found is not None:
        check_config(found)
    return found


def check_config(c: ClassifierSpec) -> None:
    """Unknown config keys of a Hugging Face classifier are a ConfigError (a typo would be silently ignored)."""
    if c.id.startswith(("file://", "python:")):
        return
    allowed = HF_TOKEN_KEYS if ":token-classification:" in c.id else HF_KEYS
    unknown = sorted(set(c.config) - allowed)
    if unknown:
        raise ConfigError(f"unknown config key(s) for {c.id}: {', '.join(unknown)}",
                          hint=f"allowed: {', '.join(sorted(allowed))}")


def load_python(c: ClassifierSpec, *, loc: Any = None, key: str = "provider") -> Callable[..., Any]:
    """The user's classification function (ConfigError when the file or function is missing)."""
    from evalrun.providers import split_target
    from evalrun.pyexpr import load_function

    target = c.id.split("://", 1)[1] if c.id.startswith("file://") else c.id[len("python:"):]
    path, fn = split_target(target.strip())
    if fn == "call_api" and not target.strip().endswith(":call_api"):
        fn = "call_classification_api"
    full = path if os.path.isabs(path) else os.path.join(c.base_dir, path)
    return load_function(full, fn, loc=loc, key=key)


async def classify(c: ClassifierSpec, text: str) -> Scores:
    """Class scores of `text` from the classifier `c` (GraderError when it fails or replies malformed)."""
    if c.id.startswith(("file://", "python:")):
        return await _call_python(c, text)
    return await _call_hf(c, text)


async def _call_python(c: ClassifierSpec, text: str) -> Scores:
    fn = load_python(c)
    options = {"config": c.config, "id": c.id}
    try:
        reply = await fn(text, options) if inspect.iscoroutinefunction(fn) else await asyncio.to_thread(
            fn, text, options)
    except Exception as e:  # noqa: BLE001 - the user's code failing is this assertion's error
        raise GraderError(f"{c.id}: {type(e).__name__}: {e}") from None
    if isinstance(reply, Mapping) and reply.get("error"):
        raise GraderError(f"{c.id}: {reply['error']}")
    if not isinstance(reply, Mapping) or not isinstance(reply.get("classification"), Mapping):
        raise GraderError(f"{c.id}: call_classification_api must return {{'classification': {{label: score}}}}, "
                          f"got {reply!r:.200}")
    return _scores(reply["classification"], c.id)


def _scores(raw: Mapping[Any, Any], who: str) -> Scores:
    out: Scores = {}
    for label, score in raw.items():
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise GraderError(f"{who}: the score of class {label!r} is not a number: {score!r}")
        out[str(label)] = float(score)
    return out


async def _call_hf(c: ClassifierSpec, text: str) -> Scores:
    import aiohttp  # lazily: validate and runs without a classifier never import it

    from evalrun.providers.http_ import proxy_for

    model = c.id.split(":", 2)[2]
    token_kind = ":token-classification:" in c.id
    url = str(c.config.get("apiEndpoint") or HF_URL + model)
    body: dict[str, Any] = {"inputs": text, "parameters": {}}
    if token_kind:
        body["parameters"] = {"aggregation_strategy": c.config.get("aggregation_strategy", "simple")}
        body["options"] = {"use_cache": c.config.get("use_cache", True),
                           "wait_for_model": c.config.get("wait_for_model", False)}
    headers = {"Content-Type": "application/json"}
    key = c.config.get("apiKey") or os.environ.get("HF_TOKEN") or os.environ.get("HF_API_TOKEN")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        async with aiohttp.ClientSession(trust_env=False) as session, \
                session.post(url, data=json.dumps(body).encode(), headers=headers, proxy=proxy_for(url),
                             timeout=aiohttp.ClientTimeout(total=TIMEOUT_S)) as resp:
            status, raw = resp.status, await resp.read()
    except (asyncio.TimeoutError, aiohttp.ClientError) as e:
        raise GraderError(f"{c.id}: cannot reach {url}: {type(e).__name__}: {e}") from None
    if status >= 400:
        raise GraderError(f"{c.id}: HTTP {status} from {url}: {raw[:300].decode('utf-8', 'replace')}")
    try:
        data = json.loads(raw)
    except ValueError:
        raise GraderError(f"{c.id}: the reply is not JSON: {raw[:200]!r}") from None
    if isinstance(data, Mapping) and data.get("error"):
        raise GraderError(f"{c.id}: API call error: {data['error']}")
    return _token_scores(data, c.id) if token_kind else _text_scores(data, c.id)


def _text_scores(data: Any, who: str) -> Scores:
    items = data[0] if isinstance(data, list) and data and isinstance(data[0], list) else data
    if not isinstance(items, list) or not all(isinstance(i, Mapping) and "label" in i for i in items):
        raise GraderError(f"{who}: malformed reply (expected [[{{label, score}}, ...]]): {data!r:.200}")
    return _scores({i["label"]: i.get("score") for i in items}, who)


def _token_scores(data: Any, who: str) -> Scores:
    if not isinstance(data, list) or not all(isinstance(i, Mapping) and "entity_group" in i for i in data):
        raise GraderError(f"{who}: malformed reply (expected [{{entity_group, score}}, ...]): {data!r:.200}")
    best: dict[str, Any] = {}
    for item in data:
        group, score = str(item["entity_group"]), item.get("score")
        if group not in best or (isinstance(score, (int, float)) and score > best[group]):
            best[group] = score
    return _scores(best, who)


def check_suite(tests: Iterable[TestSpec]) -> None:
    """`validate`: every classifier assertion has a classification provider (well-formed; a Python file with
    its function); a ConfigError at the assertion otherwise. Nothing is called."""
    from evalrun.types import every_assertion

    for test in tests:
        for spec in (s for s in every_assertion(test.asserts) if s.type == "classifier"):
            key = f"{spec.key_path}.provider" if spec.key_path else "provider"
            base = getattr(spec.handler, "base_dir", ".")
            try:
                found = classifier_spec(spec, test, base)
            except ConfigError as e:
                raise ConfigError.at(spec.loc, e.message, key=key, hint=e.hint) from None
            if found is None:
                raise ConfigError.at(spec.loc, "classifier needs a classification provider and none is "
                                     "configured", key=key, hint=HINT)
            if found.id.startswith(("file://", "python:")):
                load_python(found, loc=spec.loc, key=key)


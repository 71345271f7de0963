"""Where graded RAG assertions get their context chunks and query: `contextTransform`, else `vars.context`
(noise-sensitivity: labelled `contextChunks` first); the query is `vars.query`.

A bad static chunk list is a ConfigError at load time; one from a template or a contextTransform makes the
assertion an ERROR."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalrun.errors import AssertionRuntimeError

if TYPE_CHECKING:
    from evalrun.assertions.base import Assertion, AssertionContext
    from evalrun.types import AssertionSpec
    from evalrun.usercode import UserCode


@dataclass(frozen=True)
class Chunk:
    """One context chunk; `relevant` is None when unlabelled."""

    text: str
    relevant: bool | None = None


def parse_chunks(value: Any, what: str) -> list[Chunk]:
    """Chunks from a string (one chunk), or a list of strings / {text, relevant?} objects. ValueError if bad."""
    if isinstance(value, str):
        return [Chunk(value)]
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{what} must be a string or a list of chunks, not {type(value).__name__}")
    from evalrun.assertions.base import ItemError

    chunks = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            chunks.append(Chunk(item))
            continue
        if not isinstance(item, Mapping):
            raise ItemError(f"{what}[{i}] must be a string or an object with `text`, not {type(item).__name__}",
                            f"[{i}]")
        text = item.get("text")
        if not isinstance(text, str):
            raise ItemError(f"{what}[{i}] needs a string `text`", f"[{i}].text" if "text" in item else f"[{i}]")
        relevant = item.get("relevant")
        if relevant is not None and not isinstance(relevant, bool):
            raise ItemError(f"{what}[{i}].relevant must be true or false, not {relevant!r}", f"[{i}].relevant")
        unknown = set(item) - {"text", "relevant"}
        if unknown:
            first = sorted(map(str, unknown))[0]
            raise ItemError(f"{what}[{i}] has unknown key(s) {', '.join(sorted(map(str, unknown)))} "
                            "(allowed: text, relevant)", f"[{i}].{first}")
        chunks.append(Chunk(text, relevant))
    return chunks


def check_chunks(handler: Assertion, value: Any, key: str) -> None:
    """Load-time check of a chunk list that holds no template (ConfigError naming `key`)."""
    from evalrun.assertions.base import is_template

    if value is None or is_template(value):
        return
    try:
        parse_chunks(value, key)
    except ValueError as e:  # an ItemError names the item: the error is at its line (config/asserts.py)
        raise handler.error(str(e), key=key + getattr(e, "path", ""),
                            hint="give a list of {text, relevant} objects, a list of strings, or one string") from None


def missing_context(spec: AssertionSpec, var_names: Collection[str]) -> str | None:
    """Why `spec` can never have context in a test whose vars (its own and defaultTest's, after --var) are
    `var_names`, or None when it can, might (a templated config), or needs none. Call it only where no code can
    add vars at run time (transformVars, a stored output)."""
    handler = spec.handler
    needs = getattr(handler, "needs_context", None)
    if spec.context_transform or needs is None or not needs():
        return None
    var_keys: tuple[str, ...] = getattr(handler, "context_vars", ("context",))
    config_keys: tuple[str, ...] = getattr(handler, "context_config", ())
    if any(v in var_names for v in var_keys) or any(k in spec.config for k in config_keys):
        return None
    sources = [f"`vars.{v}`" for v in var_keys] + [f"`config.{k}`" for k in config_keys] + ["`contextTransform`"]
    return f"{spec.full_type} has no context: no {', no '.join(sources)} in this test or defaultTest"


CONTEXT_HINT = ("set `vars.context` (a string or a list of chunks) in the test or defaultTest, or read what the "
                "provider retrieved with `contextTransform: \"context['metadata']['retrieved']\"` (docs/metrics.md)")


def compile_context_transform(handler: Assertion) -> UserCode | None:
    """Compile the spec's `contextTransform` (ConfigError if it does not compile)."""
    src = handler.spec.context_transform
    if not src:
        return None
    from evalrun.usercode import compile_code  # Python, or JavaScript as promptfoo writes it

    return compile_code(src, ("output", "context"), loc=handler.spec.loc,
                             key=handler.key_path("contextTransform"), base_dir=handler.base_dir,
                             default_fn="get_context")


async def _raw_context(ctx: AssertionContext, transform: UserCode | None) -> tuple[Any, str] | None:
    if transform is not None:
        return await transform.call(ctx.output, ctx.as_dict()), "contextTransform result"
    if "context" in ctx.vars:
        return ctx.vars["context"], "vars.context"
    return None


def _parse_runtime(value: Any, where: str) -> list[Chunk]:
    try:
        return parse_chunks(value, where)
    except ValueError as e:
        raise AssertionRuntimeError(str(e)) from None


async def context_chunks(ctx: AssertionContext, transform: UserCode | None) -> list[Chunk]:
    """The context as chunks: contextTransform's result, else vars.context (AssertionRuntimeError if absent)."""
    raw = await _raw_context(ctx, transform)
    if raw is None:
        raise AssertionRuntimeError("no context: set `vars.context` (a string or a list of chunks) "
                                    "or `contextTransform` on the assertion")
    return _parse_runtime(*raw)


async def context_texts(ctx: AssertionContext, transform: UserCode | None) -> list[str]:
    """The context chunks' texts (required)."""
    return [c.text for c in await context_chunks(ctx, transform)]


async def labelled_chunks(ctx: AssertionContext, transform: UserCode | None) -> list[Chunk]:
    """noise-sensitivity's chunks (see the module docstring); may be empty."""
    labelled = ctx.config.get("contextChunks")
    where = "config.contextChunks"
    if labelled is None and "contextChunks" in ctx.vars:
        labelled, where = ctx.vars["contextChunks"], "vars.contextChunks"
    if labelled is not None:
        chunks = _parse_runtime(labelled, where)
    else:
        raw = await _raw_context(ctx, transform)
        chunks = _parse_runtime(*raw) if raw is not None else []
        if raw is not None and isinstance(raw[0], str):
            chunks = [Chunk(raw[0], True)]  # a single context string is the relevant context
    noise = ctx.config.get("noiseContext")
    if noise is not None:
        if not isinstance(noise, str):
            raise AssertionRuntimeError(f"config.noiseContext must be a string, not {type(noise).__name__}")
        chunks = [*chunks, Chunk(noise, False)]
    return chunks


def query_of(ctx: AssertionContext, *, required: bool) -> str | None:
    """vars.query as text (AssertionRuntimeError when required and missing)."""
    q = ctx.vars.get("query")
    if q is None or (isinstance(q, str) and not q.strip()):
        if required:
            raise AssertionRuntimeError("no query: set `vars.query` to the question the output answers")
        return None
    return q if isinstance(q, str) else str(q)

"""One case: its vars prepared as promptfoo does (`_conversation` included), the prompt rendered, the provider
called, transforms and assertions run; any failure is an ERROR for that case only."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from evalrun import templating
from evalrun.assertions import engine
from evalrun.assertions.base import AssertionContext
from evalrun.assertions.engine import output_text
from evalrun.errors import EvalrunError, ProviderError, one_line
from evalrun.providers.base import CallContext, Provider
from evalrun.pyexpr import user_exit_message
from evalrun.types import (
    AssertionResult,
    AssertionSpec,
    Case,
    CaseResult,
    Output,
    PromptSpec,
    ProviderSpec,
    TestSpec,
    TokenUsage,
)

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_CODE_EXTS = (".py", ".js", ".cjs", ".mjs", ".ts", ".mts", ".cts")  # jsnode.JS_EXTS and .py


def _code_ref(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, str) or not value.startswith("file://"):
        return None
    path = value[len("file://"):]
    head, sep, tail = path.rpartition(":")
    if sep and head.lower().endswith(_CODE_EXTS) and "/" not in tail:
        path = head
    return (path, value) if path.lower().endswith(_CODE_EXTS) else None


def prompt_text(prompt: str | list[dict[str, Any]]) -> str:
    """A prompt as one string (a chat prompt as its compact JSON), as code and results see it."""
    return prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False)


async def run_code(cache: dict[Any, Any], src: str, params: tuple[str, ...], args: tuple[Any, ...], *, case: Case,
                   key: str, base_dir: str, default_fn: str, what: str = "") -> Any:
    """User code (Python or JavaScript: evalrun.pyexpr) compiled once per run and place, called with `args`; its
    failure ends the case (`{what or key} failed: ...`)."""
    fn = cache.get((key, src))
    if fn is None:
        from evalrun.pyexpr import compile_code

        fn = cache[(key, src)] = compile_code(src, params, loc=case.test.loc, key=key, base_dir=base_dir,
                                              default_fn=default_fn)
    try:
        return await fn.call(*args)
    except EvalrunError as e:
        raise CaseFailure(f"{what or key} failed: {e}") from None


async def _compute_var(name: str, path_ref: tuple[str, str], case: Case, vars: dict[str, Any], cache: dict[Any, Any],
                       base_dir: str) -> Any:
    path, ref = path_ref
    result = await run_code(cache, ref, ("var_name", "prompt", "other_vars"), (name, prompt_text(case.prompt.raw),
                            dict(vars)), case=case, key=f"vars.{name}", base_dir=base_dir, default_fn="get_var",
                            what=f"var {name!r} ({ref})")
    if isinstance(result, dict):
        if result.get("error"):
            raise CaseFailure(f"var {name!r} ({ref}) returned an error: {result['error']}")
        if "output" in result and result["output"] not in (None, ""):
            out = result["output"]
            return out.strip() if isinstance(out, str) and path.lower().endswith(".py") else out
    raise CaseFailure(f"var {name!r}: {ref} must return {{'output': ...}}, got {result!r:.200}")


def needs_preparing(case: Case) -> bool:
    """Whether prepare_vars could change the vars (checked without a coroutine)."""
    return bool(case.test.options.get("transformVars")) or any(
        isinstance(v, str) and (v.startswith("file://") or v.endswith("\n") or "{{" in v) for v in case.vars.values())


async def prepare_vars(case: Case, cache: dict[Any, Any], base_dir: str) -> dict[str, Any]:
    """promptfoo's renderPrompt, in order: `options.transformVars`' mapping merged in; a `file://x.py` / `.js` var
    computed by its file (`get_var(var_name, prompt, other_vars)` -> `{"output": ...}`; `{"error": ...}` ends the
    case, a Python string is trimmed); one final newline dropped from every string var; `{{ name }}` inside a
    string var replaced by that var (up to 5 rounds; var values are never rendered)."""
    vars = case.vars
    transform = case.test.options.get("transformVars")
    if isinstance(transform, str) and transform.strip():
        extra = await run_code(cache, transform, ("vars", "context"), (dict(vars), {"prompt": {}, "uuid": case.id}),
                               case=case, key="options.transformVars", base_dir=base_dir, default_fn="get_transform")
        if not isinstance(extra, dict):
            raise CaseFailure(f"options.transformVars must return a mapping of vars, got {type(extra).__name__}")
        vars = {**vars, **extra}
    computed = {}
    for name, value in vars.items():
        ref = _code_ref(value)
        if ref is not None:
            computed[name] = await _compute_var(name, ref, case, vars, cache, base_dir)
    if computed:
        vars = {**vars, **computed}
    if any(isinstance(v, str) and (v.endswith("\n") or "{{" in v) for v in vars.values()):
        vars = {k: v[:-1] if isinstance(v, str) and v.endswith("\n") else v for k, v in vars.items()}
        for _ in range(5):  # promptfoo's resolveVariables
            changed = False
            for k, v in vars.items():
                m = _PLACEHOLDER.search(v) if isinstance(v, str) else None
                if m and m.group(1) in vars and m.group(1) != k:
                    other = vars[m.group(1)]
                    vars[k] = v.replace(m.group(0), other if isinstance(other, str) else str(other), 1)
                    changed = True
            if not changed:
                break
    return vars


NAME = "_conversation"


def uses_conversation(prompt: PromptSpec) -> bool:
    """Whether the prompt's template reads `_conversation` (a prompt function cannot: promptfoo parses templates)."""
    if prompt.function:
        return False
    raw = prompt.raw
    sources = [raw] if isinstance(raw, str) else [m.get("content") for m in raw]
    from evalrun import templating

    return any(isinstance(s, str) and NAME in s and NAME in templating.variables_of(s) for s in sources)


class Conversations:
    """The threads of one run (one provider, one prompt and the test's `metadata.conversationId`), each turn
    `{prompt, input, output, metadata}` (`input`: the last message's content, else the prompt; `output`: "" when
    the call failed). `options.disableConversationVar` or PROMPTFOO_DISABLE_CONVERSATION_VAR leave it empty; a run
    whose prompts read it is serial (no locking needed)."""

    def __init__(self) -> None:
        self._threads: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self._uses: dict[int, bool] = {}

    def applies(self, case: Case) -> bool:
        prompt = case.prompt
        uses = self._uses.get(id(prompt))
        if uses is None:
            uses = self._uses[id(prompt)] = uses_conversation(prompt)
        return uses and not case.test.options.get("disableConversationVar") and \
            os.environ.get("PROMPTFOO_DISABLE_CONVERSATION_VAR", "").strip().lower() not in ("1", "true", "yes")

    @staticmethod
    def _key(case: Case) -> tuple[Any, ...]:
        return case.provider.name, case.prompt.id, case.prompt.label, case.test.metadata.get("conversationId")

    def history(self, case: Case) -> list[dict[str, Any]]:
        return list(self._threads.get(self._key(case), ()))

    def record(self, case: Case, rendered: Any, output: Any, metadata: dict[str, Any] | None) -> None:
        if isinstance(rendered, str):  # promptfoo keeps a rendered prompt that is JSON as parsed JSON
            with contextlib.suppress(ValueError):
                rendered = json.loads(rendered)
        last = rendered[-1] if isinstance(rendered, list) and rendered else None
        content = last.get("content") if isinstance(last, dict) else last
        self._threads.setdefault(self._key(case), []).append({
            "prompt": rendered, "input": content or rendered, "output": output or "", "metadata": metadata or {}})


@dataclass
class CaseEnv:
    providers: dict[int, Provider]  # by id(ProviderSpec)
    build_provider: Callable[[ProviderSpec], Provider]  # for a test's own `provider:` (kept in test_providers)
    resolve_grader: Callable[[AssertionSpec, TestSpec], Any]
    resolve_embedder: Callable[[AssertionSpec, TestSpec], Any]
    use_cache: bool = True
    delay_s: float = 0.0
    base_dir: str = "."
    lenient_templates: bool = False  # Suite.undefined_renders_empty
    transforms: dict[tuple[str, str], Any] = field(default_factory=dict)  # compiled user code
    registers: dict[str, Any] = field(default_factory=dict)  # `storeOutputAs` outputs (the run is then serial)
    conversations: Conversations = field(default_factory=Conversations)  # `_conversation` threads
    test_providers: dict[Any, Provider] = field(default_factory=dict)

    def test_provider(self, spec: ProviderSpec) -> Provider:
        """A test's own provider, built once per distinct spec."""
        key = (spec.id, spec.label, json.dumps(spec.config, sort_keys=True, default=str),
               tuple(sorted(spec.env.items())))
        if key not in self.test_providers:
            self.test_providers[key] = self.build_provider(spec)
        return self.test_providers[key]


class CaseFailure(Exception):
    """Ends a case as ERROR with this message."""


def _where(case: Case) -> str:
    test = case.test.key_path or f"tests[{case.test.index}]"
    return f"{test} (prompt {case.prompt.label!r})"


async def _apply_transform(env: CaseEnv, case: Case, src: str, key: str, output: Any, prompt: str) -> Any:
    """A transform's result as it is (an object stays an object, as in promptfoo)."""
    context = {"vars": case.vars, "prompt": prompt, "test": {"description": case.test.description}}
    return await run_code(env.transforms, src, ("output", "context"), (output, context), case=case, key=key,
                          base_dir=env.base_dir, default_fn="get_transform")


async def run_case(case: Case, env: CaseEnv) -> CaseResult:
    """Run one case to a CaseResult (never raises, except cancellation)."""
    prompt_str = ""
    output: Output | None = None
    try:
        if env.registers:  # earlier tests' stored outputs (storeOutputAs); the test's own vars win
            case = replace(case, vars={**env.registers, **case.vars})
        if needs_preparing(case):
            vars = await prepare_vars(case, env.transforms, env.base_dir)  # CaseFailure ends the case
            if vars is not case.vars:
                case = replace(case, vars=vars)
        prompt_config = case.prompt.config
        thread = env.conversations if env.conversations.applies(case) else None
        render_vars = case.vars if thread is None else {**case.vars, "_conversation": thread.history(case)}
        if case.prompt.function:  # a prompt function (promptfoo): it builds the prompt from the vars
            from evalrun.config.prompts import build_prompt

            try:
                prompt, fn_config = await build_prompt(case.prompt.function, render_vars,
                                                       {"id": case.provider.id, "label": case.provider.name})
            except EvalrunError as e:
                raise CaseFailure(f"prompt {case.prompt.label!r}: {e}") from None
            prompt_config = {**prompt_config, **fn_config}
        else:
            try:
                prompt = templating.render_prompt(case.prompt.raw, render_vars, lenient=env.lenient_templates)
            except Exception as e:
                raise CaseFailure(str(templating.describe_render_error(e, where=_where(case)))) from None
        prompt_str = prompt_text(prompt)
        own = case.test.provider  # a test's own provider, else its column's
        provider = env.providers[id(case.provider)] if own is None else env.test_provider(own)
        ctx = CallContext(case.vars, case.prompt.label, case.test.description, env.use_cache, prompt_config)
        try:
            output = await provider.call(prompt, ctx)
        except ProviderError as e:
            raise CaseFailure(f"provider {case.provider.name}: {e}") from None
        except Exception as e:  # a provider's unexpected failure is still that case's ERROR only
            raise CaseFailure(f"provider {case.provider.name} raised {type(e).__name__}: {e}") from None
        except BaseException as e:  # sys.exit() in a provider ends this case; cancellation/Ctrl-C propagate
            exit_msg = user_exit_message(e)
            if exit_msg is None:
                raise
            raise CaseFailure(f"provider {case.provider.name}: {exit_msg}") from None
        finally:
            if thread is not None:  # this turn joins the thread, answered or not (promptfoo)
                said = None if output is None else output.text if output.value is None else output.value
                thread.record(case, prompt, said, output.metadata if output is not None else None)
            delay = max(env.delay_s, case.provider.delay_ms / 1000.0)
            if delay:
                await asyncio.sleep(delay)
        value: Any = output.text if output.value is None else output.value
        if case.provider.transform:
            value = await _apply_transform(env, case, case.provider.transform, "provider.transform", value,
                                           prompt_str)
        test_transform = case.test.options.get("transform")
        if isinstance(test_transform, str) and test_transform.strip():
            value = await _apply_transform(env, case, test_transform, "options.transform", value, prompt_str)
        text = output_text(value)  # an object as compact JSON, as promptfoo's JSON.stringify
        native = None if isinstance(value, str) else value
        store = case.test.options.get("storeOutputAs")
        if isinstance(store, str) and store:
            env.registers[store] = text
        results = await _AssertRun(case, env, text, output, prompt_str, native).all()
        status, pass_, score, reason = engine.aggregate(case.test, results)
        error = (reason or "an assertion could not be evaluated") if status == "error" else None
        return _result(case, prompt_str, text, output, status, bool(pass_), score, reason, error, results)
    except (CaseFailure, EvalrunError) as e:
        return error_result(case, str(e), prompt_str, output)
    except BaseException as e:  # user code's sys.exit() etc. that got this far: still this case's ERROR only
        exit_msg = user_exit_message(e)
        if exit_msg is None:
            raise
        return error_result(case, exit_msg, prompt_str, output)


def error_result(case: Case, message: str, prompt: str = "", output: Output | None = None) -> CaseResult:
    """An ERROR result: the message's first line as reason and error, the whole of it in error_detail."""
    short = one_line(message)
    return _result(case, prompt, output.text if output else None, output, "error", False, None, short, short, (),
                   None if short == message else message)


def _rendered(spec: AssertionSpec, case: Case, lenient: bool) -> tuple[Any, dict[str, Any]]:
    """The spec's value and config rendered with the case's vars (a raw_value handler's as written)."""
    value, config = spec.value, spec.config
    if getattr(spec.handler, "raw_value", False):
        return value, config
    try:
        if type(value) is not str or "{{" in value or "{%" in value:  # templating.has_template, inlined
            value = templating.render_value(value, case.vars, lenient=lenient)
        return value, templating.render_value(config, case.vars, lenient=lenient) if config else config
    except Exception as e:
        raise CaseFailure(str(templating.describe_render_error(e, where=spec.key_path or _where(case)))) from None


class _AssertRun:
    """The assertions of one case; their AssertionContexts call back into this object."""

    def __init__(self, case: Case, env: CaseEnv, text: str, output: Output, prompt: str, native: Any) -> None:
        self.case, self.env, self.text, self.output, self.prompt, self.native = case, env, text, output, prompt, native

    def make_ctx(self, spec: AssertionSpec) -> AssertionContext:
        value, config = _rendered(spec, self.case, self.env.lenient_templates)
        return AssertionContext(output=self.text, response=self.output, vars=self.case.vars, prompt=self.prompt,
                                case=self.case, value=value, config=config, get_grader=self.get_grader,
                                run_child=self.run_child, get_embedder=self.get_embedder,
                                output_value=self.native)

    def get_grader(self, spec: AssertionSpec) -> Any:
        return self.env.resolve_grader(spec, self.case.test)

    def get_embedder(self, spec: AssertionSpec) -> Any:
        return self.env.resolve_embedder(spec, self.case.test)

    async def run_child(self, spec: AssertionSpec) -> Any:
        return await engine.evaluate(spec, self.make_ctx(spec))

    async def all(self) -> tuple[AssertionResult, ...]:
        asserts = self.case.test.asserts
        ctxs = [self.make_ctx(spec) for spec in asserts]  # render every value first: a template error ends the case
        later = [i for i, s in enumerate(asserts) if getattr(s.handler, "after_siblings", False)]
        if not later:
            return await _evaluate_all(asserts, ctxs)
        first = [i for i in range(len(asserts)) if i not in later]
        done = dict(zip(first, await _evaluate_all([asserts[i] for i in first], [ctxs[i] for i in first]),
                        strict=True))
        siblings = tuple(done[i] for i in first)
        for i in later:  # max-score: after the others, reading their results
            done[i] = await engine.evaluate(asserts[i], replace(ctxs[i], siblings=siblings))
        return tuple(done[i] for i in range(len(asserts)))


async def _evaluate_all(asserts: Any, ctxs: list[AssertionContext]) -> tuple[AssertionResult, ...]:
    """The assertions over their contexts: concurrently when one is graded, else one by one."""
    evaluate = engine.evaluate
    if len(asserts) > 1 and any(getattr(s.handler, "graded", False) for s in asserts):
        return tuple(await asyncio.gather(*(evaluate(s, c) for s, c in zip(asserts, ctxs, strict=True))))
    return tuple([await evaluate(s, c) for s, c in zip(asserts, ctxs, strict=True)])


def _result(case: Case, prompt: str, text: str | None, output: Output | None, status: Any, pass_: bool,
            score: float | None, reason: str, error: str | None,
            assertions: tuple[AssertionResult, ...], detail: str | None = None) -> CaseResult:
    # positional, in CaseResult's field order: keyword arguments cost ~2 µs more per case
    test = case.test
    if output is None:
        latency, cached, tokens, cost = 0.0, False, TokenUsage(), None
    else:
        latency, cached, tokens, cost = output.latency_ms, output.cached, output.tokens, output.cost
    return CaseResult(case.id, case.index, status, pass_, score, reason or "", error, case.provider.name,
                      case.prompt.label, prompt, case.vars, test.description, text, latency, cached, tokens, cost,
                      assertions, test.index, case.repeat, dict(test.metadata) if test.metadata else {}, detail)

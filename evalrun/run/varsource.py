"""A case's vars as promptfoo prepares them just before the prompt renders (`prepare_vars`), and `_conversation`,
the earlier turns of a thread, as promptfoo 0.121.20 keeps them (src/evaluator.ts).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from typing import Any

from evalrun.errors import EvalrunError
from evalrun.types import Case, PromptSpec

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_CODE_EXTS = (".py", ".js", ".cjs", ".mjs", ".ts", ".mts", ".cts")  # jsnode.JS_EXTS and .py


class VarsError(Exception):
    """Preparing the vars failed: the case is an ERROR with this message."""


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


def compiled(cache: dict[Any, Any], src: str, params: tuple[str, ...], *, case: Case, key: str, base_dir: str,
             default_fn: str) -> Any:
    """User code (Python or JavaScript: evalrun.pyexpr) compiled once per run and place."""
    fn = cache.get((key, src))
    if fn is None:
        from evalrun.pyexpr import compile_code

        fn = cache[(key, src)] = compile_code(src, params, loc=case.test.loc, key=key, base_dir=base_dir,
                                              default_fn=default_fn)
    return fn


async def _compute_var(name: str, path_ref: tuple[str, str], case: Case, vars: dict[str, Any], cache: dict[Any, Any],
                       base_dir: str) -> Any:
    path, ref = path_ref
    fn = compiled(cache, ref, ("var_name", "prompt", "other_vars"), case=case, key=f"vars.{name}", base_dir=base_dir,
                  default_fn="get_var")
    try:
        result = await fn.call(name, prompt_text(case.prompt.raw), dict(vars))
    except EvalrunError as e:
        raise VarsError(f"var {name!r} ({ref}) failed: {e}") from None
    if isinstance(result, dict):
        if result.get("error"):
            raise VarsError(f"var {name!r} ({ref}) returned an error: {result['error']}")
        if "output" in result and result["output"] not in (None, ""):
            out = result["output"]
            return out.strip() if isinstance(out, str) and path.lower().endswith(".py") else out
    raise VarsError(f"var {name!r}: {ref} must return {{'output': ...}}, got {result!r:.200}")


def needs_preparing(case: Case) -> bool:
    """False when prepare_vars would return the case's vars unchanged (the common case, checked without a
    coroutine)."""
    if case.test.options.get("transformVars"):
        return True
    for v in case.vars.values():
        if isinstance(v, str) and (v.startswith("file://") or v.endswith("\n") or "{{" in v):
            return True
    return False


async def prepare_vars(case: Case, cache: dict[Any, Any], base_dir: str) -> dict[str, Any]:
    """promptfoo's renderPrompt, in order: `options.transformVars`' mapping merged in; a `file://x.py` / `.js` var
    computed by its file (`get_var(var_name, prompt, other_vars)` -> `{"output": ...}`; `{"error": ...}` ends the
    case, a Python string is trimmed); one final newline dropped from every string var; `{{ name }}` inside a
    string var replaced by that var (up to 5 rounds; var values are never rendered)."""
    vars = case.vars
    transform = case.test.options.get("transformVars")
    if isinstance(transform, str) and transform.strip():
        fn = compiled(cache, transform, ("vars", "context"), case=case, key="options.transformVars",
                      base_dir=base_dir, default_fn="get_transform")
        try:
            extra = await fn.call(dict(vars), {"prompt": {}, "uuid": case.id})
        except EvalrunError as e:
            raise VarsError(f"options.transformVars failed: {e}") from None
        if not isinstance(extra, dict):
            raise VarsError(f"options.transformVars must return a mapping of vars, got {type(extra).__name__}")
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


# ------------------------------------------------------------------ _conversation
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

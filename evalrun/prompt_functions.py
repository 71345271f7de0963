"""Prompt functions, as promptfoo has them (`prompts: [file://prompts.js:fn]`, .py, .ts, ...): called per case with
`{vars, provider}`, they return a string, a chat message list, or `{prompt, config}`."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from evalrun import jsnode, pkgref, templating
from evalrun.errors import AssertionRuntimeError, ConfigError, Location
from evalrun.pyexpr import load_function
from evalrun.types import Messages


def load_prompt_function(path: Path, fn: str | None, *, loc: Location | None, key: str) -> str:
    """`file:///abs/path[:fn]` after checking that the function can be loaded (ConfigError otherwise)."""
    suffix = path.suffix.lower()
    ref = "file://" + str(path.resolve()) + (f":{fn}" if fn else "")
    if suffix == ".py":
        load_function(str(path), fn or "get_prompt", loc=loc, key=key)
        return ref
    if suffix not in jsnode.JS_EXTS:
        raise ConfigError.at(loc, f"prompt functions in {suffix} files are not supported ({path.name})", key=key,
                             hint="write the function in JavaScript (.js/.mjs), TypeScript (.ts) or Python (.py)")
    jsnode.require_js(path, fn, loc=loc, key=key, what=f"the prompt function {path.name}",
                          instead="write the prompt as a template")
    try:
        jsnode.check_export(ref)
    except AssertionRuntimeError as e:
        raise ConfigError.at(loc, f"loading the prompt function failed: {e}", key=key,
                             hint="export it: `module.exports.myPrompt = ({vars}) => ...` and write "
                                  "file://prompts.js:myPrompt") from None
    return ref


def _result(value: Any, ref: str) -> tuple[str | Messages, dict[str, Any]]:
    config: dict[str, Any] = {}
    if isinstance(value, dict) and "prompt" in value:
        config = dict(value.get("config") or {})
        value = value["prompt"]
    if isinstance(value, str):  # a JSON chat written as text, as promptfoo reads it
        chat = templating.chat_from_json(value) if value.lstrip().startswith("[") else None
        return chat or value, config
    chat = templating.as_chat(value)
    if chat is not None:
        return chat, config
    if value is None:
        raise AssertionRuntimeError(f"prompt function {ref.rsplit('/', 1)[-1]} returned nothing")
    return json.dumps(value, ensure_ascii=False), config


async def build_prompt(ref: str, vars: dict[str, Any], provider: dict[str, Any]) -> tuple[str | Messages,
                                                                                          dict[str, Any]]:
    """Call the prompt function for one case; AssertionRuntimeError when it fails."""
    context = {"vars": vars, "provider": provider}
    path, fn = pkgref.split_ref(ref)
    if path.lower().endswith(".py"):
        func = load_function(path, fn or "get_prompt", key="prompts")
        try:
            value = func(context)
            if asyncio.iscoroutine(value):
                value = await value
        except Exception as e:
            raise AssertionRuntimeError(f"prompt function {os.path.basename(path)}: {type(e).__name__}: {e}") \
                from None
        return _result(value, ref)
    value = await jsnode.call_js_args(ref, [context], what=f"prompt function {os.path.basename(path)}")
    return _result(value, ref)

"""`file://provider.js` (also `.cjs`, `.mjs`, or a bare `provider.js` id): a provider class written in JavaScript.

As in promptfoo, the file exports a class (CommonJS `module.exports` or an ES module's default export); it is
constructed once with the provider's options (`{id, label, config, ...}`) and its `callApi(prompt, context)`
returns a string or `{output, error, tokenUsage, cost, metadata}`. It runs in evalrun's one Node.js process
(the one `javascript` assertions use). The class is constructed when the provider is built, so a missing
`node`, a missing file or a file that exports no provider class is a config error at the provider's line
before any call; an `error` in the reply, or an exception in `callApi`, is that case's ERROR.
"""

from __future__ import annotations

import os
import time
from typing import Any

from evalrun import typescript
from evalrun.errors import AssertionRuntimeError, ConfigError, ProviderError
from evalrun.providers.base import CallContext, output_from_reply, prompt_text
from evalrun.types import Messages, Output, ProviderSpec
from evalrun.typescript import JS_EXTS  # TypeScript too (evalrun/typescript.py)


def is_js_provider(provider_id: str) -> bool:
    """`file://x.js` / `.cjs` / `.mjs`, or a bare relative path to one (promptfoo's `isJavascriptFile`)."""
    path = provider_id[len("file://"):] if provider_id.startswith("file://") else provider_id
    if ":" in path.replace("\\", "/").split("/")[-1]:
        return False  # `openai:x.js`-like ids are model names, not files
    return path.lower().endswith(JS_EXTS) and (provider_id.startswith("file://") or "://" not in provider_id)


class JsProvider:
    def __init__(self, spec: ProviderSpec, base_dir: str) -> None:
        from evalrun.jsnode import load_js_provider, node_path

        self.id = spec.id
        self.label = spec.name
        raw = spec.id[len("file://"):] if spec.id.startswith("file://") else spec.id
        self.path = raw if os.path.isabs(raw) else os.path.join(base_dir, raw)
        if node_path() is None:
            raise ConfigError.at(spec.loc, f"the JavaScript provider {os.path.basename(self.path)} needs Node.js, "
                                 "and `node` was not found on PATH", key="providers",
                                 hint="install Node.js (https://nodejs.org), or write the provider in Python "
                                      "(file://provider.py)")
        if not os.path.isfile(self.path):
            raise ConfigError.at(spec.loc, f"provider file not found: {self.path}", key="providers",
                                 hint="paths are relative to the config file's folder")
        typescript.require(self.path, loc=spec.loc, key="providers")
        written = spec.written_id or spec.id
        # promptfoo constructs the class with `{...providerOptions, id: providerOptions.id ?? providerPath}`
        self.options: dict[str, Any] = {"id": written, "config": dict(spec.config)}
        if spec.label:
            self.options["label"] = spec.label
        if spec.env:  # promptfoo hands a provider its own `env:` as options.env
            self.options["env"] = dict(spec.env)
        try:
            load_js_provider(os.path.abspath(self.path), self.options)
        except AssertionRuntimeError as e:
            raise ConfigError.at(spec.loc, f"loading JavaScript provider failed: {e}", key="providers",
                                 hint="export a class: `module.exports = class { constructor(options) {} "
                                      "async callApi(prompt, context) { return {output: '...'} } }`") from None

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        prompt = prompt_text(prompt)  # promptfoo hands user providers the prompt as text (chat prompts as JSON)
        from evalrun.jsnode import call_js_provider

        context = {"vars": ctx.vars, "prompt": {"raw": prompt, "label": ctx.prompt_label},
                   "test": {"description": ctx.test_description, "vars": ctx.vars}}
        start = time.perf_counter()
        try:
            reply = await call_js_provider(os.path.abspath(self.path), self.options, prompt, context)
        except AssertionRuntimeError as e:
            raise ProviderError(str(e)) from None
        latency = (time.perf_counter() - start) * 1000.0
        source = os.path.basename(self.path)
        if reply is None:
            raise ProviderError(f"{source}: callApi returned nothing; return a string or {{output: ...}}")
        return output_from_reply(reply, latency_ms=latency, source=source)

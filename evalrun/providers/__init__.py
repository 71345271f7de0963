"""Provider construction by id, and the providers evalrun runs itself: `echo` and promptfoo's custom providers
(`exec:`, `file://x.py` / `python:`, `file://x.js`), handed the prompt as text; this package never imports litellm."""

from __future__ import annotations

import inspect
import json
import os
import shlex
import time
from typing import Any

from evalrun import jsnode
from evalrun.errors import AssertionRuntimeError, ConfigError, ProviderError
from evalrun.providers.base import CallContext, Provider, output_from_reply, prompt_text
from evalrun.pyexpr import load_function, user_error, user_exit_message
from evalrun.types import NO_TOKENS, Messages, Output, ProviderSpec

__all__ = ["CallContext", "Provider", "build", "is_builtin", "is_http", "is_js_provider"]


def is_builtin(provider_id: str) -> bool:
    """True for the kinds implemented here (no model call, never litellm)."""
    return (provider_id == "echo" or provider_id.startswith(("exec:", "python:")) or is_http(provider_id)
            or (provider_id.startswith("file://") and ".py" in provider_id) or is_js_provider(provider_id))


def is_http(provider_id: str) -> bool:
    """promptfoo's HTTP provider: `http(s)://URL`, or `http` / `https` / `https:any-name` with `config.url`."""
    return provider_id in ("http", "https") or provider_id.startswith(("http:", "https:"))


def is_js_provider(provider_id: str) -> bool:
    """`file://x.js` / `.cjs` / `.mjs` / TypeScript, or a bare relative path to one (promptfoo's isJavascriptFile)."""
    path = provider_id[len("file://"):] if provider_id.startswith("file://") else provider_id
    if ":" in path.replace("\\", "/").split("/")[-1]:
        return False  # `openai:x.js`-like ids are model names, not files
    return path.lower().endswith(jsnode.JS_EXTS) and (provider_id.startswith("file://") or "://" not in provider_id)


class EchoProvider:
    """`echo`: the rendered prompt as the output (chat prompts as their JSON text)."""

    def __init__(self, spec: ProviderSpec) -> None:
        self.id = spec.id
        self.label = spec.name

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        start = time.perf_counter()
        text = prompt if isinstance(prompt, str) else prompt_text(prompt)
        # positional (text, raw, tokens, cost, latency_ms): keyword arguments cost more than the call itself
        return Output(text, None, NO_TOKENS, None, (time.perf_counter() - start) * 1000.0)


class ExecProvider:
    def __init__(self, spec: ProviderSpec, base_dir: str) -> None:
        self.id = spec.id
        self.label = spec.name
        self.base_dir = base_dir
        self.config = dict(spec.config)
        try:
            self.argv = shlex.split(spec.id[len("exec:"):].strip())
        except ValueError as e:
            raise ConfigError.at(spec.loc, f"cannot parse command {spec.id!r}: {e}", key="providers") from None
        if not self.argv:
            raise ConfigError.at(spec.loc, "exec: provider without a command", key="providers",
                                 hint="write e.g. `exec: python my_app.py`")

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        import asyncio  # here: `evalrun validate` imports this package, and no event loop

        options = json.dumps({"config": self.config}, default=str)
        context = json.dumps({"vars": ctx.vars, "prompt": {"label": ctx.prompt_label}}, default=str)
        start = time.perf_counter()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv, prompt_text(prompt), options, context, cwd=self.base_dir,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as e:
            raise ProviderError(f"exec: cannot start {self.argv[0]!r}: {e}") from None
        try:
            out, err = await proc.communicate()
        except asyncio.CancelledError:  # per-case timeout or Ctrl-C: do not leave the process behind
            if proc.returncode is None:
                proc.kill()
            raise
        latency = (time.perf_counter() - start) * 1000.0
        if proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip()[-500:]
            raise ProviderError(f"exec: command exited with status {proc.returncode}: {tail or '(no stderr)'}")
        return Output(text=out.decode("utf-8", "replace").rstrip("\n"), latency_ms=latency)


def split_target(target: str) -> tuple[str, str]:
    """'dir/app.py:fn' -> ('dir/app.py', 'fn'); the function defaults to call_api."""
    path, sep, fn = target.rpartition(":")
    if sep and path.endswith(".py") and fn.isidentifier():
        return path, fn
    return target, "call_api"


class PythonProvider:
    def __init__(self, spec: ProviderSpec, base_dir: str) -> None:
        self.id = spec.id
        self.label = spec.name
        self.config = dict(spec.config)
        target = spec.id.split("://", 1)[1] if spec.id.startswith("file://") else spec.id[len("python:"):]
        path, fn_name = split_target(target.strip())
        self.path = path if os.path.isabs(path) else os.path.join(base_dir, path)
        self.fn = load_function(self.path, fn_name, loc=spec.loc, key="providers",
                                hint="define `def call_api(prompt, options, context):` or name the function "
                                     "as file://provider.py:my_function")
        self.is_async = inspect.iscoroutinefunction(self.fn)

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
        prompt = prompt_text(prompt)  # promptfoo hands user providers the prompt as text (chat prompts as JSON)
        options = {"config": self.config, "id": self.id, "label": self.label}
        context = {"vars": ctx.vars, "prompt": {"label": ctx.prompt_label, "raw": prompt}}
        start = time.perf_counter()
        try:
            if self.is_async:
                reply = await self.fn(prompt, options, context)
            else:
                import asyncio

                reply = await asyncio.to_thread(self.fn, prompt, options, context)
        except ProviderError:
            raise
        except Exception as e:
            raise ProviderError(user_error(e, self.path)) from e
        except BaseException as e:  # sys.exit(), KeyboardInterrupt, ...: this case's error, not the run's end
            msg = user_exit_message(e)
            if msg is None:
                raise
            raise ProviderError(f"{os.path.basename(self.path)}: {msg}") from None
        latency = (time.perf_counter() - start) * 1000.0
        if reply is None or (isinstance(reply, dict) and "output" in reply and reply["output"] is None
                             and not reply.get("error")):
            raise ProviderError(f"{os.path.basename(self.path)}: provider returned no output "
                                f"({'None' if reply is None else repr({'output': None})}); "
                                "return a string or {'output': ...}")
        return output_from_reply(reply, latency_ms=latency, source=os.path.basename(self.path))


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
        jsnode.require(self.path, loc=spec.loc, key="providers")
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


def build(spec: ProviderSpec, base_dir: str = ".", transport: Any = None) -> Provider:
    """Build a provider from its spec; ConfigError (with the spec's location) for a bad one."""
    pid = spec.id
    if pid == "echo":
        return EchoProvider(spec)
    if pid.startswith("exec:"):
        return ExecProvider(spec, base_dir)
    if pid.startswith("python:") or (pid.startswith("file://") and ".py" in pid):
        return PythonProvider(spec, base_dir)
    if is_js_provider(pid):
        return JsProvider(spec, base_dir)
    if is_http(pid):
        from evalrun.providers.http_ import HttpProvider

        return HttpProvider(spec, on_event=getattr(transport, "on_event", None), base_dir=base_dir)
    from evalrun.providers.litellm_ import LiteLLMProvider  # the wrapper; litellm itself stays lazy

    return LiteLLMProvider(spec, transport)

"""`file://provider.py[:call_api]` (also `python:provider.py[:fn]`): a user's Python function as provider.

`call_api(prompt, options, context)` may be sync (run in a worker thread) or async; it returns a string or
promptfoo's `{"output": ..., "error": ..., "tokenUsage": {...}, "cost": ..., "metadata": {...}}`. The module is
imported once, when the provider is built, so a missing file or function is a config error before any call.
Returning None (or `{"output": None}` without an error) is a provider error for that case, and so is
`sys.exit()`/`exit()`/`raise KeyboardInterrupt` in the function: neither ends the run.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time

from evalrun.errors import ProviderError
from evalrun.providers.base import CallContext, output_from_reply, prompt_text
from evalrun.pyexpr import load_function, user_exit_message
from evalrun.types import Messages, Output, ProviderSpec


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
                reply = await asyncio.to_thread(self.fn, prompt, options, context)
        except ProviderError:
            raise
        except Exception as e:
            raise ProviderError(f"{os.path.basename(self.path)}: {type(e).__name__}: {e}") from e
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

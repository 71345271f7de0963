"""`file://provider.py[:call_api]` (also `python:provider.py[:fn]`): a user's Python function as provider.

`call_api(prompt, options, context)` may be sync (run in a worker thread) or async; it returns a string or
promptfoo's `{"output": ..., "error": ..., "tokenUsage": {...}, "cost": ..., "metadata": {...}}`. The module is
imported once, when the provider is built, so a missing file or function is a config error before any call.
Returning None (or `{"output": None}` without an error) is a provider error for that case, and so is
`sys.exit()`/`exit()`/`raise KeyboardInterrupt` in the function: neither ends the run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from evalrun.errors import ConfigError, ProviderError
from evalrun.providers._common import output_from_reply
from evalrun.providers.base import CallContext
from evalrun.pyexpr import user_exit_message
from evalrun.types import Messages, Output, ProviderSpec


def split_target(target: str) -> tuple[str, str]:
    """'dir/app.py:fn' -> ('dir/app.py', 'fn'); the function defaults to call_api."""
    path, sep, fn = target.rpartition(":")
    if sep and path.endswith(".py") and fn.isidentifier():
        return path, fn
    return target, "call_api"


def load_function(path: str, name: str, *, loc: Any = None, key: str = "providers") -> Callable[..., Any]:
    """Import a Python file by path and return one of its functions (ConfigError when impossible)."""
    if not os.path.isfile(path):
        raise ConfigError.at(loc, f"python file not found: {path}", key=key,
                             hint="paths are relative to the config file's folder")
    mod_name = "evalrun_user_" + os.path.splitext(os.path.basename(path))[0] + f"_{abs(hash(path))}"
    module = sys.modules.get(mod_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:  # pragma: no cover - only for non-.py paths
            raise ConfigError.at(loc, f"cannot import {path}", key=key)
        module = importlib.util.module_from_spec(spec)
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in sys.path:
            sys.path.insert(0, folder)  # let the user's module import its neighbours
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise ConfigError.at(loc, f"importing {path} failed: {type(e).__name__}: {e}", key=key) from None
        except BaseException as e:  # sys.exit() at import time
            msg = user_exit_message(e)
            if msg is None:
                raise
            raise ConfigError.at(loc, f"importing {path} failed: {msg}", key=key) from None
        sys.modules[mod_name] = module
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ConfigError.at(loc, f"{path} has no function {name!r}", key=key,
                             hint="define `def call_api(prompt, options, context):` or name the function "
                                  "as file://provider.py:my_function")
    return fn


class PythonProvider:
    def __init__(self, spec: ProviderSpec, base_dir: str) -> None:
        self.id = spec.id
        self.label = spec.name
        self.config = dict(spec.config)
        target = spec.id.split("://", 1)[1] if spec.id.startswith("file://") else spec.id[len("python:"):]
        path, fn_name = split_target(target.strip())
        self.path = path if os.path.isabs(path) else os.path.join(base_dir, path)
        self.fn = load_function(self.path, fn_name, loc=spec.loc)
        self.is_async = inspect.iscoroutinefunction(self.fn)

    async def call(self, prompt: str | Messages, ctx: CallContext) -> Output:
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

"""User code in either language: `file://x.js[:fn]` runs in the shared Node.js process, the rest is Python.

    compile_code(code, params, *, loc, key, base_dir, default_fn=None) -> UserCode    (await .call(*args))

Python follows evalrun.pyexpr (inline expression or body, `file://x.py:fn`). A JavaScript file is called with
the same arguments (`module.exports = (output, context) => ...`, its `default`, or `:fn`); without Node.js it
is a ConfigError at `loc` before any call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from evalrun.errors import ConfigError, Location

JS_EXTS = (".js", ".cjs", ".mjs")


class UserCode(Protocol):
    async def call(self, *args: Any) -> Any: ...


class JsFunction:
    """A function exported by a JavaScript file, called in evalrun's Node.js process."""

    def __init__(self, ref: str, base_dir: str, what: str) -> None:
        self.ref, self.base_dir, self.what = ref, base_dir, what

    async def call(self, *args: Any) -> Any:
        from evalrun import jsnode

        return await jsnode.call_js_args(self.ref, list(args), base_dir=self.base_dir, what=self.what)


def is_js_ref(code: Any) -> bool:
    if not isinstance(code, str) or not code.strip().startswith("file://"):
        return False
    path = code.strip()[len("file://"):]
    head, sep, tail = path.rpartition(":")
    if sep and head.lower().endswith(JS_EXTS) and "/" not in tail:
        path = head
    return path.lower().endswith(JS_EXTS)


def compile_code(code: str, params: Sequence[str], *, loc: Location | None, key: str | None,
                 base_dir: str | None, default_fn: str | None = None) -> UserCode:
    """Python code or a JavaScript file reference -> something to `await .call(*args)`."""
    if is_js_ref(code):
        from evalrun import jsnode

        ref = code.strip()[len("file://"):]
        head, sep, tail = ref.rpartition(":")
        path, fn = (head, tail) if sep and head.lower().endswith(JS_EXTS) else (ref, "")
        full = Path(path) if Path(path).is_absolute() else Path(base_dir or ".", path)
        if not full.is_file():
            raise ConfigError.at(loc, f"file not found: {full}", key=key,
                                 hint="paths are relative to the config file's directory")
        if jsnode.node_path() is None:
            raise ConfigError.at(loc, f"{full.name} is JavaScript but `node` was not found on PATH", key=key,
                                 hint="install Node.js, or write this in Python (file://x.py:fn)")
        target = "file://" + str(full.resolve()) + (f":{fn}" if fn else "")
        return JsFunction(target, str(full.parent), f"{key or 'JavaScript'} ({full.name})")
    from evalrun import pyexpr

    return pyexpr.compile_user_code(code, params, loc=loc, key=key, base_dir=base_dir, default_fn=default_fn)

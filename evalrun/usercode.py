"""User code in either language: `file://x.js[:fn]` (and TypeScript) runs in the shared Node.js process, inline code
that only JavaScript can mean too (`looks_like_js`); the rest is Python (evalrun.pyexpr)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from evalrun import jsnode, pkgref, pyexpr
from evalrun.errors import ConfigError, Location
from evalrun.jsnode import JS_EXTS  # TypeScript too
from evalrun.pyexpr import looks_like_javascript


class UserCode(Protocol):
    async def call(self, *args: Any) -> Any: ...


class JsCode:
    """A function a JavaScript file exports (`file://x.js:fn`), or inline JavaScript (an expression, or a body with
    `return`) over `params`: called in evalrun's Node.js process."""

    def __init__(self, code: str, base_dir: str, what: str, params: Sequence[str] | None = None) -> None:
        self.code, self.base_dir, self.what = code, base_dir, what
        self.params = list(params) if params is not None else None

    async def call(self, *args: Any) -> Any:
        return await jsnode.call_js_args(self.code, list(args), base_dir=self.base_dir, what=self.what,
                                         params=self.params)


def _compiles_as_python(code: str) -> bool:
    text = textwrap.dedent(code).strip()
    try:
        if "\n" not in text:
            compile(text, "<inline>", "eval")
        else:
            compile("def _f():\n" + textwrap.indent(text, "    "), "<inline>", "exec")
    except SyntaxError:
        return False
    return True


def looks_like_js(code: Any) -> bool:
    """Inline code a promptfoo user wrote as JavaScript (see the module docstring for the rule)."""
    if not isinstance(code, str) or not code.strip() or code.strip().startswith(("file://", "pkg://")):
        return False
    if looks_like_javascript(code):
        return True
    if _compiles_as_python(code):
        return False
    return jsnode.node_path() is not None and jsnode.check_syntax(code) is None


def _ref_path(code: Any) -> str:
    """The lower-cased path of a `file://path[:fn]` reference, or ''."""
    if not isinstance(code, str) or not code.strip().startswith(pkgref.FILE):
        return ""
    return pkgref.split_ref(code.strip())[0].lower()


def is_script_ref(value: Any) -> bool:
    """`file://x.{js,ts,mjs,cjs,py}[:fn]`: a reference to a function in either language."""
    return _ref_path(value).endswith((*JS_EXTS, ".py"))


def compile_code(code: str, params: Sequence[str], *, loc: Location | None, key: str | None,
                 base_dir: str | None, default_fn: str | None = None) -> UserCode:
    """Python code or a JavaScript file reference -> something to `await .call(*args)`."""
    if _ref_path(code).endswith(JS_EXTS):
        path, fn = pkgref.split_ref(code.strip())
        full = Path(path) if Path(path).is_absolute() else Path(base_dir or ".", path)
        if not full.is_file():
            raise ConfigError.at(loc, f"file not found: {full}", key=key,
                                 hint="paths are relative to the config file's directory")
        target = jsnode.require_js(full, fn, loc=loc, key=key, what=f"{full.name} (JavaScript)",
                                       instead="write this in Python (file://x.py:fn)")
        return JsCode(target, str(full.parent), f"{key or 'JavaScript'} ({full.name})")
    if looks_like_js(code):
        if jsnode.node_path() is None:
            raise ConfigError.at(loc, "this code is JavaScript but `node` was not found on PATH", key=key,
                                 hint="install Node.js, or write it in Python (evalrun reads inline code as "
                                      "Python unless it is JavaScript; see docs/config.md)")
        error = jsnode.check_syntax(code)
        if error:
            raise ConfigError.at(loc, f"JavaScript syntax error: {error}", key=key,
                                 hint="inline JavaScript is an expression, or a body that uses `return`")
        return JsCode(code, base_dir or ".", key or "inline JavaScript", params)
    return pyexpr.compile_user_code(code, params, loc=loc, key=key, base_dir=base_dir, default_fn=default_fn)

"""User code in configs: Python in promptfoo's forms (one line an expression, several a function body with `return`,
`file://x.py[:fn]` a function of that file), and JavaScript (`file://x.js[:fn]`, TypeScript, inline code that only
JavaScript can mean: `looks_like_js`) run in jsnode's process (`compile_code` picks). What user code raises at run
time (sys.exit() too) ends that case as an ERROR; cancellation and a real Ctrl-C (`watch_sigint`) propagate."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import math
import os
import re
import signal
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evalrun import jsnode, pkgref
from evalrun.errors import AssertionRuntimeError, ConfigError, Location, did_you_mean

_REAL_SIGINTS = [0]  # SIGINTs received while `watch_sigint` is active


def user_exit_message(e: BaseException) -> str | None:
    """The report of a non-Exception user code raised (sys.exit(), KeyboardInterrupt, ...): it ends one case only.
    None when it must propagate: cancellation (a timeout, Ctrl-C under asyncio) or a real Ctrl-C."""
    aio = sys.modules.get("asyncio")  # not imported: nothing can have raised its CancelledError (import is slow)
    if isinstance(e, Exception) or (aio is not None and isinstance(e, aio.CancelledError)):
        return None
    if isinstance(e, KeyboardInterrupt) and _REAL_SIGINTS[0]:
        return None
    if isinstance(e, SystemExit):
        return "user code called sys.exit()" if e.code is None else f"user code called sys.exit({e.code!r})"
    detail = f": {e}" if str(e) else ""
    return f"user code raised {type(e).__name__}{detail}"


#: where evalrun's own frames are: trimmed from a user-code traceback, with asyncio's and the thread pool's
_EVALRUN_DIR = str(Path(__file__).resolve().parent) + os.sep
_STDLIB_MACHINERY = re.compile(r"[\\/](?:asyncio|concurrent)[\\/]|[\\/]threading\.py$")


def _is_machinery(filename: str) -> bool:
    full = os.path.abspath(filename)
    return full.startswith(_EVALRUN_DIR) or bool(_STDLIB_MACHINERY.search(full))


def user_error(e: BaseException, path: str) -> str:
    """What user code at `path` raised: `file.py:LINE: Type: message` (the line of `path` where it was raised, else
    the innermost line outside evalrun), then the traceback with evalrun's and asyncio's own frames trimmed."""
    import traceback  # only when user code raised

    frames = [f for f in traceback.extract_tb(e.__traceback__) if not _is_machinery(f.filename)]
    target = os.path.abspath(path)
    at = next((f for f in reversed(frames) if os.path.abspath(f.filename) == target), frames[-1] if frames else None)
    where = f"{os.path.basename(at.filename)}:{at.lineno}" if at is not None else os.path.basename(path)
    head = f"{where}: {type(e).__name__}: {e}"
    if not frames:
        return head
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(e), e)
    return head + "\nTraceback (user code; evalrun's frames trimmed):\n" + "".join(lines).rstrip()


@contextlib.contextmanager
def watch_sigint() -> Iterator[None]:
    """Count real SIGINTs (Ctrl-C) while active, so that a KeyboardInterrupt raised by user code can be told
    apart from one raised by the signal. The previous handler still runs. No-op outside the main thread."""
    _REAL_SIGINTS[0] = 0
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum: int, frame: Any) -> None:
        _REAL_SIGINTS[0] += 1
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            signal.default_int_handler(signum, frame)

    try:
        signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    finally:
        _REAL_SIGINTS[0] = 0
        if previous is not None and signal.getsignal(signal.SIGINT) is handler:
            signal.signal(signal.SIGINT, previous)


class _Object(dict[str, Any]):
    """A mapping that inline code reads as JavaScript reads an object: `output.choices[0].message.role` (promptfoo
    runs inline transforms as JavaScript, and such a path is valid Python too: it means the same here); a name
    that is not there is None, as JavaScript's undefined. Items read from it are wrapped alike."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return js_like(self.get(name))

    def __getitem__(self, key: str) -> Any:
        return js_like(dict.__getitem__(self, key))


class _Array(list[Any]):
    """A list whose items are read as `js_like` values (see _Object)."""

    __slots__ = ()

    def __getitem__(self, i: Any) -> Any:
        item = list.__getitem__(self, i)
        return _Array(item) if isinstance(i, slice) else js_like(item)

    def __iter__(self) -> Iterator[Any]:
        return (js_like(v) for v in list.__iter__(self))


def js_like(value: Any) -> Any:
    """`value` with its mappings readable by attribute (_Object); anything else as it is."""
    if type(value) is dict:
        return _Object(value)
    if type(value) is list:
        return _Array(value)
    return value


@dataclass(frozen=True)
class UserFunction:
    """Compiled user code, called with its params positionally (inline code gets them as `js_like` objects)."""

    fn: Callable[..., Any]
    source: str  # the code as written, or the file:// reference
    params: tuple[str, ...]

    def _args(self, args: tuple[Any, ...]) -> list[Any]:
        used = args[: self._arity()]
        return list(used) if is_file_ref(self.source) else [js_like(a) for a in used]

    async def call(self, *args: Any) -> Any:
        """Call the function (awaiting it if it is async); user exceptions become AssertionRuntimeError."""
        try:
            result = self.fn(*self._args(args))
            if inspect.isawaitable(result):
                result = await result
        except AssertionRuntimeError:
            raise
        except BaseException as e:  # user code may raise anything, sys.exit() and KeyboardInterrupt included
            error = isinstance(e, Exception)
            msg = f"{type(e).__name__}: {e}" if error else user_exit_message(e)
            if msg is None:  # a real Ctrl-C or a cancellation: it ends the run, not this case
                raise
            js = isinstance(e, (AttributeError, NameError)) and looks_like_javascript(self.source)
            raise AssertionRuntimeError(f"{msg} (in {self._short()}){f'; {_PY_EQUIVALENTS}' if js else ''}") \
                from (e if error else None)
        return result

    def _arity(self) -> int:
        try:
            sig = inspect.signature(self.fn)
        except (TypeError, ValueError):
            return len(self.params)
        ps = list(sig.parameters.values())
        if any(p.kind == p.VAR_POSITIONAL for p in ps):
            return len(self.params)
        return min(len(self.params), sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ps))

    def _short(self) -> str:
        first = self.source.strip().splitlines()[0] if self.source.strip() else ""
        return first if len(first) <= 60 else first[:57] + "..."


def is_file_ref(code: Any) -> bool:
    return isinstance(code, str) and code.strip().startswith(pkgref.FILE)


def compile_user_code(code: str, params: Sequence[str] = ("output", "context"), *, loc: Location | None = None,
                      key: str | None = None, base_dir: str | None = None,
                      default_fn: str | None = None) -> UserFunction:
    """Compile inline code or load a file:// function. ConfigError on any problem found statically."""
    if not isinstance(code, str) or not code.strip():
        raise ConfigError.at(loc, "expected Python code (an expression or file://x.py:fn)", key=key)
    if code.strip().startswith(pkgref.PREFIX):  # pkg://PACKAGE/checks.py:fn -> file:///abs/.../checks.py:fn
        code = pkgref.to_file_ref(code.strip(), loc=loc, key=key)
    if is_file_ref(code):
        ref = code.strip()
        path, fn = pkgref.split_ref(ref)
        if not path.endswith(".py"):
            raise ConfigError.at(loc, f"{ref}: expected a .py file", key=key, hint="write file://path.py:function")
        if not (fn or default_fn):
            raise ConfigError.at(loc, f"{ref}: no function named", key=key, hint=f"write {ref}:function_name")
        full = os.path.join(base_dir or ".", path)  # an absolute path stays itself
        return UserFunction(load_function(full, fn or default_fn or "", loc=loc, key=key), ref, tuple(params))
    src = _wrap(code, params)
    try:
        compiled = compile(src, f"<{key or 'python'}>", "exec")
    except SyntaxError as e:
        raise ConfigError.at(loc, f"Python code does not compile: {e.msg}", key=key,
                             hint=_syntax_hint(code, e)) from None
    namespace: dict[str, Any] = {"json": json, "re": re, "math": math}  # as promptfoo's wrapper, and two helpers
    exec(compiled, namespace)  # noqa: S102 - defining the user's function is the point
    return UserFunction(namespace["__evalrun_main"], code, tuple(params))


def _wrap(code: str, params: Sequence[str]) -> str:
    head = f"def __evalrun_main({', '.join(params)}):\n"
    stripped = code.strip("\n")
    if "\n" not in stripped:
        return head + f"    return ({stripped.strip()}\n    )\n"
    body = textwrap.dedent(stripped)
    return head + textwrap.indent(body, "    ") + "\n    return None\n"


_STRINGS = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`[^`]*`")
_JS_ONLY = re.compile(
    r"===|!==|=>|&&|\|\||\b(?:JSON|Math|Object|Array|Number|String|Promise)\.|\.length\b|\btypeof\b"
    r"|\b(?:const|let|var)\s|\b(?:true|false|null|undefined)\b|\bparse(?:Int|Float)\("
    r"|\.(?:includes|toLowerCase|toUpperCase|trim|trimStart|trimEnd|map|filter|some|every|indexOf|slice"
    r"|substring|startsWith|endsWith|match|test|forEach|reduce|find|join|toFixed|localeCompare)\(")
_PY_EQUIVALENTS = ("this looks like JavaScript (promptfoo's language here); evalrun runs Python: e.g. "
                   "`output.strip()`, `json.loads(output)`, `len(output)`, `'x' in output`, `and`/`or`")


def looks_like_javascript(code: str) -> bool:
    """Whether code uses, outside string literals, what only JavaScript means (`===`, `=>`, `JSON.`, `.trim(`...)."""
    return _JS_ONLY.search(_STRINGS.sub("''", code)) is not None


def _syntax_hint(code: str, e: SyntaxError) -> str:
    if looks_like_javascript(code):
        return _PY_EQUIVALENTS
    if "\n" not in code.strip():
        return "a one-line value is a Python expression (e.g. `'hello' in output`); " \
               "use several lines with `return` for statements"
    return f"line {e.lineno} of the code: {(e.text or '').strip()}"


def load_function(path: str, name: str, *, loc: Location | None = None, key: str | None = None,
                  hint: str | None = None) -> Callable[..., Any]:
    """Function `name` of the user's Python file (imported once, its folder on sys.path); ConfigError at `loc` when
    it cannot be imported or lacks the function (`hint`, else the closest name)."""
    if not os.path.isfile(path):
        raise ConfigError.at(loc, f"python file not found: {path}", key=key,
                             hint="paths are relative to the config file's folder")
    module = _import_file(path, loc=loc, key=key)
    fn = getattr(module, name, None)
    if not callable(fn):
        funcs = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        raise ConfigError.at(loc, f"{path} has no function {name!r}", key=key, hint=hint or did_you_mean(
            name, funcs) or f"functions there: {', '.join(funcs) or 'none'}")
    return fn


_MODULES: dict[str, Any] = {}


def _import_file(full: str, *, loc: Location | None, key: str | None) -> Any:
    full = os.path.abspath(full)
    if full in _MODULES:
        return _MODULES[full]
    name = "evalrun_user_" + str(abs(hash(full)))
    spec = importlib.util.spec_from_file_location(name, full)
    if spec is None or spec.loader is None:  # pragma: no cover
        raise ConfigError.at(loc, f"cannot import {full}", key=key)
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(full)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # let the user's module import its neighbours
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise ConfigError.at(loc, f"{full}:{e.lineno}: Python syntax error: {e.msg}", key=key) from None
    except Exception as e:  # noqa: BLE001 - importing user code may raise anything
        import traceback  # only when the import raised

        line = next((f.lineno for f in reversed(traceback.extract_tb(e.__traceback__))
                     if os.path.abspath(f.filename) == full), None)
        where = f"{full}:{line}: importing it failed" if line else f"importing {full} failed"
        raise ConfigError.at(loc, f"{where}: {type(e).__name__}: {e}", key=key) from None
    except BaseException as e:
        msg = user_exit_message(e)
        if msg is None:
            raise
        raise ConfigError.at(loc, f"importing {full} failed: {msg}", key=key) from None
    _MODULES[full] = module
    return module


class UserCode(Protocol):
    async def call(self, *args: Any) -> Any: ...


class JsCode:
    """A JavaScript file's exported function, or inline JavaScript over `params`, run in evalrun's Node.js process."""

    def __init__(self, code: str, base_dir: str, what: str, params: Sequence[str] | None = None) -> None:
        self.code, self.base_dir, self.what = code, base_dir, what
        self.params = list(params) if params is not None else None

    async def call(self, *args: Any) -> Any:
        return await jsnode.call_js_args(self.code, list(args), base_dir=self.base_dir, what=self.what,
                                         params=self.params)


def _compiles_as_python(code: str) -> bool:
    try:
        compile(_wrap(code, ()), "<inline>", "exec")
    except SyntaxError:
        return False
    return True


def looks_like_js(code: Any) -> bool:
    """Inline code a promptfoo user wrote as JavaScript (see the module docstring for the rule)."""
    if not isinstance(code, str) or not code.strip() or code.strip().startswith((pkgref.FILE, pkgref.PREFIX)):
        return False
    if looks_like_javascript(code):
        return True
    if _compiles_as_python(code):
        return False
    return jsnode.node_path() is not None and jsnode.check_syntax(code) is None


def _ref_path(code: Any) -> str:
    """The lower-cased path of a `file://path[:fn]` reference, or ''."""
    return pkgref.split_ref(code.strip())[0].lower() if is_file_ref(code) else ""


def is_script_ref(value: Any) -> bool:
    """`file://x.{js,ts,mjs,cjs,py}[:fn]`: a reference to a function in either language."""
    return _ref_path(value).endswith((*jsnode.JS_EXTS, ".py"))


def compile_code(code: str, params: Sequence[str], *, loc: Location | None, key: str | None,
                 base_dir: str | None, default_fn: str | None = None) -> UserCode:
    """Python code or a JavaScript file reference -> something to `await .call(*args)`."""
    if _ref_path(code).endswith(jsnode.JS_EXTS):
        path, fn = pkgref.split_ref(code.strip())
        full = Path(base_dir or ".", path)  # an absolute path stays itself
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
    return compile_user_code(code, params, loc=loc, key=key, base_dir=base_dir, default_fn=default_fn)

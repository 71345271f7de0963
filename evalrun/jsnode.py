"""One long-lived Node.js process (jsnode_server.js) for all user JavaScript and TypeScript, speaking JSON lines with
request ids (concurrent cases share it); a call past EVALRUN_JS_TIMEOUT seconds (default 30) is an error and the
process is replaced. TypeScript runs without a build step, as promptfoo runs it (docs/design-notes.md)."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import threading
from concurrent.futures import Future, InvalidStateError
from functools import cache
from pathlib import Path
from typing import Any

from evalrun.errors import AssertionRuntimeError, ConfigError, Location

#: The Node.js side: reads requests, loads and calls user code, writes replies.
_SERVER_JS = Path(__file__).with_name("jsnode_server.js")


class CodeTimeout(AssertionRuntimeError):
    """User JavaScript ran past EVALRUN_JS_TIMEOUT: no verdict (an ERROR, never a FAIL)."""


class _NodeProcess:
    """The running node process with id-matched pending requests, each a concurrent Future that a reader thread
    resolves: one process serves any number of event loops and synchronous callers."""

    def __init__(self, node: str, flags: tuple[str, ...] = ()) -> None:
        self.flags = flags
        self.proc = subprocess.Popen([node, *flags, str(_SERVER_JS)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                                     bufsize=1)
        self.pending: dict[int, Future[dict[str, Any]]] = {}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.stderr_tail = ""
        self.env_key = hash(frozenset(os.environ.items()))  # the environment the process started with
        threading.Thread(target=self._read, daemon=True, name="evalrun-node-out").start()
        threading.Thread(target=self._drain_stderr, daemon=True, name="evalrun-node-err").start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("evalrun") == 1:
                with self.lock:
                    fut = self.pending.pop(int(msg.get("id") or 0), None)
                _resolve(fut, msg)
        with self.lock:
            futures, self.pending = list(self.pending.values()), {}
        for fut in futures:
            _resolve(fut, {"ok": False, "error": f"the node process exited: {self.stderr_tail[-500:]}"})

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_tail = (self.stderr_tail + line)[-2000:]

    def send(self, payload: dict[str, Any]) -> Future[dict[str, Any]]:
        rid, fut = next(self.ids), Future[dict[str, Any]]()
        env_key = hash(frozenset(os.environ.items()))
        with self.lock:
            if env_key != self.env_key:  # user code sees the environment as it is now, as in promptfoo
                payload = {**payload, "env": dict(os.environ)}
                self.env_key = env_key
            self.pending[rid] = fut
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(json.dumps({**payload, "id": rid}, default=str) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError) as e:
                self.pending.pop(rid, None)
                raise AssertionRuntimeError(f"the node process is gone: {e} {self.stderr_tail[-300:]}") from None
        return fut

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)


def _resolve(fut: Future[dict[str, Any]] | None, msg: dict[str, Any]) -> None:
    with contextlib.suppress(InvalidStateError):  # nobody waits any more (a timeout cancelled it)
        if fut is not None:
            fut.set_result(msg)


_PROC: _NodeProcess | None = None
_START = threading.Lock()
_FLAGS: list[str] = []  # Node.js options of the process (node_flags: type stripping or tsx)


def timeout_s() -> float:
    """Seconds one javascript assertion may run: EVALRUN_JS_TIMEOUT, default 30."""
    try:
        return max(0.001, float(os.environ.get("EVALRUN_JS_TIMEOUT", "30")))
    except ValueError:
        return 30.0


def node_path() -> str | None:
    return shutil.which("node")


def _process() -> _NodeProcess:
    global _PROC
    with _START:
        if _PROC is not None and _PROC.alive():
            return _PROC
        node = node_path()
        if node is None:
            raise AssertionRuntimeError("Node.js is required for `javascript` assertions but `node` was not found on "
                                        "PATH; install Node.js (https://nodejs.org) or use a `python` assertion")
        _PROC = _NodeProcess(node, tuple(_FLAGS))
        return _PROC


def _timed_out(proc: _NodeProcess, what: str, limit: float) -> CodeTimeout:
    proc.kill()  # a stuck script would block every later call: the next call starts a fresh process
    return CodeTimeout(f"{what} did not finish within {limit:g}s (EVALRUN_JS_TIMEOUT sets the limit)")


def _reply_value(reply: dict[str, Any], what: str) -> Any:
    if not reply.get("ok"):
        raise AssertionRuntimeError(f"{what} threw {reply.get('error')}")
    if reply.get("special"):
        return float(reply["special"])  # NaN / Infinity: JSON cannot carry them
    return reply.get("result")


async def _ask(payload: dict[str, Any], what: str) -> Any:
    """Send one request to the shared node process and return its value; past EVALRUN_JS_TIMEOUT a CodeTimeout."""
    import asyncio  # here: providers/ and config/ import this module, and loading a config needs no event loop

    proc, limit = _process(), timeout_s()
    try:
        reply = await asyncio.wait_for(asyncio.wrap_future(proc.send(payload)), limit)
    except TimeoutError:
        raise _timed_out(proc, what, limit) from None
    return _reply_value(reply, what)


def _ask_sync(payload: dict[str, Any], what: str) -> Any:
    """`_ask` for synchronous callers (config time, template filters rendered inside Jinja2)."""
    proc, limit = _process(), timeout_s()
    try:
        reply = proc.send(payload).result(timeout=limit)
    except TimeoutError:
        raise _timed_out(proc, what, limit) from None
    return _reply_value(reply, what)


async def call_js(code: str, output: str, context: dict[str, Any], *, base_dir: str = ".") -> Any:
    """Run a javascript assertion's code in the shared node process; its exceptions -> AssertionRuntimeError."""
    return await call_js_args(code, [output, context], base_dir=base_dir, what="JavaScript assertion")


async def call_js_args(code: str, args: list[Any], *, base_dir: str = ".", what: str = "JavaScript",
                       params: list[str] | None = None) -> Any:
    """Call `file://x.js[:fn]`, or inline code over `params` (default `output, context`), with `args`."""
    payload: dict[str, Any] = {"code": code, "args": args, "base_dir": base_dir}
    if params:
        payload["params"] = params
    return await _ask(payload, what)


def call_js_sync(code: str, args: list[Any], *, base_dir: str = ".", what: str = "JavaScript") -> Any:
    """`call_js_args` for synchronous callers (template filters rendered inside Jinja2)."""
    return _ask_sync({"code": code, "args": args, "base_dir": base_dir}, what)


async def call_js_provider(path: str, options: dict[str, Any], prompt: Any, context: dict[str, Any]) -> Any:
    """`callApi(prompt, context)` of the provider class a JavaScript file exports (one instance per path and
    options, kept in the Node process); its exceptions -> AssertionRuntimeError."""
    return await _ask({"provider": path, "options": options, "prompt": prompt, "context": context},
                      os.path.basename(path))


def load_js_provider(path: str, options: dict[str, Any]) -> Any:
    """Construct the provider class the file exports (config time): its `id()` or None; AssertionRuntimeError."""
    value = _ask_sync({"provider": path, "options": options, "describe": True}, os.path.basename(path))
    return value.get("id") if isinstance(value, dict) else None


def check_export(ref: str) -> None:
    """Load `file:///abs/x.js[:fn]` now: AssertionRuntimeError when it cannot, or lacks that export."""
    _ask_sync({"code": ref, "exports": True, "base_dir": "."}, ref.rsplit("/", 1)[-1])


_CHECKED: dict[str, str | None] = {}


def check_syntax(code: str) -> str | None:
    """Compile inline code in the node process (config time): the error, or None (it compiles, a file://, no node)."""
    if code.startswith("file://") or node_path() is None:
        return None
    if code not in _CHECKED:
        try:
            msg = _process().send({"check": True, "code": code}).result(timeout=30)
        except (AssertionRuntimeError, TimeoutError, OSError):
            return None
        _CHECKED[code] = None if msg.get("ok") else str(msg.get("error"))
    return _CHECKED[code]


_TS_EXTS = (".ts", ".mts", ".cts")
JS_EXTS = (".js", ".cjs", ".mjs", *_TS_EXTS)


def is_typescript(path: str | Path) -> bool:
    return str(path).lower().endswith(_TS_EXTS)


@cache
def node_version() -> tuple[int, ...] | None:
    """The version of `node` on PATH, e.g. (20, 20, 2); None without Node.js."""
    node = node_path()
    if node is None:
        return None
    try:
        text = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
        return tuple(int(part) for part in text.strip().lstrip("v").split(".")[:3])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


@cache
def _npm_global_root() -> str | None:
    try:
        done = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def find_tsx(start: str | Path) -> Path | None:
    """The loader of the tsx package the user has (docs/design-notes.md), or None."""
    tail = Path("tsx", "dist", "loader.mjs")
    for base in (Path(start).resolve(), Path.cwd()):
        for folder in (base, *base.parents):
            if (folder / "node_modules" / tail).is_file():
                return folder / "node_modules" / tail
    roots = [p for p in os.environ.get("NODE_PATH", "").split(os.pathsep) if p]
    for root in [*roots, _npm_global_root()]:
        if root and (Path(root) / tail).is_file():
            return Path(root) / tail
    return None


def node_flags(start: str | Path) -> list[str] | None:
    """The Node.js flags that let it load TypeScript from `start`'s folder, or None when nothing can."""
    version = node_version() or ()
    if version >= (23, 6):  # strips TypeScript types by default
        return []
    if version >= (22, 6):
        return ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"]
    tsx = find_tsx(start)
    return None if tsx is None else ["--import", tsx.as_uri()]


def require_js(path: Path, fn: str | None, *, loc: Location | None, key: str | None, what: str,
               instead: str) -> str:
    """`file:///abs/path[:fn]` of a JavaScript or TypeScript file after making sure evalrun's Node.js process can
    load it: ConfigError at `loc` when Node.js is missing (`instead`: how else to write it), or see `require`."""
    if node_path() is None:
        raise ConfigError.at(loc, f"{what} needs Node.js, and `node` was not found on PATH", key=key,
                             hint=f"install Node.js (https://nodejs.org), or {instead}")
    require(path, loc=loc, key=key)
    return "file://" + str(path.resolve()) + (f":{fn}" if fn else "")


def require(path: str | Path, *, loc: Location | None, key: str | None) -> None:
    """Make evalrun's Node.js process able to load the TypeScript file `path` (nothing for other files); a
    ConfigError at `loc` when neither this Node.js nor tsx can."""
    if not is_typescript(path):
        return
    flags = node_flags(Path(path).parent)
    if flags is None:
        version = ".".join(map(str, node_version() or ())) or "?"
        raise ConfigError.at(loc, f"{Path(path).name} is TypeScript, which Node.js {version} cannot run without a "
                                  "build step, and the tsx package was not found", key=key,
                             hint="use Node.js 22.6 or newer (it strips TypeScript types itself), or install tsx "
                                  "where the config is: `npm install --save-dev tsx` (a project with promptfoo "
                                  "installed has it already)")
    with _START:  # a running process without these flags is replaced at its next use
        if flags and "\0".join(flags) not in "\0".join(_FLAGS):
            _FLAGS.extend(flags)
            if _PROC is not None:
                _PROC.kill()


def shutdown() -> None:
    """Stop the node process (called at exit; safe to call twice)."""
    global _PROC
    if _PROC is not None:
        _PROC.kill()
        _PROC = None


atexit.register(shutdown)

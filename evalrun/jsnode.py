"""One long-lived Node.js process per run for `javascript` assertions, speaking JSON lines.

    await call_js(code, output, context, base_dir=".") -> Any      the JavaScript function's (awaited) result
    check_syntax(code) -> str | None                              a syntax error message, or None (sync)

The process starts lazily on the first call and serves every later call of the same event loop; requests carry
ids, so concurrent cases share it. Code follows promptfoo: a one-line value is an expression (leading
`const/let/var` statements allowed), a multi-line value is a function body with `return`, `file://x.js:fn`
calls an exported function. Node missing -> AssertionRuntimeError saying so.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import json
import shutil
import subprocess
from typing import Any

from evalrun.errors import AssertionRuntimeError

_SERVER_JS = r"""
const readline = require('readline');
const path = require('path');
const cache = new Map();
function findLastSemi(code) {
  let sq = false, dq = false, tq = false, last = -1;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    let bs = 0; for (let j = i - 1; j >= 0 && code[j] === '\\'; j--) bs++;
    if (bs % 2 === 0) {
      if (c === "'" && !dq && !tq) sq = !sq;
      else if (c === '"' && !sq && !tq) dq = !dq;
      else if (c === '`' && !sq && !dq) tq = !tq;
    }
    if (c === ';' && !sq && !dq && !tq) last = i;
  }
  return last;
}
function body(code) {
  code = code.trimEnd();
  if (code.includes('\n')) return code;
  const t = code.trim().replace(/;+\s*$/, '');
  if (/^(const|let|var)\s/.test(t)) {
    const i = findLastSemi(t);
    if (i !== -1) { const e = t.slice(i + 1).trim(); if (e) return t.slice(0, i + 1) + ' return ' + e; }
    return t;
  }
  return 'return ' + t;
}
function load(req) {
  const key = req.code + '\u0000' + (req.base_dir || '');
  if (cache.has(key)) return cache.get(key);
  let fn;
  if (req.code.startsWith('file://')) {
    let ref = req.code.slice(7), name;
    const m = ref.match(/^(.*\.(?:c|m)?js):([A-Za-z_$][\w$]*)$/);
    if (m) { ref = m[1]; name = m[2]; }
    const mod = require(path.resolve(req.base_dir || '.', ref));
    fn = name ? mod[name] : (typeof mod === 'function' ? mod : mod.default);
    if (typeof fn !== 'function') throw new Error(`${req.code} does not export a function`);
  } else {
    fn = new Function('output', 'context', body(req.code));
  }
  cache.set(key, fn);
  return fn;
}
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', async (line) => {
  let req;
  try { req = JSON.parse(line); } catch (e) { return; }
  const reply = (o) => process.stdout.write(JSON.stringify(Object.assign({ id: req.id }, o)) + '\n');
  try {
    if (req.check) { new Function('output', 'context', body(req.code)); reply({ ok: true, result: null }); return; }
    const result = await load(req)(req.output, req.context);
    reply({ ok: true, result: result === undefined ? null : result, type: typeof result });
  } catch (e) {
    reply({ ok: false, error: (e && e.name ? e.name + ': ' : '') + (e && e.message ? e.message : String(e)) });
  }
});
"""

_MISSING = ("Node.js is required for `javascript` assertions but `node` was not found on PATH; "
            "install Node.js (https://nodejs.org) or use a `python` assertion")


class _NodeProcess:
    """The running node process of one event loop, with id-matched pending requests."""

    def __init__(self, proc: asyncio.subprocess.Process, loop: asyncio.AbstractEventLoop) -> None:
        self.proc = proc
        self.loop = loop
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.ids = itertools.count(1)
        self.reader = loop.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            fut = self.pending.pop(msg.get("id"), None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
        err = b""
        if self.proc.stderr is not None:
            with contextlib.suppress(Exception):
                err = await self.proc.stderr.read()
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(AssertionRuntimeError(f"the node process exited: {err.decode()[-500:]}"))
        self.pending.clear()

    async def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        rid = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self.pending[rid] = fut
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps({"id": rid, **payload}, default=str) + "\n").encode())
        await self.proc.stdin.drain()
        return await fut

    def alive(self) -> bool:
        return self.proc.returncode is None and not self.loop.is_closed()

    def kill(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()


_PROC: _NodeProcess | None = None
_LOCK: dict[int, asyncio.Lock] = {}


def node_path() -> str | None:
    return shutil.which("node")


async def _process() -> _NodeProcess:
    global _PROC
    loop = asyncio.get_running_loop()
    lock = _LOCK.setdefault(id(loop), asyncio.Lock())
    async with lock:
        if _PROC is not None and _PROC.loop is loop and _PROC.alive():
            return _PROC
        if _PROC is not None:
            _PROC.kill()
        node = node_path()
        if node is None:
            raise AssertionRuntimeError(_MISSING)
        proc = await asyncio.create_subprocess_exec(
            node, "-e", _SERVER_JS, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        _PROC = _NodeProcess(proc, loop)
        return _PROC


async def call_js(code: str, output: str, context: dict[str, Any], *, base_dir: str = ".") -> Any:
    """Run a javascript assertion's code in the shared node process; its exceptions -> AssertionRuntimeError."""
    proc = await _process()
    reply = await proc.request({"code": code, "output": output, "context": context, "base_dir": base_dir})
    if not reply.get("ok"):
        raise AssertionRuntimeError(f"JavaScript threw {reply.get('error')}")
    return reply.get("result")


def check_syntax(code: str) -> str | None:
    """Compile inline code once with node (config time). None when fine or when node is absent."""
    node = node_path()
    if node is None or code.startswith("file://"):
        return None
    script = _SERVER_JS
    req = json.dumps({"id": 0, "check": True, "code": code})
    try:
        done = subprocess.run([node, "-e", script], input=req + "\n", capture_output=True, text=True,
                              timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        msg = json.loads(done.stdout.splitlines()[0])
    except (ValueError, IndexError):
        return None
    return None if msg.get("ok") else str(msg.get("error"))


def shutdown() -> None:
    """Stop the node process (called at exit; safe to call twice)."""
    global _PROC
    if _PROC is not None:
        _PROC.kill()
        _PROC = None


atexit.register(shutdown)

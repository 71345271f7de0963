#!/usr/bin/env python3
"""LLM path CPU: calls per second against a zero-latency OpenAI-compatible server, next to a bare aiohttp client.

    python benchmarks/llm_calls.py [--calls 2000] [-j 64] [--runs 3] [--skip-litellm]

A minimal asyncio HTTP server (a subprocess, keep-alive, one canned chat completion, no latency) stands in for a
local vLLM / llama.cpp server. Each client runs in its own subprocess, makes `--calls` chat completions with `-j`
in flight, and reports calls/s over its timed section (imports and start-up excluded):

- floor:            a bare asyncio + aiohttp client (the same requests; what this machine and server allow)
- provider:         evalrun's LLMTransport.chat (cache off), as a provider call makes it
- provider-litellm: the same with EVALRUN_LLM_TRANSPORT=litellm (every call through litellm.acompletion)
- eval:             a whole suite in-process (Runner): per case one provider call and one llm-rubric grader call,
                    assertions, results file; calls/s counts both calls
- eval-litellm:     the same through litellm

Target (issue 14): evalrun's provider path >= 0.25 x the floor. The server's CPU shares the machine's cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPLY = json.dumps({"reason": "ok", "pass": True, "score": 1.0})

SERVER = r'''
import asyncio, json, sys
body = json.dumps({"id": "c1", "object": "chat.completion", "created": 1, "model": "fake-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": sys.argv[1]}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}}).encode()
reply = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode()
         + b"\r\n\r\n" + body)

class P(asyncio.Protocol):
    def connection_made(self, t):
        self.t, self.buf = t, b""
    def data_received(self, data):
        self.buf += data
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if not sep:
                return
            n = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    n = int(line[15:])
            if len(rest) < n:
                return
            self.buf = rest[n:]
            self.t.write(reply)

async def main():
    srv = await asyncio.get_running_loop().create_server(P, "127.0.0.1", 0, backlog=512)
    print(srv.sockets[0].getsockname()[1], flush=True)
    await srv.serve_forever()

asyncio.run(main())
'''

FLOOR = r'''
import asyncio, json, sys, time, resource
import aiohttp
url, n, j = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
async def run():
    sem = asyncio.Semaphore(j)
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer sk-fake"}) as session:
        async def one(i):
            async with sem:
                body = {"model": "fake-model", "messages": [{"role": "user", "content": f"Question {i}"}]}
                async with session.post(f"{url}/chat/completions", json=body) as resp:
                    resp.raise_for_status()
                    await resp.json()
        await one(-1)
        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(i) for i in range(n)))
        print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "calls": n}))
asyncio.run(run())
'''

PROVIDER = r'''
import asyncio, json, sys, time
from evalrun.providers.litellm_ import LLMTransport
url, n, j = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
async def run():
    t = LLMTransport(max_concurrency=j, use_cache=False)
    params = {"api_base": url, "api_key": "sk-fake", "temperature": 0}
    async def one(i):
        out = await t.chat("openai/fake-model", [{"role": "user", "content": f"Question {i}"}], params)
        assert out.text
    await one(-1)  # the first call imports what it needs (litellm on its path)
    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "calls": n}))
    await t.aclose()
asyncio.run(run())
'''

EVAL = r'''
import asyncio, json, sys, time
from pathlib import Path
from evalrun import config
from evalrun.run.options import RunOptions
from evalrun.run.runner import Runner
from evalrun.providers import litellm_
cfg, out, j = sys.argv[1], sys.argv[2], int(sys.argv[3])
litellm_.load_litellm() if sys.argv[4] == "litellm" else None  # imported before timing, as floor imports aiohttp
suite = config.load([cfg])
opts = RunOptions.merge(suite.evaluate_options, max_concurrency=j, no_cache=True, results_file=Path(out))
runner = Runner(suite, opts)
t0, c0 = time.perf_counter(), time.process_time()
outcome = asyncio.run(runner.run())
s = outcome.summary
assert s["passed"] == s["total"], s
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "calls": 2 * s["total"]}))
'''


def client(code: str, args: list[str], env: dict[str, str]) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"client failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def write_suite(folder: Path, url: str, cases: int) -> Path:
    lines = ["providers:", "  - id: openai:chat:fake-model", f"    config: {{apiBaseUrl: '{url}', apiKey: sk-fake}}",
             "grader:", "  id: openai:chat:fake-model", f"  config: {{apiBaseUrl: '{url}', apiKey: sk-fake}}",
             "prompts: ['Question {{n}}']", "tests:", "  - vars:", "      n: " + json.dumps([str(i) for i in range(cases)]),
             "    assert: [{type: contains, value: reason}, {type: llm-rubric, value: answers the question}]"]
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("-j", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3, help="best of N per client")
    ap.add_argument("--skip-litellm", action="store_true", help="skip the (slow) litellm paths")
    args = ap.parse_args()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-c", SERVER, REPLY], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            suite = write_suite(folder, url, args.calls // 2)
            n, j = str(args.calls), str(args.j)
            clients = [("floor", FLOOR, [url, n, j], {}),
                       ("provider", PROVIDER, [url, n, j], {}),
                       ("eval", EVAL, [str(suite), str(folder / "r.jsonl"), j, "direct"],
                        {"EVALRUN_CACHE_DIR": str(folder / "cache")})]
            if not args.skip_litellm:
                clients += [("provider-litellm", PROVIDER, [url, n, j], {"EVALRUN_LLM_TRANSPORT": "litellm"}),
                            ("eval-litellm", EVAL, [str(suite), str(folder / "r.jsonl"), j, "litellm"],
                             {"EVALRUN_LLM_TRANSPORT": "litellm", "EVALRUN_CACHE_DIR": str(folder / "cache")})]
            best: dict[str, float] = {}
            for _ in range(args.runs):  # clients interleaved, so each run sees the same machine load
                for name, code, cargs, extra in clients:
                    r = client(code, cargs, {**env, **extra})
                    rate = r["calls"] / r["wall"]
                    print(f"  {name:<17} {rate:8.0f} calls/s  CPU {1000 * r['cpu'] / r['calls']:6.3f} ms/call  "
                          f"({r['calls']:.0f} calls in {r['wall']:.2f} s)", flush=True)
                    best[name] = max(best.get(name, 0.0), rate)
            print(f"best of {args.runs} (calls={args.calls}, -j {args.j}, load average {os.getloadavg()[0]:.1f}):")
            for name, rate in best.items():
                print(f"  {name:<17} {rate:8.0f} calls/s  = {rate / best['floor']:.3f} x floor")
    finally:
        server.kill()
        server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

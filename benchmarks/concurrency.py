#!/usr/bin/env python3
"""Concurrency: how close `evalrun eval -j 20` comes to the ideal against a model server with 200 ms latency.

    python benchmarks/concurrency.py [--small 20] [--large 200] [-j 20] [--runs 3] [--skip-peer]

A fake OpenAI-compatible server (tests/fakeserver.py, in this process) answers every chat completion after
200 ms. Each tool runs as a subprocess on a config with an `openai:chat:fake-model` provider pointing at it
(`apiBaseUrl`), once with `--small` and once with `--large` cases, cache off. Going from 20 to 200 cases at
-j 20 ideally adds (200 - 20) / 20 x 0.2 s = 1.8 s; fixed costs (start-up, imports) cancel out in the
difference. Target: evalrun's added time <= 1.15 x ideal (promptfoo 0.121.20 is at about 1.0x).

`floor` is the physical limit of this server and machine, measured in the same run: a bare asyncio + aiohttp
client (no litellm, no evalrun) making the same requests with the same bound of -j in flight, in a subprocess.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakeserver import FakeOpenAI  # noqa: E402

PEERS = (Path("/work/peer/node_modules/.bin/promptfoo"), Path("/tmp/i11peer/node_modules/.bin/promptfoo"))
PROMPTFOO = next((p for p in PEERS if p.exists()), PEERS[0])  # promptfoo 0.121.20, wherever it is installed
PEER_ENV = {"PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1"}
LATENCY = 0.2


def write_config(folder: Path, n: int, url: str) -> Path:
    lines = ["description: concurrency benchmark", "providers:", "  - id: openai:chat:fake-model",
             f"    config: {{apiBaseUrl: '{url}', temperature: 0}}", "prompts: ['Question {{n}}']", "tests:"]
    lines += [f"  - vars: {{n: '{i}'}}\n    assert: [{{type: contains, value: ok}}]" for i in range(n)]
    path = folder / f"promptfooconfig-{n}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def wall(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def measure(name: str, make_cmd, env: dict[str, str], folder: Path, small: Path, large: Path,
            runs: int, ideal: float) -> float:
    t_small = min(wall(make_cmd(small), env, folder) for _ in range(runs))
    t_large = min(wall(make_cmd(large), env, folder) for _ in range(runs))
    added = t_large - t_small
    print(f"{name:9} small {t_small:5.2f} s  large {t_large:5.2f} s  added {added:5.2f} s  "
          f"= {added / ideal:.3f} x ideal {ideal:.2f} s")
    return added / ideal


def floor_client(url: str, n: int, j: int) -> None:
    """`--floor-client URL N J`: N chat completions, J in flight, with a bare aiohttp client (run as a subprocess)."""
    import asyncio

    import aiohttp

    async def run() -> None:
        sem = asyncio.Semaphore(j)
        async with aiohttp.ClientSession(headers={"Authorization": "Bearer sk-fake"}) as session:

            async def one(i: int) -> None:
                async with sem:
                    body = {"model": "fake-model", "messages": [{"role": "user", "content": f"Question {i}"}]}
                    async with session.post(f"{url}/chat/completions", json=body) as resp:
                        resp.raise_for_status()
                        await resp.json()

            await asyncio.gather(*(one(i) for i in range(n)))

    asyncio.run(run())


def main() -> int:
    if sys.argv[1:2] == ["--floor-client"]:
        floor_client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=20)
    ap.add_argument("--large", type=int, default=200)
    ap.add_argument("-j", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3, help="best of N per size")
    ap.add_argument("--skip-peer", action="store_true")
    args = ap.parse_args()
    ideal = (args.large - args.small) / args.j * LATENCY
    with FakeOpenAI(default=lambda body: {"content": "ok", "delay": LATENCY}) as server, \
            tempfile.TemporaryDirectory() as tmp:
        # http.server listens with a backlog of 5: at -j 20 the kernel drops SYNs and clients wait 1 s to
        # retransmit. A real model server listens with a deep backlog; so does this one.
        server._server.socket.listen(128)
        # http.server writes the headers and the body of a reply in two send() calls with Nagle's algorithm on:
        # the body waits for the client's delayed ACK, 40 ms on Linux, so every reply took 240 ms, not 200 ms.
        # Real model servers (uvicorn, vLLM, llama.cpp) set TCP_NODELAY; so does this one.
        server._server.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
        folder = Path(tmp)
        small, large = (write_config(folder, n, server.url) for n in (args.small, args.large))
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "sk-fake",
               "EVALRUN_CACHE_DIR": str(folder / "cache")}
        env.pop("CI", None)

        def evalrun_cmd(cfg: Path) -> list[str]:
            return [sys.executable, "-m", "evalrun", "eval", str(cfg), "-j", str(args.j), "--no-cache",
                    "--no-table", "--no-progress-bar", "--results-file", str(folder / "results.jsonl")]

        def floor_cmd(cfg: Path) -> list[str]:
            n = args.small if cfg == small else args.large
            return [sys.executable, str(Path(__file__).resolve()), "--floor-client", server.url, str(n), str(args.j)]

        measure("floor", floor_cmd, env, folder, small, large, args.runs, ideal)
        ratio = measure("evalrun", evalrun_cmd, env, folder, small, large, args.runs, ideal)
        if not args.skip_peer and PROMPTFOO.exists():
            peer_env = {**env, **PEER_ENV, "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo")}

            def peer_cmd(cfg: Path) -> list[str]:
                return [str(PROMPTFOO), "eval", "-c", str(cfg), "-j", str(args.j), "--no-cache", "--no-table",
                        "--no-progress-bar"]

            measure("promptfoo", peer_cmd, peer_env, folder, small, large, args.runs, ideal)
        print(f"evalrun target: <= 1.15 x ideal: {'met' if ratio <= 1.15 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

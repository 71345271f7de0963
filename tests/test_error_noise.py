"""Errors without noise: one mistake repeated by many tests is shown once with a count, tests are numbered as
key paths (0-based) everywhere, and did-you-mean hints prefer the closest meaning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.errors import did_you_mean


def _rows(tmp_path: Path, n: int, assertion: dict[str, object]) -> Path:
    with open(tmp_path / "rows.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps({"vars": {"q": f"question {i}", "answer": "a"}, "assert": [assertion]}) + "\n")
    cfg = tmp_path / "suite.yaml"
    cfg.write_text("prompts: ['{{q}}']\nproviders: [echo]\ntests: file://rows.jsonl\n")
    return cfg


def test_an_undefined_variable_used_by_40_rows_is_reported_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _rows(tmp_path, 40, {"type": "contains", "value": "{{ answr }}"})  # a typo of `answer`
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("undefined template variable 'answr'") == 1 and err.count("hint:") == 1
    assert "rows.jsonl:1: [0].assert[0]: " in err
    assert "and 39 more tests: " in err and "rows.jsonl:2, " in err and err.rstrip().endswith("40 errors")
    assert len(err.splitlines()) == 4


def test_an_undefined_prompt_variable_names_the_tests_by_key_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: ['Hi {{nme}}']\nproviders: [echo]\ntests:\n" +
                   "".join(f"  - vars: {{name: {i}}}\n" for i in range(6)))  # `nme`: a typo of `name`
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "used by tests[0] at " in err and "test 1" not in err  # 0-based, as the key paths are
    assert "and 5 more tests: tests[1] at " in err and err.count("undefined template variable") == 1


@pytest.mark.parametrize(("typed", "meant"), [
    ("contains-every", "contains-all"), ("not-contains-every", "not-contains-all"),
    ("icontains-each", "icontains-all"), ("contains-some", "contains-any"), ("contain-all", "contains-all"),
    ("contians", "contains"), ("regexp", "regex"), ("faithfullness", "faithfulness")])
def test_did_you_mean_prefers_the_closest_meaning(typed: str, meant: str) -> None:
    from evalrun.assertions import registry

    registry.load_all()
    names = registry.names()
    assert did_you_mean(typed, [*names, *(f"not-{n}" for n in names)]) == f"did you mean `{meant}`?"


def test_an_unknown_type_gets_the_hint_of_its_meaning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: [hi]\nproviders: [echo]\ntests:\n  - assert:\n      - type: contains-every\n"
                   "        value: [a, b]\n")
    assert main(["validate", str(cfg)]) == 2
    assert "did you mean `contains-all`?" in capsys.readouterr().err

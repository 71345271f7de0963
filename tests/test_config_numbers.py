"""Every number of a config has a sane range, checked at load with FILE:LINE; CLI bounds reject NaN and
huge values; JSON output never holds NaN/Infinity; overflowing weights never give a PASS with a NaN score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.assertions.engine import combine
from evalrun.cli import main
from evalrun.config import load
from evalrun.errors import ConfigError
from evalrun.types import AssertionResult

HEAD = "prompts: ['{{x}}']\nproviders: [echo]\n"


def _load(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    load([str(path)])


@pytest.mark.parametrize("text,line,words", [
    (HEAD + "evaluateOptions:\n  delay: 1e309\ntests: [{vars: {x: a}}]\n", 4, "delay: inf is out of range"),
    (HEAD + "evaluateOptions:\n  repeat: 1e308\ntests: [{vars: {x: a}}]\n", 4, "repeat: 1e+308 is out of range"),
    (HEAD + "evaluateOptions:\n  maxConcurrency: 1000000\ntests: [{vars: {x: a}}]\n", 4, "out of range"),
    (HEAD + "evaluateOptions:\n  timeoutMs: 1e300\ntests: [{vars: {x: a}}]\n", 4, "out of range"),
    ("prompts: [x]\nproviders:\n  - id: echo\n    delay: .inf\ntests: [{vars: {x: a}}]\n", 4, "out of range"),
    (HEAD + "tests:\n  - vars: {x: a}\n    assert:\n      - type: contains\n        value: a\n"
            f"        threshold: {10 ** 400}\n", 8, "out of range"),
    (HEAD + "tests:\n  - vars: {x: a}\n    assert:\n      - type: contains\n        value: a\n"
            "        weight: .inf\n", 8, "weight: inf is out of range"),
    (HEAD + "tests:\n  - vars: {x: a}\n    assert:\n      - type: contains\n        value: a\n"
            "        weight: .nan\n", 8, "NaN is not a valid number"),
    (HEAD + "tests:\n  - vars: {x: a, context: c}\n    assert:\n      - type: faithfulness\n"
            "        threshold: 7\n", 7, "outside faithfulness's score range 0..1"),
    (HEAD + "tests:\n  - vars: {x: a, context: c, query: q}\n    assert:\n      - type: context-relevance\n"
            "        threshold: 3\n", 7, "score range 0..1"),
])
def test_out_of_range_numbers_are_config_errors_at_their_line(text: str, line: int, words: str,
                                                              tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        _load(tmp_path, text)
    assert e.value.line == line and words in str(e.value), str(e.value)


def test_thresholds_within_a_scale_are_accepted(tmp_path: Path) -> None:
    _load(tmp_path, HEAD + "tests:\n  - vars: {x: a, context: c, query: q}\n    assert:\n"
                           "      - {type: context-relevance, threshold: 3, config: {scale: 5}}\n"
                           "      - {type: levenshtein, value: a, threshold: 40}\n"
                           "      - {type: latency, threshold: 90000}\n"
                           "      - {type: contains, value: a, weight: 1000000}\n")


@pytest.mark.parametrize("flag,value", [("-j", "1000000"), ("-j", "0"), ("--timeout", "nan"),
                                        ("--timeout", "inf"), ("--delay", "99999999"), ("--repeat", "100000")])
def test_cli_numbers_out_of_range_are_usage_errors(flag: str, value: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + "tests: [{vars: {x: a}}]\n")
    assert main(["eval", str(path), flag, value, "--no-progress-bar", "--results-file",
                 str(tmp_path / "r.jsonl")]) == 2
    assert "out of range" in capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()


def _result(score: float | None, weight: float) -> AssertionResult:
    return AssertionResult(type="python", pass_=True, score=score, threshold=None, weight=weight, reason="ok")


def test_weights_whose_sum_overflows_give_a_finite_score() -> None:
    score, passed, _ = combine([_result(1.0, 1e308), _result(0.0, 1e308)], threshold=0.4)
    assert score == pytest.approx(0.5) and passed


def test_non_finite_scores_never_pass() -> None:
    score, passed, reason = combine([_result(float("inf"), 1.0), _result(float("-inf"), 1.0)], threshold=None)
    assert not passed and "not a finite number" in reason


def test_json_reports_never_hold_nan_or_infinity(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + "tests:\n  - vars: {x: a, n: .nan, i: .inf}\n    assert:\n"
                           "      - {type: python, value: \"float('inf')\"}\n")
    outs = [str(tmp_path / "r.json"), str(tmp_path / "r.jsonl"), str(tmp_path / "r.html")]
    main(["eval", str(path), "--no-progress-bar", "--results-file", str(tmp_path / "run.jsonl"),
          *sum((["-o", o] for o in outs), [])])
    for p in [*outs[:2], str(tmp_path / "run.jsonl")]:
        text = Path(p).read_text()
        assert "NaN" not in text and "Infinity" not in text, p
        for line in (text.splitlines() if p.endswith("jsonl") else [text]):
            json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in a report"))
    assert "NaN" not in Path(outs[2]).read_text() and "Infinity" not in Path(outs[2]).read_text()

"""select-best: the outputs of one test across prompts/providers are compared in one grader call per group."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import route, user_text


def _suite(tmp_path: Path, url: str, providers: str = "[echo]", vars: str = "{q: [cats, dogs]}") -> Path:
    p = tmp_path / "suite.yaml"
    p.write_text(textwrap.dedent(f"""\
        prompts: ["Short: {{{{q}}}}", "A long answer about {{{{q}}}} with details"]
        providers: {providers}
        grader: {{id: 'openai:chat:fake-model', config: {{apiBaseUrl: '{url}', apiKey: sk-x}}}}
        tests:
          - vars: {vars}
            assert:
              - type: select-best
                value: the most detailed answer
              - type: contains
                value: "{{{{q}}}}"
        """))
    return p


def _results(tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    out = tmp_path / "out.json"
    main(["eval", str(suite), "--no-cache", "-o", str(out), "-j", "1"])
    capsys.readouterr()
    return list(json.loads(out.read_text())["results"])


def test_one_call_per_group_and_only_the_chosen_output_passes(
        tmp_path: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    route(fake_openai, judge={"best": 1, "reason": "more detail"})
    results = _results(tmp_path, _suite(tmp_path, fake_openai.url), capsys)  # -j 1: no deadlock either
    verdicts = {(r["vars"]["q"], str(r["prompt"])[:5]): r["assertions"][0] for r in results}
    assert len(verdicts) == 4
    for q in ("cats", "dogs"):
        assert verdicts[(q, "A lon")]["pass"] and verdicts[(q, "A lon")]["score"] == 1.0
        assert not verdicts[(q, "Short")]["pass"] and "output 1 of 2 was chosen" in verdicts[(q, "Short")]["reason"]
    assert len(fake_openai.requests) == 2  # one grader call per group (vars combination), not per case
    prompt = user_text(fake_openai.requests[0])
    assert "<<<OUTPUT 0>>>\nShort: cats" in prompt and "<<<OUTPUT 1>>>\nA long answer about cats" in prompt


def test_a_failing_provider_does_not_block_the_group(tmp_path: Path, fake_openai: FakeOpenAI,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.py").write_text("def call_api(prompt, options, context):\n    raise RuntimeError('down')\n")
    route(fake_openai, judge={"best": 0, "reason": "r"})
    suite = _suite(tmp_path, fake_openai.url, providers="[echo, 'file://broken.py']", vars="{q: cats}")
    results = _results(tmp_path, suite, capsys)
    statuses = sorted(r["status"] for r in results)
    assert statuses == ["error", "error", "fail", "pass"]  # the broken provider's two cases are errors
    echo = [r for r in results if r["status"] != "error"]
    assert len(echo) == 2 and sum(r["assertions"][0]["pass"] for r in echo) == 1
    assert len(fake_openai.requests) == 1


def test_a_single_output_is_an_error(tmp_path: Path, fake_openai: FakeOpenAI, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "one.yaml"
    suite.write_text(textwrap.dedent(f"""\
        prompts: ["{{{{q}}}}"]
        providers: [echo]
        grader: {{id: 'openai:chat:fake-model', config: {{apiBaseUrl: '{fake_openai.url}', apiKey: sk-x}}}}
        tests:
          - vars: {{q: cats}}
            assert:
              - type: select-best
                value: best
        """))
    r = _results(tmp_path, suite, capsys)[0]["assertions"][0]
    assert not r["pass"] and "needs at least 2 outputs" in r["error"] and not fake_openai.requests


def test_select_best_with_the_builtin_grader_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")  # with it, promptfoo's default grader would grade (as in promptfoo)
    suite = tmp_path / "s.yaml"
    suite.write_text("prompts: [a, b]\nproviders: [echo]\ntests:\n  - assert:\n      - type: select-best\n"
                     "        value: best\n")
    assert main(["validate", str(suite)]) == 2
    assert "the builtin grader cannot grade select-best" in capsys.readouterr().err

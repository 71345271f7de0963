"""evalrun.testing.check: one output, any assertion (graded included), a readable AssertionError."""

from __future__ import annotations

import asyncio
import re

import pytest

from evalrun.errors import ConfigError
from evalrun.testing import CheckError, check, check_async

CONTEXT = "Canberra is the capital of Australia. It was chosen in 1908 as a compromise between Sydney and Melbourne."


def test_graded_assertion_passes_with_the_builtin_grader() -> None:
    rec = check("Canberra is the capital of Australia. It was chosen in 1908.",
                [{"type": "faithfulness", "threshold": 0.8}, {"type": "icontains", "value": "canberra"}],
                vars={"context": CONTEXT})
    assert rec["status"] == "pass"
    faith = rec["assertions"][0]
    assert faith["grader"] == "builtin" and faith["score"] >= 0.8
    assert [c["verdict"] for c in faith["details"]["claims"]] == ["supported", "supported"]


def test_graded_failure_reads_well() -> None:
    with pytest.raises(AssertionError) as info:
        check("Canberra is the capital of Australia. It has two million people.",
              [{"type": "faithfulness", "threshold": 0.9}, {"type": "icontains", "value": "canberra"}],
              vars={"context": CONTEXT})
    msg = str(info.value)
    assert msg.startswith("evalrun check failed: 2 claims, 1 not supported by the context")
    assert re.search(r"\[FAIL\] faithfulness \(score 0\.[0-8]\d*\) \[grader builtin\]", msg), msg
    assert "- supported, chunks [0]: 'Canberra is the capital of Australia.'" in msg
    assert "- unsupported: 'Canberra has two million people.'" in msg
    assert "(1 other assertion passed)" in msg
    assert "output: Canberra is the capital of Australia. It has two million people." in msg
    assert "provider:" not in msg


def test_deterministic_assertion_with_vars_and_a_single_mapping() -> None:
    assert check("Hello Ada", {"type": "contains", "value": "{{name}}"}, vars={"name": "Ada"})["pass"] is True
    with pytest.raises(AssertionError, match='Output does not contain "Bob"'):
        check("Hello Ada", {"type": "contains", "value": "{{name}}"}, vars={"name": "Bob"})
    with pytest.raises(AssertionError):
        check("Hello Ada", [{"type": "not-contains", "value": "Ada"}])


def test_non_string_output_is_checked_as_json() -> None:
    check({"answer": 42}, [{"type": "is-json"}, {"type": "contains", "value": '"answer": 42'}])


def test_an_assertion_that_cannot_be_evaluated_is_an_error_not_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")  # with it, promptfoo's default grader would grade (as in promptfoo)
    with pytest.raises(CheckError, match="the builtin grader cannot grade llm-rubric") as info:
        check("Anything", [{"type": "llm-rubric", "value": "is polite"}])
    assert not isinstance(info.value, AssertionError)
    assert "--grader MODEL" in str(info.value)


def test_bad_assertions_are_config_errors_with_key_and_hint() -> None:
    with pytest.raises(ConfigError) as info:
        check("x", [{"type": "contians", "value": "x"}])
    assert "assert[0].type: unknown assertion type 'contians'" in str(info.value)
    assert "did you mean `contains`" in str(info.value)
    with pytest.raises(ConfigError, match="unknown key 'vlue'"):
        check("x", [{"type": "contains", "vlue": "x"}])
    with pytest.raises(ConfigError, match="needs a list of assertions"):
        check("x", [])


def test_grader_argument_selects_the_grader() -> None:
    with pytest.raises(ConfigError, match="nosuchprovider"):
        check("x", [{"type": "faithfulness"}], vars={"context": "x"}, grader="nosuchprovider:model")


def test_check_async_inside_a_running_loop() -> None:
    async def main() -> str:
        rec = await check_async("yes", [{"type": "equals", "value": "yes"}])
        return str(rec["status"])

    assert asyncio.run(main()) == "pass"

"""webhook and pi. webhook: the verdict of a local grader server (pass, fail, score, not-), its request body, and an ERROR for a
failed request, an HTTP error, a reply without `pass`, and a timeout; bad URLs are config errors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.test_assertions_helpers import bad, run
from tests.webhookserver import WebhookServer


def grade(body: dict[str, Any]) -> tuple[int, Any]:
    out = body["output"]
    if out == "slow":
        time.sleep(1.5)
    return {"ok": (200, {"pass": True}), "bad": (200, {"pass": False, "reason": "too rude"}),
            "scored": (200, {"pass": True, "score": 0.25}), "nopass": (200, {"score": 1}),
            "oops": (500, {"error": "down"}), "text": (200, "not json")}.get(out, (200, {"pass": True}))


@pytest.fixture(scope="module")
def hook() -> Iterator[WebhookServer]:
    with WebhookServer(grade) as server:
        yield server


def test_pass_fail_score_and_not(hook: WebhookServer) -> None:
    r = run("webhook", "ok", hook.url, ctx_kw={"vars": {"q": "hi"}})
    assert r.pass_ and r.score == 1.0 and r.reason == "Assertion passed"
    assert hook.requests[-1] == {"output": "ok", "context": {"prompt": "the prompt", "vars": {"q": "hi"}}}
    r = run("webhook", "bad", hook.url)
    assert not r.pass_ and r.score == 0.0 and r.reason == "too rude"
    r = run("webhook", "scored", hook.url)
    assert r.pass_ and r.score == 0.25
    r = run("not-webhook", "scored", hook.url)
    assert not r.pass_ and r.score == 0.75
    assert run("not-webhook", "bad", hook.url).pass_


@pytest.mark.parametrize(("output", "msg"), [("oops", "status 500"), ("nopass", "without a boolean `pass`"),
                                             ("text", "without a boolean `pass`")])
def test_bad_replies_are_errors(hook: WebhookServer, output: str, msg: str) -> None:
    r = run("not-webhook", output, hook.url)
    assert r.error and msg in r.error and not r.pass_


def test_unreachable_and_timeout_are_errors(hook: WebhookServer, monkeypatch: pytest.MonkeyPatch) -> None:
    r = run("webhook", "ok", "http://127.0.0.1:9/grade")
    assert r.error and r.error.startswith("Webhook error: http://127.0.0.1:9/grade")
    monkeypatch.setenv("WEBHOOK_TIMEOUT", "200")
    r = run("webhook", "slow", hook.url)
    assert r.error and "no reply within 0.2s" in r.error
    monkeypatch.setenv("WEBHOOK_TIMEOUT", "soon")
    assert "WEBHOOK_TIMEOUT must be milliseconds" in (run("webhook", "ok", hook.url).error or "")


@pytest.mark.parametrize("value", [3, "", "ftp://x/y", ["http://a"]])
def test_bad_urls(value: Any) -> None:
    assert "URL" in bad("webhook", value).message
    assert "value is required" in bad("webhook").message


def _pi(url: str, monkeypatch: pytest.MonkeyPatch, type_: str, output: str, value: Any = "Is it polite?",
        **kw: Any) -> Any:
    monkeypatch.setenv("WITHPI_API_KEY", "pi-key")
    monkeypatch.setenv("WITHPI_API_URL", url + "/scoring_system/score")
    return run(type_, output, value, **kw)


def test_pi_scores_through_the_fake_server(fake_openai: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_openai.pi_score = lambda body: {"total_score": 0.7 if "please" in body["llm_output"] else 0.5,
                                         "question_scores": {"Is it polite?": 0.7}}
    r = _pi(fake_openai.url, monkeypatch, "pi", "yes please")
    assert r.pass_ and r.score == 0.7 and r.details["question_scores"] == {"Is it polite?": 0.7}
    assert fake_openai.pi_requests[-1] == {"llm_input": "the prompt", "llm_output": "yes please",
                                           "scoring_spec": [{"question": "Is it polite?"}]}
    assert fake_openai.headers[-1]["x-api-key"] == "pi-key"
    r = _pi(fake_openai.url, monkeypatch, "pi", "no")                       # 0.5 is not above 0.5
    assert not r.pass_ and r.reason == "Pi Scorer: 0.50 <= threshold 0.5"
    assert _pi(fake_openai.url, monkeypatch, "pi", "yes please", threshold=0.8).pass_ is False
    r = _pi(fake_openai.url, monkeypatch, "not-pi", "no")
    assert r.pass_ and r.score == 0.5


def test_pi_errors(fake_openai: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_openai.pi_score = lambda body: {"detail": "bad key"}
    r = _pi(fake_openai.url, monkeypatch, "not-pi", "x")
    assert r.error and "Could not perform remote grading" in r.error and not r.pass_
    monkeypatch.delenv("WITHPI_API_KEY")
    r = run("pi", "x", "Is it polite?")
    assert r.error and "WITHPI_API_KEY must be set" in r.error
    assert "string value" in bad("pi", 3).message and "value is required" in bad("pi").message

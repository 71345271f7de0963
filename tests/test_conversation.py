"""promptfoo's `_conversation` (multi-turn test sequences): earlier turns of the same provider, prompt and
`metadata.conversationId`, in run order, with promptfoo 0.121.20's turn shape ({prompt, input, output})."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalrun.config import load
from evalrun.run.split import serial_reason
from tests.fakeserver import FakeOpenAI
from tests.test_promptfoo_compat_features import run_suite, write

TEXT = """\
prompts:
  - label: threaded
    raw: "{% for turn in _conversation %}[{{ turn.input }} => {{ turn.output }}] {% endfor %}Q: {{q}}"
  - label: plain
    raw: "plain {{q}}"
providers:
  - id: echo
    label: a
  - id: echo
    label: b
evaluateOptions: {maxConcurrency: 8}
tests:
  - vars: {q: one}
  - vars: {q: two}
  - vars: {q: other}
    metadata: {conversationId: side}
  - vars: {q: three}
  - vars: {q: alone}
    options: {disableConversationVar: true}
"""


def test_each_thread_sees_its_earlier_turns_in_order(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": TEXT})
    assert serial_reason(load([str(cfg)])) is not None
    rows = [r for r in run_suite(cfg) if "Q:" in (r.output or "")]
    by_test: dict[int, set[str]] = {}
    for r in rows:
        by_test.setdefault(r.test_index, set()).add(r.output or "")
    assert by_test[0] == {"Q: one"}  # the same for providers a and b: each has its own thread
    assert by_test[1] == {"[Q: one => Q: one] Q: two"}
    assert by_test[2] == {"Q: other"}  # conversationId `side`: a thread of its own
    assert by_test[3] == {"[Q: one => Q: one] [[Q: one => Q: one] Q: two => [Q: one => Q: one] Q: two] Q: three"}
    assert by_test[4] == {"Q: alone"}  # disableConversationVar: no history (the turn still joins the thread)
    assert len(rows) == 10


def test_chat_turns_keep_the_message_list_and_its_last_content(tmp_path: Path) -> None:
    prompt = ('[{"role": "system", "content": "sys"},{% for c in _conversation %}'
              '{"role": "user", "content": {{ c.input | dump }}},'
              '{"role": "assistant", "content": {{ c.output | dump }}},{% endfor %}'
              '{"role": "user", "content": "{{ q }}"}]')

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": "answer to " + body["messages"][-1]["content"]}

    with FakeOpenAI(default=reply) as server:
        cfg = write(tmp_path, {
            "prompt.json": prompt,
            "promptfooconfig.yaml": (
                "prompts: [file://prompt.json]\n"
                f"providers:\n  - id: openai:chat:gpt-4o-mini\n    config: {{apiBaseUrl: '{server.url}', "
                "apiKey: sk-test}\ntests:\n  - vars: {q: first}\n  - vars: {q: second}\n"
                "  - vars: {q: third}\n")})
        rows = sorted(run_suite(cfg), key=lambda r: r.test_index)
        sent = [[(m["role"], m["content"]) for m in req["messages"]] for req in server.requests]
    assert [r.output for r in rows] == ["answer to first", "answer to second", "answer to third"]
    assert sent[2] == [("system", "sys"), ("user", "first"), ("assistant", "answer to first"),
                       ("user", "second"), ("assistant", "answer to second"), ("user", "third")]


def test_a_failed_turn_joins_the_thread_with_empty_output(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.script({"status": 400, "body": {"error": {"message": "bad request"}}})
        cfg = write(tmp_path, {"promptfooconfig.yaml": (
            "prompts: ['{% for t in _conversation %}<{{ t.input }}|{{ t.output }}>{% endfor %}{{q}}']\n"
            f"providers:\n  - id: openai:chat:gpt-4o-mini\n    config: {{apiBaseUrl: '{server.url}', "
            "apiKey: sk-test}\ntests:\n  - vars: {q: a}\n  - vars: {q: b}\n")})
        rows = sorted(run_suite(cfg), key=lambda r: r.test_index)
        second = server.requests[-1]["messages"][-1]["content"]
    assert rows[0].status == "error" and rows[1].status == "pass"
    assert second == "<a|>b"
    assert json.loads(json.dumps(second)) == "<a|>b"

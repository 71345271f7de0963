"""Hostile input: provider numbers are range-checked at their line, a non-UTF-8 CSV (or JSONL) test file is
reported at the line of its first bad byte, provider and grader errors stay one short line (the whole text in
the result's details), and an error inside a list item names the item's line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evalrun.cli import main
from tests.fakeserver import FakeOpenAI


def _validate(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    (tmp_path / "c.yaml").write_text(textwrap.dedent(text))
    capsys.readouterr()
    code = main(["validate", str(tmp_path / "c.yaml")])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("line", "bad", "message"), [
    ("timeout: -5", 6, "timeout -5 is out of range"),
    ("max_retries: -1", 6, "max_retries -1 is out of range: must be a whole number between 0 and 100"),
    ("maxRetries: 2.5", 6, "maxRetries 2.5 is out of range: must be a whole number"),
    ("timeoutMs: 0", 6, "timeoutMs 0 is out of range"),
    ("maxConcurrency: 0", 6, "maxConcurrency 0 is out of range"),
    ("delay: -1", 6, "delay -1 is out of range"),
    ("temperature: 7", 6, "temperature 7 is out of range"),
    ("timeout: soon", 6, "timeout must be a number, got 'soon'"),
])
def test_provider_numbers_are_checked_at_their_line(
        tmp_path: Path, line: str, bad: int, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _validate(tmp_path, f"""
        prompts: ['{{{{q}}}}']
        providers:
          - id: openai:gpt-4o-mini
            config:
              model_note: fine
              {line}
        tests:
          - vars: {{q: a}}
        """, capsys)
    assert code == 2 and f"c.yaml:{bad + 1}: providers[0].config.{line.split(':')[0]}: {message}" in err, err


def test_sane_provider_numbers_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _validate(tmp_path, """
        prompts: ['{{q}}']
        providers:
          - id: openai:gpt-4o-mini
            config: {timeout: 30, max_retries: 3, temperature: 0.2, max_tokens: 200, timeoutMs: 20000}
        tests:
          - vars: {q: a}
        """, capsys)
    assert code == 0, err
    code, err = _validate(tmp_path, """
        prompts: ['{{q}}']
        providers:
          - id: openai:gpt-4o-mini
            config: {timeoutMs: "{{ env.T }}"}
        tests:
          - vars: {q: a}
        """, capsys)  # provider config is not templated: a config error, not a traceback
    assert code == 2 and "c.yaml:5: providers[0].config.timeoutMs: timeoutMs must be a number" in err, err


@pytest.mark.parametrize("ext", [".csv", ".jsonl"])
def test_a_non_utf8_test_file_is_reported_at_the_first_bad_byte(
        tmp_path: Path, ext: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A file large enough to be streamed, its bad byte far beyond the decoder's first buffer."""
    rows = []
    for i in range(400):
        text = f"row {i} with some padding to fill the read buffer well beyond eight kilobytes"
        rows.append(f"{text},{i}" if ext == ".csv" else json.dumps({"vars": {"q": text, "n": i}}))
    rows[250] = rows[250].replace("row", "caf\u00e9")
    head = ["q,n"] if ext == ".csv" else []
    data = b"".join((line.encode("latin-1") if n == 250 else line.encode()) + b"\n"
                    for n, line in enumerate(rows))
    (tmp_path / f"t{ext}").write_bytes(b"".join(h.encode() + b"\n" for h in head) + data * 40)
    code, err = _validate(tmp_path, f"prompts: ['{{{{q}}}}']\nproviders: [echo]\ntests: file://t{ext}\n", capsys)
    line = 251 + len(head)
    assert code == 2 and f"t{ext}:{line}: not UTF-8 text: byte 0xe9 cannot be decoded" in err, err


def test_a_provider_error_page_is_one_short_line_with_the_page_in_details(
        fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n" + "<p>upstream down</p>\n" * 40 + "</html>"
    fake_openai.default = lambda body: {"status": 404, "raw": page}
    (tmp_path / "c.yaml").write_text(textwrap.dedent(f"""
        prompts: ['{{{{q}}}}']
        providers:
          - id: {fake_openai.url}/chat/completions
            config: {{body: {{q: "{{{{ prompt }}}}"}}, maxRetries: 0}}
        tests:
          - vars: {{q: a}}
        """))
    main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-history", "-o", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert rec["status"] == "error" and "\n" not in rec["error"] and len(rec["error"]) <= 240
    assert rec["error"].startswith("provider ") and "404" in rec["error"] and rec["error"] == rec["reason"]
    assert page[:200].replace("\n", "") in rec["error_detail"].replace("\n", "")
    assert "upstream down" not in out  # the table shows the short line


def test_a_grader_error_is_one_short_line_with_the_reply_in_details(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "grader.py").write_text(textwrap.dedent("""
        def call_api(prompt, options, context):
            return {"error": "grader is down:\\n" + "traceback line\\n" * 30}
        """))
    (tmp_path / "c.yaml").write_text(textwrap.dedent("""
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          - vars: {q: The sky is blue., context: The sky is blue.}
            assert:
              - type: faithfulness
                provider: file://grader.py
        """))
    main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-history", "-o", str(tmp_path / "r.json")])
    capsys.readouterr()
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    (a,) = rec["assertions"]
    assert a["error"] and "\n" not in a["error"] and "grader is down" in a["error"] and len(a["error"]) <= 240
    assert a["details"]["error_detail"].count("traceback line") == 30
    assert "\n" not in rec["error"]


def test_an_error_in_a_context_chunk_names_the_chunks_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _validate(tmp_path, """
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          - vars: {q: a}
            assert:
              - type: noise-sensitivity
                value: truth
                config:
                  contextChunks:
                    - text: one
                      relevant: true
                    - text: two
                      relevant: maybe
        """, capsys)
    assert code == 2 and "c.yaml:14: tests[0].assert[0].config.contextChunks[1].relevant: " in err, err



def _one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) <= 2 and len(err) < 600, err


@pytest.mark.parametrize("ref", ["latest~²", "x" * 5000])  # `isdigit()` takes "²", `int()` does not; a name too long
def test_compare_a_bad_run_reference_is_one_line(tmp_path: Path, ref: str, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text("prompts: [hi]\nproviders: [echo]\n")
    for _ in range(2):
        assert main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-table"]) == 0
    capsys.readouterr()
    assert main(["compare", ref, "latest", "--dir", str(tmp_path)]) == 2
    _one_line(capsys)


@pytest.mark.parametrize(("extra", "args"), [("", ["--workers", "²"]),
                                              ("lst: [{type: contains, value: hi}]\ntests: [{assert: [{$ref: '#/lst/²'}]}]\n", [])])
def test_a_superscript_digit_is_one_line(tmp_path: Path, extra: str, args: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(f"prompts: [hi]\nproviders: [echo]\n{extra}")
    assert main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-history", *args]) == 2
    _one_line(capsys)


def test_max_retries_env_with_a_superscript_digit_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun.errors import ConfigError
    from evalrun.retry import RetryPolicy

    monkeypatch.setenv("EVALRUN_MAX_RETRIES", "²")
    with pytest.raises(ConfigError, match="EVALRUN_MAX_RETRIES"):
        RetryPolicy.from_env()


@pytest.mark.parametrize("args", [["view", "{L}"], ["runs", "--dir", "{L}"], ["compare", "--dir", "{L}"],
                                  ["report", "{L}.jsonl"], ["init", "{L}"],
                                  ["eval", "{cfg}", "--filter-failing", "{L}.jsonl"], ["eval", "{cfg}", "--env-file", "{L}"]])
def test_a_name_too_long_in_any_argument_is_one_line(tmp_path: Path, args: list[str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A path the system refuses (a name over 255 bytes: File name too long) is a user error, never a traceback."""
    (tmp_path / "c.yaml").write_text("prompts: [hi]\nproviders: [echo]\n")
    filled = [a.format(L=str(tmp_path / ("y" * 300)), cfg=tmp_path / "c.yaml") for a in args]
    assert main(filled) == 2
    _one_line(capsys)

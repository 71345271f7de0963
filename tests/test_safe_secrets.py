"""Issue 36: every value that reaches a provider as a credential is absent from every file evalrun writes (results,
the five report formats, history, the response cache) and from what it prints, when an endpoint echoes it back;
URL userinfo is stripped from provider names; the cache is private (docs/security.md)."""

from __future__ import annotations

import base64
import json
import os
import stat
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from evalrun.credentials import REDACTED, Scrubber, is_secret_name, provider_secrets, strip_userinfo
from evalrun.types import ProviderSpec
from tests.fakeserver import FakeOpenAI

HEADER_LITERAL = "lit-header-secret-5150"  # written in the config: `Authorization: Bearer lit-...`
DB_PASSWORD = "pw-from-env-MYDB-9931"  # MYDB_PASSWORD in the environment, sent as a header
SERVICE_CREDS = "creds-from-env-4417xyz"  # SERVICE_CREDENTIALS, sent in an `X-Api-Key` header
PLAIN_ENV = "plain-named-env-secret-77"  # an env var with no credential-like name, sent as `Cookie`
API_KEY = "sk-apikey-in-config-2468"  # an openai provider's apiKey, echoed back in a 200 reply (so cached)
URL_PASSWORD = "urlpass-userinfo-1357"  # http://user:PASSWORD@host/x as a provider id

PLANTED = {"header literal": HEADER_LITERAL, "*_PASSWORD env": DB_PASSWORD, "*_CREDENTIALS env": SERVICE_CREDS,
           "plain env in a credential header": PLAIN_ENV, "apiKey": API_KEY, "URL userinfo": URL_PASSWORD,
           "URL userinfo (Basic)": base64.b64encode(f"bob:{URL_PASSWORD}".encode()).decode()}


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    if "model" in body:  # the openai provider: a success that echoes its key (cached)
        return {"content": f"your key is Bearer {API_KEY}, thanks"}
    return {"status": 400, "echo_headers": True}  # the http providers: an error quoting every header


def _every_file(folder: Path) -> dict[str, str]:
    out = {}
    for p in folder.rglob("*"):
        if p.is_file():
            out[str(p.relative_to(folder))] = p.read_bytes().decode("utf-8", "replace")
    return out


def _every_format(suite: Path) -> list[str]:
    return [a for ext in (".json", ".jsonl", ".csv", ".xml", ".html", ".yaml", ".txt")
            for a in ("-o", str(suite / "out" / f"r{ext}"))]


def _written(suite: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """What a run printed, and every file it wrote in the suite's folder and the cache (not the config: ours)."""
    printed = capsys.readouterr()
    cache = Path(os.environ["EVALRUN_CACHE_DIR"])
    texts = {"stdout": printed.out, "stderr": printed.err,
             **{f"suite/{k}": v for k, v in _every_file(suite).items() if k != "c.yaml"},
             **{f"cache/{k}": v for k, v in _every_file(cache).items()}}
    assert any(k.startswith("suite/.evalrun/runs/") for k in texts) and "suite/.evalrun/history.sqlite" in texts
    assert sum(k.startswith("suite/out/") for k in texts) == 7
    return texts


def _leaks(planted: dict[str, str], texts: dict[str, str]) -> list[tuple[str, str]]:
    return [(what, name) for name, text in texts.items() for what, s in planted.items() if s in text]


def test_planted_credentials_never_reach_disk_or_the_console(tmp_path: Path, fake_openai: FakeOpenAI,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MYDB_PASSWORD", DB_PASSWORD)
    monkeypatch.setenv("SERVICE_CREDENTIALS", SERVICE_CREDS)
    monkeypatch.setenv("SESSION_BLOB", PLAIN_ENV)
    monkeypatch.setenv("COLUMNS", "400")
    fake_openai.default = _reply
    host = fake_openai.url.split("//", 1)[1]
    suite = tmp_path / "suite"
    suite.mkdir()
    cfg = suite / "c.yaml"
    cfg.write_text(f"""description: planted secrets
prompts: ['say {{{{q}}}}']
providers:
  - id: {fake_openai.url}/chat/completions
    label: headers
    config:
      headers:
        Authorization: "Bearer {HEADER_LITERAL}"
        X-Db-Password: "{{{{ env.MYDB_PASSWORD }}}}"
        X-Api-Key: "{{{{ env.SERVICE_CREDENTIALS }}}}"
        Cookie: "session={{{{ env.SESSION_BLOB }}}}"
      maxRetries: 0
  - id: http://bob:{URL_PASSWORD}@{host}/chat/completions
    config: {{maxRetries: 0}}
  - id: openai:chat:fake-model
    label: keyed
    config: {{apiBaseUrl: "{fake_openai.url}", apiKey: {API_KEY}, maxRetries: 0}}
tests:
  - vars: {{q: hello}}
    assert: [{{type: contains, value: thanks}}]
""")
    rc = main(["eval", str(cfg), "--no-progress-bar", *_every_format(suite)])
    assert rc == 100  # the two http providers error
    sent = " ".join(v for h in fake_openai.headers for v in h.values())
    assert [w for w, s in PLANTED.items() if s not in sent] == ["URL userinfo"]  # sent (as Basic), so echoed
    texts = _written(suite, capsys)
    assert any(k.startswith("cache/responses.sqlite") for k in texts)
    assert _leaks(PLANTED, texts) == []
    results = next(v for k, v in texts.items() if k.startswith("suite/.evalrun/runs/") and k.endswith(".jsonl"))
    assert REDACTED in results and "bob:" not in results and f"http://{host}/chat/completions" in results
    assert "thanks" in texts["cache/responses.sqlite"] or "thanks" in texts.get("cache/responses.sqlite-wal", "")


def test_a_secret_an_endpoint_echoes_escaped_is_redacted(tmp_path: Path, fake_openai: FakeOpenAI,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A password with a quote comes back JSON-escaped in an echoed error body; neither form, nor the results file's
    own escaping of it, is written anywhere. (The fake server quotes headers as a Python dict, which doubles a
    backslash; a backslash and a URL's percent-encoding are checked on an echo written as JSON and as a query.)"""
    secret = 'pw"with-quote-8642'
    monkeypatch.setenv("MYDB_PASSWORD", secret)
    fake_openai.default = _reply
    suite = tmp_path / "suite"
    suite.mkdir()
    cfg = suite / "c.yaml"
    cfg.write_text(f"""prompts: ['say {{{{q}}}}']
providers:
  - id: {fake_openai.url}/chat/completions
    config:
      headers: {{X-Db-Password: "{{{{ env.MYDB_PASSWORD }}}}"}}
      maxRetries: 0
tests:
  - vars: {{q: hello}}
""")
    assert main(["eval", str(cfg), "--no-progress-bar", *_every_format(suite)]) == 100
    assert any(secret in v for h in fake_openai.headers for v in h.values())
    texts = _written(suite, capsys)
    escaped = json.dumps(secret)[1:-1]
    forms = {"as sent": secret, "JSON-escaped": escaped, "escaped twice": json.dumps(escaped)[1:-1],
             "percent-encoded": urllib.parse.quote(secret, safe="")}
    assert any(REDACTED in v for v in texts.values())
    assert _leaks(forms, texts) == []
    slashed = 'pw"with\\back-slash 8642'
    echoed = f'http 400: {{"X-Db-Password": {json.dumps(slashed)}}} GET /x?p={urllib.parse.quote_plus(slashed)}'
    assert "with" not in Scrubber([slashed]).text(echoed) and echoed.count("with") == 2


def test_the_cache_folder_and_files_are_private(tmp_path: Path, fake_openai: FakeOpenAI,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "private-cache"
    monkeypatch.setenv("EVALRUN_CACHE_DIR", str(cache))
    monkeypatch.setattr(os, "umask", os.umask)  # restored below
    old = os.umask(0o022)
    try:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(f"""prompts: ['hi']
providers: [{{id: 'openai:chat:fake-model', config: {{apiBaseUrl: "{fake_openai.url}", maxRetries: 0}}}}]
""")
        assert main(["eval", str(cfg), "--no-progress-bar", "--no-history"]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    files = list(cache.iterdir())
    assert files and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files), files


def test_what_a_credential_is() -> None:
    for name in ("OPENAI_API_KEY", "MYDB_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "GITHUB_TOKEN", "apiKey",
                 "client_secret", "AWS_SECRET_ACCESS_KEY"):
        assert is_secret_name(name), name
    for name in ("TOKENIZERS_PARALLELISM", "HOME", "temperature", "max_tokens", "PATH"):
        assert not is_secret_name(name), name
    assert strip_userinfo("provider http://u:p@h:8/x failed; see https://h/y@z") == \
        "provider http://h:8/x failed; see https://h/y@z"
    assert Scrubber().text("GET http://bob:pw@host/x") == "GET http://host/x"


@pytest.mark.parametrize("template", ["{{ env }}", "{{ env | tojson }}", "{% for k, v in env.items() %}{{v}}{% endfor %}"])
def test_the_whole_environment_is_refused_in_a_template(tmp_path: Path, template: str,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MYDB_PASSWORD", DB_PASSWORD)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"description: x\nprompts:\n  - 'hi {template} {{{{ env.HOME }}}}'\nproviders: [echo]\n")
    assert main(["eval", str(cfg), "--no-progress-bar", "--no-history", "-o", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}:3:" in err and "use env.NAME" in err and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


def test_env_never_renders_whole_where_no_check_ran() -> None:
    import jinja2

    from evalrun import template_env, templating

    with pytest.raises(jinja2.UndefinedError, match="env.NAME"):
        templating.render("{{ env }}", {"env": template_env.namespace()})


def test_userinfo_without_a_password_is_kept() -> None:
    assert strip_userinfo("clone ssh://git@github.com/x or mail me@x.org") == \
        "clone ssh://git@github.com/x or mail me@x.org"
    assert Scrubber().encoded({"output": "ssh://git@host/r"})[0] == {"output": "ssh://git@host/r"}


def test_the_whole_environment_is_refused_in_a_provider_config(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: [hi]\nproviders:\n  - id: echo\n    config: {x: '{{ env }}'}\n")
    assert main(["eval", str(cfg), "--no-progress-bar", "--no-history"]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}:" in err and "providers[0].config.x" in err and "use env.NAME" in err


GRADER_KEY = "sk-grader-apikey-8642"  # an llm-rubric's own provider's apiKey (echoed in a 400)
GRADER_HEADER = "lit-grader-header-9753"  # a provider grader's Authorization header (echoed in a 400)
GRADER_URL_PASSWORD = "urlpass-grader-3344"  # the config's `grader:` id with userinfo
TEST_PROVIDER_KEY = "sk-test-provider-1122"  # a test's own provider's apiKey, quoted in its 200 reply


def test_graders_and_a_tests_own_provider_are_redacted_too(tmp_path: Path, fake_openai: FakeOpenAI,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Credentials of providers that are not the config's `providers:` (graders, a test's `provider:`), and a
    grader id's userinfo, are as absent as the others (they were written in clear: the scrubber knew only
    `providers:`)."""
    fake_openai.default = lambda body: ({"content": f"key {TEST_PROVIDER_KEY} ok"} if body.get("model") == "fake-model"
                                        else {"status": 400, "echo_headers": True})
    host = fake_openai.url.split("//", 1)[1]
    suite = tmp_path / "suite"
    suite.mkdir()
    cfg = suite / "c.yaml"
    cfg.write_text(f"""prompts: ['say {{{{q}}}}']
providers: [echo]
tests:
  - vars: {{q: a}}
    provider: {{id: 'openai:chat:fake-model', config: {{apiBaseUrl: "{fake_openai.url}", apiKey: {TEST_PROVIDER_KEY},
                                                  maxRetries: 0}}}}
  - vars: {{q: b}}
    assert:
      - {{type: llm-rubric, value: good}}
      - type: llm-rubric
        value: good
        provider: {{id: 'openai:chat:judge', config: {{apiBaseUrl: "{fake_openai.url}", apiKey: {GRADER_KEY},
                                                   maxRetries: 0}}}}
      - type: llm-rubric
        value: good
        provider:
          id: {fake_openai.url}/chat/completions
          config: {{headers: {{Authorization: "Bearer {GRADER_HEADER}"}}, maxRetries: 0}}
""")
    grader = f"http://gus:{GRADER_URL_PASSWORD}@{host}/chat/completions"
    assert main(["eval", str(cfg), "--no-progress-bar", "--grader", grader, *_every_format(suite)]) == 100
    planted = {"grader apiKey": GRADER_KEY, "grader header": GRADER_HEADER, "grader id userinfo": GRADER_URL_PASSWORD,
               "test provider apiKey": TEST_PROVIDER_KEY}
    sent = " ".join(v for h in fake_openai.headers for v in h.values())
    assert [w for w, s in planted.items() if s not in sent] == ["grader id userinfo"]  # sent as Basic auth
    texts = _written(suite, capsys)
    assert _leaks(planted, texts) == []
    assert f"http://{host}/chat/completions (provider grader)" in texts["stdout"]  # named without its userinfo


def test_credentials_nested_in_a_config_or_in_a_query_string_are_known() -> None:
    """An http provider's `body: {api_key: ...}` / `auth: {password: ...}` and a URL's `?api_key=` reach the
    provider as credentials like a header does (they were written in clear when the server echoed them)."""
    spec = ProviderSpec(id="http://h/x?api_key=lit-id-query-5566", config={
        "body": {"api_key": "lit-body-key-7788", "auth": {"password": "lit-nested-pw-9900"}, "prompt": "{{prompt}}",
                 "schema": {"password": {"description": "the password the user typed"}}},
        "queryParams": {"token": "lit-query-token-1212"}, "url": "http://h/y?key=v&access_token=lit-url-tok-3434"})
    found = provider_secrets(spec, {})
    for s in ("lit-id-query-5566", "lit-body-key-7788", "lit-nested-pw-9900", "lit-query-token-1212",
              "lit-url-tok-3434"):
        assert s in found, s
    keyed = ProviderSpec(id="openai:chat:x", config={"apiKeyEnvar": "TEAMKEY"})  # the key's variable, any name
    assert "sk-team-key-5678" in provider_secrets(keyed, {"TEAMKEY": "sk-team-key-5678"})
    assert "the password the user typed" not in found and "{{prompt}}" not in found  # a name's schema: no value

"""Builtin providers: echo, exec, python file, routing in providers.build (litellm never imported)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalrun import providers
from evalrun.errors import ConfigError, ProviderError
from evalrun.providers.base import CallContext
from evalrun.types import ProviderSpec

CTX = CallContext(vars={"topic": "cats"}, prompt_label="p")


def _call(spec: ProviderSpec, prompt: object, base_dir: str = ".") -> object:
    return asyncio.run(providers.build(spec, base_dir).call(prompt, CTX))  # type: ignore[arg-type]


def test_echo_returns_the_prompt_and_chat_prompts_as_json() -> None:
    assert _call(ProviderSpec("echo"), "hi").text == "hi"  # type: ignore[attr-defined]
    out = _call(ProviderSpec("echo"), [{"role": "user", "content": "hi"}])
    # promptfoo's text of a chat prompt: JSON.stringify(messages, null, 2)
    assert out.text == '[\n  {\n    "role": "user",\n    "content": "hi"\n  }\n]'  # type: ignore[attr-defined]


def test_exec_passes_prompt_options_context(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(textwrap.dedent("""
        import json, sys
        prompt, options, context = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
        print(prompt.upper(), options["config"]["x"], context["vars"]["topic"])
    """))
    spec = ProviderSpec(f"exec:{sys.executable} app.py", config={"x": 7})
    assert _call(spec, "hello", str(tmp_path)).text == "HELLO 7 cats"  # type: ignore[attr-defined]


def test_exec_non_zero_exit_is_a_provider_error(tmp_path: Path) -> None:
    spec = ProviderSpec(f"exec:{sys.executable} -c \"import sys; sys.stderr.write('bad thing'); sys.exit(3)\"")
    with pytest.raises(ProviderError, match="status 3: bad thing"):
        _call(spec, "x", str(tmp_path))


def test_exec_without_command_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="without a command"):
        providers.build(ProviderSpec("exec:  "), ".")


def _write(tmp_path: Path, body: str) -> None:
    (tmp_path / "prov.py").write_text(textwrap.dedent(body))


def test_python_provider_sync_dict_reply_with_usage(tmp_path: Path) -> None:
    _write(tmp_path, """
        def call_api(prompt, options, context):
            return {"output": f"{prompt}:{context['vars']['topic']}:{options['config']['k']}",
                    "tokenUsage": {"prompt": 3, "completion": 2}, "cost": 0.25, "metadata": {"m": 1}}
    """)
    out = _call(ProviderSpec("file://prov.py", config={"k": "v"}), "hi", str(tmp_path))
    assert out.text == "hi:cats:v"  # type: ignore[attr-defined]
    assert out.tokens.total == 5 and out.cost == 0.25 and out.metadata == {"m": 1}  # type: ignore[attr-defined]


def test_python_provider_async_named_function_and_non_string_output(tmp_path: Path) -> None:
    _write(tmp_path, """
        async def answer(prompt, options, context):
            return {"output": {"answer": prompt}}
    """)
    out = _call(ProviderSpec("file://prov.py:answer"), "hi", str(tmp_path))
    assert out.text == '{"answer": "hi"}'  # type: ignore[attr-defined]


def test_python_provider_error_reply_and_exception_are_provider_errors(tmp_path: Path) -> None:
    _write(tmp_path, """
        def call_api(prompt, options, context):
            if prompt == "raise":
                raise ValueError("nope")
            return {"error": "upstream down"}
    """)
    with pytest.raises(ProviderError, match="upstream down"):
        _call(ProviderSpec("file://prov.py"), "x", str(tmp_path))
    with pytest.raises(ProviderError, match="ValueError: nope"):
        _call(ProviderSpec("file://prov.py"), "raise", str(tmp_path))


def test_python_provider_missing_file_or_function_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        providers.build(ProviderSpec("file://nope.py"), str(tmp_path))
    _write(tmp_path, "def other(p, o, c):\n    return 'x'\n")
    with pytest.raises(ConfigError, match="no function 'call_api'"):
        providers.build(ProviderSpec("file://prov.py"), str(tmp_path))


def test_routing_and_no_litellm_import() -> None:
    code = textwrap.dedent("""
        import sys
        from evalrun import providers
        from evalrun.types import ProviderSpec
        kinds = [type(providers.build(ProviderSpec(i), '.')).__name__
                 for i in ('echo', 'exec:true', 'http://127.0.0.1:9/x', 'openai:gpt-4o-mini')]
        print(kinds, 'litellm' in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['EchoProvider', 'ExecProvider', 'HttpProvider', 'LiteLLMProvider'] False"
    assert providers.is_builtin("file://x.py:fn") and not providers.is_builtin("ollama:chat:llama3")


@pytest.mark.parametrize("body, message", [
    ("import sys\n    sys.exit(0)", r"prov\.py: user code called sys\.exit\(0\)"),
    ("exit()", r"user code called sys\.exit\(\)"),
    ("raise SystemExit(3)", r"user code called sys\.exit\(3\)"),
    ("raise KeyboardInterrupt", "user code raised KeyboardInterrupt"),
])
def test_python_provider_sys_exit_is_a_provider_error_not_the_end_of_the_run(
        tmp_path: Path, body: str, message: str) -> None:
    _write(tmp_path, f"def call_api(prompt, options, context):\n    {body}\n")
    with pytest.raises(ProviderError, match=message):
        _call(ProviderSpec("file://prov.py"), "x", str(tmp_path))


def test_python_provider_async_sys_exit_is_a_provider_error(tmp_path: Path) -> None:
    _write(tmp_path, "import sys\nasync def call_api(prompt, options, context):\n    sys.exit(0)\n")
    with pytest.raises(ProviderError, match=r"sys\.exit\(0\)"):
        _call(ProviderSpec("file://prov.py"), "x", str(tmp_path))


def test_python_provider_cancellation_still_propagates(tmp_path: Path) -> None:
    _write(tmp_path, "import asyncio\nasync def call_api(prompt, options, context):\n"
                     "    raise asyncio.CancelledError()\n")
    with pytest.raises(asyncio.CancelledError):
        _call(ProviderSpec("file://prov.py"), "x", str(tmp_path))


@pytest.mark.parametrize("reply", ["None", "{'output': None}", "{'output': None, 'tokenUsage': {}}"])
def test_python_provider_returning_no_output_is_a_provider_error(tmp_path: Path, reply: str) -> None:
    _write(tmp_path, f"def call_api(prompt, options, context):\n    return {reply}\n")
    with pytest.raises(ProviderError, match="provider returned no output"):
        _call(ProviderSpec("file://prov.py"), "x", str(tmp_path))


def test_python_provider_sys_exit_at_import_is_a_config_error(tmp_path: Path) -> None:
    _write(tmp_path, "import sys\nsys.exit(1)\ndef call_api(prompt, options, context):\n    return 'x'\n")
    with pytest.raises(ConfigError, match=r"user code called sys\.exit\(1\)"):
        providers.build(ProviderSpec("file://prov.py"), str(tmp_path))


def test_python_provider_exception_names_the_users_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 37: `boom.py: NameError: ...` lost its place; the error names boom.py:LINE, and the result's
    error_detail (and `--debug`) carries the user-code traceback without evalrun's own frames."""
    import json

    from evalrun.cli import main

    (tmp_path / "boom.py").write_text("def helper(x):\n    return x + undefined_name\n\n\n"
                                      "def call_api(prompt, options, context):\n    return {'output': helper(prompt)}\n")
    (tmp_path / "s.yaml").write_text("prompts: [hi]\nproviders: [{id: file://boom.py, label: support-bot}]\n"
                                     "tests: [{vars: {}}]\n")
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "s.yaml", "--no-history", "--no-progress-bar", "-o", "r.json"]) == 100
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["error"].startswith("provider support-bot: boom.py:2: NameError: name 'undefined_name' is not defined")
    detail = rec["error_detail"]
    assert 'boom.py", line 6, in call_api' in detail and 'boom.py", line 2, in helper' in detail
    assert "evalrun" + os.sep not in detail.split("Traceback", 1)[1] and "asyncio" not in detail
    capsys.readouterr()
    assert main(["eval", "s.yaml", "--no-history", "--no-progress-bar", "--debug"]) == 100
    out = capsys.readouterr().out
    assert "--- ERROR" in out and 'boom.py", line 2, in helper' in out and "return x + undefined_name" in out


def test_python_provider_exception_at_import_names_the_users_line(tmp_path: Path) -> None:
    """An exception while the provider's file is imported names file:LINE, as one at call time does."""
    _write(tmp_path, "import os\n\nSETTING = os.environ['EVALRUN_NO_SUCH_VARIABLE']\n"
                     "def call_api(prompt, options, context):\n    return 'x'\n")
    with pytest.raises(ConfigError, match=r"prov\.py:3: importing it failed: KeyError: 'EVALRUN_NO_SUCH_VARIABLE'"):
        providers.build(ProviderSpec("file://prov.py"), str(tmp_path))

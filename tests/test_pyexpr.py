"""pyexpr: inline expressions, function bodies, file:// functions, and their errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evalrun.errors import AssertionRuntimeError, ConfigError, Location
from evalrun.pyexpr import compile_user_code

FIX = str(Path(__file__).parent / "fixtures" / "assertions")
LOC = Location("suite.yaml", 3)


def call(code: str, *args: object, **kw: object) -> object:
    fn = compile_user_code(code, loc=LOC, key="k", base_dir=FIX, **kw)  # type: ignore[arg-type]
    return asyncio.run(fn.call(*args))


def test_one_line_expression() -> None:
    assert call("len(output) > 2 and context['n'] == 1", "abc", {"n": 1}) is True


def test_expression_may_use_json_and_re() -> None:
    assert call("json.loads(output)['a'] + len(re.findall('x', 'xx'))", '{"a": 1}', {}) == 3


def test_multi_line_body_with_return() -> None:
    code = "words = output.split()\nif len(words) > 1:\n    return {'pass': True, 'score': 0.5}\nreturn False\n"
    assert call(code, "a b", {}) == {"pass": True, "score": 0.5}
    assert call(code, "a", {}) is False


def test_indented_block_is_dedented() -> None:
    assert call("    x = 1\n    return x + 1", "", {}) == 2


def test_trailing_newline_one_liner_is_an_expression() -> None:
    assert call("output == 'a'\n", "a", {}) is True


def test_file_function_and_default_name() -> None:
    assert call("file://checks.py:upper", "ab", {}) == "AB"
    assert call("file://checks.py", "say hello", {}, default_fn="get_assert") is True


def test_async_file_function_is_awaited() -> None:
    assert call("file://checks.py:async_check", "abcd", {}) == 4


def test_function_with_fewer_params_gets_fewer_args() -> None:
    assert call("file://checks.py:upper", "x", {}, params=("output", "context")) == "X"


@pytest.mark.parametrize(("code", "needle"), [
    ("len(output", "does not compile"),
    ("x = = 1\nreturn x", "does not compile"),
    ("file://missing.py:f", "file not found"),
    ("file://checks.py:nope", "has no function 'nope'"),
    ("file://checks.txt:f", "expected a .py file"),
    ("   ", "expected Python code"),
])
def test_static_problems_are_config_errors(code: str, needle: str) -> None:
    with pytest.raises(ConfigError) as e:
        compile_user_code(code, loc=LOC, key="tests[0].assert[0].value", base_dir=FIX)
    assert needle in str(e.value)
    assert e.value.line == 3 and e.value.key == "tests[0].assert[0].value"


def test_did_you_mean_for_function_name() -> None:
    with pytest.raises(ConfigError) as e:
        compile_user_code("file://checks.py:scorred", base_dir=FIX)
    assert e.value.hint == "did you mean `scored`?"


def test_runtime_exception_becomes_assertion_runtime_error() -> None:
    with pytest.raises(AssertionRuntimeError, match="ValueError: user code failed"):
        call("file://checks.py:explode", "", {})
    with pytest.raises(AssertionRuntimeError, match="KeyError"):
        call("context['missing']", "", {})


def test_call_returns_the_value() -> None:
    fn = compile_user_code("output * 2")
    assert asyncio.run(fn.call("ab", {})) == "abab"


def test_javascript_looking_code_gets_a_python_hint() -> None:
    with pytest.raises(ConfigError) as e:
        compile_user_code("output.trim() === 'a'")
    assert "looks like JavaScript" in (e.value.hint or "")
    with pytest.raises(AssertionRuntimeError, match="looks like JavaScript"):
        call("output.trim()", "a", {})
    with pytest.raises(AssertionRuntimeError, match="looks like JavaScript"):
        call("JSON.parse(output)", "{}", {})


@pytest.mark.parametrize("code, message", [
    ("exit()", r"user code called sys\.exit\(\)"),
    ("__import__('sys').exit(0)", r"user code called sys\.exit\(0\)"),
    ("x = 1\nraise SystemExit(4)", r"user code called sys\.exit\(4\)"),
    ("x = 1\nraise KeyboardInterrupt", "user code raised KeyboardInterrupt"),
    ("x = 1\nraise GeneratorExit('x')", "user code raised GeneratorExit: x"),
])
def test_sys_exit_and_base_exceptions_become_runtime_errors(code: str, message: str) -> None:
    with pytest.raises(AssertionRuntimeError, match=message):
        call(code, "out", {})
    fn = compile_user_code(code, loc=LOC, key="k", base_dir=FIX)
    with pytest.raises(AssertionRuntimeError, match=message):
        asyncio.run(fn.call("out", {}))


def test_sys_exit_in_an_async_file_function_becomes_a_runtime_error(tmp_path: Path) -> None:
    (tmp_path / "exits.py").write_text("import sys\nasync def get_assert(output, context):\n    sys.exit(0)\n")
    fn = compile_user_code("file://exits.py", loc=LOC, key="k", base_dir=str(tmp_path), default_fn="get_assert")
    with pytest.raises(AssertionRuntimeError, match=r"user code called sys\.exit\(0\)"):
        asyncio.run(fn.call("out", {}))


def test_cancellation_and_a_real_ctrl_c_still_propagate() -> None:
    import signal

    from evalrun import pyexpr

    cancel = compile_user_code("x = 1\nraise __import__('asyncio').CancelledError()", loc=LOC, key="k")
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel.call("o", {}))
    fn = compile_user_code("x = 1\nraise KeyboardInterrupt", loc=LOC, key="k")
    with pyexpr.watch_sigint():
        handler = signal.getsignal(signal.SIGINT)
        assert callable(handler)
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGINT, None)  # a real Ctrl-C: the previous (default) handler raises
        with pytest.raises(KeyboardInterrupt):  # after a real Ctrl-C, KeyboardInterrupt is not swallowed
            asyncio.run(fn.call("o", {}))
    assert signal.getsignal(signal.SIGINT) is not handler


def test_sys_exit_at_import_of_a_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "exits_at_import.py").write_text("exit(2)\ndef get_assert(output, context):\n    return True\n")
    with pytest.raises(ConfigError, match=r"user code called sys\.exit\(2\)"):
        compile_user_code("file://exits_at_import.py", loc=LOC, key="k", base_dir=str(tmp_path),
                          default_fn="get_assert")

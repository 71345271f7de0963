"""ruby: one-line and multi-line code over output and context, python's result rules, an exception FAILS (an
ERROR under not-), no ruby binary is an ERROR naming it, bad values. Execution tests skip without `ruby`."""

from __future__ import annotations

import shutil

import pytest

from evalrun.assertions.code import ruby_script
from tests.test_assertions_helpers import bad, run

needs_ruby = pytest.mark.skipif(shutil.which("ruby") is None, reason="no `ruby` binary on PATH")


def test_script_shape_as_promptfoo_builds_it() -> None:
    assert "def main(output, context)\n  return output.length < 5\nend\n" in ruby_script("output.length < 5")
    multi = ruby_script("    x = output.upcase\n    return x == 'HI'")
    assert "def main(output, context)\n        x = output.upcase\n        return x == 'HI'\nend" in multi


@needs_ruby
def test_booleans_numbers_mappings_and_context() -> None:
    assert run("ruby", "hello", "output.length == 5").pass_
    r = run("ruby", "hello", "output.start_with?('x')")
    assert not r.pass_ and r.score == 0.0
    r = run("ruby", "hello", "output.length / 10.0", threshold=0.4)
    assert r.pass_ and r.score == 0.5
    r = run("ruby", "hi", "s = context['vars']['n'] * 2\nreturn {'pass' => s > 3, 'score' => 0.75, 'reason' => 'ok'}",
            ctx_kw={"vars": {"n": 2}})
    assert r.pass_ and r.score == 0.75 and r.reason == "ok"
    r = run("not-ruby", "hello", "output.include?('ell')")
    assert not r.pass_


@needs_ruby
def test_an_exception_fails_and_is_an_error_under_not() -> None:
    r = run("ruby", "hello", "undefined_thing + 1")
    assert not r.pass_ and not r.error and "Ruby code execution failed" in r.reason and "undefined" in r.reason
    r = run("not-ruby", "hello", "undefined_thing + 1")
    assert r.error and not r.pass_
    assert run("ruby", "hello", "x = 1\nx + 1 == 2").pass_     # Ruby returns the last expression
    r = run("ruby", "hello", "x = 1\nputs x")               # puts returns nil
    assert not r.pass_ and "returned nil" in r.reason


def test_no_ruby_binary_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTFOO_RUBY", "ruby-not-installed-here")
    r = run("not-ruby", "hello", "true")
    assert r.error and "`ruby-not-installed-here` binary" in r.error and not r.pass_


@pytest.mark.parametrize(("value", "msg"), [(3, "string value"), ("  ", "string value"),
                                            ("file://check.rb", "not supported")])
def test_bad_values(value: object, msg: str) -> None:
    assert msg in bad("ruby", value).message

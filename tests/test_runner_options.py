"""Run options (CLI over evaluateOptions over defaults), exit codes, progress bar rules."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from evalrun.commands.evaluate import exit_code
from evalrun.commands.validate import parse_vars
from evalrun.errors import UsageError
from evalrun.run.options import RunOptions
from evalrun.run.progress import Progress, wanted


def test_cli_wins_over_evaluate_options_over_defaults() -> None:
    eo = {"maxConcurrency": 8, "repeat": 2, "delay": 5, "timeoutMs": 1500, "cache": False}
    opts = RunOptions.merge(eo, max_concurrency=3)
    assert (opts.max_concurrency, opts.repeat, opts.delay_ms, opts.timeout_s) == (3, 2, 5, 1.5)
    assert opts.use_cache is False and opts.results_file is None and opts.history is False
    defaults = RunOptions.merge({})
    assert (defaults.max_concurrency, defaults.repeat, defaults.use_cache, defaults.timeout_s) == (4, 1, True, None)
    assert RunOptions.merge({}, no_cache=True, results_file="x.jsonl").results_file == Path("x.jsonl")


@pytest.mark.parametrize("bad", [{"max_concurrency": 0}, {"repeat": 0}, {"delay_ms": -1}, {"timeout_s": 0},
                                 {"filter_first_n": -2}])
def test_bad_values_are_usage_errors(bad: dict[str, int]) -> None:
    with pytest.raises(UsageError):
        RunOptions.merge({}, **bad)


def _summary(passed: int, failed: int, errors: int) -> dict[str, object]:
    total = passed + failed + errors
    return {"passed": passed, "failed": failed, "errors": errors, "total": total,
            "pass_rate": 100.0 * passed / total if total else None}


def test_exit_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert exit_code(_summary(3, 0, 0), None) == 0
    assert exit_code(_summary(3, 1, 0), None) == 100
    assert exit_code(_summary(3, 0, 1), None) == 100
    assert exit_code(_summary(0, 0, 0), None) == 0
    assert exit_code(_summary(3, 1, 0), 75.0) == 0 and exit_code(_summary(2, 1, 1), 75.0) == 100
    monkeypatch.setenv("EVALRUN_FAILED_TEST_EXIT_CODE", "0")
    assert exit_code(_summary(1, 1, 0), None) == 0
    monkeypatch.setenv("EVALRUN_FAILED_TEST_EXIT_CODE", "x")
    with pytest.raises(UsageError):
        exit_code(_summary(1, 1, 0), None)
    monkeypatch.delenv("EVALRUN_FAILED_TEST_EXIT_CODE")
    monkeypatch.setenv("EVALRUN_PASS_RATE_THRESHOLD", "50")
    assert exit_code(_summary(1, 1, 0), None) == 0


def test_parse_vars() -> None:
    assert parse_vars(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    with pytest.raises(UsageError, match="KEY=VALUE"):
        parse_vars(["novalue"])


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal_without_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    assert wanted(False, _Tty()) and not wanted(True, _Tty()) and not wanted(False, io.StringIO())
    monkeypatch.setenv("CI", "true")
    assert not wanted(False, _Tty())


def test_progress_shows_counts_and_retry_notes() -> None:
    out = _Tty()
    bar = Progress(4, out)
    bar.update("pass")
    bar.note("retry 2/5 after 429 (Retry-After 1s)")
    bar.update("fail")
    bar.update("error")
    bar.update("pass")
    bar.close()
    text = out.getvalue()
    assert "4/4" in text and "pass 2  fail 1  error 1" in text and "retry 2/5 after 429" in text
    quiet = io.StringIO()
    off = Progress(1, quiet, enabled=False)
    off.update("pass")
    off.close()
    assert quiet.getvalue() == ""

"""Registry, entry-point plugins (with the example plugin) and `evalrun list`."""

from __future__ import annotations

import json
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from evalrun.assertions import registry
from evalrun.cli import main
from evalrun.errors import ConfigError
from tests.test_assertions_helpers import bad, run

PLUGIN_SRC = Path(__file__).resolve().parent.parent / "examples" / "plugin-example" / "src"

DETERMINISTIC = {
    "equals", "contains", "icontains", "contains-any", "contains-all", "icontains-any", "icontains-all",
    "starts-with", "regex", "is-json", "contains-json", "is-xml", "contains-xml", "is-html", "contains-html",
    "is-sql", "contains-sql", "levenshtein", "rouge-n", "bleu", "word-count", "latency", "cost",
    "finish-reason", "is-refusal", "is-valid-openai-tools-call", "python", "javascript", "assert-set"}


def test_every_type_of_the_issue_is_registered_and_documented() -> None:
    names = set(registry.names())
    assert names >= DETERMINISTIC
    for n in DETERMINISTIC:
        d = registry.describe(n)
        assert d["summary"], n
        assert "YAML keys" in d["details"], n


def test_register_rejects_not_prefix() -> None:
    from evalrun.assertions.base import Assertion

    with pytest.raises(ValueError, match="may not start with 'not-'"):
        registry.register("not-thing")(type("Thing", (Assertion,), {}))


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> EntryPoint:
    monkeypatch.syspath_prepend(str(PLUGIN_SRC))
    ep = EntryPoint("is-palindrome", "evalrun_plugin_example:IsPalindrome", "evalrun.assertions")
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [ep] if group == ep.group else [])
    monkeypatch.setitem(registry.__dict__, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setitem(registry.__dict__, "_PLUGINS", {})
    registry._load_plugins()
    return ep


def test_example_plugin_registers_through_entry_point(plugin: EntryPoint) -> None:
    assert "is-palindrome" in registry.names()
    assert run("is-palindrome", "A man, a plan, a canal: Panama", {"min_length": 5}).pass_
    assert run("not-is-palindrome", "evalrun").pass_
    assert "min_length must be a positive integer" in str(bad("is-palindrome", {"min_length": 0}))
    assert registry.describe("is-palindrome")["plugin"] == plugin.value


def test_broken_plugin_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EntryPoint("broken", "no_such_module_xyz:Thing", "evalrun.assertions")
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [ep])
    with pytest.raises(ConfigError, match="assertion plugin 'broken'"):
        registry._load_plugins()


def test_list_prints_every_type_with_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for n in DETERMINISTIC:
        assert f" {n} " in out, n
    assert "default 5" in out and "not-" in out


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by = {r["type"]: r for r in rows}
    assert by["levenshtein"]["default_threshold"] == 5
    assert by["rouge-n"]["default_threshold"] == 0.75
    assert by["bleu"]["default_threshold"] == 0.5
    assert by["contains"]["requires_value"] is True
    assert by["equals"]["graded"] is False


def test_list_imports_no_litellm() -> None:
    import subprocess

    code = ("import sys; from evalrun.cli import main; import io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(['list'])\n"
            "print('litellm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_builtin_types_index_is_what_the_builtin_modules_register() -> None:
    registry.load_all()
    registered = {name: cls.__module__ for name, cls in registry._REGISTRY.items()
                  if name not in registry._PLUGINS and cls.__module__.startswith("evalrun.")}
    indexed = {name: module for module, names in registry.BUILTIN_TYPES.items() for name in names}
    assert indexed == registered
    assert set(registry.BUILTIN_TYPES) == set(registry.BUILTIN_MODULES)


def test_get_imports_only_the_module_of_the_type() -> None:
    import subprocess
    import sys

    code = ("import sys; from evalrun.assertions import registry; "
            "assert registry.get('regex').__name__; assert registry.get('faithfulness'); "
            "print(sorted(m for m in sys.modules if m.startswith('evalrun.assertions.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "evalrun.assertions.text" in out and "evalrun.assertions.rag" in out
    assert "evalrun.assertions.similarity" not in out and "evalrun.assertions.markup" not in out

"""The one sandboxed Jinja2 environment: strict undefined, native single-var values, env, chat prompts."""

from __future__ import annotations

import jinja2
import pytest
from jinja2.sandbox import SecurityError

from evalrun import template_env, templating
from evalrun.errors import ConfigError


def test_render_and_strict_undefined() -> None:
    assert templating.render("Hi {{ name }}!", {"name": "Ada"}) == "Hi Ada!"
    assert templating.render("no template", {}) == "no template"
    with pytest.raises(jinja2.UndefinedError):
        templating.render("Hi {{ nobody }}", {})


def test_var_values_are_data_not_templates() -> None:
    assert templating.render("{{ x }}", {"x": "{{ y }}", "y": "boom"}) == "{{ y }}"
    assert templating.render_value("{{ x }}", {"x": "{{ y }}"}) == "{{ y }}"


def test_single_expression_yields_native_value() -> None:
    chunks = [{"text": "a", "relevant": True}]
    assert templating.render_value("{{contextChunks}}", {"contextChunks": chunks}) is chunks
    assert templating.render_value(" {{ a.b }} ", {"a": {"b": [1, 2]}}) == [1, 2]
    assert templating.render_value("{{ n }} items", {"n": 3}) == "3 items"
    assert templating.render_value(["x {{ n }}", 5, {"k": "{{ n }}"}], {"n": 3}) == ["x 3", 5, {"k": "3"}]


def test_single_expression_of_a_scalar_renders_as_text() -> None:
    # promptfoo renders `value: "{{b}}"` to text: text assertions get "7" / "true", not 7 / True
    vars = {"n": 7, "f": 2.0, "yes": True, "no": False, "none": None, "s": "hi", "a": {"b": 1.5}}
    assert templating.render_value("{{n}}", vars) == "7"
    assert templating.render_value("{{ f }}", vars) == "2"
    assert templating.render_value("{{yes}}", vars) == "true"
    assert templating.render_value("{{no}}", vars) == "false"
    assert templating.render_value("{{none}}", vars) == ""
    assert templating.render_value("{{s}}", vars) == "hi"
    assert templating.render_value("{{ a.b }}", vars) == "1.5"
    assert templating.render_value("{{ a }}", vars) == {"b": 1.5}  # mappings and lists stay native


def test_env_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALRUN_T_OS", "from-os")
    template_env.set_config_env({"EVALRUN_T_CFG": "from-config", "EVALRUN_T_OS": "config-wins"})
    try:
        assert templating.render("{{ env.EVALRUN_T_CFG }} {{ env.EVALRUN_T_OS }}", {}) == "from-config config-wins"
        with pytest.raises(jinja2.UndefinedError, match="EVALRUN_T_MISSING"):
            templating.render("{{ env.EVALRUN_T_MISSING }}", {})
    finally:
        template_env.set_config_env({})


def test_chat_prompt_renders_each_message() -> None:
    raw = [{"role": "system", "content": "Be {{ tone }}"}, {"role": "user", "content": "{{ q }}", "name": "u"}]
    out = templating.render_prompt(raw, {"tone": "brief", "q": "why?"})
    assert out == [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "why?", "name": "u"}]
    assert raw[0]["content"] == "Be {{ tone }}"


def test_variables_of_and_syntax_check() -> None:
    assert templating.variables_of("{{ a }} {% for x in items %}{{ x.b }}{% endfor %}") == {"a", "items"}
    assert templating.check_syntax("{{ ok }}") is None
    msg = templating.check_syntax("{{ broken }")
    assert msg is not None and "syntax error" in msg
    assert "No filter named" in (templating.check_syntax("{{ x | nosuchfilter }}") or "")


def test_compiled_templates_are_cached() -> None:
    assert templating.compile_template("{{ z }}") is templating.compile_template("{{ z }}")


def test_sandbox_blocks_attribute_escapes() -> None:
    with pytest.raises(SecurityError):
        templating.render("{{ ''.__class__.__mro__[1].__subclasses__() }}", {})


def test_dump_filter_and_describe_errors() -> None:
    assert templating.render("{{ x | dump }}", {"x": {"a": [1]}}) == '{"a":[1]}'  # JSON.stringify
    assert templating.render("{{ x | dump(2) }}", {"x": [1]}) == "[\n  1\n]"
    try:
        templating.render("{{ missing }}", {})
    except jinja2.UndefinedError as e:
        err = templating.describe_render_error(e, where="test 3")
    assert isinstance(err, ConfigError) and "'missing'" in err.message and "test 3" in err.message


def test_env_names_of() -> None:
    src = "{{ env.A }} {{ env['B'] }} {{ other.C }} {% if env.D %}x{% endif %} {{ env[name] }}"
    assert templating.env_names_of(src) == {"A", "B", "D"}


def test_values_print_as_promptfoo_prints_them() -> None:
    vars = {"flag": True, "off": False, "none": None, "n": 2.0, "x": 1.5, "items": ["a", "b"], "nums": [1, [2, 3]],
            "obj": {"k": [1]}}
    out = templating.render("{{flag}} {{off}} [{{none}}] {{n}} {{x}} {{items}} {{nums}} {{obj}}", vars)
    assert out == 'true false [] 2 1.5 a,b 1,2,3 {"k":[1]}'
    assert templating.render("{{ items[0] | upper }}", vars) == "A"  # values keep their type inside expressions
    assert templating.render_value("{{ items }}", vars) == ["a", "b"]  # a lone expression stays native


def test_guarded_names() -> None:
    src = "{{ a | default('x') }}{{ b | d(1) }}{% if c is defined %}{{ c }}{% endif %}{{ e }}{{ f.g | default(1) }}"
    assert templating.guarded_names(src) == {"a", "b", "c"}

"""The prompt fast path renders exactly what Jinja renders, and defers to Jinja for everything else."""

from __future__ import annotations

import jinja2
import pytest

from evalrun import templating
from evalrun.run.prompts import plan_of, render_prompt

VARS = {"q": "what is <b>2</b> & 3?", "topic": "math\n", "n": 3, "items": ["a", "b"], "env": "x"}


@pytest.mark.parametrize("source", [
    "plain text, no placeholders\n",
    "{{q}}",
    "Q: {{ q }} about {{topic}}\n\n",
    "{{q}}{{q}} {{  topic  }}",
    "n={{ n }}",                       # non-string var: Jinja path
    "{{ items }}",
    "{{ q | upper }}",                 # filter: Jinja path
    "{% if n %}yes{% endif %} {{q}}",  # tag: Jinja path
    "{{ q }} {# comment #}",
    "{{ env }}",
])
def test_same_output_as_jinja(source: str) -> None:
    assert render_prompt(source, VARS) == templating.render_prompt(source, VARS)


def test_fast_path_is_used_only_for_plain_placeholders() -> None:
    assert plan_of("a {{x}} b {{ y }}") == (("a ", " b ", ""), ("x", "y"))
    assert plan_of("{{ x.y }}") is None and plan_of("{{ x|e }}") is None and plan_of("{% raw %}") is None


def test_missing_variable_still_raises_jinjas_error() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render_prompt("hello {{ missing }}", VARS)


def test_chat_prompts_go_through_jinja() -> None:
    msgs = [{"role": "user", "content": "{{q}}"}]
    assert render_prompt(msgs, VARS) == [{"role": "user", "content": VARS["q"]}]

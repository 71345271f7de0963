"""templating.plain_parts: templates of text and `{{ name }}` are checked and rendered without Jinja2, with Jinja2's
answers."""

from __future__ import annotations

import keyword
import random
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from jinja2 import meta, nodes

from evalrun import templating

ROOT = Path(__file__).resolve().parent.parent


def _jinja(source: str) -> tuple[str | None, frozenset[str], frozenset[str], frozenset[str]]:
    """(syntax error, variables, guarded names, env names) as the Jinja2 path finds them."""
    env = templating.environment()
    try:
        tree = env.parse(source)
    except jinja2.TemplateSyntaxError as e:
        return f"template syntax error: {e.message} (template line {e.lineno})", frozenset(), frozenset(), \
            frozenset()
    guarded = {f.node.name for f in tree.find_all(nodes.Filter) if f.name in ("default", "d")
               and isinstance(f.node, nodes.Name)}
    env_names = {g.attr for g in tree.find_all(nodes.Getattr) if isinstance(g.node, nodes.Name)
                 and g.node.name == "env"}
    return None, frozenset(meta.find_undeclared_variables(tree)), frozenset(guarded), frozenset(env_names)


NAMES = ["q", "question", "topic", "_", "_x1", "A", "a_b", "x9", "loop", "self", "range", "true", "none", "None",
         "not", "in", "env", "null", "undefined", "caller", "dict", "super", *keyword.kwlist]
PIECES = ["Answer ", " about ", "{", "}", "{{", "}}", "{%", "%}", "{#", "#}", "-", "\n", " ", "text", "|upper",
          "{{ ", " }}", "{{-", "-}}", "'", '"', "{{{", "}}}", "\t"]


def _templates(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rnd.randint(1, 6)):
            if rnd.random() < 0.5:
                name = rnd.choice(NAMES)
                parts.append(rnd.choice(["{{%s}}", "{{ %s }}", "{{  %s}}", "{{%s }}", "{{\t%s}}"]) % name)
            else:
                parts.append(rnd.choice(PIECES))
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("source", [
    "Answer {{question}} about {{topic}}", "{{ q }}", "x {{q}} {{q}} y", "{{q}}\n{{ r }}\n", "no template",
    "{{ q | upper }}", "{{ q }}}", "{{{ q }}", "{ {{q}} }", "{{- q }}", "{{ q -}}", "{% if q %}{{q}}{% endif %}",
    "{# c #}{{q}}", "{{ env }}", "{{ true }}", "{{ not }}", "{{ loop }}", "{{ range }}", "{{\tq}}", "{{ q.r }}",
    "{{ q['r'] }}", "json {\"a\": \"{{q}}\"}", "{{q}}}}", "{{q}} {%",
])
def test_simple_templates_answer_as_jinja2(source: str) -> None:
    simple = templating.simple_names(source)
    if simple is None:
        return
    error, variables, guarded, env_names = _jinja(source)
    assert error is None and simple == variables and not guarded and not env_names, source


def test_random_templates_answer_as_jinja2() -> None:
    """Whatever simple_names accepts, Jinja2 parses with exactly those variables (and no guard, no env)."""
    accepted = 0
    for source in _templates(3000, 14):
        simple = templating.simple_names(source)
        if simple is None:
            continue
        accepted += 1
        error, variables, guarded, env_names = _jinja(source)
        assert error is None and simple == variables and not guarded and not env_names, source
    assert accepted > 150


def test_the_checks_give_jinja2s_answers_either_way() -> None:
    """variables_of / guarded_names / env_names_of / check_syntax through the fast path equal their Jinja2 path
    (the fast path switched off)."""
    sources = [s for s in _templates(400, 7) if templating.simple_names(s) is not None]
    assert sources
    fast = [(templating.check_syntax(s), templating.variables_of(s), templating.guarded_names(s),
             templating.env_names_of(s)) for s in sources]
    original = templating.simple_names
    try:
        templating.simple_names = lambda source: None  # type: ignore[assignment]
        for cache in (templating.variables_of, templating.guarded_names, templating.env_names_of):
            cache.cache_clear()
        slow = [(templating.check_syntax(s), templating.variables_of(s), templating.guarded_names(s),
                 templating.env_names_of(s)) for s in sources]
    finally:
        templating.simple_names = original  # type: ignore[assignment]
        for cache in (templating.variables_of, templating.guarded_names, templating.env_names_of):
            cache.cache_clear()
    assert fast == slow


def test_a_custom_filter_named_like_a_builtin_is_forgotten_with_its_config() -> None:
    """`nunjucksFilters` of one config do not outlive it, even one that took a built-in filter's name (it used
    to stay in place of the built-in after the reset)."""
    try:
        templating.reset_config()
        templating.add_custom_filters({"upper": lambda v: "custom", "mine": lambda v: "mine"})
        assert templating.render("{{ 'a' | upper }} {{ 'a' | mine }}", {}) == "custom mine"
        templating.reset_config()
        assert templating.render("{{ 'a' | upper }}", {}) == "A"
        assert templating.check_syntax("{{ 'a' | mine }}") == \
            "template syntax error: No filter named 'mine'. (template line 1)"
    finally:
        templating.reset_config()


def test_validating_plain_templates_imports_no_jinja2(tmp_path: Path) -> None:
    path = tmp_path / "evalrun.yaml"
    path.write_text("prompts: ['Answer {{question}} about {{topic}}']\nproviders: [echo]\n"
                    "tests: [{vars: {question: q, topic: t}, assert: [{type: contains, value: q}]}]\n")
    code = ("import sys, io, contextlib\nfrom evalrun.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main(['validate', {str(path)!r}])\n"
            "print(rc, 'jinja2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["0", "False"]
    path.write_text(path.read_text().replace("{{topic}}", "{{ topic | upper }}"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["0", "True"]


VARS = {"q": "what is <b>2</b> & 3?", "topic": "math\n", "n": 3, "items": ["a", "b"], "env": "x"}


@pytest.mark.parametrize("source", [
    "plain text, no placeholders\n",
    "{{q}}",
    "Q: {{ q }} about {{topic}}\n\n",
    "{{q}}{{q}} {{  topic  }}",
    "{{\nq\t}} {{q}}",
    "a\r\nb {{q}}\r\n",                # Jinja2 rewrites line ends in text: Jinja path
    "n={{ n }}",                       # non-string var: Jinja path
    "{{ items }}",
    "{{ q | upper }}",                 # filter: Jinja path
    "{% if n %}yes{% endif %} {{q}}",  # tag: Jinja path
    "{{ q }} {# comment #}",
    "{{ env }}",
])
def test_plain_rendering_is_what_jinja2_renders(source: str) -> None:
    """The plain path (joining the pieces) gives Jinja2's text, and leaves everything else to Jinja2."""
    assert templating.render(source, VARS) == templating.compile_template(source).render(VARS)


def test_plain_parts_only_for_text_and_plain_placeholders() -> None:
    assert templating.plain_parts("a {{x}} b {{ y }}") == (("a ", " b ", ""), ("x", "y"))
    for source in ("{{ x.y }}", "{{ x|e }}", "{% raw %}", "{{ x }}}", "a\r\n{{x}}", "{{ true }}"):
        assert templating.plain_parts(source) is None, source


def test_a_missing_variable_still_raises_jinja2s_error() -> None:
    with pytest.raises(jinja2.UndefinedError):
        templating.render("hello {{ missing }}", VARS)


def test_chat_prompts_render_each_message() -> None:
    msgs = [{"role": "user", "content": "{{q}}"}]
    assert templating.render_prompt(msgs, VARS) == [{"role": "user", "content": VARS["q"]}]

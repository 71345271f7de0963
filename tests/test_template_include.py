"""Nunjucks `{% include %}` in prompts (promptfoo 0.121.20): included templates are read from the config's folder
(then the current folder, where promptfoo's Nunjucks looks) and checked at load time: a missing one, or one that
does not parse, is a config error at the prompt's line; the variables it reads are checked like the prompt's."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError
from tests.test_promptfoo_compat_features import run_suite, write

CONFIG = """\
prompts:
  - file://prompts/main.txt
  - |
    {% include 'partials/system.njk' %}
    Q: {{question}}
providers: [echo]
tests:
  - vars: {question: Why?, persona: pirate}
"""


def test_included_templates_render_from_the_config_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write(tmp_path / "project", {
        "promptfooconfig.yaml": CONFIG,
        "prompts/main.txt": "{% include \"partials/system.njk\" %}Main: {{question}}",
        "partials/system.njk": "You are a {{ persona }}.\n",
    })
    monkeypatch.chdir(tmp_path)  # not the config's folder
    outputs = sorted(r.output or "" for r in run_suite(cfg))
    assert outputs == ["You are a pirate.\n\nQ: Why?\n", "You are a pirate.\nMain: Why?"]


def test_a_missing_include_is_a_config_error_at_the_prompt(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": CONFIG, "prompts/main.txt": "plain {{question}}"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 3 and "included template 'partials/system.njk' not found" in e.value.message
    assert str(tmp_path) in e.value.message


def test_an_include_that_does_not_parse_is_a_config_error(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"promptfooconfig.yaml": CONFIG, "prompts/main.txt": "plain {{question}}",
                           "partials/system.njk": "You are {% if persona %}a {{ persona }}.\n"})
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert e.value.line == 3 and "partials/system.njk" in e.value.message and "syntax" in e.value.message


def test_variables_of_an_included_template_are_checked(tmp_path: Path) -> None:
    files = {"promptfooconfig.yaml": CONFIG, "prompts/main.txt": "plain {{question}}",
             "partials/system.njk": "You are a {{ persna }}.\n"}
    with pytest.raises(ConfigError) as e:  # a likely typo of `persona`
        load([str(write(tmp_path / "a", files))])
    assert "'persna'" in e.value.message and "did you mean `persona`?" in (e.value.hint or "")
    files["partials/system.njk"] = "You are a {{ role }}.\n"  # defined nowhere: empty, with a warning
    suite = load([str(write(tmp_path / "b", files))])
    assert any("undefined template variable 'role'" in w for w in suite.warnings)

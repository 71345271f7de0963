"""Error locations: the line named is the line the user must edit (assertion value/config keys, the prompt
that reads an undefined var), and a warning when a `context` list var silently expands for a graded check."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.config import load
from evalrun.errors import ConfigError

HEAD = "prompts: ['{{question}}']\nproviders: [echo]\ntests:\n  - vars: {question: q, context: c}\n    assert:\n"


@pytest.mark.parametrize("body,line,key,word", [
    ("      - type: regex\n        value: '([a-z'\n", 7, "value", "value"),
    ("      - type: noise-sensitivity\n        value: truth\n        config:\n          mode: irelevant\n",
     9, "config.mode", "mode"),
    ("      - type: noise-sensitivity\n        value: truth\n        config:\n          contextChunks:\n"
     "            - {text: a, relevant: true}\n            - {txt: b, relevant: false}\n", 11,
     "config.contextChunks[1]", "txt"),  # the bad item's own line, not the list key's
])
def test_assertion_errors_point_at_the_offending_key(body: str, line: int, key: str, word: str,
                                                     tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + body)
    with pytest.raises(ConfigError) as e:
        load([str(path)])
    text = path.read_text().splitlines()
    assert e.value.key and e.value.key.endswith(key)
    assert e.value.line == line and word in text[line - 1], (e.value.line, text)


def test_undefined_prompt_var_is_reported_at_the_prompt_naming_the_test(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("providers: [echo]\nprompts:\n  - 'Answer {{question}}'\ntests:\n  - vars: {question: ok}\n"
                    "  - description: typo\n    vars: {questoin: x}\n")
    with pytest.raises(ConfigError) as e:
        load([str(path)])
    assert e.value.line == 3 and "used by tests[1] ('typo') at " in str(e.value) and "c.yaml:6" in str(e.value)


def test_expanding_context_list_read_by_a_graded_assertion_warns(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    text = ("prompts: ['{{question}}']\nproviders: [echo]\ntests:\n  - vars:\n      question: Where is Paris?\n"
            "      context: [Paris is in France., Rome is in Italy.]\n    assert: [{type: faithfulness}]\n")
    path.write_text(text)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "warning:" in out and "c.yaml:4" in out and "options.disableVarExpansion: true" in out
    main(["eval", str(path), "--no-progress-bar", "--no-table", "--results-file", str(tmp_path / "r.jsonl")])
    assert "options.disableVarExpansion: true" in capsys.readouterr().err
    path.write_text(text.replace("    assert:", "    options: {disableVarExpansion: true}\n    assert:"))
    assert main(["validate", str(path)]) == 0
    assert "disableVarExpansion" not in capsys.readouterr().out

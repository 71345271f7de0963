"""A provider's (or test's) `prompts:` entries select prompts by promptfoo's rule (doesPromptRefMatch, promptfoo
0.121.20 src/util/promptMatching.ts): label or id, a `*` prefix, or the `REF:` group of a label, which is how
promptfoo labels the prompts of a file given a label."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.config import suite as selection
from evalrun.errors import ConfigError
from evalrun.types import PromptSpec
from tests.test_promptfoo_compat_features import run_suite, write


def _load(cfg: Path) -> object:
    cwd = os.getcwd()
    os.chdir(cfg.parent)
    try:
        return load([cfg.name])
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize(("ref", "label", "pid", "group", "expected"), [
    ("content_generation", "content_generation", "file://p.txt", None, True),
    ("file://p.txt", "content_generation", "file://p.txt", None, True),
    ("content*", "content_generation", "x", None, True),
    ("file://p*", "x", "file://p.txt#1", None, True),
    ("Group", "Group:short", "x", None, True),  # promptfoo's legacy `REF:` prefix
    ("Group", "Group short", "x", None, False),
    ("multi", "multi [2]", "file://m.txt#2", "multi", True),
    ("content", "content_generation", "file://p.txt", None, False),
])
def test_prompt_ref_matching(ref: str, label: str, pid: str, group: str | None, expected: bool) -> None:
    prompt = PromptSpec(raw="x", label=label, id=pid, group=group)
    assert selection.prompt_matches(ref, prompt) is expected


def test_prompt_objects_with_file_ids_and_labels_are_selected_by_label(tmp_path: Path) -> None:
    """`{id: file://..., label}` prompts (one prompt, or several split on `---`) listed by label under a provider,
    as promptfoo users write them; the unlisted prompt stays out of that provider's cases."""
    cfg = write(tmp_path, {
        "prompts/content.txt": "Write about {{topic}}\n",
        "prompts/multi.txt": "A {{topic}}\n---\nB {{topic}}\n",
        "prompts/chat.json": '[{"role": "user", "content": "chat {{topic}}"}]',
        "promptfooconfig.yaml": (
            "prompts:\n"
            "  - id: file://prompts/content.txt\n    label: content_generation\n"
            "  - id: file://prompts/multi.txt\n    label: variants\n"
            "  - id: file://prompts/chat.json\n    label: chat\n"
            "providers:\n"
            "  - id: echo\n    label: 4o\n    prompts: [content_generation, variants]\n"
            "  - id: echo\n    label: mini\n    prompts: ['chat']\n"
            "tests:\n  - vars: {topic: cats}\n")})
    suite = _load(cfg)
    assert [p.label for p in suite.prompts] == ["content_generation", "variants [1]", "variants [2]", "chat"]
    outputs = sorted(r.output or "" for r in run_suite(cfg))
    assert outputs == ["A cats", "B cats", "Write about cats",
                       '[\n  {\n    "role": "user",\n    "content": "chat cats"\n  }\n]']  # promptfoo's JSON text


def test_a_prompts_entry_matching_nothing_is_an_error_at_its_line(tmp_path: Path) -> None:
    cfg = write(tmp_path, {
        "prompts/content.txt": "Write about {{topic}}\n",
        "promptfooconfig.yaml": (
            "prompts:\n  - id: file://prompts/content.txt\n    label: content_generation\n"
            "providers:\n  - id: echo\n    label: 4o\n    prompts: [content_generaton]\n"
            "tests:\n  - vars: {topic: cats}\n")})
    with pytest.raises(ConfigError) as e:
        _load(cfg)
    assert (e.value.line, e.value.key) == (5, "providers[0].prompts")
    assert "content_generaton" in e.value.message and "content_generation" in (e.value.hint or "")

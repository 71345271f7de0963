"""The README's quick start is examples/quickstart, word for word, and does what the README says: passes offline,
and fails naming the claim once the bot says something its chunks do not."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from evalrun.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "quickstart"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start() -> str:
    start = README.index("## Quick start")
    return README[start:README.index("\n## ", start + 1)]


def test_readme_shows_the_example_files_verbatim() -> None:
    blocks = re.findall(r"```(python|yaml)\n(.*?)```", _quick_start(), flags=re.S)
    shown = {lang: text for lang, text in blocks}
    assert shown["python"] == (EXAMPLE / "my_bot.py").read_text(encoding="utf-8")
    assert shown["yaml"] == (EXAMPLE / "evalrun.yaml").read_text(encoding="utf-8")


def test_quick_start_passes_then_fails_as_the_readme_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("my_bot.py", "evalrun.yaml"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "evalrun.yaml", "-o", "report.html", "-o", "r.json", "--no-progress-bar"]) == 0
    assert "<html" in (tmp_path / "report.html").read_text(encoding="utf-8").lower()
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["passed"] == summary["total"] == 2 and summary["graders"][0].startswith("builtin")

    # the README's step: return `text + " Returns are free of charge."` as the output (in a copy: this process
    # keeps the first my_bot.py module it loaded)
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("my_bot.py", "evalrun.yaml"):
        shutil.copy(EXAMPLE / name, broken / name)
    monkeypatch.chdir(broken)
    bot = broken / "my_bot.py"
    line = '    return {"output": text, "metadata": {"retrieved": chunks}}'
    assert line in bot.read_text() and 'text + " Returns are free of charge."' in _quick_start()
    bot.write_text(bot.read_text().replace('"output": text,', '"output": text + " Returns are free of charge.",'))
    capsys.readouterr()
    assert main(["eval", "evalrun.yaml", "-o", "r.json", "--no-progress-bar"]) == 100
    results = json.loads((broken / "r.json").read_text())["results"]
    assert [r["pass"] for r in results] == [False, False]
    reason = next(a["reason"] for a in results[0]["assertions"] if a["type"] == "faithfulness")
    shown = re.search(r"faithfulness: (2 claims, 1 not supported .*)", _quick_start())
    assert shown, "the README shows the failing reason"
    head, _, tail = shown.group(1).partition("(...)")  # the README elides the evidence sentence
    assert reason.startswith(head) and reason.endswith(tail) and "'Returns are free of charge.'" in head

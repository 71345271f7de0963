"""The HTML report and the compare diff page in a real browser (headless Chromium over the DevTools pipe).

Checks the DOM for the summary figures, the provider x prompt matrix, the charts, the filters, paging and an
opened case; that no JavaScript error is logged and no network request is made; saves screenshots in the
test's tmp dir. Skips only when no Chromium is installed (Debian: apt-get install -y chromium), never in CI
(.ci/run installs it and sets EVALRUN_REQUIRE_BROWSER).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from tests import browser

pytestmark = browser.needs_chromium

CONFIG = """
description: browser test
providers: [echo]
prompts: ["{P} {{{{answer}}}}", {{label: plain, raw: "{{{{answer}}}}"}}]
tests:
  - description: eiffel
    options: {{disableVarExpansion: true}}
    vars:
      answer: The Eiffel Tower is in Paris. It was completed in 1889.
      context: ["The Eiffel Tower is in Paris. It was completed in 1889. It is 330 metres tall."]
    assert: [{{type: faithfulness}}]
  - description: wants Note
    vars: {{answer: hello}}
    assert: [{{type: contains, value: Note}}]
  - description: counts
    vars:
      answer: [{VALUES}]
    assert: [{{type: contains, value: v}}]
"""


def _config(folder: Path, prefix: str) -> None:
    values = ", ".join(f"v{i}" for i in range(120))
    (folder / "evalrun.yaml").write_text(textwrap.dedent(CONFIG.format(P=prefix, VALUES=values)))


@pytest.fixture(scope="module")
def chrome() -> Any:
    with browser.Browser.launch() as b:
        yield b


def _clean(page: browser.Page, url: str) -> None:
    assert page.errors == []
    assert [u for u in page.requests if u != url] == []  # nothing but the file itself: no network


def test_report_and_diff_in_headless_chromium(chrome: browser.Browser, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _config(tmp_path, "Note:")
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "-o", "report.html"]) == 100
    url = (tmp_path / "report.html").as_uri()
    page = chrome.open(url)
    page.screenshot(tmp_path / "report.png")
    cards = page.eval("[...document.querySelectorAll('#cards .card')].map(c => c.textContent)")
    assert "244cases" in cards and "243passed" in cards and "1failed" in cards  # (2+120) cases x 2 prompts
    assert page.eval("document.querySelectorAll('#matrix button').length") == 2
    assert page.eval("document.querySelector('#matrix button[data-q=\"1\"]').textContent").startswith("99%")
    assert page.eval("document.querySelectorAll('#charts svg').length") >= 3  # case score, faithfulness, contains
    assert page.eval("document.querySelectorAll('#charts svg rect').length") >= 30
    # paged table: 100 rows a page
    assert page.eval("document.querySelectorAll('#rows tr.case').length") == 100
    assert page.eval("document.getElementById('page').textContent") == "page 1 of 3"
    page.eval("document.getElementById('next').click()")
    assert page.eval("document.getElementById('page').textContent") == "page 2 of 3"
    # filters: status, then a matrix cell (provider x prompt), then text
    page.eval("const s = document.getElementById('st'); s.value = '1'; s.dispatchEvent(new Event('change'))")
    assert page.eval("document.getElementById('count').textContent") == "1 of 244 cases"
    assert page.eval("document.querySelector('#rows tr.case .st').textContent") == "FAIL"
    page.eval("document.getElementById('clear').click()")
    page.eval("document.querySelector('#matrix button[data-q=\"0\"]').click()")
    assert page.eval("document.getElementById('count').textContent") == "122 of 244 cases"
    page.eval("const q = document.getElementById('q'); q.value = 'eiffel'; q.dispatchEvent(new Event('input'))")
    assert page.eval("document.querySelectorAll('#rows tr.case').length") == 1
    # an opened case: the rendered prompt, rounded score, claims with verdicts, highlighted support
    assert page.eval("document.querySelector('#rows tr.case').title") == "click to open"
    page.eval("document.querySelector('#rows tr.case').click()")
    detail = page.eval("document.querySelector('.detrow').textContent")
    assert "Prompt (rendered)" in detail and "Note: The Eiffel Tower is in Paris." in detail
    assert "{{answer}}" not in detail and "supported" in detail
    marks = page.eval("[...document.querySelectorAll('.detrow mark')].map(m => m.textContent)")
    assert marks == ["The Eiffel Tower is in Paris.", "It was completed in 1889."]  # not "It is 330 metres tall."
    page.screenshot(tmp_path / "report-open.png")
    _clean(page, url)

    _config(tmp_path, "Answer:")  # the edited prompt: "wants Note" now fails on it
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) == 100
    assert main(["compare", "-o", "diff.html"]) == 0
    url = (tmp_path / "diff.html").as_uri()
    diff = chrome.open(url)
    diff.screenshot(tmp_path / "diff.png")
    cards = diff.eval("[...document.querySelectorAll('#cards .card')].map(c => c.textContent)")
    assert "1regressions" in cards and "1newly failing" in cards
    assert diff.eval("document.querySelector('#matrix button[data-q=\"0\"]').textContent") == "100% → 99% ✎"
    assert "text changed" in diff.eval("document.getElementById('notes').textContent")
    assert diff.eval("document.querySelectorAll('#charts svg rect').length") >= 1
    assert diff.eval("document.querySelectorAll('#rows tr.case').length") == 1
    diff.eval("document.querySelector('#rows tr.case').click()")
    text = diff.eval("document.querySelector('.detrow').textContent")
    assert "Output A" in text and "Note: hello" in text and "Answer: hello" in text
    diff.screenshot(tmp_path / "diff-open.png")
    _clean(diff, url)
    assert all((tmp_path / n).stat().st_size > 10_000 for n in ("report.png", "report-open.png", "diff.png"))

"""Issue 36: the static pages (`-o report.html`, `compare -o diff.html`) carry a meta Content-Security-Policy that
allows their own inline script by its hash and nothing else: the page still draws, a script added to it does not
run (headless Chromium)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalrun.cli import main
from tests import browser

CONFIG = """description: csp
providers: [echo]
prompts: ["{p} {{{{answer}}}}"]
tests:
  - vars: {{answer: hello}}
    assert: [{{type: contains, value: Note}}]
  - vars: {{answer: "<img src=x onerror=document.title='pwned'>"}}
"""


def _pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    monkeypatch.chdir(tmp_path)
    Path("evalrun.yaml").write_text(CONFIG.format(p="Note:"))
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table", "-o", "report.html"]) == 0
    Path("evalrun.yaml").write_text(CONFIG.format(p="Answer:"))
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) == 100
    assert main(["compare", "-o", "diff.html"]) == 0
    return [tmp_path / "report.html", tmp_path / "diff.html"]


def test_static_pages_carry_a_script_hash_csp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for page in _pages(tmp_path, monkeypatch):
        head = page.read_text(encoding="utf-8")[:2000]
        meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', head)
        assert meta, page.name
        assert "default-src 'none'" in meta.group(1) and re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'",
                                                                    meta.group(1))
        assert "unsafe-inline" not in meta.group(1).split("script-src")[1].split(";")[0]


@browser.needs_chromium
def test_the_page_draws_and_an_added_script_does_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pages = _pages(tmp_path, monkeypatch)
    with browser.Browser.launch() as chrome:
        for page in pages:
            url = page.as_uri()
            shown = chrome.open(url)
            assert shown.eval("document.querySelectorAll('#cards .card').length") > 0, page.name
            assert shown.eval("document.title") != "pwned" and shown.errors == []
            tampered = page.with_name("tampered-" + page.name)
            tampered.write_text(page.read_text(encoding="utf-8").replace(
                "</body>", "<script>document.title='pwned'</script></body>"), encoding="utf-8")
            hostile = chrome.open(tampered.as_uri())
            assert hostile.eval("document.querySelectorAll('#cards .card').length") > 0
            assert hostile.eval("document.title") != "pwned", tampered.name

"""`evalrun view` in a real browser (headless Chromium over the DevTools pipe, tests/browser.py): the runs list
and its filter, a run's page (summary, matrix, charts, case filters, an opened case), two runs compared with a
link to a changed case, a run in progress that shows a case appended to its results file, and the page for a
missing results file. No JavaScript error, and no request but to the server itself.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalrun.run.history import History
from evalrun.view.server import ViewServer
from tests import browser
from tests.viewserver import serving, two_runs

pytestmark = browser.needs_chromium


@pytest.fixture(scope="module")
def chrome() -> Iterator[browser.Browser]:
    with browser.Browser.launch() as b:
        yield b


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ViewServer, Path, str, str]]:
    folder = tmp_path_factory.mktemp("viewb")
    a, b = two_runs(folder)
    with serving(folder / ".evalrun") as srv:
        yield srv, folder, a, b


def wait(page: browser.Page, expression: str, timeout: float = 20.0) -> Any:
    """The expression's value once it is truthy (the page fetches its data, then draws)."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.eval(f"(() => {{ try {{ return {expression}; }} catch (e) {{ return null; }} }})()")
        if value or time.monotonic() > deadline:
            assert value, f"{expression} stayed {value!r}"
            return value
        time.sleep(0.1)


def text(page: browser.Page, element_id: str) -> str:
    return str(page.eval(f"(document.getElementById({element_id!r}) || {{}}).textContent || ''"))


def set_value(page: browser.Page, element_id: str, value: str, event: str) -> None:
    page.eval(f"(() => {{ const e = document.getElementById({element_id!r}); e.value = {value!r}; "
              f"e.dispatchEvent(new Event({event!r})); }})()")


def _clean(page: browser.Page, srv: ViewServer) -> None:
    assert page.errors == []
    assert [u for u in page.requests if not u.startswith(srv.url)] == []  # nothing but the server: no network


def test_runs_list_open_filter_and_compare(chrome: browser.Browser, site: tuple[ViewServer, Path, str, str],
                                         tmp_path: Path) -> None:
    srv, _, a, b = site
    page = chrome.open(srv.url)
    wait(page, "document.querySelectorAll('#runs-rows tr.run').length === 2")
    assert page.eval("[...document.querySelectorAll('#runs-rows tr.run')].map(r => r.dataset.id)") == [b, a]
    row = page.eval("document.querySelector('#runs-rows tr.run').textContent")
    grader = History(site[1] / ".evalrun").list()[0].graders[0]  # builtin (offline, ...), as the run named it
    assert "edited prompt" in row and "FINISHED" in row and "99.18%" in row and grader in row
    page.screenshot(tmp_path / "runs.png")
    # filter the list
    set_value(page, "runs-q", "baseline", "input")
    assert page.eval("[...document.querySelectorAll('#runs-rows tr.run')].map(r => r.dataset.id)") == [a]
    assert text(page, "runs-count") == "1 of 2 runs"
    set_value(page, "runs-q", "", "input")  # the config menu lists the configs of the runs and filters by one
    assert page.eval("[...document.querySelectorAll('#runs-cfg option')].map(o => o.value)") == ["", "evalrun.yaml"]
    set_value(page, "runs-cfg", "evalrun.yaml", "change")
    assert text(page, "runs-count") == "2 of 2 runs"
    set_value(page, "runs-q", "baseline", "input")
    # open the baseline run: the report's summary, matrix, charts and paged table
    page.eval("document.querySelector('#runs-rows tr.run a').click()")
    wait(page, "document.querySelectorAll('#rows tr.case').length === 100")
    cards = page.eval("[...document.querySelectorAll('#cards .card')].map(c => c.textContent)")
    assert "244cases" in cards and "243passed" in cards and "1failed" in cards
    assert page.eval("document.querySelector('#matrix button[data-q=\"1\"]').textContent").startswith("99%")
    assert page.eval("document.querySelectorAll('#charts svg').length") >= 3
    assert text(page, "page") == "page 1 of 3" and text(page, "count") == "244 of 244 cases"
    page.eval("document.getElementById('next').click()")
    wait(page, "document.getElementById('page').textContent === 'page 2 of 3'")
    # filters: status, then a text filter, then an opened case with its claims
    set_value(page, "st", "1", "change")
    wait(page, "document.getElementById('count').textContent === '1 of 244 cases'")
    assert page.eval("document.querySelector('#rows tr.case .st').textContent") == "FAIL"
    page.eval("document.getElementById('clear').click()")
    set_value(page, "q", "eiffel", "input")
    wait(page, "document.getElementById('count').textContent === '2 of 244 cases'")
    page.eval("document.querySelector('#rows tr.case').click()")
    wait(page, "!!document.querySelector('.detrow mark')")
    marks = page.eval("[...document.querySelectorAll('.detrow mark')].map(m => m.textContent)")
    assert marks == ["The Eiffel Tower is in Paris.", "It was completed in 1889."]
    assert "supported" in page.eval("document.querySelector('.detrow').textContent")
    page.screenshot(tmp_path / "run.png")
    # compare: tick both runs in the list
    page.eval("location.hash = '#/'")
    wait(page, "document.querySelectorAll('#runs-rows .pick').length === 2")
    for i in (0, 1):  # (each tick redraws the list)
        page.eval(f"document.querySelectorAll('#runs-rows .pick')[{i}].click()")
    page.eval("document.getElementById('runs-compare').click()")
    wait(page, "document.querySelectorAll('#rows tr.case').length === 1")
    assert page.eval("location.hash") == f"#/compare/{a}/{b}"  # the older run is the baseline
    cards = page.eval("[...document.querySelectorAll('#cards .card')].map(c => c.textContent)")
    assert "1regressions" in cards and "1newly failing" in cards
    assert page.eval("document.querySelector('#matrix button[data-q=\"0\"]').textContent") == "100% → 99% ✎"
    assert "newly failing" in text(page, "compare-text")  # what `evalrun compare` prints, on the page too
    page.eval("document.querySelector('#rows tr.case').click()")
    wait(page, "!!document.querySelector('.detrow a.caselink')")
    detail = page.eval("document.querySelector('.detrow').textContent")
    assert "Note: hello" in detail and "Answer: hello" in detail
    page.screenshot(tmp_path / "compare.png")
    # its link opens the case in run B, on the page that holds it
    page.eval("[...document.querySelectorAll('.detrow a.caselink')].pop().click()")
    wait(page, "!!document.querySelector('.detrow pre')")
    assert page.eval("location.hash").startswith(f"#/run/{b}?case=")
    assert "Answer: hello" in page.eval("document.querySelector('.detrow').textContent")
    assert page.eval("document.querySelector('tr.case.open').textContent").count("wants Note") == 1
    _clean(page, srv)


def test_a_run_in_progress_shows_cases_as_they_finish(chrome: browser.Browser,
                                                    site: tuple[ViewServer, Path, str, str]) -> None:
    srv, folder, a, _ = site
    lines = (folder / ".evalrun" / "runs" / f"{a}.jsonl").read_bytes().splitlines(keepends=True)
    state = folder / ".evalrun"
    run_id = "20991231-235959-live00"
    results = state / "runs" / f"{run_id}.jsonl"
    History(state).start(run_id, description="in progress", config_files=[str(folder / "evalrun.yaml")],
                         options={}, results_file=results, version="test")
    results.write_bytes(b"".join(lines[:2]))
    try:
        page = chrome.open(srv.url + f"#/run/{run_id}")
        wait(page, "document.getElementById('count').textContent === '2 of 2 cases'")
        assert "updating as cases finish" in text(page, "nav") and "RUNNING" in text(page, "nav")
        with results.open("ab") as f:
            f.write(lines[2])  # the next case finishes
        wait(page, "document.getElementById('count').textContent === '3 of 3 cases'")
        assert "3cases" in page.eval("[...document.querySelectorAll('#cards .card')].map(c => c.textContent)")
        History(state).finish(run_id, status="finished", summary={}, graders=[])
        wait(page, "document.getElementById('nav').textContent.includes('FINISHED')")
        assert "updating" not in text(page, "nav")
        _clean(page, srv)
    finally:
        results.unlink()


def test_a_missing_results_file_gets_a_clear_page(chrome: browser.Browser,
                                                  site: tuple[ViewServer, Path, str, str]) -> None:
    srv, folder, _, _ = site
    state = folder / ".evalrun"
    History(state).start("20000101-000000-gone00", description="gone", config_files=[str(folder / "evalrun.yaml")],
                         options={}, results_file=state / "runs" / "gone.jsonl", version="test")
    History(state).finish("20000101-000000-gone00", status="finished", summary={"total": 1}, graders=[])
    page = chrome.open(srv.url + "#/run/20000101-000000-gone00")
    problem = wait(page, "document.getElementById('problem') && document.getElementById('problem').textContent")
    assert "Run 20000101-000000-gone00 cannot be shown" in problem and "is missing" in problem
    assert "deleted or moved" in problem
    assert [e for e in page.errors if "404" not in e] == []  # the browser logs the 404 answer itself

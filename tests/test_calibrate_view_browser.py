"""`evalrun view` shows a run's calibration in a real browser (headless Chromium, tests/browser.py): the run that
was calibrated shows its agreement with the labels, the run whose thresholds came from the calibration file shows
which file and figure they came from. tests/test_calibrate_cli.py checks the same data through the API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.run.recording import last_run
from tests import browser
from tests.test_calibrate_cli import _fill, _suite
from tests.test_view_browser import text, wait
from tests.viewserver import serving

pytestmark = browser.needs_chromium


def test_the_run_page_shows_agreement_and_threshold_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _suite(tmp_path, 12)
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) in (0, 100)
    first = last_run(tmp_path / ".evalrun")
    assert main(["calibrate", "--template", ".evalrun/last-run.jsonl", "-o", "labels.csv"]) == 0
    _fill(tmp_path / "labels.csv", "faithful")
    capsys.readouterr()
    assert main(["calibrate", ".evalrun/last-run.jsonl", "--labels", "labels.csv", "--min-labels", "3", "--json",
                 "-o", "calibration.json"]) == 0
    [m] = json.loads(capsys.readouterr().out)["metrics"]
    _suite(tmp_path, 12, assertion="", default="defaultTest: {assert: [{type: faithfulness, threshold: calibrated}]}")
    assert main(["eval", "evalrun.yaml", "--no-progress-bar", "--no-table"]) in (0, 100)
    second = last_run(tmp_path / ".evalrun")
    assert first is not None and second is not None and first != second
    with serving(tmp_path / ".evalrun") as srv, browser.Browser.launch() as chrome:
        page = chrome.open(f"{srv.url}#/run/{first.stem}")
        shown = wait(page, "document.getElementById('calibration') && document.getElementById('calibration')"
                           ".textContent")
        assert "Agreement with your labels (labels.csv)" in shown
        assert (f"faithfulness graded by builtin: 12 labels (6 pass, 6 fail) · balanced accuracy "
                f"{m['balanced_accuracy']:.2f} [{m['balanced_accuracy_ci'][0]:.2f}, "
                f"{m['balanced_accuracy_ci'][1]:.2f}]") in shown
        assert f"AUROC {m['auroc']:.2f}" in shown and f"suggested threshold {m['suggested_yaml_threshold']:.4f} " \
            f"(out-of-fold balanced accuracy {m['oof_balanced_accuracy']:.2f})" in shown
        assert "Thresholds from a calibration" not in shown and page.errors == []
        page = chrome.open(f"{srv.url}#/run/{second.stem}")
        wait(page, "document.getElementById('calibration') && document.getElementById('calibration').textContent")
        assert text(page, "calibration") == (
            f"Thresholds from a calibrationfaithfulness threshold {m['suggested_yaml_threshold']:.4f} from "
            f"calibration.json (12 labels, out-of-fold balanced accuracy {m['oof_balanced_accuracy']:.2f}, grader "
            "builtin)")
        assert page.errors == []

"""A run's calibration as `evalrun view` shows it: the figures `calibrate` measured on that run's results (kept in
`.evalrun/calibrations/RUN_ID.json` when RESULTS is a run's own file), and where the run's graded thresholds came
from (a calibration file, as each graded result records it)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from evalrun.errors import EvalrunError
from evalrun.run import history, recording, store

FOLDER = "calibrations"
#: Results read for threshold sources: a suite's calibrated assertions show in its first cases.
SCAN = 500
SUMMARY_KEYS = ("metric", "grader", "n", "n_human_pass", "n_human_fail", "balanced_accuracy", "balanced_accuracy_ci",
                "kappa", "kappa_ci", "auroc", "auroc_ci", "suggested_yaml_threshold", "oof_balanced_accuracy",
                "run_thresholds", "note")


def kept_path(results: Path) -> Path | None:
    """Where the calibration of a run's own results file is kept (None for any other file)."""
    if results.name == history.LAST_RUN:
        results = recording.last_run(results.parent) or results
    real = results.resolve()
    if real.parent.name != "runs" or real.parent.parent.name != history.STATE_DIR:
        return None
    return real.parent.parent / FOLDER / f"{real.stem}.json"


def keep(results: Path, data: dict[str, Any]) -> Path | None:
    """Save `calibrate`'s figures beside the run (best effort); the path written, or None."""
    path = kept_path(results)
    if path is None:
        return None
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    except OSError:
        return None
    return path


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return 0, -1
    return st.st_mtime_ns, st.st_size


def for_run(state: Path, run_id: str, results_file: Path) -> dict[str, Any]:
    """{"agreement": [per-metric summaries] or [], "labels": ..., "threshold_sources": [...]} of one run (read
    again only when its files change: the view polls a live run's page)."""
    kept = state / FOLDER / f"{run_id}.json"
    return _for_run(kept, results_file, _stamp(kept), _stamp(results_file))


@functools.lru_cache(maxsize=64)
def _for_run(kept: Path, results_file: Path, *_stamps: tuple[int, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"agreement": [], "labels": None, "threshold_sources": []}
    try:
        data = json.loads(kept.read_text(encoding="utf-8"))
        out["agreement"] = [{k: m.get(k) for k in SUMMARY_KEYS} for m in data.get("metrics", [])]
        out["labels"] = data.get("labels")
    except (OSError, ValueError, AttributeError):
        pass
    seen: dict[str, dict[str, Any]] = {}
    try:
        for n, (_, rec) in enumerate(store.read_records(results_file)):
            if n >= SCAN:
                break
            for a in rec.get("assertions") or []:
                src = (a.get("details") or {}).get("threshold_source")
                if isinstance(src, dict):
                    seen.setdefault(json.dumps(src, sort_keys=True), src)
    except (OSError, ValueError, EvalrunError):  # a bad results file is the run page's own problem to report
        pass
    out["threshold_sources"] = list(seen.values())
    return out

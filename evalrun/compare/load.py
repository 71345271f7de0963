"""Load one side of a comparison: a history reference (`latest`, `latest~1`, a run id) or a results file
(a results `.jsonl` or a `-o` `.json` report), reduced to the fields the diff reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalrun.errors import UsageError
from evalrun.run.history import History

KEEP = ("test_index", "description", "vars", "provider", "prompt_index", "prompt_label", "prompt_sha", "repeat",
        "status", "score", "error", "reason", "output", "prompt", "id")


@dataclass
class LoadedRun:
    ref: str  # as given on the command line
    label: str  # run id or file name
    records: list[dict[str, Any]]
    info: dict[str, Any] = field(default_factory=dict)  # the history row, when there is one


def slim(rec: dict[str, Any]) -> dict[str, Any]:
    """The fields compare needs: the case identity, verdict, scores and each assertion's claims."""
    out = {k: rec.get(k) for k in KEEP}
    out["assertions"] = [_slim_assertion(a) for a in rec.get("assertions") or []]
    return out


def _slim_assertion(a: dict[str, Any]) -> dict[str, Any]:
    details = a.get("details") or {}
    claims = details.get("claims") if isinstance(details, dict) else None
    out = {k: a.get(k) for k in ("type", "metric", "score", "pass", "error", "lower_is_better")}
    if isinstance(claims, list):
        out["claims"] = [{"text": c.get("text"), "verdict": c.get("verdict")} if isinstance(c, dict)
                         else {"text": str(c), "verdict": None} for c in claims]
    return out


def _read_file(path: Path) -> list[dict[str, Any]]:
    from evalrun.run import store

    return [slim(rec) for rec in store.records(path, key="RUN", hint=f"pass {store.ACCEPTED}, or a run id")]


def load(ref: str, history: History) -> LoadedRun:
    """A results file when `ref` names an existing file, else a run from the history."""
    path = Path(ref)
    if path.is_file() and (path.suffix or "/" in ref or "\\" in ref):  # any file: store.records refuses the wrong kind
        return LoadedRun(ref, path.name, _read_file(path))
    if path.suffix.lower() in (".json", ".jsonl") and not path.exists() and ("/" in ref or "\\" in ref):
        raise UsageError(f"no results file {ref!r}", hint="pass an existing results file or a run id")
    record = history.resolve(ref)
    if not record.results_file.is_file():
        raise UsageError(f"run {record.id}: its results file {str(record.results_file)!r} is gone",
                         hint="`evalrun runs` lists the runs; compare results files directly instead")
    return LoadedRun(ref, record.id, _read_file(record.results_file), record.as_dict())

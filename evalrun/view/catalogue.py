"""The catalogue `evalrun view` serves: a `.evalrun` folder's runs (history rows and results files), each run's
RunIndex, the runs list's summaries, and comparisons kept for paging."""

from __future__ import annotations

import functools
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalrun.calibration import stored
from evalrun.compare import diff, match
from evalrun.errors import UsageError
from evalrun.report import html
from evalrun.run import store
from evalrun.run.history import History, RunRecord
from evalrun.run.recording import read_run_info
from evalrun.run.tally import iso_time
from evalrun.view.index import DIFF_STATUS, Filters, RunIndex, ViewError, epoch

LIVE_S = 60.0  # a results file no history row names counts as being written when modified this recently
#: A results file the list must read (a run in progress, a file the history does not name) and that was never
#: read is read in the background above this size: 100,000 cases (88 MB) take 5-15 s, the list must not wait.
INLINE_BYTES = 4 << 20
KEEP = 4  # comparisons kept in memory (each holds its changed cases)


@dataclass(frozen=True)
class Run:
    id: str
    results_file: Path
    record: RunRecord | None  # None: a results file the history does not name
    modified: float  # the file's mtime (0 when it is missing)
    info: dict[str, Any] | None = None  # a file not in the history: its own record (recording.write_run_info)

    @property
    def own(self) -> dict[str, Any]:
        """The run's description and config files, from the history or else from the file's own record."""
        if self.record is not None:
            return {"description": self.record.description, "config_files": self.record.config_files}
        info = self.info or {}
        files = info.get("config_files")
        return {"description": info.get("description") if isinstance(info.get("description"), str) else None,
                "config_files": [str(f) for f in files] if isinstance(files, list) else []}

    @property
    def started_at(self) -> str:
        if self.record:
            return self.record.started_at
        own = (self.info or {}).get("started_at")
        return own if isinstance(own, str) else iso_time(self.modified)

    @property
    def live(self) -> bool:
        """Cases may still be added: a run the history says is running, or a file modified just now."""
        if self.record:
            return self.record.status == "running"
        if self.info and self.info.get("finished_at"):  # its own record says it ended
            return False
        return time.time() - self.modified < LIVE_S


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class Catalogue:
    def __init__(self, state: Path) -> None:
        self.state = state
        self.history = History(state)
        self._indexes: dict[Path, RunIndex] = {}
        self._reading: set[Path] = set()  # files being read in the background for the list
        self._lock = threading.Lock()
        self._compared = functools.lru_cache(maxsize=KEEP)(self._compare)

    def runs(self) -> list[Run]:
        records: list[RunRecord] = []
        if self.history.path.exists():
            try:
                records = self.history.list()
            except UsageError as e:
                raise ViewError("unreadable", e.message, "the results files are still in .evalrun/runs/") from None
        out = [Run(r.id, r.results_file, r, _mtime(r.results_file)) for r in records]
        named = {r.results_file.resolve() for r in records}
        ids = {r.id for r in records}
        for path in sorted(self.state.glob("runs/*.jsonl")) + sorted(self.state.glob("*.jsonl")):
            if path.is_symlink() or not path.is_file() or path.resolve() in named:
                continue  # last-run.jsonl points at a run listed already
            run_id = path.stem if path.stem not in ids else f"{path.parent.name}/{path.stem}"
            ids.add(run_id)
            out.append(Run(run_id, path, None, _mtime(path), read_run_info(path)))
        # started_at has whole seconds: within one second the file written last is the newer run
        return sorted(out, key=lambda r: (r.started_at, r.modified, r.record.seq if r.record else 0), reverse=True)

    def get(self, run_id: str) -> Run:
        for r in self.runs():
            if r.id == run_id:
                return r
        if run_id in self.history.malformed:
            raise ViewError("corrupt", f"run {run_id!r} cannot be shown: {self.history.malformed[run_id]}",
                            "the history was edited or comes from elsewhere; its results file is still readable "
                            "with `evalrun view FILE`")
        raise ViewError("not_found", f"no run {run_id!r} in {str(self.state)!r}",
                        "the list of runs shows the runs recorded there")

    def index(self, run: Run) -> RunIndex:
        """The run's index, brought up to date with its results file (ViewError when the file is missing)."""
        with self._lock:
            idx = self._indexes.setdefault(run.results_file, RunIndex(run.results_file))
        with idx.lock:
            idx.refresh()
            idx.check(growing=run.live)
        return idx

    def _index_for_list(self, run: Run) -> RunIndex | None:
        """The run's index, or None while a big file is read for the first time (in the background)."""
        path = run.results_file
        with self._lock:
            if path in self._reading:
                return None
            known = path in self._indexes and self._indexes[path].ident is not None
            if not known and path.is_file() and path.stat().st_size > INLINE_BYTES:
                self._reading.add(path)
                threading.Thread(target=self._read_in_background, args=(run,), daemon=True).start()
                return None
        return self.index(run)

    def _read_in_background(self, run: Run) -> None:
        try:
            self.index(run)
        except ViewError:
            pass  # the list asks again, and then says what is wrong
        finally:
            with self._lock:
                self._reading.discard(run.results_file)

    def summary(self, run: Run, idx: RunIndex | None) -> dict[str, Any] | None:
        """The summary the run recorded while the file holds exactly its cases; else the index's (or None)."""
        s = run.record.summary if run.record and not run.live else None
        if s is not None and (idx is None or s.get("total") == len(idx.entries)):
            return s
        if idx is None:
            return None
        started = epoch(run.record.started_at) if run.record else None
        finished = None if run.live else epoch(run.record.finished_at) if run.record else None
        return idx.summary(started, finished)

    def listing(self) -> list[dict[str, Any]]:
        """One row per run: a finished run's counts from its history row, other files read."""
        rows = []
        for run in self.runs():
            h = run.record.as_dict() if run.record else {"status": "not in history", "graders": []}
            own = run.own
            row: dict[str, Any] = {"id": run.id, "status": h["status"], "live": run.live, "started_at": run.started_at,
                                   **{k: h.get(k) for k in ("finished_at", "git_commit", "graders")},
                                   "description": own["description"],
                                   "config": ", ".join(_config_name(Path(f), self.state) for f in own["config_files"]),
                                   "results_file": _shown(run.results_file, self.state), "problem": None,
                                   "reading": False}
            summary = self.summary(run, None)
            if summary is not None:
                row["problem"] = _sniff(run.results_file)
            else:
                try:
                    idx = self._index_for_list(run)
                    row["reading"] = idx is None
                    if idx is not None:
                        with idx.lock:
                            summary = self.summary(run, idx)
                except ViewError as e:
                    row["problem"] = {"missing": "results file missing", "corrupt": "not a results file"}.get(
                        e.kind, "unreadable")
            if summary:
                row.update({k: summary.get(k) for k in ("total", "passed", "failed", "errors", "pass_rate",
                                                        "duration_s")})
                row["graders"] = row["graders"] or list(summary.get("graders") or [])
            rows.append(row)
        shown = {r["id"] for r in rows}
        rows += [{"id": run_id, "status": "bad row", "live": False, "started_at": None, "graders": [],
                  "problem": "malformed history row", "reading": False, "results_file": None}
                 for run_id in self.history.malformed if run_id not in shown]
        return rows

    def head(self, run: Run) -> dict[str, Any]:
        """A run page's data but its cases (html.Aggregates.head), and the view's own."""
        idx = self.index(run)
        h = run.record.as_dict() if run.record else {"status": "not in history"}
        with idx.lock:
            meta = {**run.own,
                    "results_file": str(run.results_file), "run_id": run.id}
            page = idx.agg.head(meta, self.summary(run, idx) or {})
            page["view"] = {"status": h["status"], "live": run.live, "version": idx.version,
                            "git_commit": h.get("git_commit"), "options": h.get("options"),
                            "problems": idx.problems(growing=run.live)}
        page["view"]["calibration"] = stored.for_run(self.state, run.id, run.results_file)
        return page

    def compare(self, a_id: str, b_id: str) -> Compared:
        """The runs compared as `evalrun compare` does, kept for paging while their files stay."""
        files = []
        for run in (self.get(a_id), self.get(b_id)):
            idx = self.index(run)
            files.append((run.results_file, idx.ident, idx.pos))
        return self._compared(a_id, b_id, tuple(files))

    def _compare(self, a_id: str, b_id: str, _files: tuple[Any, ...]) -> Compared:
        a, b = self.get(a_id), self.get(b_id)
        d = diff.compare(*(match.load(str(run.results_file), self.history).records for run in (a, b)))
        data = diff.as_dict(d, *({"ref": run.id, "label": run.id, "run": run.record.as_dict() if run.record else None}
                                   for run in (a, b)))
        head, cases = html.diff_page(data, d)
        head.update(text=diff.text(data), runs={"a": a.id, "b": b.id})
        items = list(cases)
        texts = [" ".join(str(row[i] if row[i] is not None else "") for i in (0, 3, 5, 6)).lower() for row, _ in items]
        return Compared(head, items, texts)


def _sniff(path: Path) -> str | None:
    """What is wrong with a finished run's results file, judged by its start (not reading it all)."""
    try:
        return None if store.kind(path) == "jsonl" else "not a results file"
    except UsageError:
        if not path.exists():
            return "results file missing"
        return "not a results file" if os.access(path, os.R_OK) else "unreadable"


def _config_name(path: Path, state: Path) -> str:
    """A config as the runs list groups by it: its path from the folder it sits in, else (a folder since moved or
    copied) its file name."""
    shown = _shown(path, state)
    return shown if shown != str(path) else path.name


def _shown(path: Path, state: Path) -> str:
    base = state.resolve().parent
    return str(path.resolve().relative_to(base)) if path.resolve().is_relative_to(base) else str(path)


@dataclass
class Compared:
    head: dict[str, Any]  # the compare page's data but its cases, and `text`: `evalrun compare`'s own output
    items: list[tuple[list[Any], dict[str, Any]]]  # (row, detail) per changed case
    texts: list[str]  # what the text filter searches: label, kind, status in A and in B

    def page(self, f: Filters) -> dict[str, Any]:
        shown = [i for i, (row, _) in enumerate(self.items)
                 if f.keep(DIFF_STATUS.index(row[3]), row[1], row[2], row[4], self.texts[i])]
        chosen, counts = f.paged(shown, str)
        return {"items": [{"key": i, "row": self.items[i][0]} for i in chosen], "total": len(self.items), **counts}

    def detail(self, n: int) -> dict[str, Any]:
        if not 0 <= n < len(self.items):
            raise ViewError("not_found", f"no changed case #{n} in this comparison", "reload the compare page")
        return self.items[n][1]

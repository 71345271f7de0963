"""One results file as the view reads it, incrementally: the HTML report's aggregates, the totals, an entry per case
for the table's filters and pages (report.js's rules); and ViewError, what the view answers instead of data."""

from __future__ import annotations

import calendar
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evalrun import jsonfast
from evalrun.errors import EvalrunError
from evalrun.report import html
from evalrun.run.store import read_at
from evalrun.run.tally import Tally, group_key

PAGE = 100
RUN_STATUS = ("pass", "fail", "error")
DIFF_STATUS = ("newly_failing", "newly_passing", "new_error", "changed", "noise", "unchanged", "added", "removed")
T = TypeVar("T")
SNIPPET = 160  # output characters in a table row (report.js shows the same)


class ViewError(EvalrunError):
    """`kind`: not_found (no run or case), missing / corrupt / unreadable (a file, the history), bad_request."""

    STATUS = {"not_found": 404, "missing": 404, "corrupt": 422, "unreadable": 500, "bad_request": 400}

    def __init__(self, kind: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.kind, self.message, self.hint = kind, message, hint
        self.status = self.STATUS[kind]

    def as_dict(self) -> dict[str, Any]:
        return {"error": self.message, "hint": self.hint, "kind": self.kind}


@dataclass(slots=True)
class Entry:
    id: str
    index: int
    offset: int
    provider: str
    prompt: str
    status: int
    group: list[int] | None  # [passed, not passed] of the case's repeats (None: the run has no repeats)
    text: str  # what the text filter searches: test label, output snippet, reason snippet


@dataclass(frozen=True)
class Filters:
    q: str = ""
    st: str = ""  # a status's index (RUN_STATUS or DIFF_STATUS), or `regression`
    pv: int | None = None
    pr: int | None = None
    fl: bool = False
    page: int = 0
    at: str | None = None  # show the page holding this case (a link to a case)

    @classmethod
    def parse(cls, params: dict[str, list[str]]) -> Filters:
        one = {k: v[-1] for k, v in params.items() if v}
        for key in ("q", "at"):
            capped(key, one.get(key, ""))
        pv, pr, page = (index_value(key, one[key]) if one.get(key) else None for key in ("pv", "pr", "page"))
        st = one.get("st", "")
        if st not in ("", "regression") and not _INDEX.fullmatch(st):
            raise ViewError("bad_request", f"st={st[:40]!r} is not a status",
                            "the page sends an index or `regression`")
        return cls(q=one.get("q", "").lower(), st=st, pv=pv, pr=pr, fl=one.get("fl", "") in ("1", "true"),
                   page=page or 0, at=one.get("at") or None)

    def keep(self, status: int, provider: int, prompt: int, flag: bool, text: str) -> bool:
        """Shown? `flag`: a run's case is flaky (`fl` asks for those), a diff's case a regression (`st=regression`)."""
        if (_INDEX.fullmatch(self.st) and status != int(self.st)) or ((self.fl or self.st == "regression") and not flag):
            return False
        return ((self.pv is None or provider == self.pv) and (self.pr is None or prompt == self.pr)
                and (not self.q or self.q in text))

    def paged(self, items: list[T], key: Callable[[T], str]) -> tuple[list[T], dict[str, int]]:
        """The page of `items` asked for (the page holding case `at`, when it is there) and the counts."""
        pages = max(1, -(-len(items) // PAGE))
        page = min(self.page, pages - 1)
        at = next((i for i, it in enumerate(items) if key(it) == self.at), None) if self.at is not None else None
        if at is not None:
            page = at // PAGE
        return items[page * PAGE:(page + 1) * PAGE], {"matched": len(items), "page": page, "pages": pages}


#: An index the page sends: ASCII digits only (`isdigit()` takes "²", which int() refuses), at most 9 of them.
_INDEX = re.compile(r"[0-9]{1,9}")
#: The longest query value (a filter text, a case or run id) the server reads.
MAX_VALUE = 1000


def index_value(key: str, value: str) -> int:
    """`value` as a list index, or a 400 ViewError naming `key`."""
    if not _INDEX.fullmatch(value):
        raise ViewError("bad_request", f"{key}={value[:40]!r}{'…' if len(value) > 40 else ''} is not a number "
                        "(0 to 999999999)", "the page sends indexes here")
    return int(value)


def capped(key: str, value: str) -> str:
    """`value`, or a 400 ViewError when it is longer than MAX_VALUE characters."""
    if len(value) > MAX_VALUE:
        raise ViewError("bad_request", f"{key} is {len(value)} characters long; at most {MAX_VALUE} are read",
                        "shorten it")
    return value


def epoch(iso: str | None) -> float | None:
    """Seconds since the epoch of a history time (`2026-11-23T10:15:47Z`), None when absent or malformed."""
    try:
        return float(calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))) if iso else None
    except ValueError:
        return None


class RunIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.ident: tuple[int, int] | None = None
        self.version = 0
        self._clear()

    def _clear(self) -> None:
        self.pos = 0  # bytes read (complete lines)
        self.lines = 0
        self.tail = 0  # bytes after the last complete line (a line being written, or cut off)
        self.bad: list[int] = []  # line numbers that are not result records
        self.entries: dict[str, Entry] = {}
        self.agg = html.Aggregates()
        self.tally = Tally()
        self.repeats = False
        self.groups: dict[tuple[Any, ...], list[int]] = {}  # [passed, not passed] per case of a repeated run
        self.max_repeat = 0

    def refresh(self) -> None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            raise ViewError("missing", f"the results file {str(self.path)!r} is missing",
                            "it was deleted or moved; `evalrun runs` lists the runs and their files") from None
        except OSError as e:
            raise ViewError("unreadable", f"cannot read {str(self.path)!r}: {e.strerror or e}") from None
        ident = (st.st_dev, st.st_ino)
        if ident != self.ident or st.st_size < self.pos:  # a new file, or one rewritten
            self.ident = ident
            self._load_all()
        elif st.st_size != self.pos + self.tail:
            new = list(self._scan(self.pos))
            if any(rec["id"] in self.entries or (rec.get("repeat") and not self.repeats) for _, rec in new):
                self._load_all()
            else:
                for offset, rec in new:
                    self._add(offset, rec)
                self.version += 1

    def _scan(self, start: int) -> Iterator[tuple[int, dict[str, Any]]]:
        """(offset, record) of each complete line from `start`; bad lines are noted, a partial last line waits."""
        try:
            with open(self.path, "rb") as f:
                f.seek(start)
                self.tail = 0
                for line in f:
                    if not line.endswith(b"\n"):
                        self.tail = len(line)
                        return
                    at, self.pos = self.pos, self.pos + len(line)
                    self.lines += 1
                    if not line.strip():
                        continue
                    try:
                        rec = jsonfast.loads(line)
                    except ValueError:
                        rec = None
                    if isinstance(rec, dict) and _well_formed(rec):
                        yield at, rec
                    else:
                        self.bad.append(self.lines)
        except OSError as e:
            raise ViewError("unreadable", f"cannot read {str(self.path)!r}: {e.strerror or e}") from None

    def _load_all(self) -> None:
        """Read the whole file; a case written twice (a resumed run) counts once, its last record."""
        self._clear()
        latest: dict[str, tuple[int, int]] = {}
        again = False
        for offset, rec in self._scan(0):
            again = again or rec["id"] in latest or (bool(rec.get("repeat")) and not self.repeats and bool(latest))
            self.repeats = self.repeats or bool(rec.get("repeat"))
            latest[rec["id"]] = (rec.get("index", 0), offset)
            if not again:
                self._add(offset, rec)
        if again:
            kept = (self.lines, self.bad, self.tail, self.pos, self.repeats)  # the file as read: only counts restart
            self._clear()
            self.lines, self.bad, self.tail, self.pos, self.repeats = kept
            with open(self.path, "rb") as f:
                for _, offset in sorted(latest.values()):
                    self._add(offset, read_at(f, offset))
        self.version += 1

    def _add(self, offset: int, rec: dict[str, Any]) -> None:
        self.agg.add(rec)
        self.tally.add(rec, offset)
        row = html.row(0, rec, self.agg)
        group = None
        if self.repeats:
            group = self.groups.setdefault(group_key(rec), [0, 0])
            group[0 if rec.get("status") == "pass" else 1] += 1
            self.max_repeat = max(self.max_repeat, rec.get("repeat") or 0)
        self.entries[rec["id"]] = Entry(rec["id"], rec.get("index", 0), offset, *html.case_names(rec), row[4], group,
                                        " ".join((row[1], _snippet(rec), row[7])).lower())

    def flaky(self, e: Entry) -> bool:
        """Passed in some repeats only."""
        return e.group is not None and all(e.group)

    def problems(self, *, growing: bool) -> dict[str, Any]:
        """Bad lines (numbers of the first ten), and a cut-off last line unless the file is still being written."""
        out: dict[str, Any] = {}
        if self.bad:
            out["bad_lines"] = len(self.bad)
            out["first_bad_lines"] = self.bad[:10]
        if self.tail and not growing:
            out["cut_line"] = self.lines + 1
        return out

    def check(self, *, growing: bool) -> None:
        """ViewError when it is not a results file at all."""
        if self.entries or not (self.bad or (self.tail and not growing)):
            return
        where = f"line {self.bad[0]} is not a JSON result record" if self.bad else \
            f"line {self.lines + 1} is cut off (no line end)"
        raise ViewError("corrupt", f"{str(self.path)!r} is not a results file: {where}",
                        "a results file holds one JSON object per line, each with an `id` (as `evalrun eval` "
                        "writes them); rebuild reports from an intact copy with `evalrun report`")

    def summary(self, started: float | None, finished: float | None) -> dict[str, Any]:
        """The summary of the cases read so far; start and end from the history (None: unknown)."""
        self.tally.started = started or time.time()
        self.tally.finished = finished
        s = self.tally.summary()
        if started is None:
            s["started_at"] = s["finished_at"] = s["duration_s"] = None
        if self.repeats:
            s["repeats"] = {"repeat": self.max_repeat + 1, "groups": len(self.groups),
                            "flaky_count": sum(all(c) for c in self.groups.values())}
        return s

    def page(self, f: Filters) -> dict[str, Any]:
        ordered = sorted(self.entries.values(), key=lambda e: e.index)  # 100,000 entries: ~50 ms
        provider = {name: n for n, name in enumerate(self.agg.providers)}
        prompt = {name: n for n, name in enumerate(self.agg.prompts)}
        shown = [e for e in ordered if f.keep(e.status, provider[e.provider], prompt[e.prompt], self.flaky(e), e.text)]
        chosen, counts = f.paged(shown, lambda e: e.id)
        items = []
        with open(self.path, "rb") as fh:
            for e in chosen:
                rec = read_at(fh, e.offset)
                row = html.row(e.index, rec, self.agg, self.flaky(e))
                row[6] = _snippet(rec)
                items.append({"key": e.id, "row": row})
        return {"items": items, "total": len(self.entries), **counts}

    def detail(self, case_id: str) -> dict[str, Any]:
        e = self.entries.get(case_id)
        if e is None:
            raise ViewError("not_found", f"no case {case_id!r} in {str(self.path)!r}",
                            "the run's page lists its cases")
        with open(self.path, "rb") as fh:
            return html.detail(read_at(fh, e.offset))


def _well_formed(rec: dict[str, Any]) -> bool:
    """The fields the report reads have the types it reads them as (a hand-edited or foreign line may not)."""
    assertions = rec.get("assertions") or []
    return (isinstance(rec.get("id"), str) and isinstance(rec.get("index", 0), int)
            and isinstance(rec.get("repeat") or 0, int) and isinstance(rec.get("vars") or {}, dict)
            and isinstance(rec.get("tokens") or {}, dict) and isinstance(assertions, list)
            and all(isinstance(a, dict) and isinstance(a.get("tokens") or {}, dict) for a in assertions))


def _snippet(rec: dict[str, Any]) -> str:
    return "" if rec.get("output") is None else str(rec["output"])[:SNIPPET]

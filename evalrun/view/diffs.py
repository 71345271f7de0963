"""Two runs compared in the view: what `evalrun compare A B` reports (compare/: load, diff, roll-up, text),
as the compare page's data (report.html.diff_head), kept while neither results file changes so that its changed
cases can be paged and opened.

    Diffs(catalogue).get(a, b) -> Compared     .page(filters) / .detail(n)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from evalrun.compare import diff, load, render, rollup
from evalrun.report import html
from evalrun.view import query
from evalrun.view.catalogue import Catalogue, Run
from evalrun.view.errors import ViewError

KEEP = 4  # comparisons kept in memory (each holds its changed cases)


@dataclass
class Compared:
    head: dict[str, Any]  # the compare page's data but its cases, and `text`: `evalrun compare`'s own output
    items: list[list[Any]]  # [row, detail] per changed case
    texts: list[str] = field(default_factory=list)

    def page(self, f: query.Filters) -> dict[str, Any]:
        keep = query.keep_diff(f)
        shown = [i for i, (row, _) in enumerate(self.items) if keep(row, self.texts[i])]
        chosen, counts = query.paged(shown, f, str)
        return {"items": [{"key": i, "row": self.items[i][0]} for i in chosen], "total": len(self.items), **counts}

    def detail(self, n: int) -> dict[str, Any]:
        if not 0 <= n < len(self.items):
            raise ViewError("not_found", f"no changed case #{n} in this comparison", "reload the compare page")
        out: dict[str, Any] = self.items[n][1]
        return out


class Diffs:
    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self._kept: OrderedDict[tuple[Any, ...], Compared] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, a_id: str, b_id: str) -> Compared:
        runs = [self.catalogue.get(a_id), self.catalogue.get(b_id)]
        key: tuple[Any, ...] = ()
        for run in runs:
            idx = self.catalogue.index(run)  # ViewError for a missing or corrupt file
            key += (run.id, run.results_file, idx.ident, idx.pos)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        compared = self._compare(*runs)
        with self._lock:
            self._kept[key] = compared
            while len(self._kept) > KEEP:
                self._kept.popitem(last=False)
        return compared

    def _compare(self, a: Run, b: Run) -> Compared:
        ra, rb = (load.load(str(run.results_file), self.catalogue.history).records for run in (a, b))
        d = diff.compare(ra, rb)
        data = rollup.as_dict(d, *({"ref": run.id, "label": run.id, "run": run.record.as_dict() if run.record else None}
                                   for run in (a, b)))
        head = html.diff_head(data)
        head["text"] = render.text(data)
        head["runs"] = {"a": a.id, "b": b.id}
        items = [html.diff_item(c, head["providers"]) for c in d.cases if c.changed]
        return Compared(head, items, [query.diff_text(row) for row, _ in items])

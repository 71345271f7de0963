"""`evalrun view`: a local, read-only web app over the run history and results files of a `.evalrun` folder.

    catalogue.py   which runs there are (history rows, results files the history does not name), and two of
                   them compared as `evalrun compare` does, kept for paging
    index.py       one results file read incrementally (a run in progress grows), for pages and aggregates
    query.py       the case table's filters and pages (the rules report.js applies in the static report)
    server.py      the HTTP server (standard library, GET only) and its JSON endpoints
The page itself (app.html, view.js) renders with the HTML report's own renderer (report/report.js). What the
view answers instead of data is a ViewError: an HTTP status, a message and a hint, shown as a page by view.js.
"""

from __future__ import annotations

from typing import Any

from evalrun.errors import EvalrunError


class ViewError(EvalrunError):
    """`kind`: not_found (no such run or case), missing (results file gone), corrupt (not a results file),
    unreadable (the file or the history cannot be read), bad_request (a malformed query)."""

    STATUS = {"not_found": 404, "missing": 404, "corrupt": 422, "unreadable": 500, "bad_request": 400}

    def __init__(self, kind: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.kind, self.message, self.hint = kind, message, hint
        self.status = self.STATUS[kind]

    def as_dict(self) -> dict[str, Any]:
        return {"error": self.message, "hint": self.hint, "kind": self.kind}

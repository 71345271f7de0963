"""`evalrun view`: a local, read-only web app over the runs and results files of a `.evalrun` folder, rendered by
the HTML report's own renderer (report/report.js). What it answers instead of data is a ViewError."""

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

"""The case table's filters and pages on the server: the rules report.js applies to the cases it holds, for the
view, whose pages ask for 100 cases at a time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from evalrun.view import ViewError

PAGE = 100
RUN_STATUS = ("pass", "fail", "error")
DIFF_STATUS = ("newly_failing", "newly_passing", "new_error", "changed", "noise", "unchanged", "added", "removed")
T = TypeVar("T")


@dataclass(frozen=True)
class Filters:
    q: str = ""
    st: str = ""
    pv: int | None = None
    pr: int | None = None
    fl: bool = False
    page: int = 0
    at: str | None = None  # show the page holding this case (a link to a case)

    @classmethod
    def parse(cls, params: dict[str, list[str]]) -> Filters:
        one = {k: v[-1] for k, v in params.items() if v}

        def number(key: str) -> int | None:
            text = one.get(key, "")
            if text == "":
                return None
            if not text.isdigit():
                raise ViewError("bad_request", f"{key}={text!r} is not a number", "the page sends indexes here")
            return int(text)

        st = one.get("st", "")
        if st not in ("", "regression") and not st.isdigit():
            raise ViewError("bad_request", f"st={st!r} is not a status", "the page sends an index or `regression`")
        return cls(q=one.get("q", "").lower(), st=st, pv=number("pv"), pr=number("pr"),
                   fl=one.get("fl", "") in ("1", "true"), page=number("page") or 0, at=one.get("at") or None)


def run_text(label: str, output: str, reason: str) -> str:
    return " ".join((label, output, reason)).lower()


def diff_text(row: Sequence[Any]) -> str:
    return " ".join(str(row[i] if row[i] is not None else "") for i in (0, 3, 5, 6)).lower()


def keep_run(f: Filters) -> Callable[[int, int, int, bool, str], bool]:
    """(status code, provider #, prompt #, flaky, text) -> shown?"""
    st = int(f.st) if f.st.isdigit() else None

    def keep(status: int, provider: int, prompt: int, flaky: bool, text: str) -> bool:
        return ((st is None or status == st) and (f.pv is None or provider == f.pv)
                and (f.pr is None or prompt == f.pr) and (not f.fl or flaky) and (not f.q or f.q in text))
    return keep


def keep_diff(f: Filters) -> Callable[[Sequence[Any], str], bool]:
    """(row, text) -> shown? A diff row: [label, provider #, prompt #, kind, regression, ...]."""
    kind = DIFF_STATUS[int(f.st)] if f.st.isdigit() and int(f.st) < len(DIFF_STATUS) else None

    def keep(row: Sequence[Any], text: str) -> bool:
        if f.st == "regression" and not row[4]:
            return False
        if f.st.isdigit() and row[3] != kind:
            return False
        return ((f.pv is None or row[1] == f.pv) and (f.pr is None or row[2] == f.pr)
                and (not f.q or f.q in text))
    return keep


def paged(items: list[T], f: Filters, key: Callable[[T], str]) -> tuple[list[T], dict[str, int]]:
    """The page of `items` asked for (the page holding case `f.at`, when it is there) and the counts."""
    pages = max(1, -(-len(items) // PAGE))
    page = min(f.page, pages - 1)
    if f.at is not None:
        at = next((i for i, it in enumerate(items) if key(it) == f.at), None)
        if at is not None:
            page = at // PAGE
    return items[page * PAGE:(page + 1) * PAGE], {"matched": len(items), "page": page, "pages": pages}

"""`evalrun calibrate -o page.html`: the figures as a self-contained page (page.html, a Jinja2 template)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import jinja2


def _fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def render(data: dict[str, Any]) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    source = resources.files("evalrun.calibration").joinpath("page.html").read_text(encoding="utf-8")
    return env.from_string(source).render(data=data, fmt=_fmt)


def write(path: Path, data: dict[str, Any]) -> None:
    path.write_text(render(data), encoding="utf-8")

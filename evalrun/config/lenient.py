"""What promptfoo lets pass silently: a warning at FILE:LINE in evalrun, an error under `--strict` (an unknown key
that is a near-miss of a valid one stays an error)."""

from __future__ import annotations

import os

from evalrun.errors import ConfigError, Location

_strict = [False]
_warnings: list[str] = []
_seen: set[object] = set()


def reset(strict: bool | None = None) -> None:
    """At the start of a load; `strict=None` reads EVALRUN_STRICT."""
    if strict is None:
        strict = os.environ.get("EVALRUN_STRICT", "").strip().lower() in ("1", "true", "yes")
    _strict[0] = strict
    _warnings.clear()
    _seen.clear()


def is_strict() -> bool:
    return _strict[0]


def warn(loc: Location | None, key: str | None, message: str, hint: str, *, once: object = None) -> None:
    """Record `message` at `loc` as a warning, the first time for `once` (default: the text); raise it as a
    ConfigError with `hint` under --strict."""
    if is_strict():
        raise ConfigError.at(loc, message, key=key, hint=f"{hint} (--strict makes this an error)")
    where = f"{loc.file}:{loc.line}: " if loc and loc.file and loc.line else (f"{loc.file}: " if loc else "")
    text = f"{where}{key + ': ' if key else ''}{message}; {hint} (--strict makes it an error)"
    marker = text if once is None else once
    if marker not in _seen:
        _seen.add(marker)
        _warnings.append(text)


def take() -> tuple[str, ...]:
    """The warnings of this load, in order."""
    return tuple(_warnings)

"""Error types (user mistakes are `ConfigError`s: file:line, key path, message, hint; exit code 2), the did-you-mean
hints they carry, and the warnings of what promptfoo lets pass silently (errors under `--strict`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

_INDEX = re.compile(r"\[\d+\]")
#: Places listed after a repeated error ("and 39 more tests: ...").
SHOWN = 5


class EvalrunError(Exception):
    """Base of every error evalrun raises on purpose."""


@dataclass(frozen=True)
class Location:
    """Where a value came from: file and 1-based line (0 = unknown)."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


class ConfigError(EvalrunError):
    """A user mistake in a config, test file or command line: ``FILE:LINE: key.path: message`` and ``hint: ...``."""

    def __init__(self, message: str, *, file: str | None = None, line: int = 0, key: str | None = None,
                 hint: str | None = None, used_by: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        self.hint = hint
        #: The test the error is about when the location is elsewhere (a prompt read by it): `tests[4]
        #: (FILE:LINE)`. Kept out of `message`, so the same mistake in many tests groups into one error.
        self.used_by = used_by

    @classmethod
    def at(cls, loc: Location | None, message: str, *, key: str | None = None,
           hint: str | None = None, used_by: str | None = None) -> ConfigError:
        return cls(message, file=loc.file if loc else None, line=loc.line if loc else 0, key=key, hint=hint,
                   used_by=used_by)

    @property
    def where(self) -> str:
        """FILE:LINE (or FILE), or '' when unknown."""
        return str(Location(self.file, self.line)) if self.file else ""

    def __str__(self) -> str:
        where = f"{self.where}: " if self.where else ""
        key = f"{self.key}: " if self.key else ""
        text = f"{where}{key}{self.message}" + (f", used by {self.used_by}" if self.used_by else "")
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class ConfigErrors(ConfigError):
    """Several config errors found in one pass, in file order (the first one's file, line, key and message)."""

    def __init__(self, errors: list[ConfigError]) -> None:
        first = errors[0]
        super().__init__(first.message, file=first.file, line=first.line, key=first.key, hint=first.hint)
        self.errors = errors

    @classmethod
    def of(cls, errors: list[ConfigError]) -> ConfigError:
        """The one error, or all of them (duplicates dropped) as a ConfigErrors."""
        unique: dict[str, ConfigError] = {}
        for e in errors:
            for one in (e.errors if isinstance(e, ConfigErrors) else [e]):
                unique.setdefault(str(one), one)
        found = list(unique.values())
        return found[0] if len(found) == 1 else cls(found)

    def __str__(self) -> str:
        """Each error once: a mistake repeated in several tests (same file, message, key path but for its list
        indices, and hint) is shown at its first place, then `and N more tests: FILE:LINE, ...`."""
        groups: dict[tuple[str | None, ...], list[ConfigError]] = {}
        for e in self.errors:  # one mistake repeated (a variable used by 40 rows) agrees on all but list indices
            groups.setdefault((e.file, e.message, _INDEX.sub("[]", e.key or ""), e.hint), []).append(e)
        lines = []
        for same in groups.values():
            lines.append(str(same[0]))
            if len(same) > 1:
                places = [(e.used_by or "").removeprefix("the test at ") or e.where or e.key or "?" for e in same[1:]]
                shown = ", ".join(places[:SHOWN]) + (", ..." if len(places) > SHOWN else "")
                lines.append(f"  and {len(places)} more test{'s' if len(places) > 1 else ''}: {shown}")
        return "\n".join(lines) + f"\n{len(self.errors)} errors"


class UsageError(ConfigError):
    """A bad command-line argument."""


class ProviderError(EvalrunError):
    """A provider could not produce an output (after retries). The case becomes an ERROR."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


class GraderError(EvalrunError):
    """A grader reply could not be used (after retries and one repair): an ERROR; `raw`: its last reply (audit)."""

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class AssertionRuntimeError(EvalrunError):
    """An assertion could not be evaluated at run time (a user's python raised, bad rendered value)."""


#: Characters of an error message shown in a result's `error` / `reason` (and so in the table and reports).
SHORT_ERROR = 200


def one_line(message: str, limit: int = SHORT_ERROR) -> str:
    """A provider's or grader's error message as one short line: its first line (whitespace collapsed), cut at
    `limit` characters. Callers keep the whole message in the result's details (`error_detail`)."""
    lines = [line for line in message.splitlines() if line.strip()]
    first = " ".join(lines[0].split()) if lines else ""
    more = len(lines) > 1
    if len(first) > limit:
        first, more = first[: limit - 1].rstrip() + "…", True
    return first + (" (full text in error_detail)" if more else "")


def labelled(label: str, message: str) -> str:
    """`label: message`, the one way an error is prefixed with what raised it (an assertion type on a case's
    reason); a message whose subject is already the label (`icontains needs ...`) is kept as it is."""
    if message == label or message.startswith((f"{label}:", f"{label} ")):
        return message
    return f"{label}: {message}"


class ConfigWarning(UserWarning):
    """What promptfoo lets pass in a config and evalrun warns of (a key it drops, an undefined template variable
    that renders as empty text), as `FILE:LINE: ...`; the API and the pytest plugin issue Suite.warnings as these."""


_strict = [False]
_warnings: list[str] = []
_seen: set[object] = set()


def reset_lenient(strict: bool | None = None) -> None:
    """At the start of a config load; `strict=None` reads EVALRUN_STRICT."""
    if strict is None:
        strict = os.environ.get("EVALRUN_STRICT", "").strip().lower() in ("1", "true", "yes")
    _strict[0] = strict
    _warnings.clear()
    _seen.clear()


def is_strict() -> bool:
    return _strict[0]


def lenient_warn(loc: Location | None, key: str | None, message: str, hint: str, *, once: object = None) -> None:
    """Record `message` at `loc` as a warning of this load, the first time for `once` (default: the text); raise it
    as a ConfigError with `hint` under --strict (an unknown key near a valid one stays an error: config/schema.py)."""
    if is_strict():
        raise ConfigError.at(loc, message, key=key, hint=f"{hint} (--strict makes this an error)")
    where = f"{loc.file}:{loc.line}: " if loc and loc.file and loc.line else (f"{loc.file}: " if loc else "")
    text = f"{where}{key + ': ' if key else ''}{message}; {hint} (--strict makes it an error)"
    marker = text if once is None else once
    if marker not in _seen:
        _seen.add(marker)
        _warnings.append(text)


def lenient_warnings() -> tuple[str, ...]:
    """The warnings of this load, in order."""
    return tuple(_warnings)


#: Words users write for the ones evalrun's names use.
SYNONYMS = {"every": "all", "each": "all", "some": "any", "include": "contains",
            "includes": "contains", "contain": "contains", "equal": "equals",
            "match": "matches", "regexp": "regex"}
_SPLIT = re.compile(r"[-_]")


def _words(name: str) -> list[str]:
    return [SYNONYMS.get(w, w) for w in _SPLIT.split(name.lower())]


def _rank(word: str, words: list[str], choice: str) -> float:
    import difflib

    theirs = _SPLIT.split(choice.lower())
    shared = sum(w in theirs for w in words)
    ratio = difflib.SequenceMatcher(None, word, choice).ratio()
    return ratio + 0.05 * shared / max(len(words), len(theirs)) + 0.05 * (len(words) == len(theirs))


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice closest in meaning to `word` (its words read through SYNONYMS), then in spelling, or None."""
    import difflib  # only when there is a mistake to word (~1.5 ms of every start-up otherwise)

    options = list(choices)
    words = _words(word)
    meant = "-".join(words)
    for c in options:  # a synonym spelled out: `contains-every` -> `contains-all`
        if c.lower() == meant or "-".join(_words(c)) == meant:
            return c
    near = difflib.get_close_matches(meant, options, n=6, cutoff=cutoff) + \
        difflib.get_close_matches(word, options, n=6, cutoff=cutoff)
    if not near:
        return None
    return max(dict.fromkeys(near), key=lambda c: _rank(meant, words, c))


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """'did you mean `x`?' for the closest choice, or None when nothing is close."""
    match = closest(word, choices)
    return f"did you mean `{match}`?" if match else None

"""Error types. User mistakes are `ConfigError`s: one message, file:line, key path, hint; exit code 2."""

from __future__ import annotations

import re
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
        if not self.file:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file

    def __str__(self) -> str:
        where = f"{self.where}: " if self.where else ""
        key = f"{self.key}: " if self.key else ""
        text = f"{where}{key}{self.message}" + (f", used by {self.used_by}" if self.used_by else "")
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def group_key(self) -> tuple[str | None, str, str | None, str | None]:
        """Errors with equal keys are one mistake repeated (a variable used by 40 rows): file, message, key path
        with its list indices left out, hint."""
        key = _INDEX.sub("[]", self.key) if self.key else self.key
        return self.file, self.message, key, self.hint


class ConfigErrors(ConfigError):
    """Several config errors found in one pass, in file order (the first one's file, line, key and message)."""

    def __init__(self, errors: list[ConfigError]) -> None:
        first = errors[0]
        super().__init__(first.message, file=first.file, line=first.line, key=first.key, hint=first.hint)
        self.errors = errors

    @classmethod
    def of(cls, errors: list[ConfigError]) -> ConfigError:
        """The one error, or all of them (duplicates dropped) as a ConfigErrors."""
        unique: list[ConfigError] = []
        seen: set[str] = set()
        for e in errors:
            for one in (e.errors if isinstance(e, ConfigErrors) else [e]):
                text = str(one)
                if text not in seen:
                    seen.add(text)
                    unique.append(one)
        return unique[0] if len(unique) == 1 else cls(unique)

    def __str__(self) -> str:
        """Each error once: a mistake repeated in several tests (same file, message, key path but for its list
        indices, and hint) is shown at its first place, then `and N more tests: FILE:LINE, ...`."""
        groups: dict[tuple[str | None, str, str | None, str | None], list[ConfigError]] = {}
        for e in self.errors:
            groups.setdefault(e.group_key(), []).append(e)
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
    """A grader reply could not be used (after retries and one repair): the assertion is an ERROR; `raw` keeps the
    grader's last reply for the audit trail."""

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


class ConfigWarning(UserWarning):
    """What promptfoo lets pass in a config and evalrun warns of (a key it drops, an undefined template variable
    that renders as empty text), as `FILE:LINE: ...`; the API and the pytest plugin issue Suite.warnings as these."""

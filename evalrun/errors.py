"""Error types. User mistakes are `ConfigError`s: one message, file:line, key path, hint; exit code 2."""

from __future__ import annotations

from dataclasses import dataclass


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
    """A user mistake in a config, test file or command line, found before any model is called.

    Rendered as ``FILE:LINE: key.path: message`` and, on a second line, ``hint: ...``.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int = 0,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        self.hint = hint

    @classmethod
    def at(cls, loc: Location | None, message: str, *, key: str | None = None,
           hint: str | None = None) -> ConfigError:
        return cls(message, file=loc.file if loc else None, line=loc.line if loc else 0, key=key, hint=hint)

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        key = f"{self.key}: " if self.key else ""
        text = f"{where}{key}{self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class ConfigErrors(ConfigError):
    """Several config errors found in one pass (`validate` reports them all at once, in file order).

    Its file, line, key and message are the first error's; `str()` lists every error and the count.
    """

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
        return "\n".join(str(e) for e in self.errors) + f"\n{len(self.errors)} errors"


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
    """A grader reply could not be used (after retries and one repair). The assertion becomes an ERROR.

    `raw` keeps the grader's last reply for the audit trail.
    """

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class AssertionRuntimeError(EvalrunError):
    """An assertion could not be evaluated at run time (a user's python raised, bad rendered value)."""


class ConfigWarning(UserWarning):
    """What promptfoo lets pass in a config and evalrun warns of (a key it drops, an undefined template variable
    that renders as empty text), as `FILE:LINE: ...`; the API and the pytest plugin issue Suite.warnings as these."""

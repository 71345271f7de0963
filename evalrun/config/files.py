"""`file://` (and `pkg://`) references: paths relative to the config's folder, globs; a path inside a test file
found only next to that file is read with a warning (`TestFileDir`)."""

from __future__ import annotations

import glob as _glob
import os
from pathlib import Path
from typing import Any

from evalrun import pkgref, templating
from evalrun.config.readers import read_data, read_text
from evalrun.errors import ConfigError, Location, lenient_warn

PREFIX = pkgref.FILE
_CODE_EXTS = (".py", ".js", ".ts", ".mjs", ".cjs", ".mts", ".cts")


def is_ref(value: Any) -> bool:
    """`file://...`, or `pkg://PACKAGE/...` (a file inside an installed package, evalrun/pkgref.py)."""
    return isinstance(value, str) and value.startswith((PREFIX, pkgref.PREFIX))


def has_glob(path: str) -> bool:
    return any(c in path for c in "*?[")


def display_path(path: Path) -> str:
    """A short path for messages: relative to the current folder when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class TestFileDir(str):
    """The config's folder as the base of the `file://` paths inside one test file, which also remembers that
    file's own folder: a path found only there resolves with a warning (promptfoo would not find it)."""

    __test__ = False  # not a pytest test class
    own: str

    def __new__(cls, config_dir: str, own: str = "") -> TestFileDir:
        made = super().__new__(cls, config_dir)
        made.own = own
        return made

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]
        return str(self), self.own

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other) and getattr(other, "own", None) == self.own

    def __hash__(self) -> int:
        return hash((str(self), self.own))


#: --confine (or EVALRUN_CONFINE=1): the folder tree every `file://` path must resolve inside; None: anywhere, as
#: promptfoo reads them (docs/security.md). Set by config.load for the whole process (streamed tests read later).
_confined: list[Path] = []


def confine(root: Path | None) -> None:
    """Confine `file://` paths to `root`'s tree (None: lift it)."""
    _confined[:] = [root.resolve()] if root is not None else []
    templating.confine_includes(str(root) if root is not None else None)  # `{% include %}` too


def _check_confined(found: list[Path], ref: str, loc: Location | None, key: str | None) -> None:
    if not _confined:
        return
    root = _confined[0]
    for p in found:
        if not p.resolve().is_relative_to(root):
            raise ConfigError.at(loc, f"{ref} resolves to {p.resolve()}, outside the config's folder {root}", key=key,
                                 hint="--confine (EVALRUN_CONFINE) reads files inside the config's folder tree only: "
                                      "move the file there, or run without --confine")


def exists(path: Path, *, loc: Location | None = None, key: str | None = None) -> bool:
    """path.exists(), with a path the system refuses (a name over 255 bytes, a NUL) a ConfigError naming it."""
    try:
        return path.exists()
    except (OSError, ValueError) as e:
        shown = str(path) if len(str(path)) <= 80 else f"{str(path)[:60]}…{str(path)[-16:]}"
        why = getattr(e, "strerror", None) or str(e)
        raise ConfigError.at(loc, f"cannot use the path {shown!r}: {why}", key=key,
                             hint="shorten the file name (at most 255 bytes a name on most systems)") from None


def _matches(full: Path, globbed: bool, loc: Location | None = None, key: str | None = None) -> list[Path]:
    if globbed:
        return sorted(Path(p) for p in _glob.glob(str(full), recursive=True) if Path(p).is_file())
    return [full] if exists(full, loc=loc, key=key) else []


def expand(ref: str, base_dir: str, *, loc: Location | None = None, key: str | None = None) -> list[Path]:
    """Resolve a (possibly globbed) path against base_dir. Raises ConfigError when nothing exists."""
    path, _ = pkgref.split_ref(ref)
    hint = f"paths are relative to the config file's folder ({base_dir})"
    if pkgref.is_pkg(path):
        written, path = path, pkgref.to_path(path, loc=loc, key=key)
        hint = f"{written} resolves to {path}: check the path inside the package"
    relative = not Path(path).is_absolute()
    found = _matches(Path(base_dir, path).expanduser() if relative else Path(path), has_glob(path), loc, key)
    own = getattr(base_dir, "own", None)
    if not found and relative and own is not None:
        found = _matches(Path(own, path).expanduser(), has_glob(path), loc, key)
        if found:
            lenient_warn(loc, key, f"{path} is not in the config's folder ({base_dir}) but next to the test file "
                         f"({own}): evalrun reads it there, promptfoo would not find it",
                         f"write the path relative to the config's folder: "
                         f"file://{os.path.relpath(found[0], base_dir) if not has_glob(path) else path}")
    if not found:
        what = f"no file matches the glob {path!r}" if has_glob(path) else f"file not found: {path}"
        raise ConfigError.at(loc, what, key=key, hint=hint)
    _check_confined(found, ref if len(ref) <= 120 else ref[:100] + "…", loc, key)
    return found


def absolute_ref(ref: str, base_dir: str, *, loc: Location | None = None, key: str | None = None) -> str:
    """`file://rel.py:fn` -> `file:///abs/rel.py:fn` after checking the file exists (no globs)."""
    path, fn = pkgref.split_ref(ref)
    full = expand(path, base_dir, loc=loc, key=key)[0]
    return PREFIX + str(full.resolve()) + (f":{fn}" if fn else "")


def is_code(path: str) -> bool:
    return path.lower().endswith(_CODE_EXTS)


def is_data_file(path: Path) -> bool:
    return path.suffix.lower() in (".json", ".jsonl", ".yaml", ".yml")


def read_value(path: Path, display: str, *, loc: Location | None = None, key: str | None = None) -> Any:
    """A referenced value: .json/.jsonl/.yaml/.yml parsed, any other file read as text."""
    if is_data_file(path):
        return read_data(path, display, loc=loc, key=key)
    return read_text(path, display=display, loc=loc, key=key)

"""References to files: `file://path[:function]` (split_ref, the one parser of that form) and
`pkg://PACKAGE/path`, a file inside an installed Python package (docs/integrations.md), wherever `file://` works."""

from __future__ import annotations

from pathlib import Path

from evalrun.errors import ConfigError, Location

PREFIX = "pkg://"
FILE = "file://"


def split_ref(ref: str) -> tuple[str, str | None]:
    """`file://path[:function]` (prefix optional) -> (path, function or None). Windows drive letters are kept."""
    path = ref[len(FILE):] if ref.startswith(FILE) else ref
    head, sep, tail = path.rpartition(":")
    if sep and head and tail and "/" not in tail and "\\" not in tail and not (len(head) == 1 and head.isalpha()):
        return head, tail
    return path, None


def is_pkg(value: object) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def package_root(package: str, *, loc: Location | None = None, key: str | None = None) -> Path:
    """The folder of an importable package (ConfigError when it is missing or not installed as files)."""
    import importlib.resources  # ~30 ms: only for a pkg:// reference

    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError as e:
        missing = f" (no module {e.name!r})" if e.name and e.name != package else ""
        raise ConfigError.at(loc, f"package {package!r} is not installed{missing}", key=key,
                             hint=f"`pip install` the package that provides {package!r} (or put its folder on "
                                  "PYTHONPATH); pkg:// names an importable Python package") from None
    except (TypeError, ValueError) as e:  # a plain module, not a package
        raise ConfigError.at(loc, f"{package!r} is not a package: {e}", key=key,
                             hint="pkg:// needs a package (a folder with __init__.py)") from None
    except Exception as e:  # the package's own import failed
        raise ConfigError.at(loc, f"importing package {package!r} failed: {type(e).__name__}: {e}", key=key,
                             hint=f"run `python -c 'import {package}'` to see the full error") from None
    paths = getattr(root, "_paths", None)  # a namespace package: importlib's MultiplexedPath
    if isinstance(root, Path):
        return root
    if paths and isinstance(paths[0], Path):
        return Path(paths[0])
    raise ConfigError.at(loc, f"package {package!r} is not installed as files ({type(root).__name__})", key=key,
                         hint="install it unzipped (pip installs wheels as files), e.g. `pip install -e PATH`")


def to_path(ref: str, *, loc: Location | None = None, key: str | None = None) -> str:
    """`pkg://PACKAGE/inner[:fn]` -> `/abs/…/PACKAGE/inner[:fn]` (the caller, who knows globs, checks the file)."""
    package, _, inner = ref[len(PREFIX):].partition("/")
    if not package or not inner.strip("/"):
        raise ConfigError.at(loc, f"{ref!r} names no file inside a package", key=key,
                             hint="write pkg://PACKAGE/path/in/package, e.g. pkg://acme_evals/base.yaml")
    return str(package_root(package, loc=loc, key=key)) + "/" + inner.lstrip("/")


def to_file_ref(ref: str, *, loc: Location | None = None, key: str | None = None) -> str:
    """`pkg://PACKAGE/inner.py:fn` -> `file:///abs/…/inner.py:fn`."""
    return FILE + to_path(ref, loc=loc, key=key)

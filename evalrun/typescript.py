"""TypeScript files run in Node.js without a build step, as promptfoo runs them: Node.js strips types itself (23.6+,
22.6 with a flag), older Node.js goes through the user's `tsx` package; without either, a config error."""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

from evalrun import jsnode
from evalrun.errors import ConfigError, Location

TS_EXTS = (".ts", ".mts", ".cts")
JS_EXTS = (".js", ".cjs", ".mjs", *TS_EXTS)
#: Node.js versions that strip TypeScript types: on by default, or behind a flag.
NATIVE = (23, 6)
FLAGGED = (22, 6)
HINT = ("use Node.js 22.6 or newer (it strips TypeScript types itself), or install tsx where the config is: "
        "`npm install --save-dev tsx` (a project with promptfoo installed has it already)")


def is_typescript(path: str | Path) -> bool:
    return str(path).lower().endswith(TS_EXTS)


@cache
def node_version() -> tuple[int, ...] | None:
    """The version of `node` on PATH, e.g. (20, 20, 2); None without Node.js."""
    node = jsnode.node_path()
    if node is None:
        return None
    try:
        text = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
        return tuple(int(part) for part in text.strip().lstrip("v").split(".")[:3])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


@cache
def _npm_global_root() -> str | None:
    try:
        done = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def find_tsx(start: str | Path) -> Path | None:
    """The loader of the tsx package the user has (module docstring), or None."""
    tail = Path("tsx", "dist", "loader.mjs")
    for base in (Path(start).resolve(), Path.cwd()):
        for folder in (base, *base.parents):
            if (folder / "node_modules" / tail).is_file():
                return folder / "node_modules" / tail
    roots = [p for p in os.environ.get("NODE_PATH", "").split(os.pathsep) if p]
    for root in [*roots, _npm_global_root()]:
        if root and (Path(root) / tail).is_file():
            return Path(root) / tail
    return None


def node_flags(start: str | Path) -> list[str] | None:
    """The Node.js flags that let it load TypeScript from `start`'s folder, or None when nothing can."""
    version = node_version()
    if version is not None and version >= NATIVE:
        return []
    if version is not None and version >= FLAGGED:
        return ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"]
    tsx = find_tsx(start)
    return None if tsx is None else ["--import", tsx.as_uri()]


def require_js(path: Path, fn: str | None, *, loc: Location | None, key: str | None, what: str,
               instead: str) -> str:
    """`file:///abs/path[:fn]` of a JavaScript or TypeScript file after making sure evalrun's Node.js process can
    load it: ConfigError at `loc` when Node.js is missing (`instead`: how else to write it), or see `require`."""
    if jsnode.node_path() is None:
        raise ConfigError.at(loc, f"{what} needs Node.js, and `node` was not found on PATH", key=key,
                             hint=f"install Node.js (https://nodejs.org), or {instead}")
    require(path, loc=loc, key=key)
    return "file://" + str(path.resolve()) + (f":{fn}" if fn else "")


def require(path: str | Path, *, loc: Location | None, key: str | None) -> None:
    """Make evalrun's Node.js process able to load the TypeScript file `path` (nothing for other files); a
    ConfigError at `loc` when neither this Node.js nor tsx can."""
    if not is_typescript(path):
        return
    flags = node_flags(Path(path).parent)
    if flags is None:
        version = ".".join(map(str, node_version() or ())) or "?"
        raise ConfigError.at(loc, f"{Path(path).name} is TypeScript, which Node.js {version} cannot run without a "
                                  "build step, and the tsx package was not found", key=key, hint=HINT)
    jsnode.use_flags(flags)

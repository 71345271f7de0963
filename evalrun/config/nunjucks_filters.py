"""`nunjucksFilters: {name: path}`: template filters from the user's JavaScript or Python files.

    load(node, base_dir, loc) -> {name: callable}

`file://allcaps.js` (or `./allcaps.js`, as promptfoo's example writes it) runs the module's exported function
(`module.exports = fn`, its `default`, or `:fn`) in evalrun's shared Node.js process; `file://f.py[:fn]` calls
the Python function `fn` (default: the filter's name). A missing file, a missing function, Node.js absent
for a .js filter, or any other extension is a ConfigError at the filter's line, before any call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalrun.config import files
from evalrun.config.readers.located import loc_of
from evalrun.errors import ConfigError, Location
from evalrun.pyexpr import load_function


def _js_filter(ref: str, name: str, base_dir: str) -> Callable[..., Any]:
    def run(value: Any, *args: Any) -> Any:
        from evalrun import jsnode

        return jsnode.call_js_sync(ref, [value, *args], base_dir=base_dir, what=f"filter {name!r}")

    return run


def load(node: Any, base_dir: str, loc: Location | None) -> dict[str, Callable[..., Any]]:
    out: dict[str, Callable[..., Any]] = {}
    for name, ref in (node or {}).items():
        key = f"nunjucksFilters.{name}"
        where = loc_of(node, name) or loc
        path_s, fn = files.split_ref(ref)
        path = files.expand(path_s, base_dir, loc=where, key=key)[0]
        suffix = path.suffix.lower()
        from evalrun import typescript

        if suffix in typescript.JS_EXTS:
            from evalrun import jsnode

            if jsnode.node_path() is None:
                raise ConfigError.at(where, f"filter {name!r} is JavaScript ({path.name}) but `node` was not found "
                                            "on PATH", key=key, hint="install Node.js, or write the filter in Python "
                                                                     "(file://filter.py:fn)")
            typescript.require(path, loc=where, key=key)
            target = files.PREFIX + str(path.resolve()) + (f":{fn}" if fn else "")
            out[str(name)] = _js_filter(target, str(name), str(path.parent))
        elif suffix == ".py":
            out[str(name)] = load_function(str(path), fn or str(name), loc=where, key=key)
        else:
            raise ConfigError.at(where, f"filter {name!r}: expected a .js or .py file, got {path.name}", key=key,
                                 hint="a filter file exports one function: module.exports = (value) => ...")
    return out

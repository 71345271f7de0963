"""Tests from every source -> `TestPart`s (one per test, assertions built, file:// vars loaded).

Sources: inline mappings; paths or globs to .yaml/.yml/.json/.jsonl/.csv (with or without `file://`);
Python generators `file://gen.py[:fn]` (default `generate_tests`) or `{path, config}`; lists mixing them.
A TestPart is not yet merged with defaultTest / scenario entries (see merge.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evalrun.config import asserts, docstream, files
from evalrun.config.schema import check_keys, validate
from evalrun.config.schema_source import TEST_KEYS
from evalrun.config.teststream import STREAMED_SUFFIXES, StreamedTests
from evalrun.config.yamlsrc import LDict, LList, loc_of
from evalrun.errors import ConfigError, Location
from evalrun.types import AssertionSpec


@dataclass
class TestPart:
    """A test (or defaultTest / scenario entry) before merging."""

    description: str | None = None
    vars: dict[str, Any] = field(default_factory=dict)
    asserts: list[AssertionSpec] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    threshold: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    providers: tuple[str, ...] | None = None
    prompts: tuple[str, ...] | None = None
    loc: Location | None = None
    key_path: str = ""


#: One entry of `tests:` after reading: a test, or a JSONL/CSV file whose tests are read as a stream.
TestItem = TestPart | StreamedTests


def each_part(items: list[TestItem]) -> Iterator[TestPart]:
    """The TestParts of `items` in order, streamed files read row by row."""
    for item in items:
        if isinstance(item, StreamedTests):
            yield from item
        else:
            yield item


@dataclass
class Ctx:
    """Where the node being read lives: its file's folder."""

    base_dir: str


def type_names() -> tuple[str, ...]:
    """Registered assertion types (for the CSV `__expected` shorthand)."""
    from evalrun.assertions import registry

    return tuple(registry.names())


def _load_var(value: Any, ctx: Ctx, loc: Location | None, key: str) -> Any:
    """`file://` var values: text or parsed data; a glob gives a list (which then expands); code stays a ref."""
    if not files.is_ref(value):
        return value
    path, _ = files.split_ref(value)
    if files.is_code(path):
        return files.absolute_ref(value, ctx.base_dir, loc=loc, key=key)
    found = files.expand(value, ctx.base_dir, loc=loc, key=key)
    loaded = [_read_var_file(p, loc, key) for p in found]
    return loaded if files.has_glob(path) else loaded[0]


def _read_var_file(path: Any, loc: Location | None, key: str) -> Any:
    """A var file: data files parsed; text trimmed at both ends, as promptfoo reads it."""
    value = files.read_value(path, files.display_path(path), loc=loc, key=key)
    return value.strip() if isinstance(value, str) and not files.is_data_file(path) else value


def load_vars(node: Any, ctx: Ctx, loc: Location | None, key: str) -> dict[str, Any]:
    """A test's `vars`: a mapping (file:// values loaded) or `file://vars.yaml` (a glob merges the files)."""
    if node is None:
        return {}
    if isinstance(node, str):
        ref = node if files.is_ref(node) else files.PREFIX + node
        data = _load_var(ref, ctx, loc, key)
        if files.has_glob(node) and isinstance(data, list):
            merged: dict[str, Any] = {}
            for part in data:
                if not isinstance(part, dict):
                    raise ConfigError.at(loc, f"every file matching {node} must hold a mapping of vars", key=key)
                merged.update(part)
            data = merged
        if not isinstance(data, dict):
            raise ConfigError.at(loc, f"{node} must hold a mapping of vars", key=key,
                                 hint="a vars file holds `name: value` lines (YAML) or a JSON object")
        node = data
    if not isinstance(node, dict):
        raise ConfigError.at(loc, "vars must be a mapping of name: value", key=key)
    is_ref = files.is_ref  # most values are plain: their location and key path are never needed
    return {str(k): _load_var(v, ctx, loc_of(node, str(k)) or loc, f"{key}.{k}") if is_ref(v) else v
            for k, v in node.items()}


def join(key: str, sub: str) -> str:
    """Key path join: ('tests[1]', 'vars') -> 'tests[1].vars'; ('', 'vars') -> 'vars'."""
    return f"{key}.{sub}" if key and not sub.startswith("[") else f"{key}{sub}"


def _names(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(v) for v in value)


#: A test with only these keys (most tests) is built without looking up the others.
LEAN_KEYS = frozenset({"vars", "assert", "description"})
_REFS = ("file://", "pkg://")  # files.is_ref's prefixes
_new = object.__new__
_set = object.__setattr__


def _plain_vars(node: Any) -> dict[str, Any] | None:
    """A copy of a `vars` mapping whose keys are strings and whose values reference no file (what `load_vars`
    returns for it, without its per-value calls); None for any other `vars` (load_vars reads it)."""
    if node is None:
        return {}
    if not isinstance(node, dict):
        return None
    for k, v in node.items():
        if k.__class__ is not str or (isinstance(v, str) and v.startswith(_REFS)):
            return None
    return dict(node)


def part_from_node(node: dict[str, Any], ctx: Ctx, *, loc: Location | None, key: str) -> TestPart:
    """One test mapping (already schema-checked) -> TestPart."""
    items = node.get("assert") or []
    specs = asserts.build_list(items, base_dir=ctx.base_dir, loc=loc, key=key)
    if LEAN_KEYS.issuperset(node):
        vars_ = _plain_vars(node.get("vars"))
        if vars_ is not None:  # TestPart(description=, vars=, asserts=, loc=, key_path=), its fields set at once
            part = _new(TestPart)
            _set(part, "__dict__", {"description": node.get("description"), "vars": vars_, "asserts": specs,
                                    "options": {}, "threshold": None, "metadata": {}, "providers": None,
                                    "prompts": None, "loc": loc, "key_path": key})
            return part
    if "provider" in node:
        raise ConfigError.at(loc_of(node, "provider") or loc, "a per-test `provider` is not supported",
                             key=join(key, "provider"),
                             hint="select providers with `providers: [label]`; set the grader with "
                                  "`options.provider`")
    threshold = node.get("threshold")
    raw_options = node.get("options")
    options = dict(raw_options) if raw_options else {}
    if options:
        store = options.get("storeOutputAs")
        if store is not None and not (isinstance(store, str) and store.isidentifier()):
            raise ConfigError.at(loc_of(node, "options") or loc, f"storeOutputAs must be a var name, got {store!r}",
                                 key=join(key, "options.storeOutputAs"), hint="e.g. storeOutputAs: favoriteFruit")
        if "postprocess" in options:  # promptfoo's deprecated name of transform
            options.setdefault("transform", options.pop("postprocess"))
    raw_metadata = node.get("metadata")
    return TestPart(
        description=node.get("description"),
        vars=load_vars(node.get("vars"), ctx, loc_of(node, "vars") or loc, join(key, "vars")),
        asserts=specs,
        options=options,
        threshold=float(threshold) if threshold is not None else None,
        metadata=dict(raw_metadata) if raw_metadata else {},
        providers=_names(node.get("providers")),
        prompts=_names(node.get("prompts")),
        loc=loc,
        key_path=key,
    )


def _from_file_data(data: Any, ctx: Ctx, display: str) -> list[TestPart]:
    """Tests parsed from a YAML/JSON/JSONL file: a list of tests or one test."""
    if data is None:
        return []
    items = data if isinstance(data, list) else [data]
    out = []
    for i, item in enumerate(items):
        key = f"[{i}]" if isinstance(data, list) else ""
        loc = loc_of(data, i) if isinstance(data, LList) else loc_of(data) or Location(display, 1)
        if not isinstance(item, dict):
            raise ConfigError.at(loc, f"expected a test mapping, got {type(item).__name__}", key=key or None,
                                 hint="a tests file holds a list of {vars, assert, ...} mappings")
        validate(item, file=display, definition="test", prefix=key)
        out.append(part_from_node(item, ctx, loc=loc_of(item) or loc, key=key))
    return out


def _from_generator(ref: str, config: Any, ctx: Ctx, loc: Location | None, key: str) -> list[TestPart]:
    path_s, fn_name = files.split_ref(ref)
    path = files.expand(path_s, ctx.base_dir, loc=loc, key=key)[0]
    fn = files.load_function(path, fn_name or "generate_tests", loc=loc, key=key)
    try:
        result = fn(config) if config is not None else fn()
    except Exception as e:  # the user's generator failed
        raise ConfigError.at(loc, f"test generator {path.name}:{fn.__name__} raised {type(e).__name__}: {e}",
                             key=key, hint="run the generator by hand to debug it") from e
    if not isinstance(result, list):
        raise ConfigError.at(loc, f"test generator must return a list of tests, got {type(result).__name__}",
                             key=key)
    out = []
    for i, item in enumerate(result):
        ikey = f"{key}[{i}]"
        if not isinstance(item, dict):
            raise ConfigError.at(loc, "a generated test is not a mapping", key=ikey)
        check_keys(item, TEST_KEYS, what="test", key=ikey, loc=loc)
        validate(item, file=loc.file if loc else str(path), definition="test", prefix=ikey,
                 line=loc.line if loc else 0)
        out.append(part_from_node(item, ctx, loc=loc, key=ikey))
    return out


def _from_source(ref: str, ctx: Ctx, loc: Location | None, key: str) -> list[TestItem]:
    path_s, fn = files.split_ref(ref)
    if path_s.startswith(("http://", "https://")):
        raise ConfigError.at(loc, "tests from URLs (e.g. Google Sheets) are not supported", key=key,
                             hint="download the sheet as CSV and reference the file")
    if path_s.lower().endswith(".py"):
        return list[TestItem](_from_generator(ref, None, ctx, loc, key))
    out: list[TestItem] = []
    for path in files.expand(path_s, ctx.base_dir, loc=loc, key=key):
        display = files.display_path(path)
        sub = Ctx(str(path.parent))
        suffix = path.suffix.lower()
        if suffix in STREAMED_SUFFIXES:
            out.append(StreamedTests(path, display, sub.base_dir, loc=loc, key=key))
        elif suffix in (".yaml", ".yml", ".json") and docstream.streams(path):  # large: read item by item
            out.append(docstream.StreamedDoc(path, display, sub.base_dir, loc=loc, key=key))
        elif suffix in (".yaml", ".yml", ".json"):
            out.extend(_from_file_data(files.read_value(path, display, loc=loc, key=key), sub, display))
        elif suffix == ".py":
            out.extend(_from_generator(files.PREFIX + str(path) + (f":{fn}" if fn else ""), None, ctx, loc, key))
        else:
            raise ConfigError.at(loc, f"cannot read tests from {display}", key=key,
                                 hint="tests files are .yaml, .yml, .json, .jsonl, .csv or a .py generator")
    return out


def collect(node: Any, ctx: Ctx, *, key: str, loc: Location | None) -> list[TestItem]:
    """`tests:` in any of its forms -> TestParts (and streamed JSONL/CSV files) in order."""
    if node is None:
        return []
    if isinstance(node, str):
        return _from_source(node, ctx, loc, key)
    out: list[TestItem] = []
    locs = asserts.item_locs(node, loc) if isinstance(node, LList) else [loc] * len(node)
    build_list, base_dir, append = asserts.build_list, ctx.base_dir, out.append
    for i, item in enumerate(node):
        ikey, iloc = f"{key}[{i}]", locs[i]
        cls = type(item)
        if (cls is LDict or cls is dict) and LEAN_KEYS.issuperset(item):  # the common inline test (dict: .json)
            vars_ = _plain_vars(item.get("vars"))
            if vars_ is None:
                append(part_from_node(item, ctx, loc=iloc, key=ikey))
                continue
            # part_from_node's lean case, inlined: TestPart(description=, vars=, asserts=, loc=, key_path=)
            part = _new(TestPart)
            _set(part, "__dict__", {
                "description": item.get("description"), "vars": vars_,
                "asserts": build_list(item.get("assert") or [], base_dir=base_dir, loc=iloc, key=ikey),
                "options": {}, "threshold": None, "metadata": {}, "providers": None, "prompts": None, "loc": iloc,
                "key_path": ikey})
            append(part)
        elif isinstance(item, str):
            out.extend(_from_source(item, ctx, iloc, ikey))
        elif isinstance(item, dict) and "path" in item and not (set(item) - {"path", "config"}):
            out.extend(_from_generator(str(item["path"]), item.get("config"), ctx, iloc, ikey))
        else:
            out.append(part_from_node(item, ctx, loc=iloc, key=ikey))
    return out


"""One test mapping -> TestPart -> TestSpec, with promptfoo's merge rules (defaultTest and scenario entries under
the test: `assert` concatenated, `vars`/`options`/`metadata` shallow-merged, the rest falls back to the base)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from evalrun import pkgref
from evalrun.config import asserts, files
from evalrun.config import providers as provider_parser
from evalrun.config.readers.located import loc_of
from evalrun.config.schema import TEST_KEYS
from evalrun.errors import ConfigError, Location
from evalrun.types import AssertionSpec, ProviderSpec, TestSpec


@dataclass
class TestPart:
    """A test (or defaultTest / scenario entry) before merging."""

    __test__ = False  # not a pytest test class

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
    extra: dict[str, Any] = field(default_factory=dict)  # keys beyond evalrun's, kept for context.test
    provider: ProviderSpec | None = None  # the test's own provider (TestSpec.provider)


def _load_var(value: Any, base_dir: str, loc: Location | None, key: str) -> Any:
    """`file://` var values: text or parsed data; a glob gives a list (which then expands); code stays a ref."""
    path, _ = pkgref.split_ref(value)
    if files.is_code(path):
        return files.absolute_ref(value, base_dir, loc=loc, key=key)
    found = files.expand(value, base_dir, loc=loc, key=key)
    loaded = [_read_var_file(p, loc, key) for p in found]
    return loaded if files.has_glob(path) else loaded[0]


def _read_var_file(path: Any, loc: Location | None, key: str) -> Any:
    """A var file: data files parsed; text trimmed at both ends, as promptfoo reads it."""
    value = files.read_value(path, files.display_path(path), loc=loc, key=key)
    return value.strip() if isinstance(value, str) and not files.is_data_file(path) else value


def load_vars(node: Any, base_dir: str, loc: Location | None, key: str) -> dict[str, Any]:
    """A test's `vars`: a mapping (file:// values loaded) or `file://vars.yaml` (a glob merges the files)."""
    if node is None:
        return {}
    if isinstance(node, str):
        data = _load_var(node if files.is_ref(node) else files.PREFIX + node, base_dir, loc, key)
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
    return {str(k): _load_var(v, base_dir, loc_of(node, str(k)) or loc, f"{key}.{k}") if is_ref(v) else v
            for k, v in node.items()}


def join(key: str, sub: str) -> str:
    """Key path join: ('tests[1]', 'vars') -> 'tests[1].vars'; ('', 'vars') -> 'vars'."""
    return f"{key}.{sub}" if key and not sub.startswith("[") else f"{key}{sub}"


#: A test's own keys; any other key stays on the test as data (TestPart.extra), as promptfoo keeps it.
_TEST_KEYS = frozenset(TEST_KEYS)


def _names(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(v) for v in value)


def part_from_node(node: dict[str, Any], base_dir: str, *, loc: Location | None, key: str) -> TestPart:
    """One test mapping (already schema-checked) -> TestPart: assertions built, file:// vars loaded."""
    provider = None
    if node.get("provider") is not None:
        provider = provider_parser.one(node["provider"], base_dir, loc=loc_of(node, "provider") or loc,
                                       key=join(key, "provider"))
    specs = asserts.build_list(node.get("assert") or [], base_dir=base_dir, loc=loc, key=key)
    threshold = node.get("threshold")
    options = dict(node.get("options") or {})
    if options:
        store = options.get("storeOutputAs")
        if store is not None and not (isinstance(store, str) and store.isidentifier()):
            raise ConfigError.at(loc_of(node, "options") or loc, f"storeOutputAs must be a var name, got {store!r}",
                                 key=join(key, "options.storeOutputAs"), hint="e.g. storeOutputAs: favoriteFruit")
        if "postprocess" in options:  # promptfoo's deprecated name of transform
            options.setdefault("transform", options.pop("postprocess"))
    return TestPart(
        description=node.get("description"),
        vars=load_vars(node.get("vars"), base_dir, loc_of(node, "vars") or loc, join(key, "vars")),
        asserts=specs,
        options=options,
        threshold=float(threshold) if threshold is not None else None,
        metadata=dict(node.get("metadata") or {}),
        providers=_names(node.get("providers")),
        prompts=_names(node.get("prompts")),
        loc=loc,
        key_path=key,
        extra={k: v for k, v in node.items() if k not in _TEST_KEYS} if not _TEST_KEYS.issuperset(node) else {},
        provider=provider,
    )


def merge_tests(base: TestPart | None, test: TestPart) -> TestPart:
    """`base` (defaultTest or scenario entry) under `test`."""
    if base is None:
        return test
    return replace(
        test,
        description=test.description if test.description is not None else base.description,
        vars={**base.vars, **test.vars},
        asserts=[*base.asserts, *test.asserts],
        options={**base.options, **test.options},
        threshold=test.threshold if test.threshold is not None else base.threshold,
        metadata={**base.metadata, **test.metadata},
        providers=test.providers if test.providers is not None else base.providers,
        prompts=test.prompts if test.prompts is not None else base.prompts,
        provider=test.provider if test.provider is not None else base.provider,
    )


def scenario_tests(entries: list[TestPart], tests: list[TestPart], description: str | None) -> list[TestPart]:
    """Every entry x every test (entry-major, as promptfoo). Without tests, each entry is a test."""
    out = []
    for entry in entries:
        if description and entry.description is None:
            entry = replace(entry, description=description)
        for test in tests or [TestPart(loc=entry.loc, key_path=entry.key_path)]:
            merged = merge_tests(entry, test)
            out.append(replace(merged, loc=test.loc or entry.loc, key_path=test.key_path or entry.key_path))
    return out


def to_spec(part: TestPart, index: int) -> TestSpec:
    """The TestSpec of a (merged) TestPart."""
    return TestSpec(index=index, description=part.description, vars=part.vars, asserts=tuple(part.asserts),
                    options=part.options, threshold=part.threshold, metadata=part.metadata,
                    providers=part.providers, prompts=part.prompts, loc=part.loc, key_path=part.key_path,
                    extra=part.extra, provider=part.provider)

"""The tests of a config: one test mapping -> TestPart -> TestSpec with promptfoo's merge rules (defaultTest and
scenario entries under the test: `assert` concatenated, `vars`/`options`/`metadata` shallow-merged, the rest falls
back to the base), and every source of tests: inline mappings, test files and globs, Python generators
(`file://gen.py[:fn]` or `{path, config}`); YAML/JSON files are read whole, JSONL/CSV row by row on every pass
(`TestFile`, flat memory)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalrun import pkgref
from evalrun.config import asserts, csvtests, files
from evalrun.config import providers as provider_parser
from evalrun.config.readers import open_text
from evalrun.config.readers.jsondoc import iter_jsonl
from evalrun.config.readers.located import LList, loc_of
from evalrun.config.schema import TEST_KEYS, validate
from evalrun.errors import ConfigError, Location
from evalrun.pyexpr import load_function
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
    loaded = []
    for p in files.expand(value, base_dir, loc=loc, key=key):  # data parsed, text trimmed as promptfoo reads it
        v = files.read_value(p, files.display_path(p), loc=loc, key=key)
        loaded.append(v.strip() if isinstance(v, str) and not files.is_data_file(p) else v)
    return loaded if files.has_glob(path) else loaded[0]


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
        if "rubricPrompt" in options:
            asserts.check_rubric_files(options["rubricPrompt"], base_dir, loc_of(node, "options") or loc,
                                       join(key, "options.rubricPrompt"))
    return TestPart(
        description=node.get("description"), asserts=specs, options=options, loc=loc, key_path=key, provider=provider,
        vars=load_vars(node.get("vars"), base_dir, loc_of(node, "vars") or loc, join(key, "vars")),
        threshold=float(threshold) if threshold is not None else None, metadata=dict(node.get("metadata") or {}),
        providers=_names(node.get("providers")), prompts=_names(node.get("prompts")),
        extra={k: v for k, v in node.items() if k not in _TEST_KEYS} if not _TEST_KEYS.issuperset(node) else {})


def merge_tests(base: TestPart | None, test: TestPart) -> TestPart:
    """`base` (defaultTest or scenario entry) under `test`."""
    if base is None:
        return test
    merged = replace(test, vars={**base.vars, **test.vars}, asserts=[*base.asserts, *test.asserts],
                     options={**base.options, **test.options}, metadata={**base.metadata, **test.metadata})
    for name in ("description", "threshold", "providers", "prompts", "provider"):  # unset on the test: the base's
        if getattr(merged, name) is None:
            setattr(merged, name, getattr(base, name))
    return merged


def scenario_tests(entries: list[TestPart], items: list[TestItem], description: str | None) -> list[TestPart]:
    """Every entry x every test (entry-major, as promptfoo; files' rows read); without tests, each entry is one."""
    tests = [part for item in items for part in (item if isinstance(item, TestFile) else [item])]
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


#: A test mapping as a format reads it: (mapping, its location, its key path).
Raw = tuple[Any, Location, str]


def _checked(raw: Raw, base_dir: str) -> TestPart:
    node, loc, key = raw
    if not isinstance(node, dict):
        raise ConfigError.at(loc, f"expected a test mapping, got {type(node).__name__}", key=key or None,
                             hint="each test is a {vars, assert, ...} mapping")
    validate(node, file=loc.file, definition="test", prefix=key, line=loc.line)
    return part_from_node(node, base_dir, loc=loc_of(node) or loc, key=key)


def _document(path: Path, display: str, loc: Location | None, key: str, skip: int = 0) -> Iterator[Raw]:
    """A YAML / JSON file read whole: a list of tests, or one test."""
    data = files.read_value(path, display, loc=loc, key=key)
    if data is None:
        return
    if not isinstance(data, list):
        yield data, loc_of(data) or Location(display, 1), ""
        return
    for i, item in enumerate(data):
        yield item, (loc_of(data, i) if isinstance(data, LList) else None) or Location(display, 1), f"[{i}]"


def _jsonl(path: Path, display: str, loc: Location | None, key: str, skip: int = 0) -> Iterator[Raw]:
    with open_text(path, display=display, loc=loc, key=key, newline="") as f:
        for i, (row, n) in enumerate(iter_jsonl(f, display, skip), skip):
            if not isinstance(row, dict):
                raise ConfigError(f"expected a test mapping, got {type(row).__name__}", file=display, line=n,
                                  key=f"[{i}]", hint="a tests file holds one {vars, assert, ...} object per line")
            yield row, Location(display, n), f"[{i}]"


def _csv(path: Path, display: str, loc: Location | None, key: str, skip: int = 0) -> Iterator[Raw]:
    from evalrun.assertions import registry  # its types: the `__expected` shorthand's prefixes

    names = tuple(registry.names())
    with open_text(path, display=display, loc=loc, key=key, newline="") as f:
        for row in csvtests.iter_rows(f, display):
            if skip:  # a row before a worker's window: not made a test
                skip -= 1
                continue
            yield csvtests.row_to_test(row, display, names), Location(display, row.line), ""


#: File suffix -> the reader of its test mappings; JSONL and CSV files are read row by row on every pass.
_FORMATS: dict[str, Callable[[Path, str, Location | None, str, int], Iterator[Raw]]] = {
    ".yaml": _document, ".yml": _document, ".json": _document, ".jsonl": _jsonl, ".csv": _csv}
_STREAMED = (".jsonl", ".csv")


@dataclass(eq=False)
class TestFile:
    """The tests of one JSONL or CSV file, produced on demand: each pass reads the file again, row by row."""

    __test__ = False  # not a pytest test class

    path: Path
    display: str
    base_dir: str
    loc: Location | None  # where the file was referenced (for "file not found" and the like)
    key: str
    checked: bool = False  # True after one complete, error-free pass (later passes skip the schema check)
    rows: int | None = None  # the number of rows, once a pass has read them all

    def __iter__(self) -> Iterator[TestPart]:
        """The rows as TestParts (not merged with defaultTest)."""
        return self._parts(0)

    def _parts(self, skip: int) -> Generator[TestPart, None, None]:
        check, count = not self.checked, skip
        for raw in _FORMATS[self.path.suffix.lower()](self.path, self.display, self.loc, self.key, skip):
            yield _checked(raw, self.base_dir) if check else part_from_node(raw[0], self.base_dir, loc=raw[1],
                                                                            key=raw[2])
            count += 1
        self.checked, self.rows = True, count

    def specs(self, start: int, default: TestPart | None, *, lo: int = 0,
              hi: int | None = None) -> Generator[TestSpec, None, int]:
        """The rows numbered lo..hi-1 as TestSpecs (numbers from `start`, `default` merged; rows ahead of `lo` skipped
        unparsed once counted); returns the number after this file's last row."""
        n = self.rows
        if n is not None and (start + n <= lo or (hi is not None and start >= hi)):
            return start + n
        skip = max(0, lo - start) if n is not None else 0
        i = start + skip
        parts = self._parts(skip)
        try:
            for part in parts:
                if hi is not None and i >= hi:
                    break
                if i >= lo:
                    yield to_spec(merge_tests(default, part), i)
                i += 1
        finally:
            parts.close()
        return i if n is None else start + n


#: One entry of `tests:` after reading: a test, or a JSONL/CSV file whose tests are read as a stream.
TestItem = TestPart | TestFile


def _from_generator(ref: str, config: Any, base_dir: str, loc: Location | None, key: str) -> list[TestPart]:
    path_s, fn_name = pkgref.split_ref(ref)
    path = files.expand(path_s, base_dir, loc=loc, key=key)[0]
    fn = load_function(str(path), fn_name or "generate_tests", loc=loc, key=key)
    try:
        result = fn(config) if config is not None else fn()
    except Exception as e:  # the user's generator failed
        raise ConfigError.at(loc, f"test generator {path.name}:{fn.__name__} raised {type(e).__name__}: {e}",
                             key=key, hint="run the generator by hand to debug it") from e
    if not isinstance(result, list):
        raise ConfigError.at(loc, f"test generator must return a list of tests, got {type(result).__name__}",
                             key=key)
    where = loc or Location(str(path))
    return [_checked((item, where, f"{key}[{i}]"), base_dir) for i, item in enumerate(result)]


def _from_source(ref: str, base_dir: str, loc: Location | None, key: str) -> list[TestItem]:
    path_s, fn = pkgref.split_ref(ref)
    if path_s.startswith(("http://", "https://")):
        raise ConfigError.at(loc, "tests from URLs (e.g. Google Sheets) are not supported", key=key,
                             hint="download the sheet as CSV and reference the file")
    out: list[TestItem] = []
    for path in files.expand(path_s, base_dir, loc=loc, key=key):
        # promptfoo resolves the file:// paths inside a test file from the config's folder (files.TestFileDir)
        display, suffix = files.display_path(path), path.suffix.lower()
        folder = files.TestFileDir(base_dir, str(path.parent))
        if suffix == ".py":
            out.extend(_from_generator(files.PREFIX + str(path) + (f":{fn}" if fn else ""), None, base_dir, loc,
                                       key))
        elif suffix not in _FORMATS:
            raise ConfigError.at(loc, f"cannot read tests from {display}", key=key,
                                 hint="tests files are .yaml, .yml, .json, .jsonl, .csv or a .py generator")
        elif suffix in _STREAMED:
            out.append(TestFile(path, display, folder, loc=loc, key=key))
        else:
            out.extend(_checked(raw, folder) for raw in _FORMATS[suffix](path, display, loc, key, 0))
    return out


def collect(node: Any, base_dir: str, *, key: str, loc: Location | None) -> list[TestItem]:
    """`tests:` in any of its forms -> TestParts (and streamed JSONL/CSV files) in order."""
    if node is None:
        return []
    if isinstance(node, str):
        return _from_source(node, base_dir, loc, key)
    out: list[TestItem] = []
    for i, item in enumerate(node):
        ikey, iloc = f"{key}[{i}]", loc_of(node, i) or loc
        if isinstance(item, str):
            out.extend(_from_source(item, base_dir, iloc, ikey))
        elif isinstance(item, dict) and "path" in item and not (set(item) - {"path", "config"}):
            out.extend(_from_generator(str(item["path"]), item.get("config"), base_dir, iloc, ikey))
        else:  # inline: checked with the config
            out.append(part_from_node(item, base_dir, loc=iloc, key=ikey))
    return out


def iter_specs(items: list[TestItem], default: TestPart | None, lo: int = 0,
               hi: int | None = None) -> Iterator[TestSpec]:
    """TestSpecs in order (defaultTest merged); with `lo` / `hi`, only the tests numbered lo..hi-1 (the rows
    before them skipped unparsed, the file left at `hi`)."""
    i = 0
    for item in items:
        if hi is not None and i >= hi:
            return
        if isinstance(item, TestFile):
            i = yield from item.specs(i, default, lo=lo, hi=hi)
        else:
            if i >= lo:
                yield to_spec(merge_tests(default, item), i)
            i += 1


class TestList(Sequence[TestSpec]):
    """`Suite.tests` when a test file is streamed: produced again on each iteration (memory flat in the number of
    tests); `len()` and the case counts come from the checking pass at load time (config/suite.py)."""

    __test__ = False  # not a pytest test class

    def __init__(self, items: list[TestItem], default: TestPart | None, case_counts: Sequence[int], *,
                 graded: bool = True, store_output_as: bool = False, lo: int = 0) -> None:
        self._items, self._default, self._lo = items, default, lo
        #: Cases per test, one repeat (expand.test_case_counts reads it).
        self.case_counts = case_counts
        #: False when no test has a graded assertion (the runner then skips a pass that checks grader ids).
        self.graded = graded
        #: True when a test sets options.storeOutputAs (the runner then runs cases one at a time).
        self.store_output_as = store_output_as

    @property
    def cases_per_repeat(self) -> int:
        """Cases one repeat expands to (expand.count_cases reads it)."""
        return sum(self.case_counts)

    def __iter__(self) -> Iterator[TestSpec]:
        return iter_specs(self._items, self._default, self._lo, self._lo + len(self))

    def window(self, lo: int, hi: int) -> TestList:
        """Tests lo..hi-1 only, numbered as here (a worker's share of the run: run/split.py)."""
        return TestList(self._items, self._default, self.case_counts[lo:hi], graded=self.graded,
                        store_output_as=self.store_output_as, lo=self._lo + lo)

    def __len__(self) -> int:
        return len(self.case_counts)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return next(itertools.islice(self, index % len(self), None))

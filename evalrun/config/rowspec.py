"""Streamed test rows (JSONL/CSV, already schema-checked) -> TestSpecs, built lean.

    RowSpecs(base_dir, default).spec(row, index, loc, key) -> TestSpec

A big test file's rows mostly repeat one `assert:` list and differ in their vars. A row whose assertion list is
the previous row's exactly (equal values of equal JSON types, see `_same`) reuses the previous row's specs,
copied with the row's own location and key path (`[i].assert[j]`), so runtime and load-time messages still
name the row; no assertion key is computed and no handler is looked up again. On the checking pass such a row's
schema check skips the list (`schema.relaxed_check`: the list equals one that passed); any row that fails that
lighter check gets the full one, so its errors are the same. A row that only has `vars`,
`assert` and `description` becomes a TestSpec directly (its vars mapping used as parsed when no value is a
`file://` / `pkg://` reference); any other row goes through `testcases.part_from_node` and `merge.merge_tests`,
the path inline tests take, so the two agree. Only the previous row is remembered: memory stays flat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from evalrun.config import asserts
from evalrun.config.merge import merge_tests
from evalrun.config.schema import relaxed_check, validate
from evalrun.config.testcases import Ctx, TestPart, part_from_node
from evalrun.errors import Location
from evalrun.types import AssertionSpec, TestSpec

#: Rows with only these keys take the lean path; others the general one.
LEAN_KEYS = frozenset({"vars", "assert", "description"})
_REFS = ("file://", "pkg://")


_PART_FIELDS = frozenset(f.name for f in fields(TestPart))
#: TestSpec's fields are TestPart's and `index` (so to_spec may copy a part's __dict__)
_SPEC_IS_PART = {f.name for f in fields(TestSpec)} == _PART_FIELDS | {"index"}


def to_spec(part: TestPart, index: int) -> TestSpec:
    """The TestSpec of a (merged) TestPart: its fields, `index`, and its assertions as a tuple."""
    own = part.__dict__
    if _SPEC_IS_PART and own.keys() == _PART_FIELDS:  # the TestSpec's __dict__ set in one go
        spec = _new(TestSpec)
        values = {"index": index, **own}
        values["asserts"] = tuple(own["asserts"])
        _set(spec, "__dict__", values)
        return spec
    return TestSpec(index=index, description=part.description, vars=part.vars, asserts=tuple(part.asserts),
                    options=part.options, threshold=part.threshold, metadata=part.metadata,
                    providers=part.providers, prompts=part.prompts, loc=part.loc, key_path=part.key_path,
                    extra=part.extra)


def reusable(items: list[Any]) -> bool:
    """A list whose built specs may be reused for an equal list: no file reads (their content may change) and
    no assert-set (its children carry their own locations)."""
    return all(type(a) is dict and "assert" not in a and not _has_ref(a) for a in items)


def _has_ref(value: Any) -> bool:
    if isinstance(value, str):
        return value.startswith(_REFS)
    if isinstance(value, dict):
        return any(_has_ref(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_ref(v) for v in value)
    return False


def _same(items: list[Any], known: list[Any], known_dump: bytes | None) -> bool:
    """`items` is `known` as JSON: `==` alone takes 1, 1.0 and true for one another (their JSON text differs) and
    the text alone NaN for null (their values differ); together they are exact. `known_dump` is None when every
    scalar in `known` is a string: a string equals only a string, so `==` alone is exact."""
    if items != known:
        return False
    if known_dump is None:
        return True
    try:
        return dumps(items) == known_dump
    except (TypeError, ValueError):  # pragma: no cover - parsed JSON always encodes
        return False


def _only_strings(value: Any) -> bool:
    """Every scalar in `value` (dicts and lists walked) is a string."""
    if isinstance(value, str):
        return True
    if isinstance(value, dict):
        return all(_only_strings(v) for v in value.values())
    if isinstance(value, list):
        return all(_only_strings(v) for v in value)
    return False


_new = object.__new__
_set = object.__setattr__


def dumps(value: Any) -> bytes:
    """jsonfast.dumps, imported at the first list that needs it (orjson's import costs ~4 ms of every start-up)."""
    from evalrun.jsonfast import dumps as fast_dumps

    return fast_dumps(value)


class RowSpecs:
    """Builds the TestSpecs of one pass over a streamed file; remembers only the previous row's assertions."""

    def __init__(self, base_dir: str, default: TestPart | None) -> None:
        self.ctx = Ctx(base_dir)
        self.default = default
        self._items: list[Any] | None = None  # the previous row's assert list, when its specs may be reused
        self._dump: bytes | None = None  # its JSON text, unless every scalar in it is a string (see _same)
        self._fields: list[tuple[dict[str, Any], str]] = []  # its specs' fields, key path suffixes

    def spec(self, row: dict[str, Any], index: int, loc: Location, key: str, *, check: bool = False) -> TestSpec:
        """The TestSpec of one row; ConfigError as `schema.validate` (when `check`) and `part_from_node` raise it.

        The schema check of a row whose assertion list is the previous row's skips that list (it passed)."""
        items = row.get("assert")
        known = self._items
        same = known is not None and type(items) is list and _same(items, known, self._dump)
        if check and not (same and relaxed_check("test", "assert")(row)):
            validate(row, file=loc.file, definition="test", prefix=key, line=loc.line)
            items = row.get("assert")  # unknown keys promptfoo ignores were dropped (with a warning)
            same = known is not None and type(items) is list and _same(items, known, self._dump)
        vars_: Any = row.get("vars")
        lean = LEAN_KEYS.issuperset(row)
        if lean:
            if vars_ is None:
                vars_ = {}
            elif type(vars_) is dict:
                for v in vars_.values():
                    if v.__class__ is str and v.startswith(_REFS):
                        lean = False
                        break
            else:
                lean = False
        if not lean:
            part = part_from_node(row, self.ctx, loc=loc, key=key)
            if not same:
                self._remember(items, part.asserts, key)
            return to_spec(merge_tests(self.default, part), index)
        specs = self._asserts(items or [], loc, key, same)
        default = self.default
        if default is not None:
            part = TestPart(description=row.get("description"), vars=vars_, asserts=list(specs), loc=loc,
                            key_path=key)
            return to_spec(merge_tests(default, part), index)
        return TestSpec(index=index, description=row.get("description"), vars=vars_, asserts=specs, loc=loc,
                        key_path=key)

    def _asserts(self, items: Any, loc: Location, key: str, same: bool) -> tuple[AssertionSpec, ...]:
        if same:
            out = []
            for fields, suffix in self._fields:  # _located, inlined: 3 of these per row
                spec = _new(AssertionSpec)
                own = fields.copy()
                own["loc"] = loc
                own["key_path"] = key + suffix
                _set(spec, "__dict__", own)
                out.append(spec)
            return tuple(out)
        specs = tuple(asserts.build_list(items, base_dir=self.ctx.base_dir, loc=loc, key=key))
        self._remember(items, specs, key)
        return specs

    def _remember(self, items: Any, specs: Sequence[AssertionSpec], key: str) -> None:
        """Keep `items` (a row's checked assert list) and its specs for the next row, when they may be reused."""
        if type(items) is list and reusable(items):
            self._items, self._dump = items, None if _only_strings(items) else dumps(items)
            lead = "." if key else ""
            self._fields = [(s.__dict__, f"{lead}assert[{j}]") for j, s in enumerate(specs)]
        else:
            self._items = None

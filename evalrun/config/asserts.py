"""`assert:` items -> AssertionSpec with its handler (assertions.engine.build). Equal assertions share one built spec
(`_BUILT`); `build_list` reuses the previous list's specs for a list that differs only in string values
(`_from_previous`): without it 10k inline tests load ~0.1 s slower, 100k JSONL rows ~0.3 s."""

from __future__ import annotations

import math
from typing import Any

from evalrun import pkgref
from evalrun.config import files
from evalrun.config.readers.located import LList, loc_of, loc_of_path
from evalrun.errors import ConfigError, Location
from evalrun.types import AssertionSpec

#: Largest assertion weight (the schema says the same): weights this size cannot overflow a weighted sum.
MAX_WEIGHT = 1_000_000
#: Types whose score is a fraction 0..1 (so is their threshold).
UNIT_SCORE_TYPES = frozenset({
    "bleu", "rouge-n", "llm-rubric", "faithfulness", "context-faithfulness", "context-precision",
    "context-recall", "hallucination", "noise-robustness", "noise-sensitivity",
})

#: Types whose `value` is code: a `file://` value stays a reference (made absolute) instead of being read.
CODE_TYPES = frozenset({"python", "javascript"})


def resolve_file_value(value: Any, *, type_: str, base_dir: str, loc: Location | None, key: str) -> Any:
    """`file://` in an assertion value: code stays a (checked, absolute) reference, other files are loaded."""
    if not files.is_ref(value):
        return value
    path, _fn = pkgref.split_ref(value)
    if type_ in CODE_TYPES or files.is_code(path):
        return files.absolute_ref(value, base_dir, loc=loc, key=key)
    [found, *more] = files.expand(value, base_dir, loc=loc, key=key)
    if more:
        return [files.read_value(p, files.display_path(p), loc=loc, key=key) for p in (found, *more)]
    return files.read_value(found, files.display_path(found), loc=loc, key=key)


def check_rubric_files(rubric: Any, base_dir: str, loc: Location | None, key: str) -> None:
    """The `file://` templates of a rubricPrompt read when grading (a list's, a mapping's, a test's option) exist,
    and lie in the tree under --confine: a ConfigError now, not a file read from anywhere later."""
    if isinstance(rubric, str):
        refs = [("", rubric)]
    elif isinstance(rubric, list):
        refs = [(f"[{i}]", t) for i, t in enumerate(rubric)]
    else:
        refs = [(f".{k}", t) for k, t in rubric.items()] if isinstance(rubric, dict) else []
    for sub, ref in refs:
        if files.is_ref(ref):
            files.expand(ref, base_dir, loc=loc, key=f"{key}{sub}")


def _number(raw: dict[str, Any], name: str, loc: Location | None, key: str) -> float | None:
    v = raw.get(name)
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        raise ConfigError.at(loc, f"{name} must be a number, got {v!r}", key=f"{key}.{name}") from None


def _check_threshold(type_: str, threshold: float | None, config: dict[str, Any], loc: Location | None,
                     key: str) -> None:
    """ConfigError at `loc` when the threshold is not finite or lies outside its type's score range."""
    if threshold is None:
        return
    if not math.isfinite(threshold):
        raise ConfigError.at(loc, f"threshold {threshold} is not a finite number", key=key)
    high = 1.0 if type_ in UNIT_SCORE_TYPES else None
    scale = config.get("scale", 1)  # context-relevance scores in `config.scale` units (default 1)
    if type_ == "context-relevance" and type(scale) in (int, float) and math.isfinite(scale) and scale > 0:
        high = float(scale)
    if high is not None and not 0 <= threshold <= high:
        raise ConfigError.at(loc, f"threshold {threshold:g} is outside {type_}'s score range 0..{high:g}", key=key,
                             hint=f"{type_} scores lie between 0 and {high:g}; a threshold outside that range "
                                  "can never be met as intended")


#: Built specs by their raw mapping (see _key): most tests share their assertion shapes, so a handler is built
#: (and its arguments checked) once per distinct assertion, not once per test.
_BUILT: dict[Any, AssertionSpec] = {}
_BUILT_MAX = 4096
_NO_VALUE = ("no string value",)


def _key(raw: dict[str, Any], base_dir: str) -> Any:
    """The cache key of an assertion mapping (None when it reads files or is an assert-set): for scalars (its shape:
    the other items with their class, as 1, 1.0 and True differ; its string `value`), else its repr."""
    items: list[Any] = []
    value: Any = _NO_VALUE
    scalar = True
    for k, v in raw.items():
        cls = v.__class__
        if cls is str:
            if v.startswith("file://") or k == "threshold" and v == "calibrated":  # reads a file
                return None
            if k == "value":
                value = v
            else:
                items.append((k, v))
        elif cls is int or cls is bool or v is None:
            items.append((k, cls, v))
        elif cls is float:
            items.append((k, cls, repr(v)))  # -0.0 and 0.0 are equal, their reprs are not
        else:
            scalar = False
            if isinstance(v, str) and v.startswith("file://"):
                return None
    if scalar:
        return (base_dir, tuple(items)), value
    cfg = raw.get("config")
    if "assert" in raw or isinstance(cfg, dict) and any(files.is_ref(v) for v in cfg.values()):
        return None
    return base_dir, repr(raw)


_new = object.__new__
_set = object.__setattr__


def _located(known: AssertionSpec, loc: Location | None, key: str) -> AssertionSpec:
    """A copy of a built spec with this occurrence's location (dataclasses.replace costs 10x more)."""
    spec = _new(AssertionSpec)
    fields = known.__dict__.copy()
    fields["loc"] = loc
    fields["key_path"] = key
    _set(spec, "__dict__", fields)
    return spec


def item_locs(items: Any, loc: Location | None) -> list[Location | None]:
    """Each item's location: its own line in a YAML/JSON file read with lines, else the test's."""
    if type(items) is list or not isinstance(items, LList):  # parsed JSON rows: all at the test's own line
        return [loc] * len(items)
    lines: list[int] = getattr(items, "item_lines", [])
    file, line, n = items.file, items.line, len(lines)
    return [Location(file, lines[i] if i < n else line) for i in range(len(items))]


class _Prev:
    """The previous list built (see `_from_previous`): its base dir, items, their cache keys and specs."""

    base_dir: str = ""
    items: tuple[Any, ...] = ()
    ckeys: tuple[Any, ...] = ()
    specs: tuple[AssertionSpec, ...] = ()
    plain: tuple[bool, ...] = ()  # item i maps keys to strings only (so `==` is exact) and may be reused


def _plain(raw: Any, ckey: Any) -> bool:
    """A mapping of strings alone (`==` on it is then exact: a string equals only a string) with a cache key."""
    return ckey is not None and type(ckey[0]) is tuple and all(v.__class__ is str for v in raw.values())


def _from_previous(items: Any, base_dir: str, loc: Location | None, prefix: str) -> list[AssertionSpec] | None:
    """The list built like the previous one when each item (keys to strings only: `==` is exact) equals the previous
    list's item at its place or differs only in its string `value`; None otherwise."""
    prev = _PREV
    n = len(items)
    if prev.base_dir != base_dir or len(prev.items) != n:
        return None
    plain, prev_items, ckeys, specs = prev.plain, prev.items, prev.ckeys, prev.specs
    if not all(plain):
        return None
    locs = item_locs(items, loc)
    out: list[AssertionSpec] = []
    new_ckeys: list[Any] = []
    for i, a in enumerate(items):
        p = prev_items[i]
        iloc = locs[i]
        if a is p or a == p:
            out.append(_located(specs[i], iloc, f"{prefix}{i}]"))
            new_ckeys.append(ckeys[i])
            continue
        value = a.get("value") if isinstance(a, dict) else None
        if value.__class__ is not str or value.startswith("file://") or len(a) != len(p) \
                or ckeys[i][1] is _NO_VALUE:
            return None
        for k, v in p.items():
            if k != "value" and a.get(k, _NO_VALUE) != v:
                return None
        ckey = (ckeys[i][0], value)
        known = _BUILT.get(ckey)
        if known is None:
            known = _BUILT[ckey] = _with_value(specs[i], a, iloc, f"{prefix}{i}]")
            if len(_BUILT) > _BUILT_MAX:
                _BUILT.clear()
            out.append(known)
        else:
            out.append(_located(known, iloc, f"{prefix}{i}]"))
        new_ckeys.append(ckey)
    prev.items, prev.ckeys, prev.specs = tuple(items), tuple(new_ckeys), tuple(out)
    return out


_PREV = _Prev()


def forget_previous() -> None:
    """Drop the previous list (tests: build each list from scratch)."""
    _PREV.base_dir, _PREV.items = "", ()


def build_list(items: list[Any], *, base_dir: str, loc: Location | None, key: str) -> list[AssertionSpec]:
    """A test's `assert:` list; a list like the previous one (`_from_previous`) costs a comparison per item and a
    copy per spec; other lists a key per item and, for an assertion built before, a copy of its spec."""
    prefix = f"{key}.assert[" if key else "assert["
    if items:
        found = _from_previous(items, base_dir, loc, prefix)
        if found is not None:
            return found
    locs = item_locs(items, loc)
    keys = [f"{prefix}{i}]" for i in range(len(items))]
    for i, a in enumerate(items):
        if not isinstance(a, dict):
            raise ConfigError.at(locs[i], f"expected an assertion mapping, got {a!r}", key=keys[i])
    ckeys = tuple([_key(a, base_dir) for a in items])
    specs = [_build_keyed(a, base_dir, lc, ky, ck) for a, lc, ky, ck in zip(items, locs, keys, ckeys, strict=True)]
    if items and None not in ckeys:  # the list the next one is compared with (_from_previous)
        prev = _PREV
        prev.base_dir, prev.items, prev.ckeys, prev.specs = base_dir, tuple(items), ckeys, tuple(specs)
        prev.plain = tuple([_plain(a, ck) for a, ck in zip(items, ckeys, strict=True)])
    return specs


def _with_value(shaped: AssertionSpec, raw: dict[str, Any], loc: Location | None, key: str) -> AssertionSpec:
    """A spec of `shaped`'s shape with `raw`'s string value, and its own handler (which checks that value)."""
    spec = _located(shaped, loc, key)
    spec.__dict__["value"] = raw["value"]
    return _with_handler(spec, raw, key)


def build(raw: dict[str, Any], *, base_dir: str, loc: Location | None, key: str) -> AssertionSpec:
    """Build one assertion (already shape-checked by the schema) and its handler (shared by equal assertions)."""
    return _build_keyed(raw, base_dir, loc, key, _key(raw, base_dir))


def _build_keyed(raw: dict[str, Any], base_dir: str, loc: Location | None, key: str, ckey: Any) -> AssertionSpec:
    if ckey is None:
        return _build(raw, base_dir=base_dir, loc=loc, key=key)
    known = _BUILT.get(ckey)
    if known is not None:
        return _located(known, loc, key)
    spec = _build(raw, base_dir=base_dir, loc=loc, key=key)
    if len(_BUILT) >= _BUILT_MAX:
        _BUILT.clear()
    _BUILT[ckey] = spec
    return spec


def _build(raw: dict[str, Any], *, base_dir: str, loc: Location | None, key: str) -> AssertionSpec:
    full_type = str(raw.get("type", ""))
    if not full_type:
        raise ConfigError.at(loc, "an assertion needs a `type`", key=key,
                             hint="for example `- type: contains` with `value: ...`")
    negate = full_type.startswith("not-")
    type_ = full_type[4:] if negate else full_type
    children: list[AssertionSpec] = []
    kids = raw.get("assert")
    if kids is not None:
        if not isinstance(kids, list):
            raise ConfigError.at(loc, "`assert` of an assert-set must be a list", key=f"{key}.assert")
        for i, child in enumerate(kids):
            ckey = f"{key}.assert[{i}]"
            cloc = loc_of(kids, i) or loc
            if not isinstance(child, dict):
                raise ConfigError.at(cloc, f"expected an assertion mapping, got {child!r}", key=ckey)
            children.append(build(child, base_dir=base_dir, loc=cloc, key=ckey))
    value = resolve_file_value(raw.get("value"), type_=type_, base_dir=base_dir,
                               loc=loc_of(raw, "value") or loc, key=f"{key}.value")
    config = dict(raw.get("config") or {})
    for k, v in list(config.items()):
        if files.is_ref(v):
            config[k] = resolve_file_value(v, type_="", base_dir=base_dir, loc=loc_of(raw, "config") or loc,
                                           key=f"{key}.config.{k}")
    rubric = raw.get("rubricPrompt")
    if files.is_ref(rubric):
        rubric = resolve_file_value(rubric, type_="", base_dir=base_dir, loc=loc, key=f"{key}.rubricPrompt")
    else:
        check_rubric_files(rubric, base_dir, loc_of(raw, "rubricPrompt") or loc, f"{key}.rubricPrompt")
    weight = _number(raw, "weight", loc, key)
    calibrated = None
    threshold: float | None
    if raw.get("threshold") == "calibrated" or raw.get("calibration") is not None:
        from evalrun.assertions import registry
        from evalrun.config.calibration import threshold_from

        named = "calibration" if raw.get("calibration") is not None else "threshold"
        where = loc_of(raw, named) or loc  # the line of the key, not the assertion's first line
        cls = registry.get(type_)
        if cls is None:  # an unknown type: its own error (with a did-you-mean) comes from the handler
            threshold = None
        elif not cls.graded:  # calibrate measures graded assertions only
            raise ConfigError.at(where, f"{full_type} has no calibrated threshold: only graded assertions "
                                 "(faithfulness, context-relevance, llm-rubric, ...) are calibrated",
                                 key=f"{key}.{named}", hint="give a numeric threshold, or none")
        else:
            threshold, calibrated = threshold_from(raw, str(raw.get("metric") or full_type), base_dir, where, key)
    else:
        threshold = _number(raw, "threshold", loc, key)
    _check_threshold(type_, threshold, config, loc_of(raw, "threshold") or loc, f"{key}.threshold")
    if weight is not None and not (math.isfinite(weight) and 0 <= weight <= MAX_WEIGHT):
        raise ConfigError.at(loc_of(raw, "weight") or loc, f"weight {weight:g} is out of range: must be between "
                             f"0 and {MAX_WEIGHT:,}", key=f"{key}.weight")
    spec = AssertionSpec(
        type=type_, negate=negate, value=value, threshold=threshold,
        weight=1.0 if weight is None else weight, metric=raw.get("metric"), transform=raw.get("transform"),
        provider=raw.get("provider"), config=config, rubric_prompt=rubric,
        context_transform=raw.get("contextTransform"), children=tuple(children), loc=loc, key_path=key,
        calibration=calibrated,
    )
    return _with_handler(spec, raw, key)


def _with_handler(spec: AssertionSpec, raw: Any, key: str) -> AssertionSpec:
    """`spec` with its handler (frozen: attached once, here); a handler's ConfigError points at the line of the key
    it names (`value`, `config.mode`, ...), the line the user must edit, not the assertion's first line."""
    from evalrun.assertions import engine  # a later stage: imported when the first assertion is built

    try:
        spec.__dict__["handler"] = engine.build(spec)
    except ConfigError as err:
        if err.key and err.key.startswith(f"{key}."):
            found = loc_of_path(raw, err.key[len(key) + 1:])
            if found is not None and found.line and (err.file is None or found.file == err.file):
                err.file, err.line = found.file, found.line
        raise
    return spec

"""Config files -> FileConfig: parse, schema-check, resolve every reference relative to the file's folder (and
`nunjucksFilters`); several files merged (prompts and providers deduplicated, tests concatenated, later wins)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalrun import jsnode, pkgref, template_env, templating
from evalrun.config import files, prompts, providers
from evalrun.config import tests as test_sources
from evalrun.config.readers import load_config_file
from evalrun.config.readers.located import LDict, loc_of
from evalrun.config.schema import validate
from evalrun.errors import ConfigError, Location, did_you_mean
from evalrun.pyexpr import load_function
from evalrun.types import PromptSpec, ProviderSpec


@dataclass
class FileConfig:
    """One config file after reading and resolving its references (its own folder is the base of file://)."""

    files: list[str]
    description: str | None = None
    prompts: list[PromptSpec] = field(default_factory=list)
    providers: list[ProviderSpec] = field(default_factory=list)
    tests: list[test_sources.TestItem] = field(default_factory=list)  # JSONL/CSV files stay streams
    scenario_tests: list[test_sources.TestPart] = field(default_factory=list)
    has_scenarios: bool = False
    default: test_sources.TestPart | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # evaluateOptions, outputPath, grader, ...
    env: dict[str, str] = field(default_factory=dict)


_SETTINGS = ("evaluateOptions", "outputPath", "derivedMetrics", "grader", "metadata", "tags")


def read(path: Path, *, stack: tuple[str, ...] = (), loc: Location | None = None) -> list[FileConfig]:
    """The config at `path` preceded by the configs it extends."""
    display = files.display_path(path)
    if not files.exists(path, loc=loc):
        raise ConfigError.at(loc, f"config file not found: {display}",
                             hint="give the path of a YAML or JSON config" if loc is None else
                             "`extends` paths are relative to the config file's folder")
    resolved = str(path.resolve())
    if resolved in stack:
        raise ConfigError.at(loc, f"`extends` loops back to {display}", hint="remove the circular extends")
    doc = load_config_file(path, display)
    resolve_refs(doc)
    validate(doc, file=display)
    base_dir = str(path.parent)
    out: list[FileConfig] = []
    ext = doc.get("extends")
    for i, ref in enumerate([ext] if isinstance(ext, str) else ext or []):
        eloc = loc_of(ext, i) if isinstance(ext, list) else doc.loc("extends")
        for p in files.expand(ref, base_dir, loc=eloc, key="extends"):
            out.extend(read(p, stack=(*stack, resolved), loc=eloc))
    out.append(_read_one(doc, display, base_dir))
    return out


def _test_node(node: Any, base_dir: str, loc: Location | None, key: str, definition: str) -> test_sources.TestPart:
    """defaultTest or a scenario entry: inline, or `file://` to a YAML/JSON mapping."""
    if isinstance(node, str):
        found = files.expand(node, base_dir, loc=loc, key=key)[0]
        display = files.display_path(found)
        data = files.read_value(found, display, loc=loc, key=key)
        if not isinstance(data, dict):
            raise ConfigError.at(loc, f"{display} must hold a mapping", key=key)
        validate(data, file=display, definition=definition)
        return test_sources.part_from_node(data, str(found.parent), loc=loc_of(data) or Location(display, 1), key=key)
    return test_sources.part_from_node(node, base_dir, loc=loc, key=key)


def _load_list(node: Any, base_dir: str, loc: Location | None, key: str, definition: str) -> tuple[list[Any], str]:
    """A list inline or in `file://list.yaml` (its items validated against `definition`), and its paths' folder."""
    if not isinstance(node, str):
        return list(node or []), base_dir
    found = files.expand(node, base_dir, loc=loc, key=key)[0]
    display = files.display_path(found)
    data = files.read_value(found, display, loc=loc, key=key)
    items = data if isinstance(data, list) else [data]
    for i, item in enumerate(items):
        validate(item, file=display, definition=definition, prefix=f"[{i}]")
    return items, str(found.parent)


def _scenarios(node: Any, base_dir: str, loc: Location | None) -> list[test_sources.TestPart]:
    out: list[test_sources.TestPart] = []
    scenarios, sdir = _load_list(node, base_dir, loc, "scenarios", "scenario")
    for i, sc in enumerate(scenarios):
        key = f"scenarios[{i}]"
        sloc = loc_of(scenarios, i) or loc
        if isinstance(sc, str):
            out.extend(_scenarios(sc, sdir, sloc))
            continue
        entries_node, edir = _load_list(sc.get("config"), sdir, loc_of(sc, "config") or sloc, f"{key}.config",
                                        "scenarioEntry")
        entries = [_test_node(e, edir, loc_of(entries_node, j) or sloc, f"{key}.config[{j}]", "scenarioEntry")
                   for j, e in enumerate(entries_node)]
        items = test_sources.collect(sc.get("tests"), sdir, key=f"{key}.tests", loc=loc_of(sc, "tests") or sloc)
        out.extend(test_sources.scenario_tests(entries, items, sc.get("description")))
    return out


def _read_one(doc: LDict, display: str, base_dir: str) -> FileConfig:
    if "providers" in doc and "targets" in doc:
        raise ConfigError.at(doc.loc("targets"), "give either `providers` or `targets`, not both", key="targets",
                             hint="`targets` is an alias of `providers`")
    pkey = "targets" if "targets" in doc else "providers"
    cfg = FileConfig(files=[display], description=doc.get("description"))
    templating.add_include_dir(base_dir)  # `{% include %}` in its templates: before the prompts are checked
    env = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in (doc.get("env") or {}).items()}
    template_env.set_config_env(env, add=True)  # its `{{ env.NAME }}` in provider ids and configs, read below
    if doc.get("nunjucksFilters"):  # before the prompts: their syntax check knows every filter
        templating.add_custom_filters(_filters(doc["nunjucksFilters"], base_dir, doc.loc("nunjucksFilters")))
    cfg.prompts = prompts.parse(doc.get("prompts"), base_dir, loc=doc.loc("prompts"))
    cfg.providers = providers.parse(doc.get(pkey), base_dir, loc=doc.loc(pkey), key=pkey)
    if doc.get("defaultTest") is not None:
        cfg.default = _test_node(doc["defaultTest"], base_dir, doc.loc("defaultTest"), "defaultTest", "test")
    cfg.tests = test_sources.collect(doc.get("tests"), base_dir, key="tests", loc=doc.loc("tests"))
    if doc.get("scenarios") is not None:
        cfg.has_scenarios = True
        cfg.scenario_tests = _scenarios(doc["scenarios"], base_dir, doc.loc("scenarios"))
    cfg.settings, cfg.env = {k: doc[k] for k in _SETTINGS if k in doc}, env
    return cfg


def _js_filter(ref: str, name: str, base_dir: str) -> Callable[..., Any]:
    def run(value: Any, *args: Any) -> Any:
        return jsnode.call_js_sync(ref, [value, *args], base_dir=base_dir, what=f"filter {name!r}")

    return run


def _filters(node: Any, base_dir: str, loc: Location | None) -> dict[str, Callable[..., Any]]:
    """`nunjucksFilters` -> {name: callable} (`file://f.js[:fn]` or `f.py[:fn]`; default `fn`: the filter's name)."""
    out: dict[str, Callable[..., Any]] = {}
    for name, ref in (node or {}).items():
        key = f"nunjucksFilters.{name}"
        where = loc_of(node, name) or loc
        path_s, fn = pkgref.split_ref(ref)
        path = files.expand(path_s, base_dir, loc=where, key=key)[0]
        suffix = path.suffix.lower()
        if suffix in jsnode.JS_EXTS:
            target = jsnode.require_js(path, fn, loc=where, key=key, what=f"filter {name!r} ({path.name})",
                                           instead="write the filter in Python (file://filter.py:fn)")
            out[str(name)] = _js_filter(target, str(name), str(path.parent))
        elif suffix == ".py":
            out[str(name)] = load_function(str(path), fn or str(name), loc=where, key=key)
        else:
            raise ConfigError.at(where, f"filter {name!r}: expected a .js or .py file, got {path.name}", key=key,
                                 hint="a filter file exports one function: module.exports = (value) => ...")
    return out


def _unique(items: list[Any], key: Callable[[Any], Any]) -> list[Any]:
    first: dict[Any, Any] = {}
    for it in items:
        first.setdefault(key(it), it)
    return list(first.values())


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def merge_configs(configs: list[FileConfig]) -> FileConfig:
    """Combine several configs (in order; for `extends`, the base comes first)."""
    if len(configs) == 1:
        return configs[0]
    out = FileConfig(files=[f for c in configs for f in c.files])
    for c in configs:
        out.description = c.description or out.description
        out.prompts.extend(c.prompts)
        out.providers.extend(c.providers)
        out.tests.extend(c.tests)
        out.scenario_tests.extend(c.scenario_tests)
        out.has_scenarios = out.has_scenarios or c.has_scenarios
        if c.default is not None:
            out.default = test_sources.merge_tests(out.default, c.default)
        for k, v in c.settings.items():  # evaluateOptions merged key by key, other settings replaced
            out.settings[k] = {**out.settings.get(k, {}), **v} if k == "evaluateOptions" else v
        out.env.update(c.env)
    out.prompts = _unique(out.prompts, lambda p: (p.id, _json(p.raw), p.label))
    out.providers = _unique(out.providers, lambda p: (p.id, p.label, _json(p.config), p.prompts, p.transform,
                                                      p.delay_ms))
    return out


#: `$ref`s resolved within one another at most (a longer chain is a ConfigError).
_MAX_REF_DEPTH = 32


def _target(doc: Any, pointer: str, loc: Location | None, key: str) -> Any:
    if not pointer.startswith("#/"):
        raise ConfigError.at(loc, f"unsupported $ref {pointer!r}", key=key,
                             hint="only pointers into this config are supported, such as "
                                  "'#/assertionTemplates/name'")
    node = doc
    for raw in pointer[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")  # JSON Pointer escapes
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isascii() and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            close = did_you_mean(part, [str(k) for k in node]) if isinstance(node, dict) else None
            raise ConfigError.at(loc, f"$ref {pointer!r} points at nothing ({part!r} not found)", key=key,
                                 hint=close or "check the name under the referenced key")
    return node


def _resolve(node: Any, doc: Any, key: str, depth: int, seen: tuple[str, ...]) -> Any:
    if depth > _MAX_REF_DEPTH:
        raise ConfigError.at(loc_of(node), "$ref nesting is too deep", key=key)
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            loc = loc_of(node, "$ref")
            if ref in seen:
                raise ConfigError.at(loc, f"$ref {ref!r} refers back to itself", key=f"{key}.$ref")
            target = _resolve(_target(doc, ref, loc, f"{key}.$ref"), doc, key, depth + 1, (*seen, ref))
            extra = {k: v for k, v in node.items() if k != "$ref"}
            if not extra:
                return target
            if not isinstance(target, dict):
                raise ConfigError.at(loc, f"$ref {ref!r} is not a mapping, so keys beside it cannot apply",
                                     key=f"{key}.$ref")
            merged = LDict({**target, **{k: _resolve(v, doc, f"{key}.{k}", depth + 1, seen)
                                         for k, v in extra.items()}})
            merged.file, merged.line = getattr(node, "file", ""), getattr(node, "line", 0)
            merged.key_lines = {**getattr(target, "key_lines", {}), **getattr(node, "key_lines", {})}
            return merged
        for k in list(node):
            node[k] = _resolve(node[k], doc, f"{key}.{k}" if key else str(k), depth + 1, seen)
        return node
    if isinstance(node, list):
        for i, item in enumerate(node):
            node[i] = _resolve(item, doc, f"{key}[{i}]", depth + 1, seen)
        return node
    return node


def has_refs(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(has_refs(v) for v in node.values())
    if isinstance(node, list):
        return any(has_refs(v) for v in node)
    return False


def resolve_refs(doc: Any) -> Any:
    """Replace every `$ref` mapping in `doc` (in place where possible) by what it points at, as promptfoo does: keys
    beside a `$ref` are laid over its target; only pointers into this config (`#/...`) are supported."""
    if getattr(doc, "ref_free", False) or not has_refs(doc):
        return doc
    sections = [k for k in doc if k not in ("assertionTemplates",)] if isinstance(doc, dict) else []
    for k in sections:
        doc[k] = _resolve(doc[k], doc, k, 0, ())
    return doc

"""One config file -> FileConfig: parse, schema-check, resolve every reference relative to its folder.

`extends` (a path or list of paths) loads the base config(s) first; they are merged under this one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalrun.config import custom_filters, files, prompts, providers, refs, testcases
from evalrun.config.merge import FileConfig, scenario_tests
from evalrun.config.schema import validate
from evalrun.config.testcases import Ctx, TestPart
from evalrun.config.yamlsrc import LDict, load_config_file, loc_of
from evalrun.errors import ConfigError, Location

_SETTINGS = ("evaluateOptions", "outputPath", "derivedMetrics", "grader", "metadata", "tags")


def read(path: Path, *, stack: tuple[str, ...] = (), loc: Location | None = None) -> list[FileConfig]:
    """The config at `path` preceded by the configs it extends."""
    display = files.display_path(path)
    if not path.exists():
        raise ConfigError.at(loc, f"config file not found: {display}",
                             hint="give the path of a YAML or JSON config" if loc is None else
                             "`extends` paths are relative to the config file's folder")
    resolved = str(path.resolve())
    if resolved in stack:
        raise ConfigError.at(loc, f"`extends` loops back to {display}", hint="remove the circular extends")
    doc = load_config_file(path, display)
    refs.resolve(doc)
    validate(doc, file=display)
    base_dir = str(path.parent)
    out: list[FileConfig] = []
    ext = doc.get("extends")
    for i, ref in enumerate([ext] if isinstance(ext, str) else ext or []):
        eloc = loc_of(ext, i) if isinstance(ext, list) else doc.loc("extends")
        for p in files.expand(files.strip_prefix(ref), base_dir, loc=eloc, key="extends"):
            out.extend(read(p, stack=(*stack, resolved), loc=eloc))
    out.append(_read_one(doc, display, base_dir))
    return out


def _test_node(node: Any, ctx: Ctx, loc: Location | None, key: str, definition: str) -> TestPart:
    """defaultTest or a scenario entry: inline, or `file://` to a YAML/JSON mapping."""
    if isinstance(node, str):
        found = files.expand(node, ctx.base_dir, loc=loc, key=key)[0]
        display = files.display_path(found)
        data = files.read_value(found, display, loc=loc, key=key)
        if not isinstance(data, dict):
            raise ConfigError.at(loc, f"{display} must hold a mapping", key=key)
        validate(data, file=display, definition=definition)
        return testcases.part_from_node(data, Ctx(str(found.parent)),
                                        loc=loc_of(data) or Location(display, 1), key=key)
    return testcases.part_from_node(node, ctx, loc=loc, key=key)


def _load_list(node: Any, ctx: Ctx, loc: Location | None, key: str, definition: str) -> tuple[list[Any], Ctx]:
    """A list given inline or as `file://list.yaml` (validated item by item against `definition`)."""
    if not isinstance(node, str):
        return list(node or []), ctx
    found = files.expand(node, ctx.base_dir, loc=loc, key=key)[0]
    display = files.display_path(found)
    data = files.read_value(found, display, loc=loc, key=key)
    items = data if isinstance(data, list) else [data]
    for i, item in enumerate(items):
        validate(item, file=display, definition=definition, prefix=f"[{i}]")
    return items, Ctx(str(found.parent))


def _scenarios(node: Any, ctx: Ctx, loc: Location | None) -> list[TestPart]:
    out: list[TestPart] = []
    scenarios, sctx = _load_list(node, ctx, loc, "scenarios", "scenario")
    for i, sc in enumerate(scenarios):
        key = f"scenarios[{i}]"
        sloc = loc_of(scenarios, i) or loc
        if isinstance(sc, str):
            out.extend(_scenarios(sc, sctx, sloc))
            continue
        entries_node, ectx = _load_list(sc.get("config"), sctx, loc_of(sc, "config") or sloc, f"{key}.config",
                                        "scenarioEntry")
        entries = [_test_node(e, ectx, loc_of(entries_node, j) or sloc, f"{key}.config[{j}]", "scenarioEntry")
                   for j, e in enumerate(entries_node)]
        tests = list(testcases.each_part(testcases.collect(sc.get("tests"), sctx, key=f"{key}.tests",
                                                           loc=loc_of(sc, "tests") or sloc)))
        out.extend(scenario_tests(entries, tests, sc.get("description")))
    return out


def _read_one(doc: LDict, display: str, base_dir: str) -> FileConfig:
    ctx = Ctx(base_dir)
    if "providers" in doc and "targets" in doc:
        raise ConfigError.at(doc.loc("targets"), "give either `providers` or `targets`, not both", key="targets",
                             hint="`targets` is an alias of `providers`")
    pkey = "targets" if "targets" in doc else "providers"
    cfg = FileConfig(files=[display], description=doc.get("description"))
    from evalrun import templating

    templating.add_include_dir(base_dir)  # `{% include %}` in its templates: before the prompts are checked
    env = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in (doc.get("env") or {}).items()}
    templating.set_config_env(env, add=True)  # its `{{ env.NAME }}` in provider ids and configs, read below
    if doc.get("nunjucksFilters"):  # before the prompts: their syntax check knows every filter
        templating.add_custom_filters(custom_filters.load(doc["nunjucksFilters"], base_dir,
                                                          doc.loc("nunjucksFilters")))
    cfg.prompts = prompts.parse(doc.get("prompts"), base_dir, loc=doc.loc("prompts"))
    cfg.providers = providers.parse(doc.get(pkey), base_dir, loc=doc.loc(pkey), key=pkey)
    if doc.get("defaultTest") is not None:
        cfg.default = _test_node(doc["defaultTest"], ctx, doc.loc("defaultTest"), "defaultTest", "test")
    cfg.tests = testcases.collect(doc.get("tests"), ctx, key="tests", loc=doc.loc("tests"))
    if doc.get("scenarios") is not None:
        cfg.has_scenarios = True
        cfg.scenario_tests = _scenarios(doc["scenarios"], ctx, doc.loc("scenarios"))
    for key in _SETTINGS:
        if key in doc:
            cfg.settings[key] = doc[key]
    cfg.env = env
    return cfg

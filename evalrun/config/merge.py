"""Merging, with promptfoo's rules.

- defaultTest into a test: `assert` = default's + test's; `vars`, `options`, `metadata` shallow-merged with the
  test winning; `threshold`, `description` and the filters fall back to the default.
- scenario entry into a scenario test: the same rules, entry under test (defaultTest is merged afterwards, so
  vars are default < entry < test and assertions default + entry + test).
- several config files: prompts and providers concatenated without duplicates, tests and scenarios concatenated,
  defaultTest merged (later file wins), other settings: the later file wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from evalrun.config.testcases import TestItem, TestPart
from evalrun.types import PromptSpec, ProviderSpec


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


@dataclass
class FileConfig:
    """One config file after reading and resolving its references (its own folder is the base of file://)."""

    files: list[str]
    description: str | None = None
    prompts: list[PromptSpec] = field(default_factory=list)
    providers: list[ProviderSpec] = field(default_factory=list)
    tests: list[TestItem] = field(default_factory=list)  # JSONL/CSV files stay streams
    scenario_tests: list[TestPart] = field(default_factory=list)
    has_scenarios: bool = False
    default: TestPart | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # evaluateOptions, outputPath, grader, ...
    env: dict[str, str] = field(default_factory=dict)


def _unique(items: list[Any], key: Any) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for it in items:
        k = key(it)
        if k not in seen:
            seen.add(k)
            out.append(it)
    return out


def _provider_key(p: ProviderSpec) -> Any:
    import json

    return (p.id, p.label, json.dumps(p.config, sort_keys=True, default=str), p.prompts, p.transform, p.delay_ms)


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
            out.default = merge_tests(out.default, c.default) if out.default else c.default
        for k, v in c.settings.items():
            if k == "evaluateOptions":
                out.settings[k] = {**out.settings.get(k, {}), **v}
            else:
                out.settings[k] = v
        out.env.update(c.env)
    out.prompts = _unique(out.prompts, lambda p: (p.id, json_key(p.raw), p.label))
    out.providers = _unique(out.providers, _provider_key)
    return out


def json_key(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)

"""The parts of a suite given on `evalrun eval`'s command line (promptfoo's `-p -r -t -a --model-outputs
--prompt-prefix --prompt-suffix --description --tag`), laid over the loaded config as promptfoo's resolveConfigs
does; paths on the command line are relative to the current folder."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalrun.config import prompts as prompt_sources
from evalrun.config import providers as provider_sources
from evalrun.config import tests as test_sources
from evalrun.config.configfile import FileConfig
from evalrun.config.readers import read_data
from evalrun.errors import UsageError
from evalrun.types import ProviderSpec


@dataclass(frozen=True)
class CommandLineSuite:
    """What the command line sets; None / empty: the config's own."""

    prompts: tuple[str, ...] | None = None
    providers: tuple[str, ...] | None = None
    tests: str | None = None
    assertions: str | None = None
    model_outputs: str | None = None
    prefix: str | None = None
    suffix: str | None = None
    description: str | None = None
    tags: dict[str, str] = field(default_factory=dict)

    def standalone(self) -> bool:
        """True when the command line alone makes a suite (no config file needed)."""
        return bool(self.assertions or (self.prompts and self.providers))

    def empty(self) -> bool:
        return self == CommandLineSuite()


def key_values(items: list[str], flag: str) -> dict[str, str]:
    """`K=V` options (repeatable) -> a dict, the last of a key winning; anything else is a UsageError."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not key or not sep:
            raise UsageError(f"{flag} {item!r} is not in key=value format", key=flag, hint=f"e.g. {flag} env=prod")
        out[key] = value
    return out


def _prompt_refs(paths: tuple[str, ...]) -> list[str]:
    """-p values: a path to an existing file is read as a prompt file, as `file://PATH` in a config."""
    return [p if p.startswith("file://") or not Path(p).is_file() else "file://" + p for p in paths]


def _cli_providers(given: tuple[str, ...], configured: list[ProviderSpec], cwd: str) -> list[ProviderSpec]:
    """promptfoo's resolveCliProvidersWithConfig: each -r value picks the config provider with that id, else that
    label, else whose id ends in `:VALUE`; any other value is a provider id of its own."""
    out: list[ProviderSpec] = []
    for value in given:
        found = next((p for p in configured if p.id == value), None) \
            or next((p for p in configured if p.label == value), None) \
            or next((p for p in configured if p.id.endswith(":" + value)), None)
        out.extend([found] if found is not None else provider_sources.parse([value], cwd, loc=None, key="--providers"))
    return out


def _standalone_tests(assertions: str, model_outputs: str | None) -> list[dict[str, Any]]:
    """-a FILE --model-outputs FILE: one test per output, vars {output (, tags)}, each with the assertions."""
    if not model_outputs:
        raise UsageError("--assertions needs --model-outputs", key="--assertions",
                         hint="give the outputs to judge: --model-outputs outputs.json (a JSON list)")
    asserts = read_data(Path(assertions), assertions, key="--assertions")
    if isinstance(asserts, dict) and "assert" in asserts:
        asserts = asserts["assert"]
    if not isinstance(asserts, list):
        raise UsageError(f"--assertions {assertions!r} is not a list of assertions", key="--assertions",
                         hint="write a YAML or JSON list, e.g. `- type: contains\\n  value: hello`")
    outputs = read_data(Path(model_outputs), model_outputs, key="--model-outputs")
    if not isinstance(outputs, list):
        raise UsageError(f"--model-outputs {model_outputs!r} is not a JSON list", key="--model-outputs",
                         hint='e.g. ["first output", {"output": "second", "tags": ["a"]}]')
    tests = []
    for out in outputs:
        if isinstance(out, dict):
            vars_ = {"output": out.get("output")}
            if out.get("tags") is not None:
                vars_["tags"] = ", ".join(str(t) for t in out["tags"])
        else:
            vars_ = {"output": out}
        tests.append({"vars": vars_, "assert": asserts})
    return tests


def apply(cfg: FileConfig, cli: CommandLineSuite) -> FileConfig:
    """The config with the command line's parts over its own (a new FileConfig; `cfg` is not changed)."""
    if cli.empty():
        return cfg
    cwd = os.getcwd()
    out = replace(cfg, prompts=list(cfg.prompts), providers=list(cfg.providers), tests=list(cfg.tests),
                  settings=dict(cfg.settings))
    if cli.assertions:  # standalone assertions: the outputs themselves are judged, through echo
        out.prompts = prompt_sources.parse(["{{output}}"], cwd, loc=None)
        out.providers = provider_sources.parse(["echo"], cwd, loc=None, key="providers")
        out.tests = test_sources.collect(_standalone_tests(cli.assertions, cli.model_outputs), cwd,
                                         key="--assertions", loc=None)
    if cli.prompts:
        out.prompts = prompt_sources.parse(_prompt_refs(cli.prompts), cwd, loc=None)
    if cli.providers:
        out.providers = _cli_providers(cli.providers, cfg.providers, cwd)
    if cli.tests:
        out.tests = test_sources.collect(cli.tests if cli.tests.startswith("file://") else "file://" + cli.tests,
                                         cwd, key="--tests", loc=None)
    if cli.prefix is not None or cli.suffix is not None:  # the default prefix: defaultTest's and a test's win
        base = cfg.default or test_sources.TestPart()
        affixes = {k: v for k, v in (("prefix", cli.prefix), ("suffix", cli.suffix)) if v is not None}
        out.default = replace(base, options={**affixes, **base.options})
    if cli.description is not None:
        out.description = cli.description
    if cli.tags:
        out.settings["tags"] = {**(cfg.settings.get("tags") or {}), **cli.tags}
    return out

"""Load configs into a validated `Suite`: read, merge, check against the schema, build every assertion, check
templates; the first user mistake is a ConfigError (file, line, key path, hint). Layout: docs/design-notes.md."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalrun.errors import ConfigError, UsageError, is_strict, lenient_warnings, reset_lenient
from evalrun.types import Suite

if TYPE_CHECKING:
    from evalrun.config.cli_suite import CommandLineSuite

#: Looked for in the current folder when no config is given.
DEFAULT_CONFIGS = ("evalrun.yaml", "evalrun.yml", "promptfooconfig.yaml", "promptfooconfig.yml")


def default_paths() -> list[str]:
    for name in DEFAULT_CONFIGS:
        if Path(name).is_file():
            return [name]
    raise UsageError("no config given and none found in this folder",
                     hint=f"pass a config path, or create one of: {', '.join(DEFAULT_CONFIGS)}")


def load(paths: Sequence[str], *, cli_vars: dict[str, Any] | None = None, strict: bool | None = None,
         on_progress: Callable[[int], None] | None = None,
         on_test: Callable[[Any, int, bool], None] | None = None, cli: CommandLineSuite | None = None,
         confine: bool | None = None) -> Suite:
    """Load, merge and check the config file(s) at `paths` into a Suite; keys promptfoo ignores become
    `Suite.warnings` (errors when `strict`, default: EVALRUN_STRICT). `on_progress`, `on_test`: see build_suite.
    `cli`: a cli_suite.CommandLineSuite laid over the config (with no `paths` it may be the whole suite).
    `confine` (default: EVALRUN_CONFINE=1): `file://` paths must lie in the first config's folder tree (the
    current folder for a suite given on the command line alone)."""
    from dataclasses import replace

    from evalrun import template_env, templating
    from evalrun.config import cli_suite, files
    from evalrun.config.configfile import FileConfig, merge_configs, read
    from evalrun.config.suite import build_suite

    if not paths and not (cli is not None and cli.standalone()):
        paths = default_paths()
    was_enabled = gc.isenabled()
    gc.disable()  # loading allocates many small acyclic objects: cyclic GC passes would only cost time
    templating.reset_config()
    reset_lenient(strict)
    if confine is None:
        confine = os.environ.get("EVALRUN_CONFINE", "") not in ("", "0", "false")
    root = Path(paths[0]).expanduser().absolute().parent if paths else Path.cwd()
    files.confine(root if confine else None)
    try:
        configs: dict[str, Any] = {}
        for p in paths:
            for cfg in read(Path(p)):
                configs.setdefault(cfg.files[0], cfg)  # a file reached twice (diamond `extends`) counts once
        merged = merge_configs(list(configs.values())) if configs else FileConfig(files=[])
        if cli is not None:
            merged = cli_suite.apply(merged, cli)
        template_env.set_config_env(merged.env)
        suite = build_suite(merged, cli_vars, on_progress, on_test)
        return replace(suite, warnings=lenient_warnings(), undefined_renders_empty=not is_strict())
    except RecursionError:  # a safety net behind the depth limit (readers/located.py): never a traceback
        raise ConfigError("the config is nested too deeply to load", file=str(paths[-1]) if paths else None, line=1,
                          hint="flatten its lists and mappings") from None
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["DEFAULT_CONFIGS", "default_paths", "load"]

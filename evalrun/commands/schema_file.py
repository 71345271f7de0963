"""`evalrun schema [-o PATH] [--results]`: the packaged JSON Schema of the config (or of the results), printed or
written where a project keeps it, so an editor's `# yaml-language-server: $schema=...` line points at a file every
teammate has (`evalrun init` writes one next to the suite)."""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from pathlib import Path

from evalrun.errors import UsageError

CONFIG_SCHEMA = "evalrun.schema.json"
RESULTS_SCHEMA = "results.schema.json"


def text(name: str = CONFIG_SCHEMA) -> str:
    """The packaged schema `name` (evalrun/schemas/), as shipped."""
    return resources.files("evalrun").joinpath(f"schemas/{name}").read_text(encoding="utf-8")


def language_server_line(config: Path, schema: Path) -> str:
    """The first line of a config that points the YAML language server at `schema`, relative to the config's folder
    (a path inside the checkout, so it resolves for everyone who has the checkout)."""
    try:
        ref = Path(os.path.relpath(schema.resolve(), config.resolve().parent)).as_posix()
    except ValueError:  # another drive (Windows)
        ref = schema.resolve().as_posix()
    if not ref.startswith("."):
        ref = f"./{ref}"
    return f"# yaml-language-server: $schema={ref}"


def run(args: argparse.Namespace) -> int:
    body = text(RESULTS_SCHEMA if args.results else CONFIG_SCHEMA)
    if not args.output:
        sys.stdout.write(body)
        return 0
    out = Path(args.output)
    if out.is_dir():
        out = out / (RESULTS_SCHEMA if args.results else CONFIG_SCHEMA)
    if not out.parent.is_dir():
        raise UsageError(f"no folder {str(out.parent)!r} to write the schema in", key="--output")
    out.write_text(body, encoding="utf-8")
    print(f"wrote {out}" + ("" if args.results else
                            f"\nfirst line of a config next to it: {language_server_line(out.parent / 'x.yaml', out)}"))
    return 0

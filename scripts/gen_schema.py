#!/usr/bin/env python3
"""Refresh the assertion-type enum of evalrun/schemas/evalrun.schema.json (the schema's source) from the registry.

    python scripts/gen_schema.py          # regenerate (run after adding an assertion type)
    python scripts/gen_schema.py --check  # exit 1 when the committed file is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "evalrun" / "schemas" / "evalrun.schema.json"


def builtin_types() -> list[str]:
    """Registered assertion types that ship with evalrun (plugins installed locally are left out, so the
    committed file does not depend on what is installed)."""
    from evalrun.assertions import registry

    return sorted(n for n, cls in registry.load_all().items() if cls.__module__.startswith("evalrun."))


def render() -> str:
    """The schema file's exact text for the built-in assertion types."""
    from evalrun.config.schema import build_schema

    return json.dumps(build_schema(builtin_types()), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the committed schema is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != text:
            print(f"{SCHEMA_PATH} is out of date: run python scripts/gen_schema.py", file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

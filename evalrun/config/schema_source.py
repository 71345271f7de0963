"""The config's JSON Schema: evalrun/schemas/evalrun.schema.json is its one source (edit it there; an assertion's
`type` is any string at run time, the file's enum of types is for editors: scripts/gen_schema.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schemas" / "evalrun.schema.json"


@cache
def _file_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


_DEFS = _file_schema()["$defs"]
TEST_KEYS = tuple(_DEFS["test"]["properties"])
#: Keys of a test's `options` (those promptfoo hands on to providers included).
OPTION_KEYS = tuple(_DEFS["testOptions"]["properties"])
PROVIDER_KEYS = tuple(_DEFS["providerObject"]["properties"])


def build_schema(type_names: Sequence[str] | None = None) -> dict[str, Any]:
    """The config schema; `type_names`: the assertion types of its `type` enum (with their `not-` forms), or None
    for any string."""
    schema = copy.deepcopy(_file_schema())
    type_schema = schema["$defs"]["assertion"]["properties"]["type"]
    type_schema.pop("enum", None)
    if type_names is None:
        type_schema["type"] = "string"
    else:
        names = sorted(set(type_names))
        type_schema["enum"] = names + [f"not-{n}" for n in names]
    return schema


@cache
def runtime_schema(definition: str | None = None) -> dict[str, Any]:
    """The run-time schema (any assertion type), or one named definition of it with `$defs` kept resolvable."""
    schema = build_schema(None)
    if definition is not None:
        schema = {"$defs": schema["$defs"], **schema["$defs"][definition]}
    return schema

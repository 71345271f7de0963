"""promptfoo's structured output: which chat replies reach transforms and assertions as parsed JSON.

    parses_json(model, params) -> bool     the call asks for a JSON reply that promptfoo parses
    with_parsed_json(output) -> Output     `value` set to the parsed reply (text unchanged); as is if not JSON

promptfoo 0.121.20 parses the reply (JSON.parse) when the merged provider and prompt config asks for
`response_format: {type: json_schema}` (its OpenAI-compatible providers), also for `{type: json_object}` on
Azure, and for Anthropic's `output_format: {type: json_schema}`; a reply that does not parse stays text. Then
transforms and `javascript` / `python` assertions get the object, and every other assertion, the report and
the results see it as compact JSON text (JavaScript's JSON.stringify). The cache keeps the reply as the server
sent it: a cached reply is parsed again, so it reads the same.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from evalrun.types import Output


def _format_type(value: Any) -> str | None:
    return str(value.get("type")) if isinstance(value, Mapping) and value.get("type") else None


def parses_json(model: str, params: Mapping[str, Any]) -> bool:
    """Whether promptfoo parses this call's reply as JSON (module docstring); `model` is litellm's id."""
    kind = _format_type(params.get("response_format"))
    if kind == "json_schema" or _format_type(params.get("output_format")) == "json_schema":
        return True
    return kind == "json_object" and model.startswith(("azure/", "azure_text/"))


def with_parsed_json(out: Output) -> Output:
    """`out` with `value` set to its text parsed as JSON; unchanged when the text is not JSON."""
    try:
        value = json.loads(out.text)
    except ValueError:
        return out
    return dataclasses.replace(out, value=value)

"""A chat prompt: a non-empty list of messages, each a mapping with a `role`; also when written as JSON text."""

from __future__ import annotations

import json
from typing import Any


def as_chat(value: Any) -> list[dict[str, Any]] | None:
    """A copy of `value` when it is a chat (a non-empty list of mappings with a `role`), else None."""
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        return [dict(m) for m in value]
    return None


def from_json(text: str) -> list[dict[str, Any]] | None:
    """The chat message list a (rendered) JSON text spells, or None when it is not one."""
    try:
        return as_chat(json.loads(text))
    except ValueError:
        return None

"""Checks shared by every ACME suite (referenced as file://checks.py:fn from base.yaml)."""

import re

_INTERNAL_ID = re.compile(r"\bTICKET-\d+\b")


def no_internal_ids(output, context):
    """Fail when the answer leaks an internal ticket id."""
    found = _INTERNAL_ID.findall(output)
    return {"pass": not found, "score": 0.0 if found else 1.0,
            "reason": f"leaks internal ids: {', '.join(found)}" if found else "no internal ids"}

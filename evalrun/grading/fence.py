"""Delimiting untrusted text (outputs, chunks, ground truth) inside grader prompts.

Every untrusted text goes inside a labelled block::

    <<<CHUNK 2>>>
    ...text...
    <<<END CHUNK 2>>>

and any look-alike delimiter inside the text (three or more `<` or `>`) is neutralised first, so a chunk
cannot close its own block or open a fake one. The prompts tell the grader to treat block contents as data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_LOOKALIKE = re.compile(r"<{3,}|>{3,}|＜{3,}|＞{3,}|«{2,}|»{2,}")


def neutralise(text: str) -> str:
    """Replace delimiter look-alikes (`<<<`, `>>>`, full-width and guillemet variants) with `< < <`-style text."""
    return _LOOKALIKE.sub(lambda m: " ".join(m.group(0)), text)


def block(label: str, text: str) -> str:
    """One delimited block: `<<<LABEL>>>`, the neutralised text, `<<<END LABEL>>>`."""
    label = re.sub(r"[^A-Za-z0-9 _-]", "", label).upper() or "TEXT"
    return f"<<<{label}>>>\n{neutralise(text)}\n<<<END {label}>>>"


def numbered(kind: str, texts: Sequence[str]) -> str:
    """Blocks `<<<KIND 0>>>`, `<<<KIND 1>>>`, ... (0-based indices, as the JSON replies use)."""
    return "\n\n".join(block(f"{kind} {i}", t) for i, t in enumerate(texts))
